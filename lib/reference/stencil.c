/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* stencil.c -- one direction: evaluate its stencil in the reference of
   the check, its terms, its verdict.

   Per direction v with step h the stencil is x +- h v and x +- 2h v.  The
   reference is D(h); D(2h) gives the truncation term ("Truncation") and,
   with the centre value, the kink estimate J ("Non-smooth points").  In MPFR
   mode the points are exact; in f32 and f64 modes they are rounded and the
   steps actually applied are used ("Applied steps").  */

#include "reference/stencil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A non-finite loss at a stencil point when the centre's was finite: the
   step has likely left the model's domain; say where.  */
void
gc__stencil_note (worker *w, int k, double h, size_t index)
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

/* Manual: "Domain edges".  Whether the failure W holds may be the
   check's own step leaving the model's domain -- a non-finite loss at a
   stencil point (the centre's was finite), with the check's default step
   -- and a finer first step, level LEVEL + 1 of at most MAX, is left to
   try: the failure is then cleared.  Else, after a descent, the detail
   says how far it went.  */
bool
gc__domain_retry (worker *w, int level, int max)
{
  const shared *sh = w->sh;
  if (w->st != GC_ENONFINITE || sh->user_step || sh->o->exact_step)
    return false;
  if (level >= max)
    {
      size_t len = strlen (w->detail);
      snprintf (w->detail + len, sizeof w->detail - len, "; non-finite at "
                "every first step down to h / 2^%d", 8 * level);
      return false;
    }
  w->st = GC_OK;
  w->cb = 0;
  w->detail[0] = 0;
  return true;
}


void
gc__reset_mpfr (worker *w, size_t i)
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
        gc__reset_mpfr (w, idx ? idx[k] : k);
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
double
gc__jump_noise (const shared *sh, gc_reference ref, mpfr_prec_t p,
                double lmax, double hm, long he, double coef)
{
  return coef * gc__eval_error_over_step (ref, p, sh->r->lambda_forward,
                                          sh->r->forward_depth, lmax, hm, he);
}

/* COEF of gc__jump_noise for one-sided steps A1, B1 (at h) and A2, B2 (at
   2h): J = 2 (f1+ - f0) / a1 - 2 (f0 - f1-) / b1 - (f2+ - f0) / a2
   + (f0 - f2-) / b2, whose coefficients sum in absolute value to
   2/a1 + 2/b1 + 1/a2 + 1/b2 + |2/a1 + 2/b1 - 1/a2 - 1/b2|.  */
double
gc__jump_coef (double h, double a1, double b1, double a2, double b2)
{
  double s1 = 2 / a1 + 2 / b1, s2 = 1 / a2 + 1 / b2;
  return h * (s1 + s2 + fabs (s1 - s2));
}

/* The direction's adjoint term (its value into D's terms) and its worst
   case, for the float and the MPFR stencils alike: the measured spread
   (manual: "Measured rounding sensitivity": along v, the direction before
   the rounding of x + h v, which differs from it by that rounding, a
   second order change of S_w), the random direction's refinement, and
   the model's rounding classes (manual: "Rounding classes": a model with
   classes keeps the worst-case form along a random direction too, the
   draw's refinement being f32's).  */
double
gc__adjoint_terms (worker *w, gc_direction *d, const float *v, double wm,
                   double w1, gc__random_sums *rs)
{
  shared *sh = w->sh;
  double spread = v ? gc__spread_along (sh->g, sh->gm, v, sh->n)
                    : gc__spread_at (sh->g, sh->gm, d->index);
  double a_worst
    = gc__term_adjoint (&d->terms[GC_TERM_ADJOINT], sh->r->lambda_backward,
                        sh->r->backward_depth, wm, w1, spread);
  if (v && !sh->r->n_precisions)
    a_worst = gc__random_term (w, d, a_worst, rs, spread);
  gc__precision_adjoint (sh->r, &d->terms[GC_TERM_ADJOINT], wm, w1, &a_worst);
  return a_worst;
}

/* Adds element j to RS (stencil.h).  */
void
gc__random_add (gc__random_sums *rs, double wj, float vj, double mag)
{
  if (vj == 0)
    return;
  double e = GC_U32 * mag + 0x1p-150;
  rs->k++;
  rs->q2 += e * e;
  rs->qv += fabs ((double) vj) * e;
  rs->qd += fabs (wj - (double) vj) * e;
}

double
gc__random_term (worker *w, gc_direction *d, double worst,
                 const gc__random_sums *rs, double spread)
{
  const gc_result *r = w->sh->r;
  size_t nb = gc__bounds_count (r);
  double alpha_dir = r->false_alarm / (2.0 * (double) (nb ? nb : 1));
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

/* Manual: "What f64 mode cannot judge".  f64 mode has no MPFR level to
   confirm at.  A direction whose verdict rests on what a step too long
   for the function would also show -- a non-smooth verdict, or a
   reference that disagrees with the analytic value beyond its own terms
   (a failure, or with a twin any such gap, which the twin's smaller bar
   may fail) where deep aliasing is not excluded ("A failure beyond
   doubt") -- is withdrawn, INCONCLUSIVE and unconfirmed (level -1; the
   twin's algorithm then too), when on a coordinate whose element is
   nonzero the step h / 2^GC_F64_CONFIRM_SHIFT still exceeds the element
   (no finer step of f64's reaches the element's own scale), or, for a
   failure, when at that finer step its difference quotient disagrees
   with the first beyond their terms together.  Otherwise the first
   evaluation stands (a non-smooth verdict at an element the step
   resolves: a staircase finer than the step keeps the verdicts its
   diagnosis reads).  A step of the user's is held to the first test
   only, not refined.  A non-finite value or a vanished step at the finer
   step withdraws it too; any other failure stops the check (false).  FR
   is the first evaluation's reference and step.  */
static bool
f64_confirm (worker *w, gc_direction *d, gc__float_ref fr)
{
  const shared *sh = w->sh;
  if (sh->ref != GC_REF_F64 || d->verdict == GC_INCONCLUSIVE)
    return true;
  /* a step of the user's is not refined: the check takes it as given */
  bool refine = !sh->user_step && !sh->o->exact_step;
  double t = d->terms[GC_TERM_TRUNCATION].value;
  double e = d->terms[GC_TERM_REFERENCE].value;
  double a = d->terms[GC_TERM_ADJOINT].value;
  double gap = fabs (d->analytic - d->reference);
  bool kink = d->verdict == GC_NONSMOOTH;
  if (!kink
      && (!(d->verdict == GC_FAIL || (sh->g64 && gap > t + e))
          || gc__aliasing_excluded (d->reference, d->analytic, t, e, a)))
    return true;
  bool unresolved = false;
  if (d->index != SIZE_MAX && sh->x[d->index] != 0
      && ldexp (d->step, -GC_F64_CONFIRM_SHIFT) >= fabs (sh->x[d->index]))
    unresolved = true;
  else if (!kink && refine)
    {
      gc_direction fine = *d;
      double noise_j;
      fr.step_exponent -= GC_F64_CONFIRM_SHIFT;
      bool ok = gc__direction_float_as (w, &fine, &fr, &noise_j);
      if (!ok && w->st != GC_ENONFINITE && w->st != GC_ESTEP)
        return false;
      if (!ok)
        {
          w->st = GC_OK;
          w->cb = 0;
          w->detail[0] = 0;
        }
      double tf = fine.terms[GC_TERM_TRUNCATION].value;
      double ef = fine.terms[GC_TERM_REFERENCE].value;
      unresolved = !ok || !(fabs (fine.reference - d->reference)
                            <= t + e + tf + ef);
    }
  if (unresolved)
    {
      d->verdict = GC_INCONCLUSIVE;
      d->level = -1;
    }
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
  /* Manual: "Domain edges" */
  for (int edge = 0; !gc__direction_float_as (w, d, &fr, &noise_j);
       edge++, fr.step_exponent -= 8)
    if (!gc__domain_retry (w, edge, GC_EDGE_LEVELS_FLOAT))
      return false;
  gc__judge_single_level (sh->ref, d);
  return f64_confirm (w, d, fr);
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
          char at[128];
          gc__fail (w, GC_ESTEP, 0, "the step overflows at %s: "
                    "x %s %gh = %g is not finite in %s (h = %g)",
                    gc__param_at (sh->r, j, at, sizeof at),
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
        {
          char at[128];
          gc__fail (w, GC_ESTEP, 0, "the step vanished at %s: x %s %g "
                    "rounds to x = %.9g in %s",
                    gc__param_at (sh->r, i, at, sizeof at), k % 2 ? "-" : "+",
                    fabs (mult[k]) * h, (double) sh->x[i],
                    is64 ? "f64" : "f32");
        }
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
          gc__stencil_note (w, k, h, i);
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
                   double *wm, double *w1, gc__random_sums *rs, double *ab)
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
          gc__random_add (rs, wj, v[j], sh->mag[j]);
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
  w->stencil_index = SIZE_MAX;
  if (!float_points (w, d, as, h, v, fr, fb, step1))
    return false;
  /* the four f64 values where they are the best forward's at exactly
     x -+ h, x -+ 2h (twin.c: Richardson's flatness test) */
  if (is64 && !v && as->best == as->ref && step1[0] == h && step1[1] == -h
      && step1[2] == 2 * h && step1[3] == -2 * h)
    {
      memcpy (w->stencil_f, fr, sizeof w->stencil_f);
      w->stencil_h = h;
      w->stencil_index = i;
    }

  double wm = 0, w1 = 0;
  gc__random_sums rs = { 0, 0, 0, 0 };
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
  double a_worst = gc__adjoint_terms (w, d, v, wm, w1, &rs);
  /* Manual: "The worst case" */
  d->bar_worst_case = d->terms[GC_TERM_TRUNCATION].value + e_worst + a_worst;
  d->jump_next = NAN;
  d->jump = jump_estimate (fb[0], fb[1], fb[2], fb[3], as->f0, a1, b1, a2,
                           b2);
  *noise_j = gc__jump_noise (sh, as->best, sh->p, lmax, d->step, 0,
                         gc__jump_coef (d->step, a1, b1, a2, b2));
  gc__judge (d, *noise_j);
  gc__judge_resolution (d);
  return true;
}
