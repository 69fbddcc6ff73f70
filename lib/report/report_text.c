/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report_text.c -- a result as text for a terminal, and the derivation of one
   direction's bar as text.  */

#include "report/report-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How many of R's MPFR directions skipped the +-2h pair: they have no
   D(2h) (manual: "Skipping the 2h pair").  */
static size_t
pair_skipped_count (const gc_result *r)
{
  size_t n = 0;
  for (size_t k = 0; r->dirs && k < r->n_directions; k++)
    n += r->dirs[k].verdict != GC_ERROR
         && r->dirs[k].decided_by == GC_REF_MPFR && isnan (r->dirs[k].d2h);
  return n;
}

/* Manual: "A failure beyond doubt".  How R's failing directions were
   settled: decided by f64 (its bound proves MPFR's failure), confirmed at
   finer steps (a level was evaluated after the first: its J stands in
   jump_next, or the direction was judged at a finer level), or left at
   the first step unconfirmed (beyond doubt, or no finer step usable).  */
static void
confirmation_text (gc__buf *b, const gc_result *r)
{
  if (r->reference != GC_REF_AUTO && r->reference != GC_REF_MPFR)
    return;
  size_t nf = 0, n64 = 0, conf = 0, finer = 0, first = 0;
  for (size_t k = 0; r->dirs && k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_FAIL)
        continue;
      nf++;
      if (d->decided_by == GC_REF_F64)
        n64++;
      else if (d->level > 0 || !isnan (d->jump_next))
        {
          conf++;
          finer += d->level > 0;
        }
      else
        first++;
    }
  if (!nf)
    return;
  gc__buf_printf (b, "confirmation: of %zu failing directions, ", nf);
  if (r->reference == GC_REF_AUTO)
    gc__buf_printf (b, "%zu decided by f64, whose bound proves MPFR's "
                    "failure (manual: \"Failures f64 decides\"); ", n64);
  gc__buf_printf (b, "%zu confirmed at finer steps (%zu judged at a finer "
                  "level); %zu not confirmed, beyond doubt at their first "
                  "step (manual: \"A failure beyond doubt\") or with no "
                  "finer step usable\n", conf, finer, first);
}

void
gc__tensors_text (gc__buf *b, const gc_result *r, const char *prefix)
{
  size_t nt;
  gc__tensor *t = gc__tensors_of (b, r, &nt);
  if (!t)
    return;
  size_t w = 6;
  for (size_t k = 0; k < nt; k++)
    w = strlen (t[k].name) > w ? strlen (t[k].name) : w;
  if (w > 24)
    w = 24;
  gc__buf_printf (b, "%stensors (failed/checked, worst nu_32 = |%s - "
                  "reference| / bar, median resolution):\n", prefix,
                  r->kind == GC_CHECK_FORWARD ? "f32" : "g32");
  for (size_t k = 0; k < nt; k++)
    {
      char counts[48];
      snprintf (counts, sizeof counts, "%zu/%zu", t[k].failed, t[k].checked);
      gc__buf_printf (b, "%s  ", prefix);
      gc__put_esc_pad (b, t[k].name,
                       prefix[0] ? GC__ESC_TAP : GC__ESC_TEXT, w);
      gc__buf_printf (b, " %11s  worst nu_32 %-9.3g  resolution %.3g", counts,
                      t[k].worst_nu, t[k].resolution);
      if (t[k].nonsmooth)
        gc__buf_printf (b, "  %zu non-smooth", t[k].nonsmooth);
      if (t[k].precision)
        gc__buf_printf (b, "  %zu precision", t[k].precision);
      if (t[k].inconclusive)
        gc__buf_printf (b, "  %zu inconclusive", t[k].inconclusive);
      if (t[k].structure[0])
        gc__buf_printf (b, "  %s", t[k].structure);
      /* manual: "Directional checks", "What a pass rules out" */
      if (isfinite (t[k].rules_out))
        gc__buf_printf (b, "  a pass rules out |e|_2 >= %.3g (%.3g of "
                        "|g|_2)%s", t[k].rules_out, t[k].rules_out_rel,
                        r->twin ? " in both backwards" : "");
      if (isfinite (t[k].rules_out_f32))
        gc__buf_printf (b, ", in the f32 path alone >= %.3g (%.3g)",
                        t[k].rules_out_f32, t[k].rules_out_f32_rel);
      else if (isfinite (t[k].rules_out) && r->twin)
        gc__buf_printf (b, ", nothing in the f32 path alone (its "
                        "arithmetic has findings or was not judged)");
      gc__buf_puts (b, "\n");
    }
  free (t);
}

/* ---------------------------------------------------------------------- */
/* Whole reports.  */

/* Which inputs of the bar were declared and which defaulted (manual:
   "What the bar assumes").  */
static void
inputs_text (gc__buf *b, const gc_result *r)
{
  unsigned d = r->defaulted;
  const char *dn[2], *dd[2];   /* the kind's depths (higher.c) */
  gc__kind_depths (r->kind, dn, dd);
  gc__buf_printf (b, "inputs: %s %zu%s%s%s, %s %zu%s%s%s, magnitudes %s, "
                  "M_L %s\n", dn[0], r->forward_depth,
                  d & GC_DEFAULTED_FORWARD_DEPTH ? " (NOT DECLARED: " : "",
                  d & GC_DEFAULTED_FORWARD_DEPTH ? dd[0] : "",
                  d & GC_DEFAULTED_FORWARD_DEPTH ? " used)" : "",
                  dn[1], r->backward_depth,
                  d & GC_DEFAULTED_BACKWARD_DEPTH ? " (NOT DECLARED: " : "",
                  d & GC_DEFAULTED_BACKWARD_DEPTH ? dd[1] : "",
                  d & GC_DEFAULTED_BACKWARD_DEPTH ? " used)" : "",
                  d & GC_DEFAULTED_MAGNITUDES
                  ? "defaulted (largest |g| per tensor)" : "the model's",
                  d & GC_DEFAULTED_LOSS_MAGNITUDE
                  ? r->loss_magnitude_raised == 2
                    ? "defaulted (|L|), raised to S_32 / (2 d_f u) by the "
                      "f32 forward's spread"
                    : r->loss_magnitude_raised
                    ? "defaulted (|L|), raised to S_L / (2 d_f u) by the "
                      "reference forward's spread" : "defaulted (|L|)"
                  : "the model's");
  if (r->n_magnitude_low)
    gc__buf_printf (b, "  %zu magnitude(s) below half the gradient value they "
                    "bound (m_i < |g_i| / 2: no rounding does that); each "
                    "raised to |g_i|: check grad_magnitude_f32\n",
                    r->n_magnitude_low);
  if (r->loss_magnitude_low)
    gc__buf_printf (b, "  the declared M_L = %.4g is below half of |L| = "
                    "%.4g (M_L bounds |L|: no rounding does that); raised "
                    "to |L|: check loss_magnitude_f32\n",
                    r->loss_magnitude_declared, fabs (r->loss_f32));
  /* Manual: "The loss magnitude" */
  if (r->loss_magnitude_supported > 0)
    gc__buf_printf (b, "  UNSUPPORTED: the declared M_L = %.4g: the "
                    "reference forward's spread S_L implies %.3g rounding(s) "
                    "of it, against d_f = %zu; the measurement supports M_L "
                    "up to %.4g (%d times the implied); %zu pass(es) that "
                    "hold only on the excess are INCONCLUSIVE\n",
                    r->loss_magnitude, r->forward_depth_implied,
                    r->forward_depth, r->loss_magnitude_supported,
                    GC_COARSE_FACTOR, r->n_loss_unsupported);
  /* manual: "Rounding classes" */
  if (r->n_precisions)
    {
      gc__buf_puts (b, "precisions: f32 arithmetic (u 2^-24, d_f/d_b); ");
      gc__precision_describe (b, r);
      gc__buf_puts (b, "\n");
    }
  if (r->n_unvalidated)
    gc__buf_printf (b, "  %zu direction(s) INCONCLUSIVE: their pass needs a "
                    "rounding class the rounding modes do not reach, and "
                    "no twin measured it (\"Rounding classes\")\n",
                    r->n_unvalidated);
  /* the action the caller has: a twin this check turned off is turned
     on again in every binding (the command's --twin, no_twin, torch's
     twin=); a model without one is the caller's to complete */
  if (r->n_blind_defaulted)
    gc__buf_printf (b, "  %zu blind direction(s) INCONCLUSIVE: their "
                    "magnitude was defaulted (the tensor's largest |g|), "
                    "which makes the blindness; %s (\"What the measurement "
                    "does not support\")\n", r->n_blind_defaulted,
                    r->twin_unused
                    ? "check with the model's f64 twin on (the default; "
                      "this check turned it off), which measures them, or "
                      "declare the magnitudes"
                    : "declare grad_magnitude_f32, or give the model an "
                      "f64 twin (grad_f64), which measures them");
  gc__rounding_text (b, r);
}

/* The distribution of the resolution (manual: "Inconclusive
   directions"), and the blindest direction when one is blind.  */
/* Manual: "The worst case": which multiplier of the adjoint term decided,
   the worst nu under the deterministic bounds, and the failures beyond
   them.  */
static void
worst_case_text (gc__buf *b, const gc_result *r)
{
  if (isnan (r->worst_nu_worst_case) || r->kind == GC_CHECK_FORWARD)
    return;
  double db = (double) r->backward_depth;
  double prob = r->lambda_backward * sqrt (db);
  double gu = gc__gamma_over_u (r->backward_depth, 24);
  const char *dn, *what = gc__depth_of (r, &dn);
  gc__buf_printf (b, "bounds: %s multiplier %s%s%s decided (lambda "
                  "sqrt(%s) = %.3g, gamma_d / u = %.3g); under the "
                  "worst-case bounds gamma_d the worst nu_32 is %.3g",
                  r->kind == GC_CHECK_GRADIENT ? "adjoint" : what,
                  prob <= gu ? "lambda sqrt(" : "gamma_d / u, worst case,",
                  prob <= gu ? dn : "", prob <= gu ? "), probabilistic," : "",
                  dn, prob, gu, r->worst_nu_worst_case);
  if (r->n_failed && r->twin)
    gc__buf_printf (b, "; %zu of %zu failure%s no alignment of roundings "
                    "explains (worst-case nu above 1, or the twin's "
                    "algorithm or mismatch, judged under worst-case bars)",
                    r->n_failed_certain, r->n_failed,
                    r->n_failed == 1 ? "" : "s");
  else if (r->n_failed)
    gc__buf_printf (b, "; %zu of %zu failure%s exceed%s it (no alignment of "
                    "roundings explains %s)", r->n_failed_certain,
                    r->n_failed, r->n_failed == 1 ? "" : "s",
                    r->n_failed_certain == 1 ? "s" : "",
                    r->n_failed_certain == 1 ? "it" : "them");
  gc__buf_puts (b, "\n");
}

static void
resolution_text (gc__buf *b, const gc_result *r)
{
  worst_case_text (b, r);
  if (r->blindest == SIZE_MAX)
    return;
  /* with a twin, the f32 check's blindness is not the check's: the
     algorithm is judged at its own resolution (the twin: line) */
  /* a reference of 0 has no relative resolution (inf): say how many, or
     a median of inf reads as a broken check (a top-k's gradient is 0
     off its k elements) */
  size_t zero = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    zero += r->dirs[k].reference == 0;
  gc__buf_printf (b, "resolution: median %.3g, worst %.3g",
                  r->resolution_median, r->resolution_worst);
  if (zero && !(r->resolution_worst < INFINITY))
    gc__buf_printf (b, " (%zu of %zu directions have a reference of 0, "
                    "where no relative error is defined)", zero,
                    r->n_directions);
  gc__buf_printf (b, "; %zu of %zu "
                  "directions coarser than 1e-3, %zu blind (>= 1: %s)\n",
                  r->n_resolution_coarse, r->n_directions,
                  r->n_resolution_blind,
                  r->twin ? "the f32 gradient alone cannot show a 100% "
                            "error there; the twin's algorithm judges it at "
                            "its own resolution"
                          : "a 100% error passes there");
  /* the blindest of the inconclusive directions: the blindest of all
     may pass (below the rounding a correct backward makes: "Inconclusive
     directions") */
  const gc_direction *bi = NULL;
  for (size_t k = 0; r->n_inconclusive && k < r->n_directions; k++)
    if (r->dirs[k].verdict == GC_INCONCLUSIVE
        && (!bi || !(fabs (r->dirs[k].resolution) <= fabs (bi->resolution))))
      bi = &r->dirs[k];
  if (bi)
    {
      gc__buf_printf (b, "inconclusive: the check cannot judge %zu "
                      "direction(s); the blindest of them, ",
                      r->n_inconclusive);
      gc__put_label (b, r, bi, GC__ESC_TEXT);
      gc__buf_printf (b, ", has bar %.3e against a reference of %.3e",
                      bi->bar, bi->reference);
      /* where the twin's algorithm is what could not judge, its numbers
         (the f32 bar above is the arithmetic's side) */
      if (!isnan (bi->analytic_f64)
          && bi->verdict_algorithm == GC_INCONCLUSIVE)
        {
          double terms, ref = gc__algorithm_reference (bi, &terms);
          gc__buf_printf (b, "; the twin's algorithm could not judge it: "
                          "bar_64 %.3e against a reference of %.3e, "
                          "twin g64 %.3e (a gradient below what f64 "
                          "differences resolve at this step: an error "
                          "smaller than bar_64 cannot show there)", bi->bar_f64,
                          ref, bi->analytic_f64);
        }
      gc__buf_puts (b, "\n");
    }
}

/* The heading: version, model, reference and directions.  */
static void
heading_text (gc__buf *b, const gc_result *r, bool fwd)
{
  gc__buf_printf (b, "gradcheck %s: %smodel ", GC_VERSION_STRING,
                  gc__kind_label (r->kind));
  gc__put_esc (b, r->model_name, GC__ESC_TEXT);
  if (fwd && r->precision > 0)
    gc__buf_printf (b, ", %zu outputs\n"
                    "reference: the MPFR forward at %ld bits, element by "
                    "element\n", r->n, (long) r->precision);
  else if (fwd)   /* refused before a precision was set */
    gc__buf_printf (b, ", %zu outputs\n"
                    "reference: the MPFR forward, element by element\n",
                    r->n);
  else if (r->status != GC_OK && r->precision == 0 && !r->n_directions)
    /* refused before a reference was set up: no "MPFR at 0 bits" */
    gc__buf_printf (b, ", %zu parameters\n"
                    "reference: none (the check was refused before it "
                    "ran)\ndirections: none checked\n", r->n);
  else
    {
      gc__buf_printf (b, ", %zu parameters\n", r->n);
      gc__buf_puts (b, "reference: ");
      gc__describe_reference (b, r);
      gc__buf_printf (b, "\ndirections: %s",
                      gc__direction_kind_name (r->direction_kind));
      if (r->direction_kind == GC_DIR_RANDOM
          || r->direction_kind == GC_DIR_SCREEN)
        gc__buf_printf (b, " (seed %llu)", (unsigned long long) r->seed);
      if (r->direction_kind == GC_DIR_SCREEN)
        gc__screen_text (b, r);
      else if (r->random_per_block)
        gc__buf_printf (b, ", %zu per block", r->random_per_block);
      gc__buf_printf (b, ", %zu checked", r->n_directions);
      if (r->shard_count > 1)
        gc__buf_printf (b, " (shard %zu of %zu, %zu in all)", r->shard_index,
                        r->shard_count, r->n_total);
      gc__buf_puts (b, "\n");
      /* manual: "PyTorch" */
      if (r->loss_note[0])
        {
          gc__buf_puts (b, "loss from: ");
          gc__put_esc (b, r->loss_note, GC__ESC_TEXT);
          gc__buf_puts (b, "\n");
        }
    }
}

/* Which nu the verdict line's worst is (issue 36: "every nu labelled
   by what it measures"): with a twin the larger of the direction's two
   questions, the algorithm's nu_64 or the arithmetic's nu_arith; else
   the f32 value's nu_32 against the reference; and where.  */
static void
worst_nu_label (gc__buf *b, const gc_result *r)
{
  if (r->worst == SIZE_MAX)
    return;
  const gc_direction *d = &r->dirs[r->worst];
  bool fwd = r->kind == GC_CHECK_FORWARD;
  if (r->twin && !isnan (d->analytic_f64))
    gc__buf_puts (b, d->nu_f64 >= d->nu_arith
                  ? ", the algorithm's nu_64 = |g64 - reference| / bar_64, "
                    "at "
                  : ", the arithmetic's nu_arith = |g32 - g64| / its bound, "
                    "at ");
  else
    gc__buf_printf (b, ", nu_32 = |%s - reference| / bar, at ",
                    fwd ? "f32" : "g32");
  gc__put_label (b, r, d, GC__ESC_TEXT);
}

/* The verdict line and its counts; the twin's two questions.  */
static void
verdict_text (gc__buf *b, const gc_result *r, bool fwd)
{
  const char *vname = r->verdict == GC_PASS ? "PASS" : r->verdict == GC_FAIL
                      ? "FAIL" : r->verdict == GC_NONSMOOTH ? "NON-SMOOTH"
                      : r->verdict == GC_INCONCLUSIVE ? "INCONCLUSIVE"
                      : r->verdict == GC_NONDETERMINISTIC ? "NON-DETERMINISTIC"
                      : r->verdict == GC_PRECISION ? "PRECISION"
                      : "ERROR";
  if (fwd)
    {
      gc__buf_printf (b, "verdict: %s -- %zu of %zu outputs off; worst nu = "
                      "%.3g", vname, r->n_failed, r->n_directions,
                      r->worst_nu);
      worst_nu_label (b, r);
      gc__buf_puts (b, "\n");
    }
  else
    {
      gc__buf_printf (b, "verdict: %s -- %zu failed, %zu non-smooth",
                      vname, r->n_failed, r->n_nonsmooth);
      if (r->n_precision)
        gc__buf_printf (b, ", %zu precision", r->n_precision);
      if (r->n_inconclusive)
        gc__buf_printf (b, ", %zu inconclusive", r->n_inconclusive);
      gc__buf_printf (b, " of %zu; worst %s = %.3g", r->n_directions,
                      r->n_failed && r->n_failed < r->n_directions
                      ? "failure's nu" : "nu", r->worst_nu);
      worst_nu_label (b, r);
      gc__buf_puts (b, "\n");
      gc__twin_text (b, r);
    }
}

/* Which tier decided how many directions (manual: "The tiered
   reference").  */
static void
tiered_text (gc__buf *b, const gc_result *r)
{
  if (r->reference != GC_REF_AUTO)
    return;
  gc__buf_printf (b, "tiered reference: f64 decided %zu of %zu "
                  "directions, MPFR %zu (manual: \"The tiered "
                  "reference\")\n", gc__decided_count (r, GC_REF_F64),
                  r->n_directions, gc__decided_count (r, GC_REF_MPFR));
  size_t np = pair_skipped_count (r);
  if (np)
    gc__buf_printf (b, "  %zu of MPFR's without their +-2h pair, their "
                    "truncation predicted from f64's stencil (manual: "
                    "\"Skipping the 2h pair\")\n", np);
}

void
gc__report_text (gc__buf *b, const gc_result *r)
{
  bool fwd = r->kind == GC_CHECK_FORWARD;
  heading_text (b, r, fwd);
  if (r->status != GC_OK)
    {
      char lead[128];
      gc__buf_printf (b, "verdict: ERROR: %s\n",
                      gc__status_lead (r->status, r->detail, lead,
                                       sizeof lead));
      if (strcmp (r->detail, gc_strerror (r->status)) != 0)
        {
          gc__buf_puts (b, "  ");
          gc__put_esc (b, r->detail, GC__ESC_TEXT);
          gc__buf_puts (b, "\n");
        }
      return;
    }
  if (!fwd)
    gc__buf_printf (b, "loss: f32 %.9g, reference %.9g, magnitude M_L %.4g",
                    r->loss_f32, r->loss_reference, r->loss_magnitude);
  if (!fwd && r->forward_error_ulps >= 0)
    gc__forward_agreement_text (b, r);
  gc__buf_puts (b, "\n");
  if (!fwd)
    {
      inputs_text (b, r);
      gc__buf_puts (b, "\n");
    }
  verdict_text (b, r, fwd);
  /* The findings first (a forward disagreement, a non-deterministic
     model, the diagnosis), then the resolution and the tensors.  */
  if (r->nondeterministic)
    {
      gc__buf_puts (b, "non-deterministic model: ");
      gc__put_esc (b, r->nd_detail, GC__ESC_TEXT);
      gc__buf_puts (b, "; no single gradient to judge (the directions below "
                    "used the first call's)\n");
    }
  if (r->diagnosis.kind != GC_DIAG_NONE)
    {
      gc__buf_puts (b, "diagnosis: ");
      gc__put_esc (b, r->diagnosis.text, GC__ESC_TEXT);
      gc__buf_puts (b, "\n");
    }
  if (!fwd)
    resolution_text (b, r);
  tiered_text (b, r);
  gc__calls_text (b, r);
  if (!fwd)
    confirmation_text (b, r);
  gc__tensors_text (b, r, "");
  gc__f64_text (b, r);
  if (r->worst == SIZE_MAX)
    return;
  gc__worst_text (b, r, &r->dirs[r->worst]);
}

