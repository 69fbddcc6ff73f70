/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* tier.c -- which reference judges a direction.  A check of one reference
   evaluates it there; the tiered reference (GC_REF_AUTO) judges a
   coordinate direction with the f64 reference first and keeps that
   verdict only where it is provably the MPFR verdict, and evaluates every
   other direction again in MPFR (manual: "The tiered reference").  */

#include "model/check-internal.h"

#include <math.h>
#include <string.h>

/* Manual: "The tiered reference".  Whether the f64 evaluation D of a
   coordinate direction (NOISE_J: the noise of its J) decides it: its
   verdict is the one the MPFR reference would reach at its first step,
   without confirmation or raised precision.  Both verdicts need
     (3) |J_64| + N_J <= (1 - 3 rho) A  (MPFR's |J| <= A: smooth),
     P < A, P = rho^2 T_64 + 2 E_mpfr   (P >= T_mpfr + E_mpfr; MPFR's
                                         truncation below the rest of
                                         its bar),
   rho = h_mpfr / h_64, E_mpfr the MPFR reference-rounding term predicted
   from twice the largest loss magnitude and twice |D_64|.  With
   K_64 = T_64 + E_64 + |J_64| + N_J >= |D_64 - f'| ("A kink only f64
   sees": a kink inside the f64 stencil and outside MPFR's shifts D_64 by
   at most T_64 + |J_64|), a pass also needs
     (1) |a - D_64| + K_64 <= A      (MPFR's nu <= 1),
     (2) P < A - 2 S_w or A + 2P + K_64 < |D_64| (not inconclusive);
   a failure ("Failures f64 decides"), with delta = K_64 + P
   >= |D_64 - D_mpfr|,
     (F1) |a - D_64| > 5 A + 10 P + K_64  (MPFR's failure beyond
          doubt, "A failure beyond doubt": its N_J <= 4 P),
     (F2) no deep aliasing at D_mpfr: gc__aliasing_excluded with
          |D_mpfr| >= |D_64| - delta and T_mpfr + 2 E_mpfr <= 2 P,
     (F3) no deep aliasing at D_64 itself (its T_64 and E_64): an
          oscillation finer than the f64 step shrinks D_64 without a
          T_64, and delta holds only where none does ("Failures f64
          decides").
   *P_OUT receives P (NAN where no prediction was made).  *TWIN_OUT
   (manual: "Failures the twin decides"): where f64 does not decide the
   f32 verdict, whether the premises under which MPFR would judge the
   direction at its first level hold -- (3), P < A, and no deep aliasing
   at either step for an f' near the f32 gradient or near the twin's
   (F2, F3 with a and with a_64) -- so that the twin's verdict, decided
   in f64, is MPFR's.  */
static bool
f64_decides (const worker *w, const gc_direction *d, double noise_j,
             double rho, double *p_out, bool *twin_out)
{
  const shared *sh = w->sh;
  *p_out = NAN;
  *twin_out = false;
  if (d->verdict != GC_PASS && d->verdict != GC_FAIL)
    return false;
  bool pass = d->verdict == GC_PASS;
  double t64 = d->terms[GC_TERM_TRUNCATION].value;
  double e64 = d->terms[GC_TERM_REFERENCE].value;
  double a = d->terms[GC_TERM_ADJOINT].value;
  /* the measured spread S_w counts against A twice in MPFR's inconclusive
     test (manual: "Measured rounding sensitivity") */
  double sw = gc__term_input (&d->terms[GC_TERM_ADJOINT], "S_w", 0);
  /* K_64 ("A kink only f64 sees") */
  double k64 = t64 + e64 + fabs (d->jump) + noise_j;
  /* (1), tested last: the twin's premises below do not need it */
  bool one = !pass || d->diff + k64 <= a;
  /* (3) */
  if (!(fabs (d->jump) + noise_j <= (1 - 3 * rho) * a))
    return false;
  /* (2): the MPFR step as its check takes it, M_L over the f64 stencil
     and centre  */
  double hm;
  long he;
  gc__step_scaled (sh, d->index, d->id, &hm, &he);
  double ml = fmax (gc__term_input (&d->terms[GC_TERM_REFERENCE], "M_L",
                                sh->mag_loss), fabs (sh->f0_64));
  gc_term emp;
  gc__term_reference (&emp, GC_REF_MPFR, sh->p, sh->r->lambda_forward,
                      sh->r->forward_depth, 2 * ml, hm, he,
                      2 * fabs (d->reference), 0);
  double pred = rho * rho * t64 + 2 * emp.value;  /* >= T_mpfr + E_mpfr */
  *p_out = pred;
  if (!(pred < a))
    return false;
  /* Manual: "Failures the twin decides": (F2) and (F3) for the f32
     gradient and for the twin's (a coordinate's a_64 is known) */
  double delta = k64 + pred, dl = fabs (d->reference) - delta;
  double a64 = sh->g64 && d->index != SIZE_MAX ? sh->g64[d->index] : NAN;
  *twin_out = !isnan (a64) && dl > 0
              && gc__aliasing_excluded (dl, d->analytic, 2 * pred, 0, a)
              && gc__aliasing_excluded (dl, a64, 2 * pred, 0, a)
              && gc__aliasing_excluded (d->reference, d->analytic, t64, e64,
                                        a)
              && gc__aliasing_excluded (d->reference, a64, t64, e64, a);
  if (!one)
    return false;
  if (!pass)
    {
      /* Manual: "Failures f64 decides" */
      return d->diff > 5 * a + 10 * pred + k64 && dl > 0
             && gc__aliasing_excluded (dl, d->analytic, 2 * pred, 0, a)
             && gc__aliasing_excluded (d->reference, d->analytic, t64, e64,
                                       a);
    }
  /* no confirmation (T_mpfr <= E_mpfr + A), and not inconclusive: either
     its reference terms and spread stay below A - S_w whatever the
     resolution, or its resolution is below 1: MPFR's bar, at most
     pred + A, below |D_mpfr| >= |D_64| - K_64 - pred */
  return pred < a - 2 * sw || a + 2 * pred + k64 < fabs (d->reference);
}

/* Manual: "The tiered reference", a longer f64 step: at most 2^8 times
   the default, 2^(floor(log2 s) - 10), where the stencil spans +-2^-9 s.  */
#define GC_F64_LONGER_MAX 8

/* Manual: "The tiered reference", a longer f64 step.  The k of the f64
   step 2^k h_64 of coordinate direction D, decided before any evaluation:
   f64's rounding term E_64 at h_64 (from the loss magnitude and the
   centre) and the adjoint term A are known in advance; where E_64 > A / 16
   the noise of J (about 8 E_64) would keep (3) from holding, and a step
   2^k longer divides both by 2^k while the truncation grows by about
   4^k.  k is the smallest with 2^k >= 16 E_64 / A, at most 8; 0 with a
   step of the user's.  */
static int
longer_step (const worker *w, const gc_direction *d)
{
  const shared *sh = w->sh;
  const gc_result *r = sh->r;
  size_t i = d->index;
  if (sh->user_step)
    return 0;
  double hm;
  long he;
  gc__step_scaled (sh, i, d->id, &hm, &he);
  he += sh->step_exponent_64 - (long) r->step_exponent;
  gc_term te, ta;
  gc__term_reference (&te, GC_REF_F64, sh->p, r->lambda_forward,
                      r->forward_depth, fmax (sh->mag_loss, fabs (sh->f0_64)),
                      hm, he, sh->g[i], sh->spread_loss);
  gc__term_adjoint (&ta, r->lambda_backward, r->backward_depth, sh->mag[i],
                    1, gc__spread_at (sh->g, sh->gm, i));
  gc__precision_adjoint (r, &ta, sh->mag[i], 1, NULL);
  double e = te.value, a = ta.value;
  if (!(e > a / 16) || !(a > 0))
    return 0;
  double k = ceil (log2 (e / (a / 16)));
  return k > GC_F64_LONGER_MAX ? GC_F64_LONGER_MAX : (int) k;
}

/* Manual: "The tiered reference".  */
static bool
direction_tiered (worker *w, gc_direction *d)
{
  const shared *sh = w->sh;
  /* Random directions are decided in MPFR: the f64 stencil applies a
     rounded direction, the MPFR one the exact v, and their analytic sides
     differ by more than the terms bound; their f64 stencil serves only to
     skip MPFR's +-2h pair ("Skipping the 2h pair").  Every direction goes
     to MPFR alone when rho >= 1/3 (a step of the user's), where (3)
     cannot hold, and when the two forwards disagree at the centre.  */
  gc__prediction pred;
  bool have = false;
  w->tier_p = NAN;
  if (3 * sh->tier_rho < 1 && sh->tier_f64)
    {
      const gc_direction fresh = *d;
      bool coord = d->index != SIZE_MAX;
      int k = coord ? longer_step (w, d) : 0;
      gc__float_ref f64 = { GC_REF_F64, GC_REF_F64, sh->f0_64,
                            sh->step_exponent_64 + k };
      double noise_j, rho = ldexp (sh->tier_rho, -k);
      bool ok = gc__direction_float_as (w, d, &f64, &noise_j);
      if (ok)
        {
          double p;
          bool twin;
          if (coord && f64_decides (w, d, noise_j, rho, &p, &twin))
            {
              d->decided_by = GC_REF_F64;
              w->tier_p = p;
              return true;
            }
          /* Manual: "Failures the twin decides": the twin's verdicts
             replace the f32 one; twin.c keeps f64's decision where they
             are decided in f64, else judges the direction again in
             MPFR.  */
          if (coord && twin)
            {
              d->decided_by = GC_REF_F64;
              w->tier_p = p;
              return true;
            }
          pred = (gc__prediction) { d->terms[GC_TERM_TRUNCATION].value,
                                    d->jump, noise_j, rho };
          have = true;
        }
      else if (w->st == GC_ENONFINITE || w->st == GC_ESTEP)
        {
          /* f64's larger step left the domain or the format: MPFR's may
             not; any other failure of the model stops the check.  */
          w->st = GC_OK;
          w->cb = 0;
          w->detail[0] = 0;
        }
      else
        return false;
      *d = fresh;
    }
  d->decided_by = GC_REF_MPFR;
  return gc__direction_mpfr (w, d, have ? &pred : NULL);
}

static bool
direction_judged (worker *w, gc_direction *d)
{
  switch (w->sh->ref)
    {
    case GC_REF_MPFR:
      d->decided_by = GC_REF_MPFR;
      return gc__direction_mpfr (w, d, NULL);
    case GC_REF_F32:
    case GC_REF_F64:
      d->decided_by = w->sh->ref;
      return gc__direction_float (w, d);
    case GC_REF_AUTO:
      break;
    }
  return direction_tiered (w, d);
}

/* The direction judged against its reference, then, with a twin, its two
   verdicts (manual: "The f64 twin").  */
bool
gc__direction (worker *w, gc_direction *d)
{
  if (!direction_judged (w, d))
    return false;
  return !w->sh->g64 || gc__twin_direction (w, d);
}
