/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* stencil.c -- one direction: evaluate its stencil in the reference of
   the check, its terms, its verdict.

   Per direction v with step h the stencil is x +- h v and x +- 2h v.  The
   reference is D(h); D(2h) gives the truncation term ("Truncation") and,
   with the centre value, the kink estimate J ("Non-smooth points").  In MPFR
   mode the points are exact; in f32 and f64 modes they are rounded and the
   steps actually applied are used ("Applied steps").  */

#include "check-internal.h"

#include <math.h>
#include <stdio.h>

/* A non-finite loss at a stencil point when the centre's was finite: the
   step has likely left the model's domain; say where.  */
static void
stencil_note (worker *w, int k, double h, size_t index)
{
  if (w->st != GC_ENONFINITE)
    return;
  static const char *const at[4] = { "x + h", "x - h", "x + 2h", "x - 2h" };
  char was[sizeof w->detail];
  snprintf (was, sizeof was, "%s", w->detail);
  if (index == SIZE_MAX)
    snprintf (w->detail, sizeof w->detail, "%s at %s v (h = %g, a random "
              "direction), finite at x: is the step too large?", was, at[k],
              h);
  else
    snprintf (w->detail, sizeof w->detail, "%s at %s (h = %g, parameter "
              "%zu), finite at x: is the step too large?", was, at[k], h,
              index);
}

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

static void
reset_mpfr (worker *w, size_t i)
{
  mpfr_set_prec (w->xm + i, 24);
  mpfr_set_flt (w->xm + i, w->sh->x[i], MPFR_RNDN);
}

/* Evaluate the best forward at the float point XF (already set), for the
   truncation estimate in f32 / f64 modes.  */
static bool
eval_best_at_float (worker *w, const float *xf, const double *xd,
                    const size_t *idx, size_t nidx, double *val)
{
  shared *sh = w->sh;
  switch (sh->best)
    {
    case GC_REF_MPFR:
      for (size_t k = 0; k < nidx; k++)
        {
          size_t i = idx ? idx[k] : k;
          if (xd)
            {
              mpfr_set_prec (w->xm + i, 53);
              mpfr_set_d (w->xm + i, xd[i], MPFR_RNDN);
            }
          else
            {
              mpfr_set_prec (w->xm + i, 24);
              mpfr_set_flt (w->xm + i, xf[i], MPFR_RNDN);
            }
        }
      if (!gc__eval_mpfr (w, w->lv))
        return false;
      for (size_t k = 0; k < nidx; k++)
        reset_mpfr (w, idx ? idx[k] : k);
      /* The difference of two such values is taken in double: the values
         are within a few ulp_53 of each other's rounding, which the
         reference term of the f64/f32 reference dwarfs.  */
      *val = mpfr_get_d (w->lv, MPFR_RNDN);
      return true;
    case GC_REF_F64:
      if (xd)
        return gc__eval_f64 (w, xd, val);
      for (size_t k = 0; k < nidx; k++)
        {
          size_t i = idx ? idx[k] : k;
          w->xd[i] = xf[i];
        }
      {
        bool ok = gc__eval_f64 (w, w->xd, val);
        for (size_t k = 0; k < nidx; k++)
          {
            size_t i = idx ? idx[k] : k;
            w->xd[i] = sh->x[i];
          }
        return ok;
      }
    case GC_REF_F32:
      return gc__eval_f32 (w, xf, val);
    case GC_REF_AUTO:   /* a reference of references, never a forward */
      break;
    }
  return false;
}

/* ---------------------------------------------------------------------- */
/* One direction.  */

/* Kink estimate from one-sided divided differences ("Non-smooth points"):
   Delta(s) = F(s) - B(s) is s f'' + O(s^3) where f is smooth and the jump
   of f' at a kink; J = 2 Delta(h) - Delta(2h) cancels the smooth part.  */
static double
jump_estimate (double fp1, double fm1, double fp2, double fm2, double f0,
               double a1, double b1, double a2, double b2)
{
  double d1 = (fp1 - f0) / a1 - (f0 - fm1) / b1;
  double d2 = (fp2 - f0) / a2 - (f0 - fm2) / b2;
  return 2 * d1 - d2;
}

/* The noise of the kink estimate J when it comes from a rounded forward
   (manual: "Non-smooth points"): J is a combination of five evaluations,
   each erring by at most eps; COEF * eps / h bounds it, COEF = h times the
   sum of the absolute coefficients (8 for a symmetric stencil).  */
static double
jump_noise (const shared *sh, gc_reference ref, mpfr_prec_t p, double lmax,
            double hm, long he, double coef)
{
  return coef * gc__eval_error_over_step (ref, p, sh->r->lambda_forward,
                                          sh->r->forward_depth, lmax, hm, he);
}

/* COEF of jump_noise for one-sided steps A1, B1 (at h) and A2, B2 (at
   2h): J = 2 (f1+ - f0) / a1 - 2 (f0 - f1-) / b1 - (f2+ - f0) / a2
   + (f0 - f2-) / b2, whose coefficients sum in absolute value to
   2/a1 + 2/b1 + 1/a2 + 1/b2 + |2/a1 + 2/b1 - 1/a2 - 1/b2|.  */
static double
jump_coef (double h, double a1, double b1, double a2, double b2)
{
  double s1 = 2 / a1 + 2 / b1, s2 = 1 / a2 + 1 / b2;
  return h * (s1 + s2 + fabs (s1 - s2));
}

/* Manual: "Directional checks": the sums of a random direction's adjoint
   term over its support (the elements where v_i != 0): their count K,
   sum (u m_i + 2^-150)^2, sum |v_i| (u m_i + 2^-150) and sum |w_i - v_i|
   (u m_i + 2^-150), w the applied direction.  */
typedef struct random_sums
{
  size_t k;
  double q2, qv, qd;
} random_sums;

static void
random_add (random_sums *rs, double wj, float vj, double mag)
{
  if (vj == 0)
    return;
  double e = GC_U32 * mag + 0x1p-150;
  rs->k++;
  rs->q2 += e * e;
  rs->qv += fabs ((double) vj) * e;
  rs->qd += fabs (wj - (double) vj) * e;
}

static double
random_term (worker *w, gc_direction *d, double worst, const random_sums *rs,
             double spread)
{
  const gc_result *r = w->sh->r;
  double alpha_dir = r->false_alarm / (2.0 * (double) (r->n_total ? r->n_total
                                                                  : 1));
  if (!(w->jq_c > 0) || w->jq_p != alpha_dir / 2
      || w->jq_d != r->backward_depth || w->jq_k != rs->k)
    {
      w->jq_p = alpha_dir / 2;
      w->jq_d = r->backward_depth;
      w->jq_k = rs->k;
      w->jq_c = gc__joint_quantile (alpha_dir / 2, r->backward_depth, rs->k);
    }
  return gc__term_adjoint_random (&d->terms[GC_TERM_ADJOINT], worst,
                                  alpha_dir, w->jq_c, r->backward_depth,
                                  rs->k, rs->q2, rs->qv, rs->qd, w->vnorm,
                                  spread);
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
        stencil_note (w, k, ldexp (hm, (int) he), i);
      if (v)
        for (size_t j = 0; j < n; j++)
          reset_mpfr (w, j);
      else
        reset_mpfr (w, i);
    }
  return ok;
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
    }
  else
    {
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
    }
  d->forward_error_ulps = -1;
  double lmax = fmax (fmax (fabs (mpfr_get_d (f[0], MPFR_RNDN)),
                            fabs (mpfr_get_d (f[1], MPFR_RNDN))),
                      sh->mag_loss);
  d->step = ldexp (hm, (int) (he < -4000 ? -4000 : he));
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
  double e_worst
    = gc__term_reference (&d->terms[GC_TERM_REFERENCE], GC_REF_MPFR, w->wp,
                          sh->r->lambda_forward, sh->r->forward_depth, lmax,
                          hm, he, d->reference, 0);
  /* analytic <g, v> and sum |v_i| m_i; the sums of the random
     direction's term ("Directional checks")  */
  double wm = 0, w1 = 0;
  random_sums rs = { 0, 0, 0, 0 };
  if (v)
    {
      mpfr_set_zero (w->t2, 1);
      for (size_t j = 0; j < n; j++)
        {
          mpfr_set_flt (w->prod, v[j], MPFR_RNDN);
          mpfr_mul_d (w->prod, w->prod, (double) sh->g[j], MPFR_RNDN);
          mpfr_add (w->t2, w->t2, w->prod, MPFR_RNDN);
          wm += fabs ((double) v[j]) * sh->mag[j];
          w1 += fabs ((double) v[j]);
          random_add (&rs, v[j], v[j], sh->mag[j]);
        }
      d->analytic = mpfr_get_d (w->t2, MPFR_RNDN);
    }
  else
    {
      d->analytic = sh->g[i];
      wm = sh->mag[i];
      w1 = 1;
    }
  /* Manual: "Measured rounding sensitivity" */
  double spread = v ? gc__spread_along (sh->g, sh->gm, v, n)
                    : gc__spread_at (sh->g, sh->gm, i);
  double a_worst
    = gc__term_adjoint (&d->terms[GC_TERM_ADJOINT], sh->r->lambda_backward,
                        sh->r->backward_depth, wm, w1, spread);
  if (v)
    a_worst = random_term (w, d, a_worst, &rs, spread);
  /* Manual: "The worst case" */
  d->bar_worst_case = d->terms[GC_TERM_TRUNCATION].value + e_worst + a_worst;
  d->jump_next = NAN;
  w->noise_j = jump_noise (sh, GC_REF_MPFR, w->wp, lmax, hm, he,
                           jump_coef (1, 1, 1, 2, 2));
  gc__judge (d, w->noise_j);
  gc__judge_resolution (d);
  if (!pr)
    return true;
  /* Manual: "Skipping the 2h pair".  (3): MPFR's |J| <= A <= its bar;
     a pass with no truncation term at all (then with any T in [0, P]);
     no confirmation (P <= E + A); not inconclusive at T = P (nor then at
     any smaller T).  */
  double t = d->terms[GC_TERM_TRUNCATION].value;
  double e = d->terms[GC_TERM_REFERENCE].value;
  double a = d->terms[GC_TERM_ADJOINT].value;
  return fabs (pr->jump64) + pr->noise_j64 <= (1 - 3 * pr->rho) * a
         && d->diff <= e + a && t <= e + a && d->verdict == GC_PASS;
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
  if (!stencil_mpfr (w, d, v, hm, he, sh->o->exact_step ? NULL : pr))
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

/* Float modes (f32, f64): rounded points, applied steps.  */
bool
gc__direction_float (worker *w, gc_direction *d)
{
  const shared *sh = w->sh;
  gc__float_ref fr = { sh->ref, sh->best, sh->f0,
                       (int) sh->r->step_exponent };
  double noise_j;
  return gc__direction_float_as (w, d, &fr, &noise_j);
}

/* The stencil's points: x + mult[k] h v, k = 0 to 3.  */
static const double mult[4] = { 1, -1, 2, -2 };

/* Point K of the float stencil at step H along V (NULL: along coordinate
   D->index), rounded to the format (IS64: f64, else f32) in the worker's
   copy of x, the applied deltas recorded: along V those of the +-h points
   (into w->dp, w->dm; the +-2h deltas are not used), on a coordinate into
   STEP1[K].  False, the worker failed, when the step overflows or
   vanishes.  */
static bool
float_point (worker *w, const gc_direction *d, int k, double h,
             const float *v, bool is64, double *step1)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  double *dl[2] = { w->dp, w->dm };
  size_t nidx = v ? n : 1;
  bool any = false;
  for (size_t kk = 0; kk < nidx; kk++)
    {
      size_t j = v ? kk : i;
      double vj = v ? v[j] : 1.0;
      double target = (double) sh->x[j] + mult[k] * h * vj;
      double applied;
      if (is64)
        w->xd[j] = target;
      else
        w->xf[j] = (float) target;
      if (!isfinite (is64 ? w->xd[j] : (double) w->xf[j]))
        {
          gc__fail (w, GC_ESTEP, 0, "the step overflows at parameter %zu: "
                    "x %s %gh = %g is not finite in %s (h = %g)", j,
                    mult[k] > 0 ? "+" : "-", fabs (mult[k]), target,
                    is64 ? "f64" : "f32", h);
          for (size_t jj = 0; jj < n; jj++)
            {
              w->xf[jj] = sh->x[jj];
              w->xd[jj] = sh->x[jj];
            }
          return false;
        }
      applied = is64 ? w->xd[j] - (double) sh->x[j]
                     : (double) w->xf[j] - (double) sh->x[j];
      if (v && k < 2)
        dl[k][j] = applied;
      else
        step1[k] = applied;
      if (applied != 0)
        any = true;
    }
  if (!any)
    {
      if (v)
        gc__fail (w, GC_ESTEP, 0, "the step vanished along random "
                  "direction %zu: x + h v rounds to x", d->id);
      else
        gc__fail (w, GC_ESTEP, 0, "the step vanished at parameter %zu: "
                  "x %s %g rounds to x = %.9g in %s", i, k % 2 ? "-" : "+",
                  fabs (mult[k]) * h, (double) sh->x[i],
                  is64 ? "f64" : "f32");
      return false;
    }
  return true;
}

/* The values of the reference forward (FR: at the +-2h points only where
   it is the best forward) and of the best forward (FB) at the four points
   of the float stencil at step H, each point restored after; STEP1 the
   applied steps on a coordinate.  */
static bool
float_points (worker *w, gc_direction *d, const gc__float_ref *as, double h,
              const float *v, double *fr, double *fb, double *step1)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  bool is64 = as->ref == GC_REF_F64;
  bool need_ref_level2 = as->best == as->ref;
  size_t nidx = v ? n : 1;
  const size_t *idx = v ? NULL : &d->index;
  for (int k = 0; k < 4; k++)
    {
      /* Set the rounded point; record the applied deltas.  */
      if (!float_point (w, d, k, h, v, is64, step1))
        return false;
      bool ok = true;
      if (k < 2 || need_ref_level2)
        ok = is64 ? gc__eval_f64 (w, w->xd, &fr[k])
                  : gc__eval_f32 (w, w->xf, &fr[k]);
      if (ok && as->best != as->ref)
        ok = eval_best_at_float (w, w->xf, is64 ? w->xd : NULL, idx, nidx,
                                 &fb[k]);
      else
        fb[k] = fr[k];
      /* restore */
      for (size_t kk = 0; kk < nidx; kk++)
        {
          size_t j = v ? kk : i;
          w->xf[j] = sh->x[j];
          w->xd[j] = sh->x[j];
        }
      if (!ok)
        {
          stencil_note (w, k, h, i);
          return false;
        }
    }
  return true;
}

/* D's analytic value and central differences from the stencil's values
   FR, FB at step H (along V, or on a coordinate with the applied steps
   STEP1), and its truncation term; *WM = sum |w_i| m_i, *W1 = sum |w_i|,
   RS the random direction's sums, AB the one-sided steps a1, b1, a2, b2
   of J.  */
static void
float_differences (worker *w, gc_direction *d, double h, const float *v,
                   const double *fr, const double *fb, const double *step1,
                   double *wm, double *w1, random_sums *rs, double *ab)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  if (v)
    {
      /* w = (delta+ - delta-) / 2h; analytic <g, w> with a compensated
         sum (Neumaier): its error is O(2^-106) of sum |g_i w_i|.  */
      double s = 0, c = 0;
      for (size_t j = 0; j < n; j++)
        {
          double wj = (w->dp[j] - w->dm[j]) / (2 * h);
          random_add (rs, wj, v[j], sh->mag[j]);
          double t = (double) sh->g[j] * wj;
          double y = s + t;
          c += fabs (s) >= fabs (t) ? (s - y) + t : (t - y) + s;
          s = y;
          *wm += fabs (wj) * sh->mag[j];
          *w1 += fabs (wj);
        }
      d->analytic = s + c;
      d->reference = (fr[0] - fr[1]) / (2 * h);
      d->d2h = (fb[2] - fb[3]) / (4 * h);
      double dbest = (fb[0] - fb[1]) / (2 * h);
      gc__term_truncation (&d->terms[GC_TERM_TRUNCATION], dbest, d->d2h,
                           d->d2h - dbest, h);
      ab[0] = ab[1] = h;
      ab[2] = ab[3] = 2 * h;
      d->step = h;
    }
  else
    {
      double span1 = step1[0] - step1[1], span2 = step1[2] - step1[3];
      d->analytic = sh->g[i];
      d->reference = (fr[0] - fr[1]) / span1;
      double dbest = (fb[0] - fb[1]) / span1;
      d->d2h = (fb[2] - fb[3]) / span2;
      gc__term_truncation (&d->terms[GC_TERM_TRUNCATION], dbest, d->d2h,
                           d->d2h - dbest, span1 / 2);
      *wm = sh->mag[i];
      *w1 = 1;
      ab[0] = step1[0];
      ab[1] = -step1[1];
      ab[2] = step1[2];
      ab[3] = -step1[3];
      d->step = span1 / 2;
    }
}

bool
gc__direction_float_as (worker *w, gc_direction *d, const gc__float_ref *as,
                        double *noise_j)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  bool is64 = as->ref == GC_REF_F64;
  double hm;
  long he;
  gc__step_scaled (sh, i, d->id, &hm, &he);
  if (!sh->user_step)   /* the exponent of this reference's default step */
    he += as->step_exponent - (long) sh->r->step_exponent;
  double h = ldexp (hm, (int) he);
  const float *v = NULL;
  if (i == SIZE_MAX)
    {
      gc__make_random (sh, d->id, w->v, &w->vnorm);
      v = w->v;
    }
  double fr[4] = { 0 }, fb[4] = { 0 };   /* reference and best values */
  double step1[4] = { 0 };                 /* coordinate: applied delta */
  if (!float_points (w, d, as, h, v, fr, fb, step1))
    return false;

  double wm = 0, w1 = 0;
  random_sums rs = { 0, 0, 0, 0 };
  double ab[4];   /* one-sided steps for J: a1, b1, a2, b2 */
  float_differences (w, d, h, v, fr, fb, step1, &wm, &w1, &rs, ab);
  double a1 = ab[0], b1 = ab[1], a2 = ab[2], b2 = ab[3];
  double lmax = fmax (fmax (fabs (fr[0]), fabs (fr[1])), sh->mag_loss);
  d->forward_error_ulps = -1;
  if (as->best != as->ref)
    {
      int bits = is64 ? 53 : 24;
      for (int k = 0; k < 2; k++)
        {
          double ulp = gc__ulp (fmax (fabs (fr[k]), sh->mag_loss), bits);
          if (ulp > 0)
            d->forward_error_ulps = fmax (d->forward_error_ulps,
                                          fabs (fr[k] - fb[k]) / ulp);
        }
    }
  double e_worst
    = gc__term_reference (&d->terms[GC_TERM_REFERENCE], as->ref, sh->p,
                          sh->r->lambda_forward, sh->r->forward_depth, lmax,
                          d->step, 0, d->reference, sh->spread_loss);
  /* Manual: "Measured rounding sensitivity": along v, the direction before
     the rounding of x + h v (w differs from it by that rounding, a second
     order change of S_w).  */
  double spread = v ? gc__spread_along (sh->g, sh->gm, v, n)
                    : gc__spread_at (sh->g, sh->gm, i);
  double a_worst
    = gc__term_adjoint (&d->terms[GC_TERM_ADJOINT], sh->r->lambda_backward,
                        sh->r->backward_depth, wm, w1, spread);
  if (v)
    a_worst = random_term (w, d, a_worst, &rs, spread);
  /* Manual: "The worst case" */
  d->bar_worst_case = d->terms[GC_TERM_TRUNCATION].value + e_worst + a_worst;
  d->jump_next = NAN;
  d->jump = jump_estimate (fb[0], fb[1], fb[2], fb[3], as->f0, a1, b1, a2,
                           b2);
  *noise_j = jump_noise (sh, as->best, sh->p, lmax, d->step, 0,
                         jump_coef (d->step, a1, b1, a2, b2));
  gc__judge (d, *noise_j);
  gc__judge_resolution (d);
  return true;
}
