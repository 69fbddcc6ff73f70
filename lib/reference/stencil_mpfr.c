/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* stencil_mpfr.c -- one direction in MPFR mode: its exact stencil points,
   their values, terms and verdict, raising the precision, and confirmation
   on finer levels ("Confirming a direction").  The points are exact
   ("Applied steps"); the float modes are lib/reference/stencil.c's.  */

#include "reference/stencil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* y = xi + t*2^te*vi exactly: the precision of y grows until the sum is
   exact (manual: "Applied steps"; the scale 2^te keeps a step below the
   doubles' range exact: "Default precision and step").  T1 is scratch.  */
static void
set_exact (mpfr_ptr y, float xi, double t, long te, float vi, mpfr_ptr t1)
{
  mpfr_set_d (t1, t, MPFR_RNDN);             /* t1 has 128 bits: exact */
  mpfr_mul_2si (t1, t1, te, MPFR_RNDN);      /* exact */
  mpfr_mul_d (t1, t1, (double) vi, MPFR_RNDN); /* 53 + 24 bits: exact */
  for (mpfr_prec_t prec = 64;; prec *= 2)
    {
      mpfr_set_prec (y, prec);
      mpfr_set_flt (y, xi, MPFR_RNDN);
      if (mpfr_add (y, y, t1, MPFR_RNDN) == 0)
        return;
    }
}

/* Evaluate the MPFR stencil points K0 .. K1 - 1 of direction D (V the
   random direction or NULL) at h = HM * 2^HE: x + h, x - h, x + 2h, x - 2h
   into w->f[k].  */
static bool
eval_points (worker *w, const gc_direction *d, const float *v, double hm,
             long he, int k0, int k1)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  static const double mult[4] = { 1, -1, 2, -2 };
  bool ok = true;
  for (int k = k0; k < k1 && ok; k++)
    {
      if (v)
        for (size_t j = 0; j < n; j++)
          set_exact (w->xm + j, sh->x[j], mult[k] * hm, he, v[j], w->t1);
      else
        set_exact (w->xm + i, sh->x[i], mult[k] * hm, he, 1.0f, w->t1);
      ok = gc__eval_mpfr (w, w->f[k]);
      if (!ok)
        gc__stencil_note (w, k, ldexp (hm, (int) he), i);
      if (v)
        for (size_t j = 0; j < n; j++)
          gc__reset_mpfr (w, j);
      else
        gc__reset_mpfr (w, i);
    }
  return ok;
}

/* D(h) into d->reference and, without PR, D(2h) and the kink estimate J
   from the MPFR stencil values w->f[] at h = HM * 2^HE; returns
   D(2h) - D(h) (0 with PR: the 2h pair is not evaluated).  */
static double
differences_mpfr (worker *w, gc_direction *d, double hm, long he,
                  const gc__prediction *pr)
{
  shared *sh = w->sh;
  mpfr_ptr f[4] = { w->f[0], w->f[1], w->f[2], w->f[3] };
  /* D(h) (and D(2h)) with differences at twice the working precision; the
     divisions by 2^he are exact.  */
  mpfr_sub (w->t2, f[0], f[1], MPFR_RNDN);
  mpfr_div_d (w->t2, w->t2, 2 * hm, MPFR_RNDN);
  mpfr_div_2si (w->t2, w->t2, he, MPFR_RNDN);
  d->reference = mpfr_get_d (w->t2, MPFR_RNDN);
  double tdiff = 0;
  if (pr)
    {
      d->d2h = NAN;
      d->jump = NAN;      /* not measured: (3) bounds it */
      return tdiff;
    }
  mpfr_sub (w->t3, f[2], f[3], MPFR_RNDN);
  mpfr_div_d (w->t3, w->t3, 4 * hm, MPFR_RNDN);
  mpfr_div_2si (w->t3, w->t3, he, MPFR_RNDN);
  d->d2h = mpfr_get_d (w->t3, MPFR_RNDN);
  mpfr_sub (w->t3, w->t3, w->t2, MPFR_RNDN);
  tdiff = mpfr_get_d (w->t3, MPFR_RNDN);
  /* J = 2 Delta(h) - Delta(2h), Delta(s) = (f(x+s) - 2 f0 + f(x-s)) / s */
  mpfr_add (w->t2, f[0], f[1], MPFR_RNDN);
  mpfr_mul_2ui (w->t3, w->wp == sh->p ? sh->f0_mpfr : w->f0w, 1,
                MPFR_RNDN);
  mpfr_sub (w->t2, w->t2, w->t3, MPFR_RNDN);
  mpfr_div_d (w->t2, w->t2, hm, MPFR_RNDN);
  mpfr_div_2si (w->t2, w->t2, he, MPFR_RNDN);
  mpfr_mul_2ui (w->t2, w->t2, 1, MPFR_RNDN);
  mpfr_add (w->prod, f[2], f[3], MPFR_RNDN);
  mpfr_sub (w->prod, w->prod, w->t3, MPFR_RNDN);
  mpfr_div_d (w->prod, w->prod, 2 * hm, MPFR_RNDN);
  mpfr_div_2si (w->prod, w->prod, he, MPFR_RNDN);
  mpfr_sub (w->t2, w->t2, w->prod, MPFR_RNDN);
  d->jump = mpfr_get_d (w->t2, MPFR_RNDN);
  return tdiff;
}

/* D's truncation term: measured from D(2h) - D(h) = TDIFF, or with PR
   predicted (manual: "Skipping the 2h pair").  LMAX is the loss's
   magnitude at the stencil.  */
static void
truncation_mpfr (worker *w, gc_direction *d, double lmax, double hm,
                 long he, double tdiff, const gc__prediction *pr)
{
  shared *sh = w->sh;
  if (pr)
    {
      /* Manual: "Skipping the 2h pair": T_mpfr <= rho^2 T_64 + twice
         MPFR's rounding term at twice the loss and twice |D(h)| (the
         points x +- 2h lie within a binade of the loss; the factor 2
         outside covers MPFR's own rounding inside T_mpfr).  */
      gc_term e2;
      gc__term_reference (&e2, GC_REF_MPFR, w->wp, sh->r->lambda_forward,
                          sh->r->forward_depth, 2 * lmax, hm, he,
                          2 * fabs (d->reference), 0);
      gc__term_truncation_predicted (&d->terms[GC_TERM_TRUNCATION],
                                     d->reference, d->step, pr->rho, pr->t64,
                                     2 * e2.value);
    }
  else
    gc__term_truncation (&d->terms[GC_TERM_TRUNCATION], d->reference,
                         d->d2h, tdiff, d->step);
}

/* analytic <g, v> into d->analytic, sum |v_i| m_i into *WM, sum |v_i|
   into *W1, and the sums of the random direction's term into RS
   ("Directional checks"); V is the random direction or NULL.  */
static void
analytic_mpfr (worker *w, gc_direction *d, const float *v, double *wm,
               double *w1, gc__random_sums *rs)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  if (v)
    {
      mpfr_set_zero (w->t2, 1);
      for (size_t j = 0; j < n; j++)
        {
          mpfr_set_flt (w->prod, v[j], MPFR_RNDN);
          mpfr_mul_d (w->prod, w->prod, (double) sh->g[j], MPFR_RNDN);
          mpfr_add (w->t2, w->t2, w->prod, MPFR_RNDN);
          *wm += fabs ((double) v[j]) * sh->mag[j];
          *w1 += fabs ((double) v[j]);
          gc__random_add (rs, v[j], v[j], sh->mag[j]);
        }
      d->analytic = mpfr_get_d (w->t2, MPFR_RNDN);
    }
  else
    {
      d->analytic = sh->g[i];
      *wm = sh->mag[i];
      *w1 = 1;
    }
}

/* Manual: "Skipping the 2h pair".  (3): MPFR's |J| <= A <= its bar;
   a pass with no truncation term at all (then with any T in [0, P]);
   no confirmation (P <= E + A); not inconclusive at T = P (nor then at
   any smaller T).  */
static bool
prediction_stands (const gc_direction *d, const gc__prediction *pr)
{
  double t = d->terms[GC_TERM_TRUNCATION].value;
  double e = d->terms[GC_TERM_REFERENCE].value;
  double a = d->terms[GC_TERM_ADJOINT].value;
  return fabs (pr->jump64) + pr->noise_j64 <= (1 - 3 * pr->rho) * a
         && d->diff <= e + a && t <= e + a && d->verdict == GC_PASS;
}

/* Values, terms and verdict of direction D from its MPFR stencil values
   w->f[] at h = HM * 2^HE.  With PR (the +-2h pair not evaluated), the
   truncation term is PR's bound and there is no J of MPFR's own (manual:
   "Skipping the 2h pair"); the result is then MPFR's verdict only when
   the function returns true: (3) holds against MPFR's adjoint term, and
   the direction passes, is not truncation-dominated and not inconclusive
   whatever MPFR's own truncation term in [0, PR's bound] would have
   been.  */
static bool
finish_mpfr (worker *w, gc_direction *d, const float *v, double hm, long he,
             const gc__prediction *pr)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  double tdiff = differences_mpfr (w, d, hm, he, pr);
  d->forward_error_ulps = -1;
  double lmax = fmax (fmax (fabs (mpfr_get_d (w->f[0], MPFR_RNDN)),
                            fabs (mpfr_get_d (w->f[1], MPFR_RNDN))),
                      sh->mag_loss);
  d->step = ldexp (hm, (int) (he < -4000 ? -4000 : he));
  truncation_mpfr (w, d, lmax, hm, he, tdiff, pr);
  double e_worst
    = gc__term_reference (&d->terms[GC_TERM_REFERENCE], GC_REF_MPFR, w->wp,
                          sh->r->lambda_forward, sh->r->forward_depth, lmax,
                          hm, he, d->reference, 0);
  double wm = 0, w1 = 0;
  gc__random_sums rs = { 0, 0, 0, 0 };
  analytic_mpfr (w, d, v, &wm, &w1, &rs);
  double a_worst = gc__adjoint_terms (w, d, v, wm, w1, &rs);
  /* Manual: "The worst case" */
  d->bar_worst_case = d->terms[GC_TERM_TRUNCATION].value + e_worst + a_worst;
  d->jump_next = NAN;
  w->noise_j = gc__jump_noise (sh, GC_REF_MPFR, w->wp, lmax, hm, he,
                               gc__jump_coef (1, 1, 1, 2, 2));
  gc__judge (d, w->noise_j);
  gc__judge_resolution (d);
  if (!pr)
    return true;
  return prediction_stands (d, pr);
}

/* The MPFR stencil of direction D at the step h = HM * 2^HE: values, terms,
   verdict.  V is the random direction or NULL.  With PR, the +-2h pair is
   evaluated only where PR does not prove MPFR's verdict without it
   (manual: "Skipping the 2h pair").  */
static bool
stencil_mpfr (worker *w, gc_direction *d, const float *v, double hm, long he,
              const gc__prediction *pr)
{
  if (!eval_points (w, d, v, hm, he, 0, 2))
    return false;
  if (pr)
    {
      gc_direction e = *d;
      if (finish_mpfr (w, &e, v, hm, he, pr))
        {
          *d = e;
          return true;
        }
    }
  if (!eval_points (w, d, v, hm, he, 2, 4))
    return false;
  finish_mpfr (w, d, v, hm, he, NULL);
  return true;
}

/* Manual: "Confirming a direction".  Level A is consistent with the next,
   finer level B when neither's truncation term exceeds the rest of its bar
   and their references differ by no more than both truncation and both
   rounding terms.  */
static bool
truncation_dominates (const gc_direction *a)
{
  return a->terms[GC_TERM_TRUNCATION].value
         > a->terms[GC_TERM_REFERENCE].value + a->terms[GC_TERM_ADJOINT].value;
}

static bool
levels_consistent (const gc_direction *a, const gc_direction *b)
{
  return !truncation_dominates (a) && !truncation_dominates (b)
         && fabs (a->reference - b->reference)
         <= a->terms[GC_TERM_TRUNCATION].value
            + b->terms[GC_TERM_TRUNCATION].value
            + a->terms[GC_TERM_REFERENCE].value
            + b->terms[GC_TERM_REFERENCE].value;
}

/* The worker's MPFR variables at working precision P; at a raised P also
   the centre value ("Raising the precision").  */
static bool
set_precision (worker *w, mpfr_prec_t p)
{
  shared *sh = w->sh;
  w->wp = p;
  mpfr_set_prec (w->lv, p);
  mpfr_set_prec (w->lout, p);   /* the loss the model writes (its guards
                                   after it keep their 2 bits) */
  for (int k = 0; k < 4; k++)
    mpfr_set_prec (w->f[k], p);
  mpfr_set_prec (w->t2, 2 * p);
  mpfr_set_prec (w->t3, 2 * p);
  mpfr_set_prec (w->prod, 2 * p > 256 ? 2 * p : 256);
  if (p == sh->p)
    return true;
  mpfr_set_prec (w->f0w, p);
  return gc__eval_mpfr (w, w->f0w);
}

static bool confirm_mpfr (worker *w, gc_direction *d, const float *v,
                          double hm, long he);

/* Manual: "Non-smooth points".  The level A judged at, with the next finer
   level B (steps 2^8 times smaller): a non-smooth verdict stands only when
   J does not shrink with the step, |J_B| > |J_A| / 16; J is a fourth
   difference, which a jump of f' keeps and anything smoother shrinks by
   2^-8 per level or faster (x^4 at 0: 2^-24).  */
static void
keep_or_smooth (gc_direction *a, const gc_direction *b)
{
  a->jump_next = b->jump;
  if (a->verdict == GC_NONSMOOTH && !(fabs (b->jump) > fabs (a->jump) / 16))
    gc__judge_smooth (a);
}

bool
gc__direction_mpfr (worker *w, gc_direction *d, const gc__prediction *pr)
{
  shared *sh = w->sh;
  const float *v = NULL;
  if (d->index == SIZE_MAX)
    {
      gc__make_random (sh, d->id, w->v, &w->vnorm);
      v = w->v;
    }
  double hm;
  long he;
  gc__step_scaled (sh, d->index, d->id, &hm, &he);
  d->level = 0;
  /* Manual: "Domain edges": a first step that leaves the model's domain
     is the check's, not the model's failure: a finer one is tried */
  for (int edge = 0;
       !stencil_mpfr (w, d, v, hm, he, sh->o->exact_step || edge ? NULL : pr);
       edge++, he -= 8)
    if (!gc__domain_retry (w, edge, GC_EDGE_LEVELS_MPFR))
      return false;
  /* Manual: "Raising the precision".  A direction the check cannot judge
     because the reference's own rounding dominates its bar is evaluated
     again at 2p, 4p, 8p, 16p (the default step shrinking with p) until the
     rounding no longer dominates.  */
  bool ok = true;
  if (sh->o->exact_step)
    return true;   /* at this step and precision only (gc_options) */
  for (int up = 1; up <= 4 && d->verdict == GC_INCONCLUSIVE
       && d->terms[GC_TERM_REFERENCE].value > d->terms[GC_TERM_ADJOINT].value;
       up++)
    {
      mpfr_prec_t p2 = sh->p << up;
      if (!gc__precision_usable (p2))
        break;
      if (!(ok = set_precision (w, p2)))
        break;
      if (!sh->user_step)
        he -= (long) (p2 / 3) - (long) (p2 / 6);
      gc_direction e = *d;
      if (!(ok = stencil_mpfr (w, &e, v, hm, he, NULL)))
        break;
      *d = e;
    }
  if (ok)
    ok = confirm_mpfr (w, d, v, hm, he);
  if (w->wp != sh->p)
    set_precision (w, sh->p);
  return ok;
}

static bool
confirm_mpfr (worker *w, gc_direction *d, const float *v, double hm, long he)
{
  shared *sh = w->sh;
  /* Confirm a direction whose verdict could rest on a wrong truncation
     estimate ("Confirming a direction"): it fails, is non-smooth, or its
     truncation term exceeds the rest of its bar.  */
  if (d->verdict != GC_FAIL && d->verdict != GC_NONSMOOTH
      && !truncation_dominates (d))
    return true;
  /* ... but not a failure beyond doubt ("A failure beyond doubt"): no
     finer level could make it a pass.  */
  if (d->verdict == GC_FAIL && gc__failure_beyond_doubt (d, w->noise_j))
    return true;
  /* Levels 0 .. k; level j is judged at when (j, j+1) and (j+1, j+2) are
     consistent, or, where the descent stops at k, when (k-1, k) is.  */
  gc_direction lv[9];
  lv[0] = *d;
  int k = 1;
  for (; k <= 8; k++)
    {
      long hk = he - 8L * k;
      /* stop before the reference rounding exceeds the adjoint term */
      double ek = gc__eval_error_over_step (GC_REF_MPFR, w->wp,
                                            sh->r->lambda_forward,
                                            sh->r->forward_depth,
                                            fmax (sh->mag_loss,
                                                  fabs (sh->f0)), hm, hk);
      if (ek > d->terms[GC_TERM_ADJOINT].value)
        break;
      lv[k] = *d;
      lv[k].level = k;
      if (!stencil_mpfr (w, &lv[k], v, hm, hk, NULL))
        return false;
      if (k >= 2 && levels_consistent (&lv[k - 2], &lv[k - 1])
          && levels_consistent (&lv[k - 1], &lv[k]))
        {
          keep_or_smooth (&lv[k - 2], &lv[k - 1]);
          *d = lv[k - 2];
          return true;
        }
    }
  int last = k - 1;     /* the finest level evaluated */
  /* No finer level possible: the first level's verdict stands,
     unconfirmed.  */
  if (last == 0)
    return true;
  if (levels_consistent (&lv[last - 1], &lv[last]))
    {
      keep_or_smooth (&lv[last - 1], &lv[last]);
      *d = lv[last - 1];
      return true;
    }
  /* Levels but no consistent run of them: the reference is not
     trustworthy; the first level's values stay in the report.  */
  d->level = -1;
  d->verdict = GC_INCONCLUSIVE;
  return true;
}
