/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report_measured.c -- the text report's lines on what was measured
   beside what was declared: the forward's agreement, the depths the
   rounding modes imply, declarations the measurement contradicts or does
   not support, would f64 do (report-internal.h; report_text.c calls
   them).  */

#include "report/report-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The f32 forward's measured error beside its budget and worst case
   (manual: "Forward disagreement"): a depth declared too small is blamed
   only where it can explain the error.  */
void
gc__forward_agreement_text (gc__buf *b, const gc_result *r)
{
  double worst;
  int level = gc__forward_disagreement (r, &worst);
  gc__buf_printf (b, " (f32 forward off by up to %.3g ulp where measured; "
                  "budget %.3g ulp", r->forward_error_ulps,
                  r->forward_budget_ulps);
  if (level == 1)
    gc__buf_printf (b, " EXCEEDED, within the worst case %.3g ulp: the "
                    "declared forward depth may be too small", worst);
  else if (level == 2)
    gc__buf_printf (b, "; beyond the worst case %.3g ulp: the forwards "
                    "disagree", worst);
  else if (level == 3 && gc__forward_spread_measured (r))
    gc__buf_printf (b, "; beyond the worst case %.3g ulp for M_L = |L|, "
                    "which the f32 forward's spread S_32 = %.3g does not "
                    "raise: the forwards disagree", worst,
                    r->spread_loss_f32);
  else if (level == 3)
    gc__buf_printf (b, "; beyond the worst case %.3g ulp for M_L = |L|: the "
                    "forwards disagree, or the loss cancels", worst);
  gc__buf_puts (b, ")");
  bool cancels = level == 3 && !gc__forward_spread_measured (r);
  if ((level == 2 || level == 3) && r->n_failed == 0)
    gc__buf_printf (b, "\nnote: the f32 forward and the %s reference forward "
                    "compute different functions at x (L = %.9g vs %.9g)%s; "
                    "their gradients agree within the bar here",
                    gc_reference_name (r->truncation_source), r->loss_f32,
                    r->loss_reference, cancels ? ", or the loss cancels"
                    : "");
}

/* Whether the f64 reference would have given the same verdict (manual:
   "Would f64 do?").  */
void
gc__f64_text (gc__buf *b, const gc_result *r)
{
  if (r->f64_same_verdict > 0)
    gc__buf_printf (b, "f64 reference: would have given the same verdict in "
                    "every direction here (its reference terms at most %.2g "
                    "of the adjoint term): --ref f64 is enough at this "
                    "point\n", r->f64_term_ratio);
  else if (r->f64_same_verdict < 0)
    gc__buf_printf (b, "f64 reference: might not have given the same verdict "
                    "in every direction here (its reference terms up to %.2g "
                    "of the adjoint term): keep MPFR\n", r->f64_term_ratio);
}

/* What R's measured depth is of, its name, and where it was measured:
   the backward's d_b, the JVP's tangent d_t (a random direction: n), the
   HVP's d_H (manual: "The JVP check", "The HVP check").  */
const char *
gc__depth_of (const gc_result *r, const char **dname)
{
  const char *nm[2], *dflt[2];
  gc__kind_depths (r->kind, nm, dflt);
  *dname = nm[1];
  return r->kind == GC_CHECK_JVP ? "tangent"
         : r->kind == GC_CHECK_HVP ? "HVP" : "backward";
}

static void
depth_at (gc__buf *b, const gc_result *r)
{
  char nm[96];
  if (r->depth_implied_at >= r->n)
    gc__buf_puts (b, "a random direction");
  else
    gc__put_esc (b, gc_param_name (r, r->depth_implied_at, nm, sizeof nm),
                 GC__ESC_TEXT);
}

/* Manual: "What the measurement does not support": the declared depth
   (or magnitudes) of R beyond what the measured spreads support.  */
static void
unsupported_text (gc__buf *b, const gc_result *r)
{
  const char *dn;
  gc__depth_of (r, &dn);
  double f = (double) r->backward_depth / r->depth_implied;
  if (!(r->defaulted & GC_DEFAULTED_MAGNITUDES) && r->depth_implied < 1)
    gc__buf_printf (b, "  UNSUPPORTED: the declared magnitudes "
                    "(grad_magnitude_f32) leave the measured spreads "
                    "%.3g rounding(s) of them, fewer than one; with %s "
                    "= %zu they are %.3g times what the spreads imply, "
                    "and the measurement supports magnitudes up to %.3g "
                    "times the declared ones;", r->depth_implied, dn,
                    r->backward_depth, f,
                    r->depth_supported / (double) r->backward_depth);
  else
    gc__buf_printf (b, "  UNSUPPORTED: the declared %s = %zu is %.3g "
                    "times the depth the measured spreads imply "
                    "(%.3g);", dn, r->backward_depth, f, r->depth_implied);
  gc__buf_printf (b, " the measurement supports %s m_i up to %d times "
                  "the implied (%.3g roundings of the declared "
                  "magnitudes)", dn, GC_COARSE_FACTOR, r->depth_supported);
  if (r->n_unsupported)
    gc__buf_printf (b, ": %zu direction(s) that pass only on the excess "
                    "are INCONCLUSIVE (or the directed modes did not "
                    "reach all of the computation: threads started "
                    "before the check keep their own mode, and the "
                    "spreads then undercount)\n", r->n_unsupported);
  else
    gc__buf_printf (b, ", and every pass holds on that bar; the check "
                    "is up to %.3g times coarser than it needs to be\n",
                    sqrt (f));
}

/* Manual: "What the measurement does not support", "Depths declared
   far above the implied": a declared depth GC_OVER_FACTOR or more times
   the implied one (below GC_COARSE_FACTOR, where the verdicts start to
   change) named, with the implied value and the bar the worst direction
   would have at it: the derived part of the adjoint term scales as
   sqrt(d).  Report only.  */
static void
over_declared_text (gc__buf *b, const gc_result *r)
{
  if (r->nondeterministic || !(r->depth_implied >= 1)
      || r->depth_implied_at >= r->n
      || !((double) r->backward_depth >= GC_OVER_FACTOR * r->depth_implied))
    return;
  const char *dn;
  gc__depth_of (r, &dn);
  double f = (double) r->backward_depth / r->depth_implied;
  /* a defaulted depth (n) is no declaration: say which it is */
  bool dflt = (r->defaulted & GC_DEFAULTED_BACKWARD_DEPTH) != 0;
  gc__buf_printf (b, "  note: the %s %s = %zu%s is %.3g times the depth "
                  "the measured spreads imply (%.3g, at ",
                  dflt ? "default" : "declared", dn, r->backward_depth,
                  dflt ? " (n: not declared)" : "", f, r->depth_implied);
  depth_at (b, r);
  gc__buf_printf (b, "): the derived adjoint term, sqrt(d) in the depth, is "
                  "about %.2g times what the measurement shows", sqrt (f));
  if (r->worst < r->n_directions)
    {
      const gc_direction *d = &r->dirs[r->worst];
      const gc_term *a = &d->terms[GC_TERM_ADJOINT];
      double derived = a->value - gc__term_input (a, "S_w", 0);
      double bar = d->bar - derived * (1 - sqrt (1 / f));
      /* where its other terms set the bar, the two print alike at %.4g
         (four digits: within half a unit of the fourth, 5e-4 of the
         value): said so (a new user's trial read "would be 0.009063,
         not 0.009063") */
      if (fabs (d->bar - bar) < 5e-4 * fabs (d->bar))
        gc__buf_printf (b, "; the worst direction's bar, %.4g, is set by "
                        "its other terms: the implied depth leaves it "
                        "within 0.05 %%", d->bar);
      else
        gc__buf_printf (b, "; at the implied depth the worst direction's "
                        "bar would be %.4g, not %.4g (nu %.3g, not %.3g)",
                        bar, d->bar, bar > 0 ? d->diff / bar : INFINITY,
                        d->nu);
    }
  gc__buf_puts (b, " (manual: \"Depths declared far above the "
                "implied\")\n");
}

/* Manual: "Measured rounding sensitivity": every spread of the
   backward (WHAT) 0 under the modes: exact, or not reached by them.  */
static void
zero_spread_text (gc__buf *b, const gc_result *r, const char *what)
{
  /* a declared class the modes do not reach is the likelier cause
     (manual: "What the rounding modes reach") */
  bool classes = gc__precision_unreached_count (r) > 0;
  gc__buf_printf (b, "  note: every spread of the %s is 0: its "
                  "arithmetic is exact, or the directed modes did not "
                  "reach it (%s); the measurement vouches for nothing",
                  what, r->device[0] ? "it runs on the device"
                  : classes ? "its declared classes that are not "
                  "mode-reached round outside any mode, and threads "
                  "started before the check keep their own mode"
                  : "threads started before the check keep their own "
                    "mode");
  /* Manual: "Rounding the modes do not reach" (with a twin,
     gc__twin_text says it) */
  if (r->n_unreached && !r->twin)
    gc__buf_printf (b, "; %zu failure(s) within the worst-case bar "
                    "gamma_d are INCONCLUSIVE (aligned roundings the "
                    "modes did not reach would explain them)",
                    r->n_unreached);
  gc__buf_puts (b, "\n");
}

/* Manual: "Measured rounding sensitivity": an f64 reference forward
   whose spread is f32's size (at least 2^-26 |L|, 2^27 f64 roundings of
   |L|) rounds like f32 -- a float32 constant or array in its arithmetic
   (a new user's trial: its x1e-4 bug passed under the twin, the only
   sign M_L raised to 6e10), or rounds to a grid (torch's half(),
   round(decimals=3): stairs the directed modes move) -- or cancels terms
   some 2^23 times |L|.  */
static void
f64_spread_warning (gc__buf *b, const gc_result *r)
{
  if ((r->reference == GC_REF_F64 || r->reference == GC_REF_AUTO)
      && r->spread_loss >= 0x1p-26 * fabs (r->loss_reference)
      && r->loss_reference != 0)
    gc__buf_printf (b, "  WARNING: the f64 reference forward's spread S_L = "
                    "%.3g is %.3g of |L| = %.4g, the size of f32's rounding "
                    "(2^-24 = 6e-8), not f64's: does loss_f64 compute in "
                    "float32 (a float32 constant or array in its "
                    "arithmetic), or round to a grid (a cast to a narrower "
                    "format, round (x, k): a forward constant at the "
                    "step, whose derivative is a convention the check "
                    "cannot judge)?  Else its loss cancels terms some "
                    "2^23 times |L|\n", r->spread_loss,
                    r->spread_loss / fabs (r->loss_reference),
                    fabs (r->loss_reference));
}

/* Manual: "Measured rounding sensitivity": what the reruns under the
   other rounding modes measured, and what they say of the declarations.  */
void
gc__rounding_text (gc__buf *b, const gc_result *r)
{
  /* Manual: "Device arithmetic": the modes are the host's */
  if (r->device[0])
    {
      gc__buf_puts (b, "device: ");
      gc__put_esc (b, r->device, GC__ESC_TEXT);
      gc__buf_puts (b, ": the model computes there; the host's IEEE "
                    "rounding modes do not reach its arithmetic, so no "
                    "spread measures it (manual: \"Device arithmetic\")");
      if (r->n_unreached && !r->twin)
        gc__buf_printf (b, "; %zu failure(s) within the worst-case bar "
                        "are INCONCLUSIVE (an alignment of its roundings "
                        "would explain them)", r->n_unreached);
      gc__buf_puts (b, "\n");
    }
  if (r->rounding_modes == 0 && r->rounding_dropped == 0)
    return;
  if (r->device[0])
    gc__buf_printf (b, "rounding: %u other IEEE mode%s set on the host, "
                    "not on the device", r->rounding_modes,
                    r->rounding_modes == 1 ? "" : "s");
  else
    gc__buf_printf (b, "rounding: measured under %u other IEEE mode%s",
                    r->rounding_modes, r->rounding_modes == 1 ? "" : "s");
  if (r->spread_loss > 0)
    gc__buf_printf (b, "; reference forward's spread S_L = %.3g",
                    r->spread_loss);
  if (r->spread_loss_f32 > 0 && r->reference != GC_REF_F32)
    gc__buf_printf (b, "; f32 forward's S_32 = %.3g", r->spread_loss_f32);
  const char *dn, *what = gc__depth_of (r, &dn);
  if (r->depth_implied_at != SIZE_MAX && r->depth_implied_at >= r->n)
    gc__buf_printf (b, "; the %s's spread measured along random directions "
                    "only: no depth implied", what);
  else if (r->depth_implied_at != SIZE_MAX)
    {
      gc__buf_printf (b, "; implied %s depth >= %.3g (at ", what,
                      r->depth_implied);
      depth_at (b, r);
      gc__buf_puts (b, ")");
    }
  if (r->forward_depth_implied >= 1)
    gc__buf_printf (b, ", forward >= %.3g", r->forward_depth_implied);
  gc__buf_puts (b, "\n");
  f64_spread_warning (b, r);
  if (r->rounding_dropped)
    {
      gc__buf_printf (b, "  %u mode%s left out: ", r->rounding_dropped,
                      r->rounding_dropped == 1 ? "" : "s");
      gc__put_esc (b, r->rounding_note, GC__ESC_TEXT);
      gc__buf_puts (b, "\n");
    }
  /* One cause, one message: a non-deterministic model's reruns differ for
     that reason, and the depths their spreads imply blame nothing.  */
  if (r->nondeterministic)
    {
      if (r->depth_implied > (double) r->backward_depth
          || r->forward_depth_implied > (double) r->forward_depth)
        gc__buf_puts (b, "  (the implied depths are not judged against the "
                      "declared ones: the model is non-deterministic, and "
                      "its reruns differ for that reason)\n");
      return;
    }
  /* Manual: "Rounding classes": with classes the spread is the classes'
     too, and f32's implied depth says nothing of them  */
  if (r->depth_implied > (double) r->backward_depth && r->n_precisions)
    gc__buf_puts (b, "  (the implied depth counts f32 roundings; the "
                  "declared rounding classes' spread is judged against "
                  "their own worst case: \"Rounding classes\")\n");
  else if (r->depth_implied > (double) r->backward_depth)
    {
      gc__buf_printf (b, "  WARNING: the %s's spread at ", what);
      depth_at (b, r);
      /* a defaulted depth (n) is no declaration: say which it is */
      bool dflt = (r->defaulted & GC_DEFAULTED_BACKWARD_DEPTH) != 0;
      gc__buf_printf (b, " needs at least %.3g roundings of magnitude m_i, "
                      "more than the %s %s = %zu%s: the depth or that "
                      "magnitude is too small", r->depth_implied,
                      dflt ? "default" : "declared", dn, r->backward_depth,
                      dflt ? " (n: not declared)" : "");
      if (r->n_spread_beyond)
        gc__buf_printf (b, "; %zu direction(s) whose spread exceeds the "
                        "worst case 2 gamma_d of %s are PRECISION (a "
                        "spread beyond it is not a rounding of the declared "
                        "arithmetic: a lower precision, or a wrong "
                        "declaration)", r->n_spread_beyond, dn);
      else
        gc__buf_puts (b, " (the bar includes the measured spread)");
      gc__buf_puts (b, "\n");
    }
  else if (r->depth_supported > 0)
    unsupported_text (b, r);
  else if (r->rounding_modes && r->depth_implied_at == SIZE_MAX)
    zero_spread_text (b, r, what);
  else if (r->n_spread_beyond)
    gc__buf_printf (b, "  PRECISION: %zu direction(s) whose measured spread "
                    "exceeds the worst case 2 gamma_d of the declared %s = "
                    "%zu\n", r->n_spread_beyond, dn, r->backward_depth);
  if (!(r->depth_supported > 0))
    over_declared_text (b, r);
  if (r->forward_depth_implied > (double) r->forward_depth)
    gc__buf_printf (b, "  WARNING: the reference forward's spread S_L needs "
                    "at least %.3g roundings of magnitude M_L, more than the "
                    "declared d_f = %zu (the bar includes S_L)\n",
                    r->forward_depth_implied, r->forward_depth);
}
