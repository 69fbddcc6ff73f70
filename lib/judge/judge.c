/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* judge.c -- from measured values to verdicts: one direction against its
   bar (gc__judge), and a whole result from its directions (gc__summarise).
   Shared by the gradient check (check.c), the forward oracle (forward.c)
   and merged reports (merge.c).  The twin's two verdicts are judged in
   judge_twin.c.  */

#include "base/internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Judge one direction from its measured values.  */
void
gc__judge (gc_direction *d, double noise_j)
{
  d->bar = d->terms[0].value + d->terms[1].value + d->terms[2].value;
  d->diff = fabs (d->analytic - d->reference);
  if (d->diff == 0)
    d->nu = 0;
  else if (d->bar > 0)
    d->nu = d->diff / d->bar;
  else
    d->nu = INFINITY;
  d->resolution = d->reference != 0 ? d->bar / fabs (d->reference) : INFINITY;
  /* Manual: "The worst case" */
  d->nu_worst_case = d->diff == 0 ? 0 : d->diff / d->bar_worst_case;
  /* Manual: "Non-smooth points": a J that shrank at the next finer level
     is a smooth function's fourth difference, not a jump of f'.  */
  if (fabs (d->jump) > d->bar + noise_j
      && !(fabs (d->jump_next) <= fabs (d->jump) / 16))
    d->verdict = GC_NONSMOOTH;
  else
    d->verdict = d->nu <= 1 ? GC_PASS : GC_FAIL;
}

/* Manual: "A failure beyond doubt": whether an oscillation finer than the
   step, f' cos (omega t) at y = omega h, could have shrunk a reference
   |D| = s |f'| < |f'| / 4 (s = |sinc y|) with a measured truncation T
   (within 2 E of the true |f' sin y (cos y - 1) / y| >= 3 s^3 |f'|),
   where a correct analytic value F lies within 4 A of f'.  */
bool
gc__aliasing_excluded (double ref, double f, double t, double e, double a)
{
  double fmax_ = fabs (f) + 4 * a, dl = fabs (ref);
  if (4 * dl >= fmax_)
    return true;
  double s = dl / fmax_;
  return t + 2 * e < 3 * dl * s * s;
}

/* Manual: "A failure beyond doubt".  No finer step can turn D's failure
   into a pass when its difference exceeds every error of D(h) that the
   confirmation's finer levels could correct, under the models that
   confirmation itself rests on (a truncation in h^2, one kink, one
   oscillation finer than h), plus the bar of any level that could be
   judged at (at most 4 A):
     |a - D| > 4 A + 2 T + 5 E + |J| + N_J,
     no deep aliasing (gc__aliasing_excluded),
     T <= E + A                        (not a verdict resting on T).
   A J not measured (NaN) leaves the failure in doubt.  */
bool
gc__failure_beyond_doubt (const gc_direction *d, double noise_j)
{
  double t = d->terms[GC_TERM_TRUNCATION].value;
  double e = d->terms[GC_TERM_REFERENCE].value;
  double a = d->terms[GC_TERM_ADJOINT].value;
  return d->diff > 4 * a + 2 * t + 5 * e + fabs (d->jump) + noise_j
         && gc__aliasing_excluded (d->reference, d->analytic, t, e, a)
         && t <= e + a;
}

/* Manual: "Non-smooth points": a direction whose J shrank with the step
   is judged as smooth, by its nu alone.  */
void
gc__judge_smooth (gc_direction *d)
{
  d->verdict = d->nu <= 1 ? GC_PASS : GC_FAIL;
  gc__judge_resolution (d);
}

/* Whether direction D was judged (it holds a resolution).  */
static bool
judged (const gc_direction *d)
{
  return d->verdict != GC_ERROR && !isnan (d->resolution);
}

/* The order of a resolution (non-negative, possibly +Inf): for IEEE
   doubles >= 0 the bit pattern orders as the value.  */
static uint64_t
order_of (double v)
{
  uint64_t u;
  memcpy (&u, &v, sizeof u);
  return u;
}

/* A direction's resolution: the check's (f32 gradient against the
   reference), or the twin's algorithm's.  */
static double
res_of (const gc_direction *d, bool twin)
{
  return fabs (twin ? d->resolution_f64 : d->resolution);
}

/* The K-th smallest resolution (from 0) among the judged directions, found
   by bisection on the bit patterns: 64 passes, no allocation, exact.  */
static double
kth_resolution (const gc_result *r, size_t k, bool twin)
{
  uint64_t lo = 0, hi = order_of (INFINITY);
  while (lo < hi)
    {
      uint64_t mid = lo + (hi - lo) / 2;
      size_t at_most = 0;
      for (size_t j = 0; j < r->n_directions; j++)
        if (judged (&r->dirs[j]) && !isnan (res_of (&r->dirs[j], twin))
            && order_of (res_of (&r->dirs[j], twin)) <= mid)
          at_most++;
      if (at_most > k)
        hi = mid;
      else
        lo = mid + 1;
    }
  double v;
  memcpy (&v, &lo, sizeof v);
  return v;
}

/* The distribution of the resolution (manual: "Inconclusive
   directions").  */
static void
resolution_summary (gc_result *r)
{
  size_t n = 0, n64 = 0;
  r->n_resolution_coarse = r->n_resolution_blind = 0;
  r->resolution_worst = NAN;
  r->resolution_median = NAN;
  r->resolution_f64_worst = NAN;
  r->resolution_f64_median = NAN;
  r->blindest = SIZE_MAX;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (!judged (d))
        continue;
      double res = fabs (d->resolution);
      n++;
      if (res > 1e-3)
        r->n_resolution_coarse++;
      if (res >= 1)
        r->n_resolution_blind++;
      if (r->blindest == SIZE_MAX || res > r->resolution_worst)
        {
          r->blindest = k;
          r->resolution_worst = res;
        }
      if (r->twin && !isnan (d->resolution_f64))
        {
          n64++;
          if (!(fabs (d->resolution_f64) <= r->resolution_f64_worst))
            r->resolution_f64_worst = fabs (d->resolution_f64);
        }
    }
  if (n64)
    {
      double lo = kth_resolution (r, (n64 - 1) / 2, true);
      r->resolution_f64_median
        = n64 % 2 ? lo : (lo + kth_resolution (r, n64 / 2, true)) / 2;
    }
  if (n == 0)
    return;
  double lo = kth_resolution (r, (n - 1) / 2, false);
  r->resolution_median
    = n % 2 ? lo : (lo + kth_resolution (r, n / 2, false)) / 2;
}

/* Manual: "What the measurement does not support".  The derived part of
   the adjoint term scaled to the largest depth-magnitude product the
   measured spreads support, D_S roundings of the declared magnitudes:
   min(1, gamma_{d_s} / u / mult) times what the declared multiplier
   MULT = min(lambda sqrt(d_b), gamma_d / u) gave.  */
/* The depth of an adjoint-like term A: the backward's d_b, the tangent's
   d_t or the HVP's d_H (manual: "The JVP check", "The HVP check"); NAN
   for none.  */
static double
term_depth (const gc_term *a)
{
  double d = gc__term_input (a, "d_b", NAN);
  d = isnan (d) ? gc__term_input (a, "d_t", NAN) : d;
  return isnan (d) ? gc__term_input (a, "d_H", NAN) : d;
}

static double
supported_part (const gc_term *a, double derived, double d_s)
{
  double db = term_depth (a);
  double gu = gc__term_input (a, "gamma_d / u", NAN);
  double lambda = gc__term_input (a, "lambda", NAN);
  if (isnan (lambda))
    lambda = gc__term_input (a, "lambda_n", NAN);
  double mult = isnan (lambda) ? gu : fmin (lambda * sqrt (db), gu);
  double gs = d_s / (1 - ldexp (d_s, -24));
  return mult > gs ? derived * (gs / mult) : derived;
}

/* Manual: "What the measurement does not support".  For each passing
   gradient direction judged without a twin: a measured spread beyond the
   worst case of the declared depth and magnitudes (S_w > 2 gamma_d
   (u sum |w_i| m_i + 2^-150 sum |w_i|): "What the measurement tells about
   the declarations") is a precision finding, not a wider bar; a pass that holds only on the
   part of the bar the measurement contradicts (d_b beyond
   GC_COARSE_FACTOR times the implied depth) is inconclusive; and a blind
   pass ("Inconclusive directions") whose magnitude was defaulted is
   inconclusive, as the twin's is (the tensor's largest |g| manufactures
   the blindness); and where every spread is 0, a failure within the
   worst-case bar is inconclusive ("Rounding the modes do not reach").
   Idempotent: summarise may run more than once.  */
static void
judge_declarations (gc_result *r)
{
  r->depth_supported
    = r->depth_implied > 0 && !r->nondeterministic
      && (double) r->backward_depth > GC_COARSE_FACTOR * r->depth_implied
      ? GC_COARSE_FACTOR * r->depth_implied : 0;
  double d_s = r->depth_supported;
  bool defaulted = (r->defaulted & GC_DEFAULTED_MAGNITUDES) != 0;
  /* every spread 0: the measurement cannot tell exact arithmetic from
     modes that did not reach the computation */
  bool unreached = !r->nondeterministic
                   && ((r->rounding_modes && r->depth_implied_at == SIZE_MAX)
                       /* manual: "Device arithmetic": none was applied */
                       || r->device[0]);
  for (size_t k = 0; k < r->n_directions; k++)
    {
      gc_direction *d = &r->dirs[k];
      const gc_term *a = &d->terms[GC_TERM_ADJOINT];
      if (!isnan (d->analytic_f64) || isnan (term_depth (a)))
        continue;
      /* Manual: "Rounding the modes do not reach" */
      if (unreached && d->verdict == GC_FAIL && d->nu_worst_case <= 1)
        {
          d->verdict = GC_INCONCLUSIVE;
          r->n_unreached++;
          continue;
        }
      if (d->verdict != GC_PASS)
        continue;
      double spread = gc__term_input (a, "S_w", 0);
      double derived = a->value - spread;
      double te = d->terms[GC_TERM_TRUNCATION].value
                  + d->terms[GC_TERM_REFERENCE].value;
      double wm = gc__term_input (a, "sum |w_i| m_i", NAN);
      /* only against declared magnitudes: a defaulted one (the tensor's
         largest |g|) does not see a cancellation inside the element's
         computation, which is what the spread is there to cover */
      if (r->rounding_modes && !isnan (wm) && !r->nondeterministic
          && !defaulted)
        {
          double base = GC_U32 * wm
                        + 0x1p-150 * gc__term_input (a, "sum |w_i|", 0);
          double worst = gc__term_input (a, "gamma_d / u", INFINITY) * base;
          /* Manual: "Rounding classes": and the reached classes' share */
          double more = r->n_precisions
                        ? gc__precision_spread_limit
                            (r, wm, gc__term_input (a, "sum |w_i|", 0))
                        : 0;
          if (spread > 2 * worst + more)
            {
              d->verdict = GC_PRECISION;
              r->n_spread_beyond++;
              continue;
            }
        }
      /* Manual: "Rounding classes": the spreads measure f32's class (and
         the reached ones); the classes' part is scaled by nothing of
         f32's, and a pass may not rest on the part of classes the
         rounding modes do not reach  */
      double classes = gc__term_input (a, "A_classes", 0);
      double unreached = gc__term_input (a, "A_unreached", 0);
      if (d_s > 0)
        derived = supported_part (a, derived - classes, d_s) + classes;
      if (unreached > 0)
        {
          double bv = te + derived - unreached + spread;
          if (d->diff != 0 && !(d->diff <= bv))
            {
              d->verdict = GC_INCONCLUSIVE;
              r->n_unvalidated++;
              continue;
            }
          derived -= unreached;
        }
      double bar = te + derived + spread;
      double nu = d->diff == 0 ? 0 : bar > 0 ? d->diff / bar : INFINITY;
      double res = d->reference != 0 ? bar / fabs (d->reference) : INFINITY;
      if (nu > 1)
        {
          d->verdict = GC_INCONCLUSIVE;
          r->n_unsupported++;
          continue;
        }
      if (res < 1 || (d->analytic == 0 && d->reference == 0))
        continue;
      /* a blind pass, below the rounding only on the supported bar
         ("Inconclusive directions", "Measured rounding sensitivity") */
      double ref = te + spread;
      bool below = ref < derived
                   || (!(derived < fabs (d->reference))
                       && derived > ref - spread);
      if (!below)
        {
          d->verdict = GC_INCONCLUSIVE;
          r->n_unsupported++;
        }
      else if (defaulted)
        {
          d->verdict = GC_INCONCLUSIVE;
          r->n_blind_defaulted++;
        }
    }
}

/* Manual: "The loss magnitude".  A declared M_L that the reference
   forward's spread contradicts -- d_f above GC_COARSE_FACTOR times the
   implied forward depth S_L / (2 u M_L) -- supports at most M_S =
   GC_COARSE_FACTOR d_implied M_L / d_f; each pass decided by a float
   reference must hold with its reference-rounding term's M_L part taken
   at M_S (its eps scaled by ulp(2 max(M_S, |L|)) / ulp(M_L): the loss at
   x +- h within a binade of |L|), else it is inconclusive.  Idempotent.  */
static void
judge_loss_magnitude (gc_result *r)
{
  r->loss_magnitude_supported = 0;
  double fdi = r->forward_depth_implied, df = (double) r->forward_depth;
  if ((r->defaulted & GC_DEFAULTED_LOSS_MAGNITUDE) || !(fdi > 0)
      || r->nondeterministic || !(df > GC_COARSE_FACTOR * fdi))
    return;
  double ms = r->loss_magnitude * GC_COARSE_FACTOR * fdi / df;
  r->loss_magnitude_supported = ms;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_PASS || d->decided_by == GC_REF_MPFR)
        continue;
      const gc_term *e = &d->terms[GC_TERM_REFERENCE];
      double ml = gc__term_input (e, "M_L", NAN);
      double bits = gc__term_input (e, "p", NAN);
      double h = gc__term_input (e, "h", NAN);
      if (!(ml > 0) || isnan (bits) || !(h > 0))
        continue;
      double rest = GC_U64 * fabs (d->reference)
                    + gc__term_input (e, "S_L", 0) / h;
      double lm = 2 * fmax (ms, fabs (r->loss_reference));
      double scale = fmin (1, gc__ulp (lm, (int) bits) / gc__ulp (ml, (int) bits));
      double es = (e->value - rest) * scale + rest;
      double bar = d->terms[GC_TERM_TRUNCATION].value + es
                   + d->terms[GC_TERM_ADJOINT].value;
      if (d->diff > bar)
        {
          d->verdict = GC_INCONCLUSIVE;
          r->n_loss_unsupported++;
        }
    }
}

void
gc__summarise (gc_result *r)
{
  r->n_unsupported = r->n_blind_defaulted = r->n_spread_beyond = 0;
  r->n_unreached = r->n_loss_unsupported = 0;
  r->n_unvalidated = 0;
  judge_declarations (r);
  gc__judge_twin_unreached (r);
  judge_loss_magnitude (r);
  r->n_failed = r->n_nonsmooth = r->n_inconclusive = 0;
  r->worst = SIZE_MAX;
  r->worst_nu = 0;
  r->worst_nu_worst_case = NAN;
  r->n_failed_certain = 0;
  gc__twin_summary (r);
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      /* Manual: "The worst case" */
      if (!isnan (d->nu_worst_case) && d->verdict != GC_ERROR
          && !(d->nu_worst_case <= r->worst_nu_worst_case))
        r->worst_nu_worst_case = d->nu_worst_case;
      /* Manual: "The worst case": with a twin, the algorithm's failure
         (its term already gamma_d at u_53) and the arithmetic's mismatch
         (beyond 2^16 worst-case bounds) are beyond any alignment too */
      bool twin_certain = r->twin && !isnan (d->analytic_f64)
                          && (d->verdict_algorithm == GC_FAIL
                              || d->arith == GC_ARITH_MISMATCH);
      if (d->verdict == GC_FAIL && (d->nu_worst_case > 1 || twin_certain))
        r->n_failed_certain++;
      if (d->verdict == GC_FAIL)
        r->n_failed++;
      else if (d->verdict == GC_NONSMOOTH)
        r->n_nonsmooth++;
      else if (d->verdict == GC_INCONCLUSIVE)
        r->n_inconclusive++;
      if (d->forward_error_ulps > r->forward_error_ulps
          && r->reference == GC_REF_F32)
        r->forward_error_ulps = d->forward_error_ulps;
      /* with a twin, the worst of its two questions ("Two verdicts,
         one report"); a failure before any other direction, whatever its
         nu (a precision finding of larger nu_arith is no failure: the
         verdict line and the worst direction show what failed) */
      double nu = r->twin && !isnan (d->analytic_f64)
                  ? fmax (d->nu_f64, d->nu_arith) : d->nu;
      bool fails = d->verdict == GC_FAIL;
      bool worst_fails = r->worst != SIZE_MAX
                         && r->dirs[r->worst].verdict == GC_FAIL;
      if (r->worst == SIZE_MAX || (fails && !worst_fails)
          || (fails == worst_fails && nu > r->worst_nu))
        {
          r->worst = k;
          r->worst_nu = nu;
        }
    }
  if (r->status != GC_OK)
    r->verdict = GC_ERROR;
  else if (r->nondeterministic)
    r->verdict = GC_NONDETERMINISTIC;
  else if (r->n_failed)
    r->verdict = GC_FAIL;
  else if (r->n_precision || r->n_spread_beyond)
    r->verdict = GC_PRECISION;
  else if (r->n_nonsmooth)
    r->verdict = GC_NONSMOOTH;
  else if (r->n_inconclusive)
    r->verdict = GC_INCONCLUSIVE;
  else
    r->verdict = GC_PASS;
  /* Manual: "Forward disagreement", "Never a pass": an f32 forward
     beyond the worst case of its reference (for the declared M_L, or
     2^16 times it for |L|) is another function: the backward was judged
     against the reference's, which the production forward does not
     compute; no pass rests on that  */
  if (r->verdict == GC_PASS && gc__forward_unjudged (r))
    r->verdict = GC_INCONCLUSIVE;
  resolution_summary (r);
}
