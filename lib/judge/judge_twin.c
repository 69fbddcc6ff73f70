/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* judge_twin.c -- the f64 twin's two verdicts (manual: "Two verdicts, one
   report"): a direction's algorithm against its reference and its
   arithmetic against the derived f32 bound, combined (gc__judge_twin);
   the twin's counts (gc__twin_summary); and the algorithm's failures the
   twin's unmeasured rounding leaves undecided (gc__judge_twin_unreached).
   judge.c's gc__summarise calls the last two.  */

#include "base/internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Manual: "Two verdicts, one report": the direction's verdict from its
   algorithm's and its arithmetic's, in the documented order: a kink, a
   wrong algorithm, an f32 path beyond any rounding, a precision loss, a
   spread against defaulted magnitudes, then the algorithm's pass or
   inconclusive.  */
static void
combine (gc_direction *d)
{
  gc_verdict a = d->verdict_algorithm;
  if (a == GC_NONSMOOTH)
    d->verdict = GC_NONSMOOTH;
  else if (a == GC_FAIL || d->arith == GC_ARITH_MISMATCH)
    d->verdict = GC_FAIL;
  else if (d->arith == GC_ARITH_PRECISION)
    d->verdict = GC_PRECISION;
  else if (d->arith == GC_ARITH_INCONCLUSIVE)
    d->verdict = GC_INCONCLUSIVE;
  else
    d->verdict = a;
}

/* Manual: "Two verdicts, one report".  */
void
gc__judge_twin (gc_direction *d)
{
  if (isnan (d->analytic_f64) || d->verdict == GC_ERROR)
    return;
  /* The algorithm: the twin against the same reference, truncation and
     reference rounding, with the twin's adjoint term.  */
  gc_direction t = *d;
  t.terms[GC_TERM_ADJOINT] = d->adjoint_f64;
  t.analytic = d->analytic_f64;
  /* Manual: "Richardson's stencil": R(h) replaces D(h) where the two
     agree within their own terms (each premise holding, both are within
     them of f'); where they do not, one premise fails, and D(h), judged
     as the check judged it, stands.  */
  d->richardson_used = 0;
  if (!isnan (d->richardson) && d->verdict != GC_NONSMOOTH)
    {
      double tr = d->richardson_terms[0].value + d->richardson_terms[1].value;
      double td = d->terms[GC_TERM_TRUNCATION].value
                  + d->terms[GC_TERM_REFERENCE].value;
      /* ... and only where it refines: terms no smaller than D(h)'s say
         its longer stencil lies across structure (a tie, a kink) that
         would make a wider bar pass what D(h) sees  */
      if (fabs (d->richardson - d->reference) <= tr + td && tr < td)
        {
          d->richardson_used = 1;
          t.reference = d->richardson;
          t.terms[GC_TERM_TRUNCATION] = d->richardson_terms[0];
          t.terms[GC_TERM_REFERENCE] = d->richardson_terms[1];
        }
    }
  t.bar = t.terms[0].value + t.terms[1].value + t.terms[2].value;
  t.diff = fabs (t.analytic - t.reference);
  t.nu = t.diff == 0 ? 0 : t.bar > 0 ? t.diff / t.bar : INFINITY;
  t.resolution = t.reference != 0 ? t.bar / fabs (t.reference) : INFINITY;
  /* a kink the reference's own judgement saw stands: the twin's bar is
     smaller, never larger; so does a reference no two confirmation levels
     agreed on (manual: "Confirming a direction"): untrustworthy for both
     questions */
  if (d->verdict == GC_NONSMOOTH)
    t.verdict = GC_NONSMOOTH;
  else if (d->level < 0)
    t.verdict = GC_INCONCLUSIVE;
  else
    {
      t.verdict = t.nu <= 1 ? GC_PASS : GC_FAIL;
      /* A blind direction ("Inconclusive directions") is below the
         rounding of a correct twin only when its magnitude was declared:
         a defaulted one (the tensor's largest |g|) manufactures the
         blindness, and the measured spread S_w64 is what the element's
         computation showed.  */
      const gc_term *a = &d->adjoint_f64;
      bool defaulted = gc__term_input (a, "m defaulted", 0) != 0;
      double s64 = gc__term_input (a, "S_w64", 0);
      bool below = !defaulted && gc__below_rounding (&t, a, s64);
      /* Manual: "The measured floor": where measured, the twin's rounding
         is bounded by the probe's floor scaled to f64, kappa (P_w + u
         |a_64|) 2^-29 + S_w64, in place of the defaulted magnitudes (the
         arithmetic's F_w rounds at them, and they manufacture the
         blindness this replaces) */
      if (defaulted && d->arith_floor >= 0)
        {
          gc_term fl = *a;
          fl.value = GC_FLOOR_MARGIN * 0x1p-29
                     * (d->arith_floor_probe
                        + GC_U32 * fabs (d->analytic_f64)) + s64;
          below = gc__below_rounding (&t, &fl, s64);
        }
      bool nothing = t.reference == 0 && t.analytic == 0;
      if (t.verdict == GC_PASS && !(t.resolution < 1) && !below && !nothing)
        t.verdict = GC_INCONCLUSIVE;
    }
  d->bar_f64 = t.bar;
  d->nu_f64 = t.nu;
  d->resolution_f64 = t.resolution;
  d->verdict_algorithm = t.verdict;
  /* The arithmetic: its measured error ARITH_DIFF (|g32 - g64|, or the
     f32 spread's share) against the bound ARITH_BAR, both from twin.c
     (f32's worst case plus the twin's term).  */
  d->nu_arith = d->arith_diff == 0 ? 0
                : d->arith_bar > 0 ? d->arith_diff / d->arith_bar : INFINITY;
  d->arith = d->nu_arith <= 1 ? GC_ARITH_OK
             : d->nu_arith <= GC_PRECISION_CUT ? GC_ARITH_PRECISION
             : GC_ARITH_MISMATCH;
  /* Manual: "Spread against defaulted magnitudes": an excess of the
     spread's share S_w / C alone (|g32 - g64| within the bound) is a
     finding only against declared magnitudes; against defaulted ones it
     says the magnitude undercounts the element's computation.  Where
     the floor was measured ("The measured floor") and no class is
     declared, the bound is no defaulted magnitude's, and the excess is
     judged.  */
  bool classes = gc__term_input (&d->terms[GC_TERM_ADJOINT], "A_classes",
                                 -1) >= 0;
  if (d->arith != GC_ARITH_OK && (classes || !(d->arith_floor >= 0))
      && !(fabs (d->analytic - d->analytic_f64) > d->arith_bar)
      && gc__term_input (&d->adjoint_f64, "m defaulted", 0) != 0)
    d->arith = GC_ARITH_INCONCLUSIVE;
  /* Manual: "A factor the point does not move": a factor that held at
     every point compared is no rounding, whatever its size ("Within the
     bound": within the arithmetic's bound too) */
  if ((d->arith == GC_ARITH_PRECISION || d->arith == GC_ARITH_OK)
      && d->arith_factor_points > 0
      && !isnan (d->arith_factor))
    d->arith = GC_ARITH_MISMATCH;
  /* Manual: "A term the point does not redraw": a discrepancy that moved
     with the points as a smooth term, no rounding's scatter */
  if (d->arith == GC_ARITH_PRECISION && d->arith_drift <= GC_TERM_DRIFT)
    d->arith = GC_ARITH_MISMATCH;
  combine (d);
}

/* Manual: "Two verdicts, one report": the twin's counts and worst
   directions.  */
void
gc__twin_summary (gc_result *r)
{
  r->n_failed_algorithm = r->n_precision = r->n_mismatch = 0;
  r->worst_nu_arith = r->worst_nu_f64 = NAN;
  r->worst_arith = r->worst_f64 = SIZE_MAX;
  r->n_spread_defaulted = 0;
  r->spread_defaulted_at = SIZE_MAX;
  if (!r->twin)
    return;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict == GC_ERROR || isnan (d->analytic_f64))
        continue;
      if (d->verdict_algorithm == GC_FAIL)
        r->n_failed_algorithm++;
      if (d->verdict == GC_PRECISION)
        r->n_precision++;
      if (d->arith == GC_ARITH_MISMATCH)
        r->n_mismatch++;
      /* Manual: "Spread against defaulted magnitudes" */
      if (d->arith == GC_ARITH_INCONCLUSIVE && d->verdict == GC_INCONCLUSIVE)
        {
          r->n_spread_defaulted++;
          if (r->spread_defaulted_at == SIZE_MAX
              || d->nu_arith > r->dirs[r->spread_defaulted_at].nu_arith)
            r->spread_defaulted_at = k;
        }
      if (r->worst_arith == SIZE_MAX || d->nu_arith > r->worst_nu_arith)
        {
          r->worst_arith = k;
          r->worst_nu_arith = d->nu_arith;
        }
      if (r->worst_f64 == SIZE_MAX || d->nu_f64 > r->worst_nu_f64)
        {
          r->worst_f64 = k;
          r->worst_nu_f64 = d->nu_f64;
        }
    }
}

/* Manual: "Richardson's stencil": the reference D's algorithm was judged
   on, R(h) where used, else D(h); its truncation and rounding terms'
   sum in *TERMS.  */
double
gc__algorithm_reference (const gc_direction *d, double *terms)
{
  bool rich = d->richardson_used;
  *terms = rich ? d->richardson_terms[0].value + d->richardson_terms[1].value
                : d->terms[GC_TERM_TRUNCATION].value
                  + d->terms[GC_TERM_REFERENCE].value;
  return rich ? d->richardson : d->reference;
}

/* The twin's base u_53 sum |w_i| m_i + 2^-1074 sum |w_i| of direction D,
   from its term A_64 = GU base + S_w64, GU = gamma_d(u_53)/u_53 at the
   check's d_b: what a report read back keeps of it.  */
static double
twin_base (const gc_direction *d, double gu)
{
  const gc_term *a = &d->adjoint_f64;
  double b = a->value - gc__term_input (a, "S_w64", 0);
  return gu > 0 && b > 0 ? b / gu : 0;
}

/* Manual: "Twin rounding the modes do not reach".  Where the modes were
   applied to the twin and its every spread is 0, and the declared depth
   is contradicted (an arithmetic precision finding, or the backward's
   spread implying more than d_b), an algorithm failure within its
   reference's terms plus the twin's worst case at D = max(d_b, the depth
   the backward's spread implies, ceil((lambda_b r_max)^2)), r = |a32 -
   a64| / (2^29 B_64), B_64 = u_53 M + 2^-1074 sum |w_i| the twin's base,
   over the directions whose arithmetic is no mismatch, is
   inconclusive.  Idempotent: it starts from the
   algorithm's own ratio nu_f64, which summarise does not change.  */
void
gc__judge_twin_unreached (gc_result *r)
{
  /* undo an earlier call's work first: the conditions may have changed
     since (diagnose_twin.c turns structured precision findings into
     mismatches); an algorithm failure (nu_f64 > 1 at a confirmed level)
     is inconclusive only by this rule */
  for (size_t k = 0; k < r->n_directions; k++)
    {
      gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_ERROR && !isnan (d->analytic_f64)
          && d->level >= 0 && d->nu_f64 > 1
          && d->verdict_algorithm == GC_INCONCLUSIVE)
        {
          d->verdict_algorithm = GC_FAIL;
          combine (d);
        }
    }
  /* on a device no mode reached the twin either ("Device arithmetic") */
  if (!r->twin || (!r->twin_rounding_modes && !r->device[0])
      || r->nondeterministic)
    return;
  double rmax = 0, gu_b = gc__gamma_over_u (r->backward_depth, 53);
  /* a device's arithmetic is beyond the modes ("Device arithmetic") */
  bool measured = r->rounding_modes && r->depth_implied_at != SIZE_MAX
                  && !r->device[0];
  bool contradicted = measured
                      && r->depth_implied > (double) r->backward_depth;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict == GC_ERROR || isnan (d->analytic_f64))
        continue;
      const gc_term *a = &d->adjoint_f64;
      if (gc__term_input (a, "S_w64", 0) != 0)
        return;
      /* a mismatch is beyond any rounding (an f32 path's bug): it
         measures no depth */
      if (d->arith == GC_ARITH_MISMATCH)
        continue;
      double one = 0x1p29 * twin_base (d, gu_b);
      double e = fabs (d->analytic - d->analytic_f64);
      if (e > 0 && one > 0)
        rmax = fmax (rmax, e / one);
      /* r beyond gamma_{d_b}(u)/u: the declared depth's own bound is
         exceeded, also where the measured floor ("The measured floor")
         widened the arithmetic's bar past it */
      contradicted |= d->arith == GC_ARITH_PRECISION
                      || (one > 0 && e / one > gc__gamma_over_u
                                                 (r->backward_depth, 24));
    }
  if (!contradicted)
    return;
  double lr = r->lambda_backward * rmax;
  double dw = fmax ((double) r->backward_depth, ceil (lr * lr));
  if (measured)
    dw = fmax (dw, ceil (r->depth_implied));
  /* gamma_D(u_53) is finite below D = 2^53; beyond 2^52 every failure of
     this kind is inconclusive */
  double gu = dw < 0x1p52 ? gc__gamma_over_u ((size_t) dw, 53) : INFINITY;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      gc_direction *d = &r->dirs[k];
      if (d->verdict == GC_ERROR || isnan (d->analytic_f64)
          || d->level < 0 || !(d->nu_f64 > 1)
          || d->verdict_algorithm != GC_FAIL)
        continue;
      double terms, ref = gc__algorithm_reference (d, &terms);
      double wide = gu * twin_base (d, gu_b);
      if (fabs (d->analytic_f64 - ref) <= terms + wide)
        {
          d->verdict_algorithm = GC_INCONCLUSIVE;
          r->n_unreached++;
          combine (d);
        }
    }
}

double
gc__factor_band_within (const gc_direction *d)
{
  return GC_FACTOR_BAND
         * (gc__term_input (&d->terms[GC_TERM_ADJOINT], "S_w", 0)
            + GC_U32 * fabs (d->analytic_f64));
}

bool
gc__factor_within (const gc_direction *d)
{
  return !(fabs (d->analytic - d->analytic_f64)
           >= GC_FACTOR_NU * d->arith_bar);
}
