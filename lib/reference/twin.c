/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* twin.c -- the f64 twin of the backward (manual: "The f64 twin"): the
   model's grad_f64 at the centre (guarded, twice, and under the other IEEE
   rounding modes), and per direction, once the reference has judged it,
   the twin's analytic value and adjoint term, from which judge.c draws the
   two verdicts: the algorithm's and the arithmetic's.  */

#include "model/check-internal.h"

#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One call of grad_f64 at the worker's point into a new guarded array
   (NULL after recording a failure on W, or when memory runs out:
   *NOMEM), in the model's floating-point environment (manual:
   "Floating-point environment") under rounding MODE (-1: the caller's).
   WHAT names the call in messages.  */
static double *
twin_call (worker *w, int mode, const char *what, bool *nomem, int pass)
{
  return gc__grad_call (w, true, mode, what, nomem, pass);
}

double *
gc__twin_call (worker *w, int mode, const char *what, bool *nomem, int pass)
{
  return twin_call (w, mode, what, nomem, pass);
}

/* The index of the first non-finite value of G (N), or SIZE_MAX.  */
static size_t
first_nonfinite (const double *g, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite (g[i]))
      return i;
  return SIZE_MAX;
}

gc_status
gc__twin_centre (shared *sh, worker *w0)
{
  gc_result *r = sh->r;
  bool nomem;
  sh->g64 = twin_call (w0, -1, "", &nomem, 0);
  if (!sh->g64)
    return nomem ? GC_ENOMEM : w0->st;
  /* an element still holding the pattern is judged after the second call
     (unwritten, or NaN) */
  bool held = gc__unwritten_any (sh->g64, sh->n, true) > 0;
  size_t bad = first_nonfinite (sh->g64, sh->n);
  if (bad != SIZE_MAX && !held)
    {
      char at[128];
      gc__fail (w0, GC_ENONFINITE, 0, "grad_f64 gave a non-finite value "
                "at %s", gc__param_at (sh->r, bad, at, sizeof at));
      return w0->st;
    }
  /* Twice, as every callback ("Determinism and reentrancy").  */
  double *again = twin_call (w0, -1, " (second call)", &nomem, 1);
  if (!again)
    return nomem ? GC_ENOMEM : w0->st;
  if (held)
    {
      char what[160];
      gc_status st = gc__unwritten_list (r, sh->g64, again, sh->n, true,
                                         "grad_f64", what, sizeof what)
                     ? GC_EUNWRITTEN : GC_ENONFINITE;
      if (st == GC_ENONFINITE)
        {
          char at[128];
          snprintf (what, sizeof what, "grad_f64 gave a non-finite value "
                    "at %s", gc__param_at (r, bad, at, sizeof at));
        }
      gc__guarded_free (again);
      gc__fail (w0, st, 0, "%s", what);
      return w0->st;
    }
  for (size_t i = 0; i < sh->n; i++)
    if (memcmp (&again[i], &sh->g64[i], sizeof again[i]) != 0)
      {
        char nm[96];
        gc_param_name (r, i, nm, sizeof nm);
        gc__note_nondeterminism (r, GC_ND_GRAD, i, sh->g64[i], again[i],
                                 "grad_f64 gave %s = %.17g, then %.17g at "
                                 "the same point", nm, sh->g64[i], again[i]);
        break;
      }
  gc__guarded_free (again);
  /* Manual: "The f64 twin": the twin's spread under the other modes; a
     mode under which it gives a non-finite value is left out.  */
  int modes[GC_N_MODES];
  /* Manual: "Device arithmetic": no mode reaches a device */
  int k = r->device[0] ? 0 : gc__other_modes (sh->model_round, modes);
  r->twin_rounding_modes = 0;
  for (int j = 0; j < k; j++)
    {
      double *g = twin_call (w0, modes[j], " under another rounding mode",
                             &nomem, 0);
      if (!g)
        return nomem ? GC_ENOMEM : w0->st;
      size_t bad = first_nonfinite (g, sh->n);
      if (bad != SIZE_MAX)
        {
          /* say why the mode is left out (issue 35: it was silent) */
          if (!r->twin_rounding_note[0])
            {
              char nm[64];
              gc_param_name (r, bad, nm, sizeof nm);
              snprintf (r->twin_rounding_note, sizeof r->twin_rounding_note,
                        "grad_f64 gave %g at %s under rounding %s", g[bad],
                        nm, gc__mode_name (modes[j]));
            }
          gc__guarded_free (g);
          continue;
        }
      sh->g64m[j] = g;
      r->twin_rounding_modes++;
    }
  r->twin = 1;
  /* Manual: "The measured floor" */
  return gc__twin_floor_centre (sh, w0);
}

void
gc__twin_free (shared *sh)
{
  gc__guarded_free (sh->g64);
  sh->g64 = NULL;
  for (int k = 0; k < GC_N_MODES; k++)
    {
      gc__guarded_free (sh->g64m[k]);
      sh->g64m[k] = NULL;
    }
  gc__twin_floor_free (sh);
}

/* Neumaier's compensated sum, one term at a time.  */
typedef struct csum
{
  double s, c;
} csum;

static void
csum_add (csum *a, double t)
{
  double y = a->s + t;
  a->c += fabs (a->s) >= fabs (t) ? (a->s - y) + t : (t - y) + a->s;
  a->s = y;
}

/* The weight of element J in the applied direction of D: 1 for its
   coordinate; for a random one, v_j where MPFR applied it exactly, and
   (delta+ - delta-) / 2h where a float reference applied a rounded one
   (stencil.c).  */
static double
weight (const worker *w, const gc_direction *d, size_t j)
{
  if (d->decided_by == GC_REF_MPFR)
    return (double) w->v[j];
  return (w->dp[j] - w->dm[j]) / (2 * d->step);
}

double
gc__twin_weight (const worker *w, const gc_direction *d, size_t j)
{
  return weight (w, d, j);
}

/* Manual: "Richardson's stencil": R(h) and R(2h), R(s) = (4 D(s) -
   D(2s)) / 3, from F, the f64 values at x +- h, x +- 2h, x +- 4h.  */
static void
extrapolate (const double f[6], double h, double *r1, double *r2)
{
  double d1 = (f[0] - f[1]) / (2 * h), d2 = (f[2] - f[3]) / (4 * h);
  double d4 = (f[4] - f[5]) / (8 * h);
  *r1 = (4 * d1 - d2) / 3;
  *r2 = (4 * d2 - d4) / 3;
}

/* One f64 point of Richardson's stencil, x_i + K h, into *F (false, the
   direction left without the point, where the forward leaves its domain
   or its format; W failed on any other failure of the model).  x_i + k h
   is exact where |x_i| is within 2^28 of its scale s (24 bits, k h a
   power of two from 2^-7 s to 2^-1 s, the ladder's included); for a
   tinier x_i it is off by at most
   half an ulp of k h, a relative change of the step of 2^-53, which E's
   u_53 |D| part covers.  */
static bool
richardson_point (worker *w, size_t i, double k, double h, double *f)
{
  shared *sh = w->sh;
  w->xd[i] = (double) sh->x[i] + k * h;
  bool ok = gc__eval_f64 (w, w->xd, f);
  w->xd[i] = sh->x[i];
  if (!ok && (w->st == GC_ENONFINITE || w->st == GC_ESTEP))
    {
      w->st = GC_OK;
      w->cb = 0;
      w->detail[0] = 0;
    }
  return ok;
}

/* Manual: "The f64 twin", the algorithm's resolution goal: reference
   terms within lambda_b sqrt(d_b) u |REF|, the rounding a correct f32
   backward makes at the element's own magnitude, the finest the f32 check
   could ever see.  */
static bool
fine_enough_at (const shared *sh, double terms, double ref)
{
  const gc_result *r = sh->r;
  return terms <= r->lambda_backward * sqrt ((double) r->backward_depth)
                  * GC_U32 * fabs (ref);
}

/* Whether the reference terms D was judged on (Richardson's where used)
   meet the goal.  */
static bool
fine_enough (const shared *sh, const gc_direction *d)
{
  double terms, ref = gc__algorithm_reference (d, &terms);
  return fine_enough_at (sh, terms, ref);
}

/* E_64 at step H for a difference of size V with loss magnitude LMAX:
   the reference rounding term of D (manual: "The reference rounding").  */
static double
rounding_64 (const shared *sh, double lmax, double h, double v)
{
  gc_term e;
  gc__term_reference (&e, GC_REF_F64, sh->p, sh->r->lambda_forward,
                      sh->r->forward_depth, lmax, h, 0, v, sh->spread_loss);
  return e.value;
}

/* The sum of Richardson's two terms (gc__terms_richardson) for the
   estimate R1 of ORDER at step H, R2 the one a step longer, LMAX the
   largest |loss| at its points.  */
static double
richardson_terms_sum (const shared *sh, double lmax, double h, int order,
                      double r1, double r2)
{
  gc_term t[2];
  gc__terms_richardson (t, h, order, r1, r2, rounding_64 (sh, lmax, h, r1));
  return t[0].value + t[1].value;
}

/* R(2^j h) from the central differences DV[j] = D(2^j h), DV[j + 1]  */
static double
r1_at (const double *dv, int j)
{
  return (4 * dv[j] - dv[j + 1]) / 3;
}

/* R2(2^j h) = (16 R(2^j h) - R(2^(j+1) h)) / 15, from DV[j .. j + 2] */
static double
r2_at (const double *dv, int j)
{
  return (16 * r1_at (dv, j) - r1_at (dv, j + 1)) / 15;
}

/* Manual: "Richardson's stencil", the ladder.  F holds the values at
   +-2h, +-4h, +-8h; R(2h) was chosen from them, *R1 = R(2h), *R2 =
   R(4h), *LMAX the largest |loss| at the points.  While the estimate's
   terms are above the algorithm's resolution goal, at most
   GC_RICHARDSON_LADDER rungs: each evaluates the next doubled point,
   x +- 2^(J+1) h, which gives R one step longer, R(2^(J-1) h) with
   truncation |R(2^J h) - R(2^(J-1) h)|, and the second extrapolation
   R2(2^(J-2) h) with truncation |R2(2^(J-1) h) - R2(2^(J-2) h)| and
   rounding 33/20 E_64 at its step; a candidate replaces the estimate
   where its terms are smaller and the two agree within their terms
   together (if both premises hold, both are within their terms of f').
   The ladder stops where the forward leaves its domain or its format
   (false: any other failure of the model).  *HU and *ORDER receive the
   step and order of the estimate, *R1 its value and *R2 the value one
   step longer its truncation is measured against.  */
static bool
ladder (worker *w, size_t i, double h, const double f[6], double *hu,
        int *order, double *r1, double *r2, double *lmax)
{
  const shared *sh = w->sh;
  double dv[4 + GC_RICHARDSON_LADDER], lm = *lmax;
  dv[1] = (f[0] - f[1]) / (4 * h);
  dv[2] = (f[2] - f[3]) / (8 * h);
  dv[3] = (f[4] - f[5]) / (16 * h);
  double cur = richardson_terms_sum (sh, lm, *hu, 1, *r1, *r2);
  for (int J = 3; J < 3 + GC_RICHARDSON_LADDER; J++)
    {
      if (fine_enough_at (sh, cur, *r1))
        break;
      double p[2], hj = ldexp (h, J + 1);
      for (int k = 0; k < 2; k++)
        {
          if (!richardson_point (w, i, k ? -1.0 : 1.0, hj, &p[k]))
            {
              *lmax = lm;   /* the points of the estimate reached */
              return w->st == GC_OK;
            }
          lm = fmax (lm, fabs (p[k]));
        }
      dv[J + 1] = (p[0] - p[1]) / (2 * hj);
      /* the candidates: R one step longer, R2 (three differences) */
      double v[2] = { r1_at (dv, J - 1), r2_at (dv, J - 2) };
      double next[2] = { r1_at (dv, J), r2_at (dv, J - 1) };
      double step[2] = { ldexp (h, J - 1), ldexp (h, J - 2) };
      for (int k = 0; k < 2; k++)
        {
          double t = richardson_terms_sum (sh, lm, step[k], k + 1, v[k],
                                           next[k]);
          if (t < cur && fabs (v[k] - *r1) <= t + cur)
            {
              cur = t;
              *r1 = v[k];
              *r2 = next[k];
              *hu = step[k];
              *order = k + 1;
            }
        }
    }
  *lmax = lm;
  return true;
}

/* Manual: "Richardson's stencil": where the f64 reference judged
   coordinate D, f64 central differences at 2h, 4h and 8h first, h =
   2^(floor(log2 s_i) - GC_RICHARDSON_SHIFT), and R(2h) used where its
   measured truncation |R(4h) - R(2h)| is below 3/2 E_64(h) (R(h)'s
   rounding term: the doubled step's terms are then no larger than the
   predicted ones at h); else the points at +-h as well and R(h).  Stored
   in D with their terms (judge.c decides whether they replace D(h)).  A
   point at +-2h or +-4h where the f64 forward leaves its domain or its
   format leaves the direction without them (at +-8h: R(h) is used); any
   other failure of the model stops the check (false).  */
static bool
richardson (worker *w, gc_direction *d)
{
  shared *sh = w->sh;
  size_t i = d->index;
  d->richardson = NAN;
  d->richardson_used = 0;
  /* only where f64 is the reference: in f32 mode the reference is the
     f32 forward, and R(h) of another function says nothing of it */
  bool f64_judged = d->decided_by == GC_REF_F64;
  if (i == SIZE_MAX || !f64_judged || sh->user_step || !sh->m->loss_f64
      || d->verdict == GC_ERROR)
    return true;
  /* Manual: "Richardson's stencil", when: D(h) whose own terms are
     within one rounding of the f32 gradient, u_32 |D|, is not refined:
     an algorithm error finer than that is below what any f32 backward
     can carry, and the points would be 6 to 12 f64 calls spent on it */
  double td = d->terms[GC_TERM_TRUNCATION].value
              + d->terms[GC_TERM_REFERENCE].value;
  if (td <= GC_U32 * fabs (d->reference)
      && fine_enough_at (sh, td, d->reference))
    return true;
  double h = ldexp (1.0, ilogb (sh->scale[i]) - GC_RICHARDSON_SHIFT);
  /* f[0..7]: the values at +-h, +-2h, +-4h, +-8h */
  static const double k[8] = { 1, -1, 2, -2, 4, -4, 8, -8 };
  double f[8], lmax = sh->mag_loss;
  bool have8 = true;
  for (int j = 2; j < 8; j++)
    {
      if (!richardson_point (w, i, k[j], h, &f[j]))
        {
          if (w->st != GC_OK)
            return false;
          if (j < 6)
            return true;
          have8 = false;   /* the doubled step left the domain */
          break;
        }
      lmax = fmax (lmax, fabs (f[j]));
    }
  double r1, r2, hu;
  int order = 1;
  if (have8)
    {
      /* Manual: "Richardson's stencil", one doubling: R(2h) from D(2h),
         D(4h), D(8h), used where its truncation is below R(h)'s
         predicted rounding */
      hu = 2 * h;
      extrapolate (f + 2, hu, &r1, &r2);
      if (fabs (r2 - r1) < 1.5 * rounding_64 (sh, lmax, h, r1))
        {
          if (!ladder (w, i, h, f + 2, &hu, &order, &r1, &r2, &lmax))
            return false;
          goto done;
        }
    }
  for (int j = 0; j < 2; j++)
    {
      if (!richardson_point (w, i, k[j], h, &f[j]))
        return w->st == GC_OK;
      lmax = fmax (lmax, fabs (f[j]));
    }
  hu = h;
  extrapolate (f, h, &r1, &r2);
done:
  gc__terms_richardson (d->richardson_terms, hu, order, r1, r2,
                        rounding_64 (sh, lmax, hu, r1));
  /* Manual: "Richardson's stencil", a forward flat at the short step:
     two neighbours of the f64 stencil, x + h and x + 2h, x - h and x - 2h,
     or x - h and x + h, exactly equal where R's slope, less its terms,
     would part each pair by 64 ulps of the loss.  A smooth function's
     f64 values do not do that; this forward is constant somewhere at the
     short step (quantised to a grid, round (x, 3); or flat up to a kink
     the long step reaches), and R measures its stairs' envelope, not a
     derivative.  R is not offered: the twin is judged on D(h).  Constant
     over the whole stencil, the derivative at x is 0 and D(h) judges it;
     a stair edge within the stencil leaves D(h) nothing to judge, and a
     pass there is inconclusive (level -2), as is a D(h) too coarse for a
     nonzero backward: whether a grid's derivative is 0 or the envelope's
     slope (a cast's straight-through backward) is a convention.  */
  double rt = d->richardson_terms[0].value + d->richardson_terms[1].value;
  const double *sf = w->stencil_f;
  if (w->stencil_index == i
      && w->stencil_h * (fabs (r1) - rt)
         >= GC_FLAT_ULPS * gc__ulp (fabs (sh->f0), 53)
      && (sf[0] == sf[2] || sf[1] == sf[3] || sf[0] == sf[1]))
    {
      bool constant = sf[0] == sf[1] && sf[0] == sf[2] && sf[1] == sf[3];
      /* (a direction f64 already left unconfirmed keeps its reason) */
      if (d->level >= 0
          && (constant ? d->verdict == GC_INCONCLUSIVE && d->analytic != 0
                       : d->verdict == GC_PASS
                         || d->verdict == GC_INCONCLUSIVE))
        {
          d->verdict = GC_INCONCLUSIVE;
          d->level = -2;
        }
      return true;
    }
  d->richardson = r1;
  return true;
}


/* Manual: "Failures f64 decides", the algorithm's verdict: an f64
   decision leaves MPFR's direction at its first step, with D_mpfr within
   T + E + P of the reference f64 judged the twin on (D_64, or R(h) where
   used, with their terms), P >= T_mpfr + E_mpfr; MPFR's algorithm then
   fails when |a_64 - ref| > A_64 + T + E + 2 P.  */
static bool
algorithm_fails_in_mpfr (const gc_direction *d, double p)
{
  if (d->verdict_algorithm != GC_FAIL || !(p >= 0))
    return false;
  double terms, ref = gc__algorithm_reference (d, &terms);
  return fabs (d->analytic_f64 - ref)
         > d->adjoint_f64.value + terms + 2 * p;
}

/* The twin's part of direction D, once its reference has judged it.  */
static bool
twin_part (worker *w, gc_direction *d)
{
  if (!richardson (w, d))
    return false;
  const shared *sh = w->sh;
  const gc_result *r = sh->r;
  size_t n = sh->n;
  double wm = 0, w1 = 0, spread;
  if (d->index != SIZE_MAX)
    {
      size_t i = d->index;
      d->analytic_f64 = sh->g64[i];
      wm = sh->mag[i];
      w1 = 1;
      double lo = sh->g64[i], hi = lo;
      for (int k = 0; k < GC_N_MODES; k++)
        if (sh->g64m[k])
          {
            lo = fmin (lo, sh->g64m[k][i]);
            hi = fmax (hi, sh->g64m[k][i]);
          }
      spread = hi - lo;
    }
  else
    {
      csum a = { 0, 0 }, sm[GC_N_MODES];
      memset (sm, 0, sizeof sm);
      for (size_t j = 0; j < n; j++)
        {
          double wj = weight (w, d, j);
          csum_add (&a, sh->g64[j] * wj);
          wm += fabs (wj) * sh->mag[j];
          w1 += fabs (wj);
          for (int k = 0; k < GC_N_MODES; k++)
            if (sh->g64m[k])
              csum_add (&sm[k], (sh->g64m[k][j] - sh->g64[j]) * wj);
        }
      d->analytic_f64 = a.s + a.c;
      double lo = 0, hi = 0;
      for (int k = 0; k < GC_N_MODES; k++)
        if (sh->g64m[k])
          {
            lo = fmin (lo, sm[k].s + sm[k].c);
            hi = fmax (hi, sm[k].s + sm[k].c);
          }
      spread = hi - lo;
    }
  gc__term_adjoint_f64 (&d->adjoint_f64, r->backward_depth, wm, w1, spread,
                        (r->defaulted & GC_DEFAULTED_MAGNITUDES) != 0);
  /* Manual: "The f64 twin": the arithmetic's bound is f32's worst case,
     B = gamma_d(u)/u (u sum |w_i| m_i + 2^-150 sum |w_i|): no alignment of
     d_b f32 roundings exceeds it, so a correct f32 backward of the
     declared depth and magnitudes is never a finding here (a stagnating
     sum included); plus the twin's own term.  The measured spread S_w of
     the f32 backward over the four rounding modes is an error of the f32
     arithmetic too: each directed run is within gamma_d(2u) of the exact
     value, so S_w <= 2 gamma_d(2u) sum |w_i| m_i = C B, C = 4 gu23 / gu24;
     the arithmetic's error is max(|a32 - a64|, S_w / C), and a spread
     beyond C B is a finding, never a wider bound.  */
  size_t db = r->backward_depth;
  double gu24 = gc__gamma_over_u (db, 24), gu23 = gc__gamma_over_u (db, 23);
  double sw = gc__term_input (&d->terms[GC_TERM_ADJOINT], "S_w", 0);
  double b = gu24 * (GC_U32 * wm + 0x1p-150 * w1), c = 4 * gu23 / gu24;
  double b32 = b;
  /* Manual: "Rounding classes": the declared classes' worst case, and the
     spread's share of the classes the modes reach  */
  gc__precision_arith (r, wm, w1, &b, &c);
  /* Manual: "The measured floor": kappa F_w in place of a defaulted
     depth's bound, at least the declared one's */
  gc__twin_floor_bar (w, d, b32, &b);
  d->arith_bar = b + d->adjoint_f64.value;
  d->arith_diff = fmax (fabs (d->analytic - d->analytic_f64), sw / c);
  gc__judge_twin (d);
  return true;
}

bool
gc__twin_direction (worker *w, gc_direction *d)
{
  shared *sh = w->sh;
  if (!twin_part (w, d))
    return false;
  /* Manual: "The f64 twin": in the tiered check, a coordinate f64 judged
     too coarsely for the algorithm, or whose algorithm it did not pass, is
     judged again in MPFR: f64 decides only where MPFR's verdict is
     certain to be the same, a pass, or a failure f64 proves
     ("Failures f64 decides").  */
  if (sh->ref != GC_REF_AUTO || d->decided_by != GC_REF_F64
      || (fine_enough (sh, d) && d->verdict_algorithm == GC_PASS)
      || algorithm_fails_in_mpfr (d, w->tier_p))
    return true;
  gc_direction fresh;
  memset (&fresh, 0, sizeof fresh);
  fresh.id = d->id;
  fresh.index = d->index;
  fresh.verdict = GC_ERROR;
  fresh.decided_by = GC_REF_MPFR;
  gc__direction_no_twin (&fresh);   /* every twin field unset (NaN) */
  *d = fresh;
  return gc__direction_mpfr (w, d, NULL) && twin_part (w, d);
}
