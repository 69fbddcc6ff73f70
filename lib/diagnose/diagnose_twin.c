/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* diagnose_twin.c -- the diagnosis of a check with an f64 twin (manual:
   "Two verdicts, one report"): each failing direction read through the
   question that failed it, and the precision findings with the structure
   of a logic error turned into failures.  */

#include "diagnose/diagnose-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Manual: "Two verdicts, one report": the diagnosis of a check with a
   twin reads each failing direction through the question that failed it:
   the algorithm's (g64 against its reference, under bar_64) or the
   arithmetic's (g32 against g64, under its bound).  A view swaps those
   numbers into the directions for gc__diagnose, and back.  */

typedef struct saved
{
  size_t k;
  gc_verdict verdict;
  double analytic, reference, diff, bar, nu, resolution, bar_wc, nu_wc;
  gc_term terms[GC_N_TERMS];
} saved;

static double f32_bound_wm (const gc_result *r, const gc_direction *d,
                            double *wmp);

/* Put direction K of R into the view as the question that found it (or,
   with ARITH, the arithmetic's), marked failed; its own values in S.  */
static void
view_in (gc_result *r, size_t k, bool arith, saved *s)
{
  gc_direction *d = &r->dirs[k];
  *s = (saved) { k, d->verdict, d->analytic, d->reference, d->diff, d->bar,
                 d->nu, d->resolution, d->bar_worst_case, d->nu_worst_case,
                 { d->terms[0], d->terms[1], d->terms[2] } };
  if (arith || d->verdict_algorithm != GC_FAIL)
    {
      d->reference = d->analytic_f64;
      d->diff = d->arith_diff;
      /* a pattern is fitted to g32 within its own rounding too: the f32
         worst case at |g32|, which a scaled-up g32 exceeds the twin's
         magnitudes by */
      /* a mismatch within the classes' bound is one the structure rule
         made: no declared class explains any of it ("Structure decides
         the kind"), and its pattern is fitted within f32's own bound */
      double ab = d->arith_bar, nu = d->nu_arith;
      if (d->arith == GC_ARITH_MISMATCH && r->n_precisions
          && d->nu_arith <= 1)
        {
          ab = fmin (ab, f32_bound_wm (r, d, NULL));
          nu = ab > 0 ? d->diff / ab : INFINITY;
        }
      d->bar = d->bar_worst_case
        = ab + gc__gamma_over_u (r->backward_depth, 24) * GC_U32
               * fabs (d->analytic);
      d->nu = d->nu_worst_case = nu;
      /* the reference of this view is g64, whose error is in the bar
         (the twin's term): the central differences' truncation and
         rounding are not its, and a factor's tolerance may not scale
         them ("Diagnosis", constant factor) */
      d->terms[GC_TERM_TRUNCATION].value = 0;
      d->terms[GC_TERM_REFERENCE].value = 0;
    }
  else
    {
      d->analytic = d->analytic_f64;
      if (d->richardson_used)
        {
          d->reference = d->richardson;
          d->terms[GC_TERM_TRUNCATION] = d->richardson_terms[0];
          d->terms[GC_TERM_REFERENCE] = d->richardson_terms[1];
        }
      d->terms[GC_TERM_ADJOINT] = d->adjoint_f64;
      d->diff = fabs (d->analytic - d->reference);
      d->bar = d->bar_worst_case = d->bar_f64;
      d->nu = d->nu_worst_case = d->nu_f64;
    }
  d->resolution = d->reference != 0 ? d->bar / fabs (d->reference)
                                     : INFINITY;
  d->verdict = GC_FAIL;
}

static void
view_out (gc_result *r, const saved *s)
{
  gc_direction *d = &r->dirs[s->k];
  d->verdict = s->verdict;
  d->analytic = s->analytic;
  d->reference = s->reference;
  d->diff = s->diff;
  d->bar = s->bar;
  d->nu = s->nu;
  d->resolution = s->resolution;
  d->bar_worst_case = s->bar_wc;
  d->nu_worst_case = s->nu_wc;
  for (int t = 0; t < GC_N_TERMS; t++)
    d->terms[t] = s->terms[t];
}

/* Diagnose R through a view of the directions WHICH selects (in block B,
   or anywhere with SIZE_MAX), each as its question's failure (ARITH: the
   arithmetic's); every other direction passes in the view.  The
   diagnosis is left in R; false when memory runs out.  */
static bool
diagnose_view (gc_result *r, bool (*which) (const gc_direction *), size_t b,
               bool arith)
{
  size_t n = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    n += which (&r->dirs[k])
         && (b == SIZE_MAX || gc__direction_block (r, &r->dirs[k]) == b);
  saved *s = malloc ((n ? n : 1) * sizeof *s);
  gc_verdict *v = malloc ((r->n_directions ? r->n_directions : 1)
                          * sizeof *v);
  if (!s || !v)
    {
      free (s);
      free (v);
      return false;
    }
  size_t m = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      gc_direction *d = &r->dirs[k];
      v[k] = d->verdict;
      if (which (d) && (b == SIZE_MAX || gc__direction_block (r, d) == b))
        view_in (r, k, arith, &s[m++]);
      else if (d->verdict != GC_ERROR)
        d->verdict = GC_PASS;
    }
  size_t nf = r->n_failed;
  r->n_failed = m;
  gc__diagnose (r);
  r->n_failed = nf;
  for (size_t q = 0; q < m; q++)
    view_out (r, &s[q]);
  for (size_t k = 0; k < r->n_directions; k++)
    r->dirs[k].verdict = v[k];
  free (s);
  free (v);
  return true;
}

static bool
is_precision (const gc_direction *d)
{
  return d->verdict == GC_PRECISION;
}

static bool
is_failure (const gc_direction *d)
{
  return d->verdict == GC_FAIL;
}

/* A pattern only a logic error makes (rounding errors scatter).  */
static bool
structured (gc_diagnosis_kind k)
{
  return k == GC_DIAG_CONSTANT_FACTOR || k == GC_DIAG_SIGN_FLIP
         || k == GC_DIAG_ZERO_REGION || k == GC_DIAG_SHIFTED
         || k == GC_DIAG_AXIS_OFFSET || k == GC_DIAG_APPROX_SHIFT;
}

/* f32's own bound on direction D's arithmetic, without the classes:
   gamma_{d_b}(u)/u (u sum |w_i| m_i + 2^-150 sum |w_i|) plus the twin's
   term, as twin.c forms it before the classes add theirs; from the twin
   term's inputs, or where a report read back kept none, from its base
   (u_53 sum |w_i| m_i, the 2^-1074 part left out).  */
static double
f32_bound_wm (const gc_result *r, const gc_direction *d, double *wmp)
{
  const gc_term *a = &d->adjoint_f64;
  double wm = gc__term_input (a, "sum |w_i| m_i", NAN);
  double w1 = gc__term_input (a, "sum |w_i|", 0);
  size_t db = r->backward_depth;
  if (isnan (wm))
    {
      double gu = gc__gamma_over_u (db, 53);
      double b = a->value - gc__term_input (a, "S_w64", 0);
      wm = gu > 0 && b > 0 ? b / gu / GC_U64 : 0;
    }
  if (wmp)
    *wmp = wm;
  /* Manual: "The measured floor": kappa F_w where measured */
  return gc__floor_f32_bound (r, d, gc__gamma_over_u (db, 24)
                                    * (GC_U32 * wm + 0x1p-150 * w1))
         + a->value;
}

static double
f32_bound (const gc_result *r, const gc_direction *d)
{
  return f32_bound_wm (r, d, NULL);
}

/* Manual: "Structure decides the kind", "A class depth the twin
   contradicts": with one backward class (u_k), the fewest of its
   roundings in product form that reach the largest |g32 - g64| beyond
   f32's own bound of a direction whose arithmetic is no mismatch,
   log1p(e' / m) / log1p(u_k), m = sum |w_i| m_i; 0 where none is
   beyond; NAN without exactly one backward class.  Its direction in
   *AT (SIZE_MAX: none).  */
double
gc__class_depth_implied (const gc_result *r, size_t *at)
{
  *at = SIZE_MAX;
  if (!r->twin || gc__precision_backward_count (r) != 1)
    return NAN;
  double u = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    if (r->precisions[k].backward_depth)
      u = r->precisions[k].unit_roundoff;
  double best = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict == GC_ERROR || isnan (d->analytic_f64)
          || d->arith == GC_ARITH_MISMATCH)
        continue;
      double wm, e = fabs (d->analytic - d->analytic_f64)
                     - f32_bound_wm (r, d, &wm);
      if (!(e > 0) || !(wm > 0))
        continue;
      double di = log1p (e / wm) / log1p (u);
      if (di > best)
        {
          best = di;
          *at = k;
        }
    }
  return best;
}

/* Whether coordinate direction D takes part in the structure rule: a
   twin, a confirmed reference, no kink.  */
static bool
judged (const gc_direction *d)
{
  return d->index != SIZE_MAX && d->verdict != GC_ERROR
         && d->verdict != GC_NONSMOOTH && !isnan (d->analytic_f64);
}

static bool
in_block (const gc_result *r, const gc_direction *d, size_t bb)
{
  return bb == SIZE_MAX || gc__direction_block (r, d) == bb;
}

static void
make_mismatch (gc_direction *d)
{
  d->arith = GC_ARITH_MISMATCH;
  d->verdict = d->verdict_algorithm == GC_NONSMOOTH ? GC_NONSMOOTH
                                                     : GC_FAIL;
}

/* Manual: "Structure decides the kind", the systematic factor: in tensor
   BB, the directions whose |g32 - g64| exceeds f32's own bound (those
   only the declared classes explain), at least three, at least three of
   them at distinct places of the coarsest class's grid (significands
   more than u_max apart), and one factor c with |g32 - c g64| within
   f32's bound on every one of them: no scatter of the classes' roundings
   but one factor, the f32 path's logic error.  True when it changed
   anything.  */
static bool
systematic_factor (gc_result *r, size_t bb)
{
  double umax = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    if (r->precisions[k].backward_depth)
      umax = fmax (umax, r->precisions[k].unit_roundoff);
  if (!(umax > 0))
    return false;
  double lo = -INFINITY, hi = INFINITY;
  size_t n = 0, cells = 0;
  double cell[3];
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (!judged (d) || !in_block (r, d, bb)
          || (d->arith != GC_ARITH_OK && d->arith != GC_ARITH_PRECISION))
        continue;
      double g = d->analytic_f64, b32 = f32_bound (r, d);
      if (!(fabs (d->analytic - g) > b32))
        continue;
      if (g == 0)
        return false;   /* no factor reaches a nonzero g32 from 0 */
      double a = (d->analytic - b32) / g, c = (d->analytic + b32) / g;
      lo = fmax (lo, fmin (a, c));
      hi = fmin (hi, fmax (a, c));
      if (!(lo <= hi))
        return false;
      n++;
      int e;
      double m = floor (frexp (fabs (g), &e) / umax);
      bool seen = false;
      for (size_t j = 0; j < cells; j++)
        seen |= cell[j] == m;
      if (!seen && cells < 3)
        cell[cells++] = m;
    }
  if (n < 3 || cells < 3)
    return false;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      gc_direction *d = &r->dirs[k];
      if (judged (d) && in_block (r, d, bb)
          && (d->arith == GC_ARITH_OK || d->arith == GC_ARITH_PRECISION)
          && fabs (d->analytic - d->analytic_f64) > f32_bound (r, d))
        make_mismatch (d);
    }
  return true;
}

/* Manual: "Structure decides the kind", isolated elements: in tensor BB
   of at least three judged directions, where more than half are within
   f32's own bound (no rounding beyond f32's shows in the tensor), a
   precision finding off by O(1) of its value and of its magnitude
   (|g32 - g64| >= max(|g64|, m) / 2: a rounding at any depth d errs by
   gamma_d(u) m, below m / 2 unless the element lost everything) is no
   rounding the tensor shows: the f32 path's logic error.  True when it changed anything.  */
static bool
isolated (gc_result *r, size_t bb)
{
  size_t n = 0, within = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (!judged (d) || !in_block (r, d, bb))
        continue;
      n++;
      within += fabs (d->analytic - d->analytic_f64) <= f32_bound (r, d);
    }
  if (n < 3 || 2 * within <= n)
    return false;
  bool changed = false;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      gc_direction *d = &r->dirs[k];
      double wm;
      if (!judged (d) || !in_block (r, d, bb) || d->verdict != GC_PRECISION)
        continue;
      f32_bound_wm (r, d, &wm);
      if (fabs (d->analytic - d->analytic_f64)
          >= fmax (fabs (d->analytic_f64), wm) / 2)
        {
          make_mismatch (d);
          changed = true;
        }
    }
  return changed;
}

/* Manual: "Structure decides the kind", a class the arithmetic does not
   show: declared backward classes, and in every tensor no direction
   beyond f32's own bound but the mismatches, and those one factor (0
   included) within f32's bound of g64: a logic error's factor, no
   rounding's scatter.  */
static int
classes_unshown (const gc_result *r)
{
  if (!gc__precision_backward_count (r))
    return 0;
  size_t nb = r->n_blocks ? r->n_blocks : 1, n = 0;
  for (size_t b = 0; b < nb; b++)
    {
      size_t bb = r->n_blocks ? b : SIZE_MAX;
      double lo = -INFINITY, hi = INFINITY;
      for (size_t k = 0; k < r->n_directions; k++)
        {
          const gc_direction *d = &r->dirs[k];
          if (d->verdict == GC_ERROR || isnan (d->analytic_f64)
              || (d->index != SIZE_MAX && !in_block (r, d, bb))
              || (d->index == SIZE_MAX && b > 0))
            continue;
          n++;
          double g = d->analytic_f64, b32 = f32_bound (r, d);
          if (!(fabs (d->analytic - g) > b32))
            continue;
          if (d->arith != GC_ARITH_MISMATCH || d->index == SIZE_MAX
              || g == 0)
            return 0;
          double x = (d->analytic - b32) / g, y = (d->analytic + b32) / g;
          lo = fmax (lo, fmin (x, y));
          hi = fmin (hi, fmax (x, y));
          if (!(lo <= hi))
            return 0;
        }
    }
  return n > 0;
}

/* Manual: "A factor the point does not move": where every failure of R
   is a factor that held across the points compared, and the elements
   showed no pattern, the diagnosis says so (one element has no pattern
   across elements to read, and the patterns' "too few" would contradict
   the derivation's factor); the factor's range over them.  */
static void
factor_diagnosis (gc_result *r)
{
  if (structured (r->diagnosis.kind))
    return;   /* the elements' pattern was read: it stands */
  size_t n = 0, first = SIZE_MAX, last = 0;
  double lo = INFINITY, hi = -INFINITY;
  unsigned pts = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_FAIL)
        continue;
      if (!(d->arith_factor_points > 0) || isnan (d->arith_factor)
          || d->verdict_algorithm == GC_FAIL)
        return;
      n++;
      lo = fmin (lo, d->arith_factor);
      hi = fmax (hi, d->arith_factor);
      pts = pts > d->arith_factor_points ? pts : d->arith_factor_points;
      first = d->index < first ? d->index : first;
      last = d->index > last ? d->index : last;
    }
  if (!n)
    return;
  gc_diagnosis *dg = &r->diagnosis;
  char nm[64], c[48];
  gc_param_name (r, first, nm, sizeof nm);
  if (lo == hi)
    snprintf (c, sizeof c, "%.6g", lo);
  else
    snprintf (c, sizeof c, "%.6g to %.6g", lo, hi);
  char how[96];
  if (pts > 1)
    snprintf (how, sizeof how, "at x and at %u points each parameter moved "
              "by 2^-5 to 2^-4 of itself", pts - 1);
  else
    snprintf (how, sizeof how, "at x under every rounding mode (the "
              "moved points moved neither g32 nor g64)");
  dg->kind = GC_DIAG_CONSTANT_FACTOR;
  dg->factor = lo == hi ? lo : NAN;
  dg->closed_form[0] = 0;
  dg->first = first;
  dg->last = last;
  snprintf (dg->text, sizeof dg->text, "constant factor %s: g32 = c g64 "
            "%s, on %zu failing direction(s) of %zu (first %s): a factor "
            "that rounding would not keep (manual: \"A factor the point "
            "does not move\")", c, how, n, r->n_directions, nm);
}

void
gc__twin_findings (gc_result *r)
{
  if (!r->twin || r->status != GC_OK || r->nondeterministic)
    return;
  /* Manual: "Structure decides the kind": a systematic factor the
     classes would hide, isolated elements off by O(1); tensor by
     tensor.  */
  {
    size_t nb = r->n_blocks ? r->n_blocks : 1;
    bool changed = false;
    for (size_t b = 0; b < nb; b++)
      {
        size_t bb = r->n_blocks ? b : SIZE_MAX;
        changed |= systematic_factor (r, bb);
        changed |= isolated (r, bb);
      }
    if (changed)
      gc__summarise (r);
    r->classes_unshown = classes_unshown (r);
  }
  /* Manual: "The f64 twin": precision findings with the structure of a
     logic error (a constant factor, a sign, a zero region, a shift, an
     offset along an axis, between g32 and g64) are the f32 path's bug,
     not its precision: beyond any rounding, a failure.  Tensor by
     tensor.  */
  size_t nb = r->n_blocks ? r->n_blocks : 1;
  bool changed = false;
  for (size_t b = 0; r->n_precision && b < nb; b++)
    {
      size_t bb = r->n_blocks ? b : SIZE_MAX;
      size_t here = 0, checked = 0;
      for (size_t k = 0; k < r->n_directions; k++)
        if (bb == SIZE_MAX || gc__direction_block (r, &r->dirs[k]) == bb)
          {
            here += r->dirs[k].verdict == GC_PRECISION;
            checked += r->dirs[k].verdict != GC_ERROR;
          }
      if (!here || !diagnose_view (r, is_precision, bb, true))
        continue;
      if (!structured (r->diagnosis.kind)
          || gc__rounding_factor (r, here, checked, bb))
        continue;
      for (size_t k = 0; k < r->n_directions; k++)
        {
          gc_direction *d = &r->dirs[k];
          if (d->verdict == GC_PRECISION
              && (bb == SIZE_MAX || gc__direction_block (r, d) == bb))
            {
              d->arith = GC_ARITH_MISMATCH;
              d->verdict = GC_FAIL;
              changed = true;
            }
        }
    }
  if (changed)
    gc__summarise (r);
  /* The report's diagnosis: of the failures, each through its question;
     of the precision findings where nothing failed.  */
  memset (&r->diagnosis, 0, sizeof r->diagnosis);
  if (!r->n_failed && !r->n_precision && !r->n_nonsmooth
      && gc__forward_unjudged (r))
    gc__diagnose (r);   /* the forwards differ: its own diagnosis */
  else if (r->n_failed)
    {
      diagnose_view (r, is_failure, SIZE_MAX, false);
      gc__diag_twin_differs (r);   /* issue 36 */
      factor_diagnosis (r);
      /* Manual: "Structure decides the kind": every failure is the f32
         path's alone (its algorithm, the twin, passes): say where, or a
         reader looks for the bug in code both paths share */
      if (r->n_failed_algorithm == 0 && r->diagnosis.text[0])
        {
          char text[sizeof r->diagnosis.text];
          snprintf (text, sizeof text, "in the f32 path only (g32 against "
                    "its twin g64; the algorithm passes%s): %s",
                    gc__diag_by_structure (r) ? "; each failure a factor or smooth "
                    "term the moved points kept, within 2^16 of f32's "
                    "bound: a logic error, or data the points do not move "
                    "(a constant, the cotangent) rounded to a narrower "
                    "format, whose class to declare" : "",
                    r->diagnosis.text);
          snprintf (r->diagnosis.text, sizeof r->diagnosis.text, "%s", text);
        }
    }
  else if (r->n_nonsmooth && !r->n_precision)
    gc__diagnose (r);   /* kinks, or a staircase: said as without a twin */
  else if (r->n_precision)
    {
      diagnose_view (r, is_precision, SIZE_MAX, true);
      /* unexplained differences are what a precision loss leaves, and
         what a logic error of the f32 path alone leaves when it has no
         pattern: say both, not "logic error" alone, nor precision alone
         (a new user's trial: a wrong term in the f32 path only read "the
         scatter of a precision loss", g32 / g64 from -8 to 4) */
      const char *t = r->diagnosis.text;
      bool unexplained = strncmp (t, "logic error: ", 13) == 0;
      char text[sizeof r->diagnosis.text];
      snprintf (text, sizeof text, "precision, g32 against its twin g64: %s%s",
                unexplained ? "no pattern of a logic error: the scatter of "
                              "a precision loss, or a logic error of the "
                              "f32 path alone that leaves no pattern (the "
                              "twin vouches for the algorithm only): " : "",
                unexplained ? t + 13 : t);
      snprintf (r->diagnosis.text, sizeof r->diagnosis.text, "%s", text);
      if (unexplained)
        {
          r->diagnosis.kind = GC_DIAG_PRECISION;
          gc__diag_as_precision (&r->diagnosis);   /* issue 36 */
        }
    }
}
