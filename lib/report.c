/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report.c -- render a result as text, JSON, Markdown or TAP, and the
   derivation of one direction's bar.  The JSON field names are documented in
   the manual, section "JSON report"; keep the two in step.  */

#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *
direction_kind_name (gc_direction_kind k)
{
  switch (k)
    {
    case GC_DIR_ALL: return "all";
    case GC_DIR_RANDOM: return "random";
    case GC_DIR_LIST: return "list";
    }
  return "unknown";
}

static const char *
diagnosis_name (gc_diagnosis_kind k)
{
  switch (k)
    {
    case GC_DIAG_NONE: return "none";
    case GC_DIAG_CONSTANT_FACTOR: return "constant-factor";
    case GC_DIAG_SIGN_FLIP: return "sign-flip";
    case GC_DIAG_ZERO_REGION: return "zero-region";
    case GC_DIAG_SHIFTED: return "shifted-window";
    case GC_DIAG_NONSMOOTH: return "non-smooth";
    case GC_DIAG_ONE_ULP: return "rounding";
    case GC_DIAG_LOGIC: return "logic";
    }
  return "unknown";
}

static void
describe_reference (gc__buf *b, const gc_result *r)
{
  if (r->reference == GC_REF_MPFR)
    gc__buf_printf (b, "MPFR central differences at %ld bits",
                    (long) r->precision);
  else
    gc__buf_printf (b, "%s central differences",
                    r->reference == GC_REF_F32 ? "f32" : "f64");
  if (r->truncation_source != r->reference)
    gc__buf_printf (b, " (truncation from the %s forward)",
                    gc_reference_name (r->truncation_source));
}

static void
direction_label (const gc_result *r, const gc_direction *d, char *buf,
                 size_t size)
{
  if (d->index == SIZE_MAX)
    snprintf (buf, size, "random direction %zu", d->id);
  else
    {
      char nm[96];
      gc_param_name (r, d->index, nm, sizeof nm);
      snprintf (buf, size, "%s (%s %zu)", nm,
                r->kind == GC_CHECK_FORWARD ? "output" : "parameter",
                d->index);
    }
}

/* ---------------------------------------------------------------------- */
/* Derivation of one direction.  */

static void
derivation_text (gc__buf *b, const gc_direction *d, const char *indent)
{
  gc__buf_printf (b, "%sbar = %s + %s + %s = %.3e\n", indent,
                  d->terms[0].name, d->terms[1].name, d->terms[2].name,
                  d->bar);
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      const gc_term *tm = &d->terms[t];
      gc__buf_printf (b, "%s  %-19s = %-42s = %.3e   [manual: %s]\n", indent,
                      tm->name, tm->formula, tm->value, tm->section);
      gc__buf_printf (b, "%s  %-19s   ", indent, "");
      for (size_t k = 0; k < tm->n_inputs; k++)
        gc__buf_printf (b, "%s%s = %.6g", k ? ", " : "", tm->inputs[k].name,
                        tm->inputs[k].value);
      gc__buf_puts (b, "\n");
    }
}

static void
derivation_markdown (gc__buf *b, const gc_result *r, const gc_direction *d)
{
  char label[160];
  direction_label (r, d, label, sizeof label);
  gc__buf_printf (b, "# Derivation of the pass bar: %s\n\n", label);
  gc__buf_printf (b, "Model `%s`, %zu parameters; reference: ", r->model_name,
                  r->n);
  describe_reference (b, r);
  gc__buf_printf (b, ".  Confidence: false-alarm probability %g for the "
                  "whole check of %zu directions.\n\n", r->false_alarm,
                  r->n_total);
  gc__buf_puts (b, "| quantity | value |\n|---|---|\n");
  bool fwd = r->kind == GC_CHECK_FORWARD;
  gc__buf_printf (b, "| %s | %.9g |\n", fwd ? "f32 output" : "analytic ⟨ĝ, w⟩",
                  d->analytic);
  gc__buf_printf (b, "| %s | %.9g |\n", fwd ? "reference output (MPFR)"
                  : "reference D(h)", d->reference);
  gc__buf_printf (b, "| \\|analytic − reference\\| | %.3e |\n", d->diff);
  gc__buf_printf (b, "| bar | %.3e |\n", d->bar);
  gc__buf_printf (b, "| ν = \\|diff\\| / bar | %.3g |\n", d->nu);
  gc__buf_printf (b, "| resolution = bar / \\|reference\\| | %.3e |\n",
                  d->resolution);
  if (!fwd)
    {
      gc__buf_printf (b, "| step h (applied) | %.9g |\n", d->step);
      gc__buf_printf (b, "| kink estimate J | %.3e |\n", d->jump);
    }
  gc__buf_printf (b, "| verdict | **%s** |\n\n", gc_verdict_name (d->verdict));
  gc__buf_puts (b, "The bar is the sum of three terms; each is derived in the "
                "manual section named beside it (chapter \"Deriving the pass "
                "bar\").\n\n");
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      const gc_term *tm = &d->terms[t];
      gc__buf_printf (b, "## %s = %.3e\n\n", tm->name, tm->value);
      gc__buf_printf (b, "Formula: `%s`.  Manual: *%s*.\n\n", tm->formula,
                      tm->section);
      gc__buf_puts (b, "| input | value |\n|---|---|\n");
      for (size_t k = 0; k < tm->n_inputs; k++)
        gc__buf_printf (b, "| `%s` | %.9g |\n", tm->inputs[k].name,
                        tm->inputs[k].value);
      gc__buf_puts (b, "\n");
    }
}

static void
term_json (gc__buf *b, const gc_term *tm)
{
  gc__buf_puts (b, "{\"name\":");
  gc__buf_json_string (b, tm->name);
  gc__buf_puts (b, ",\"formula\":");
  gc__buf_json_string (b, tm->formula);
  gc__buf_puts (b, ",\"section\":");
  gc__buf_json_string (b, tm->section);
  gc__buf_puts (b, ",\"value\":");
  gc__buf_json_number (b, tm->value);
  gc__buf_puts (b, ",\"inputs\":{");
  for (size_t k = 0; k < tm->n_inputs; k++)
    {
      if (k)
        gc__buf_puts (b, ",");
      gc__buf_json_string (b, tm->inputs[k].name);
      gc__buf_puts (b, ":");
      gc__buf_json_number (b, tm->inputs[k].value);
    }
  gc__buf_puts (b, "}}");
}

static void
direction_json (gc__buf *b, const gc_result *r, const gc_direction *d,
                bool terms)
{
  gc__buf_printf (b, "{\"id\":%zu,\"index\":", d->id);
  if (d->index == SIZE_MAX)
    gc__buf_puts (b, "null");
  else
    gc__buf_printf (b, "%zu", d->index);
  char nm[96];
  if (d->index != SIZE_MAX)
    {
      gc__buf_puts (b, ",\"name\":");
      gc__buf_json_string (b, gc_param_name (r, d->index, nm, sizeof nm));
    }
  gc__buf_puts (b, ",\"verdict\":");
  gc__buf_json_string (b, gc_verdict_name (d->verdict));
  static const char *const keys[] = { "analytic", "reference", "d2h", "diff",
                                      "bar", "nu", "resolution", "step",
                                      "jump", "forward_error_ulps" };
  const double vals[] = { d->analytic, d->reference, d->d2h, d->diff, d->bar,
                          d->nu, d->resolution, d->step, d->jump,
                          d->forward_error_ulps };
  for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++)
    {
      gc__buf_printf (b, ",\"%s\":", keys[k]);
      gc__buf_json_number (b, vals[k]);
    }
  if (terms)
    {
      gc__buf_puts (b, ",\"terms\":[");
      for (int t = 0; t < GC_N_TERMS; t++)
        {
          if (t)
            gc__buf_puts (b, ",");
          term_json (b, &d->terms[t]);
        }
      gc__buf_puts (b, "]");
    }
  else
    {
      gc__buf_puts (b, ",\"term_values\":[");
      for (int t = 0; t < GC_N_TERMS; t++)
        {
          if (t)
            gc__buf_puts (b, ",");
          gc__buf_json_number (b, d->terms[t].value);
        }
      gc__buf_puts (b, "]");
    }
  gc__buf_puts (b, "}");
}

char *
gc_derivation (const gc_result *r, size_t dir, gc_format fmt)
{
  if (!r || dir >= r->n_directions)
    return NULL;
  const gc_direction *d = &r->dirs[dir];
  gc__buf b = { 0 };
  switch (fmt)
    {
    case GC_FMT_MARKDOWN:
      derivation_markdown (&b, r, d);
      break;
    case GC_FMT_JSON:
      direction_json (&b, r, d, true);
      gc__buf_puts (&b, "\n");
      break;
    case GC_FMT_TEXT:
    case GC_FMT_TAP:
      derivation_text (&b, d, "");
      break;
    }
  return gc__buf_take (&b);
}

/* ---------------------------------------------------------------------- */
/* Whole reports.  */

/* Which inputs of the bar were declared and which defaulted (manual:
   "What the bar assumes").  */
static void
inputs_text (gc__buf *b, const gc_result *r)
{
  unsigned d = r->defaulted;
  gc__buf_printf (b, "inputs: d_f %zu%s, d_b %zu%s, magnitudes %s, M_L %s\n",
                  r->forward_depth, d & GC_DEFAULTED_FORWARD_DEPTH
                  ? " (NOT DECLARED: n used)" : "",
                  r->backward_depth, d & GC_DEFAULTED_BACKWARD_DEPTH
                  ? " (NOT DECLARED: n used)" : "",
                  d & GC_DEFAULTED_MAGNITUDES
                  ? "defaulted (largest |g| per tensor)" : "the model's",
                  d & GC_DEFAULTED_LOSS_MAGNITUDE ? "defaulted (|L|)"
                  : "the model's");
  if (r->n_magnitude_low)
    gc__buf_printf (b, "  %zu magnitude(s) below half the gradient value they "
                    "bound (m_i < |g_i| / 2: no rounding does that); each "
                    "raised to |g_i|: check grad_magnitude_f32\n",
                    r->n_magnitude_low);
}

/* The distribution of the resolution (manual: "Inconclusive
   directions"), and the blindest direction when one is blind.  */
static void
resolution_text (gc__buf *b, const gc_result *r)
{
  if (r->blindest == SIZE_MAX)
    return;
  gc__buf_printf (b, "resolution: median %.3g, worst %.3g; %zu of %zu "
                  "directions coarser than 1e-3, %zu blind (>= 1: a 100%% "
                  "error passes there)\n", r->resolution_median,
                  r->resolution_worst, r->n_resolution_coarse,
                  r->n_directions, r->n_resolution_blind);
  if (r->n_inconclusive)
    {
      char label[160];
      direction_label (r, &r->dirs[r->blindest], label, sizeof label);
      gc__buf_printf (b, "inconclusive: the check cannot judge %zu "
                      "direction(s); the blindest, %s, has bar %.3e against "
                      "a reference of %.3e\n", r->n_inconclusive, label,
                      r->dirs[r->blindest].bar,
                      r->dirs[r->blindest].reference);
    }
}

static void
report_text (gc__buf *b, const gc_result *r)
{
  bool fwd = r->kind == GC_CHECK_FORWARD;
  if (fwd)
    gc__buf_printf (b, "gradcheck %s: forward oracle, model %s, %zu outputs\n"
                    "reference: the MPFR forward at %ld bits, element by "
                    "element\n", GC_VERSION_STRING, r->model_name, r->n,
                    (long) r->precision);
  else
    {
      gc__buf_printf (b, "gradcheck %s: model %s, %zu parameters\n",
                      GC_VERSION_STRING, r->model_name, r->n);
      gc__buf_puts (b, "reference: ");
      describe_reference (b, r);
      gc__buf_printf (b, "\ndirections: %s",
                      direction_kind_name (r->direction_kind));
      if (r->direction_kind == GC_DIR_RANDOM)
        gc__buf_printf (b, " (seed %llu)", (unsigned long long) r->seed);
      gc__buf_printf (b, ", %zu checked", r->n_directions);
      if (r->shard_count > 1)
        gc__buf_printf (b, " (shard %zu of %zu, %zu in all)", r->shard_index,
                        r->shard_count, r->n_total);
      gc__buf_puts (b, "\n");
    }
  if (r->status != GC_OK)
    {
      gc__buf_printf (b, "verdict: ERROR: %s\n", gc_strerror (r->status));
      if (strcmp (r->detail, gc_strerror (r->status)) != 0)
        gc__buf_printf (b, "  %s\n", r->detail);
      return;
    }
  if (!fwd)
    gc__buf_printf (b, "loss: f32 %.9g, reference %.9g, magnitude M_L %.4g",
                    r->loss_f32, r->loss_reference, r->loss_magnitude);
  if (!fwd && r->forward_error_ulps >= 0)
    gc__buf_printf (b, " (f32 forward off by up to %.3g ulp where measured; "
                    "budget %.3g ulp%s)",
                    r->forward_error_ulps, r->forward_budget_ulps,
                    r->forward_error_ulps > r->forward_budget_ulps
                    ? " EXCEEDED: the declared forward depth is too small" : "");
  gc__buf_puts (b, "\n");
  if (!fwd)
    inputs_text (b, r);
  if (!fwd)
    gc__buf_puts (b, "\n");
  const char *vname = r->verdict == GC_PASS ? "PASS" : r->verdict == GC_FAIL
                      ? "FAIL" : r->verdict == GC_NONSMOOTH ? "NON-SMOOTH"
                      : r->verdict == GC_INCONCLUSIVE ? "INCONCLUSIVE"
                      : r->verdict == GC_NONDETERMINISTIC ? "NON-DETERMINISTIC"
                      : "ERROR";
  if (fwd)
    gc__buf_printf (b, "verdict: %s -- %zu of %zu outputs off; worst nu = "
                    "%.3g\n", vname, r->n_failed, r->n_directions,
                    r->worst_nu);
  else
    {
      gc__buf_printf (b, "verdict: %s -- %zu failed, %zu non-smooth",
                      vname, r->n_failed, r->n_nonsmooth);
      if (r->n_inconclusive)
        gc__buf_printf (b, ", %zu inconclusive", r->n_inconclusive);
      gc__buf_printf (b, " of %zu; worst nu = %.3g\n", r->n_directions,
                      r->worst_nu);
      resolution_text (b, r);
    }
  if (r->nondeterministic)
    gc__buf_printf (b, "non-deterministic model: %s; no single gradient to "
                    "judge (the directions below used the first call's)\n",
                    r->nd_detail);
  if (r->diagnosis.kind != GC_DIAG_NONE)
    gc__buf_printf (b, "diagnosis: %s\n", r->diagnosis.text);
  if (r->worst == SIZE_MAX)
    return;
  const gc_direction *d = &r->dirs[r->worst];
  char label[160];
  direction_label (r, d, label, sizeof label);
  gc__buf_printf (b, "\nworst %s: %s\n", fwd ? "output" : "direction", label);
  gc__buf_printf (b, "  %-11s %+.9e\n", fwd ? "f32" : "analytic", d->analytic);
  gc__buf_printf (b, "  reference   %+.9e", d->reference);
  if (d->reference != 0)
    gc__buf_printf (b, "   %s / reference = %.6g", fwd ? "f32" : "analytic",
                    d->analytic / d->reference);
  gc__buf_printf (b, "\n  |diff|       %.3e\n", d->diff);
  gc__buf_printf (b, "  bar          %.3e   nu = |diff| / bar = %.3g\n",
                  d->bar, d->nu);
  gc__buf_printf (b, "  resolution   %.3e   (bar / |reference|: the smallest "
                  "relative error this check sees here)\n", d->resolution);
  if (!fwd)
    {
      gc__buf_printf (b, "  step h       %.6g\n", d->step);
      /* manual: "Confirming a direction", "Raising the precision" */
      if (d->level > 0)
        gc__buf_printf (b, "  confirmed    at level %d: step h / 2^%d (the "
                        "first step's truncation estimate did not hold)\n",
                        d->level, 8 * d->level);
      else if (d->level < 0)
        gc__buf_printf (b, "  unconfirmed  no two finer steps agreed: the "
                        "reference is not trustworthy here\n");
      const gc_term *e = &d->terms[GC_TERM_REFERENCE];
      if (r->reference == GC_REF_MPFR && e->n_inputs > 2
          && e->inputs[2].value != (double) r->precision)
        gc__buf_printf (b, "  precision    raised to %.0f bits (the %ld-bit "
                        "reference's rounding dominated)\n",
                        e->inputs[2].value, (long) r->precision);
    }
  gc__buf_puts (b, "\n");
  gc__buf_puts (b, "derivation (manual, chapter \"Deriving the pass bar\"):\n");
  derivation_text (b, d, "  ");
}

static void
report_json (gc__buf *b, const gc_result *r)
{
  gc__buf_printf (b, "{\"gradcheck\":\"%s\",\"kind\":\"%s\",\"model\":",
                  GC_VERSION_STRING,
                  r->kind == GC_CHECK_FORWARD ? "forward" : "gradient");
  gc__buf_json_string (b, r->model_name);
  gc__buf_printf (b, ",\"n\":%zu,\"reference\":\"%s\",\"precision\":%ld",
                  r->n, gc_reference_name (r->reference), (long) r->precision);
  gc__buf_printf (b, ",\"truncation_source\":\"%s\"",
                  gc_reference_name (r->truncation_source));
  gc__buf_printf (b, ",\"directions\":\"%s\",\"seed\":%llu",
                  direction_kind_name (r->direction_kind),
                  (unsigned long long) r->seed);
  gc__buf_puts (b, ",\"false_alarm\":");
  gc__buf_json_number (b, r->false_alarm);
  gc__buf_puts (b, ",\"lambda_forward\":");
  gc__buf_json_number (b, r->lambda_forward);
  gc__buf_puts (b, ",\"lambda_backward\":");
  gc__buf_json_number (b, r->lambda_backward);
  gc__buf_printf (b, ",\"forward_depth\":%zu,\"backward_depth\":%zu",
                  r->forward_depth, r->backward_depth);
  gc__buf_puts (b, ",\"loss_f32\":");
  gc__buf_json_number (b, r->loss_f32);
  gc__buf_puts (b, ",\"loss_reference\":");
  gc__buf_json_number (b, r->loss_reference);
  gc__buf_puts (b, ",\"loss_magnitude\":");
  gc__buf_json_number (b, r->loss_magnitude);
  gc__buf_puts (b, ",\"forward_error_ulps\":");
  if (r->forward_error_ulps >= 0)
    gc__buf_json_number (b, r->forward_error_ulps);
  else
    gc__buf_puts (b, "null");
  gc__buf_puts (b, ",\"forward_budget_ulps\":");
  gc__buf_json_number (b, r->forward_budget_ulps);
  gc__buf_printf (b, ",\"status\":\"%s\",\"detail\":", gc__status_name (r->status));
  gc__buf_json_string (b, r->detail);
  gc__buf_printf (b, ",\"verdict\":\"%s\"", gc_verdict_name (r->verdict));
  gc__buf_printf (b, ",\"n_directions\":%zu,\"n_total\":%zu,"
                  "\"shard_index\":%zu,\"shard_count\":%zu,"
                  "\"n_failed\":%zu,\"n_nonsmooth\":%zu",
                  r->n_directions, r->n_total, r->shard_index, r->shard_count,
                  r->n_failed, r->n_nonsmooth);
  const gc_direction *w = r->worst != SIZE_MAX ? &r->dirs[r->worst] : NULL;
  gc__buf_puts (b, ",\"worst_index\":");
  if (w && w->index != SIZE_MAX)
    gc__buf_printf (b, "%zu", w->index);
  else
    gc__buf_puts (b, "null");
  gc__buf_puts (b, ",\"worst_id\":");
  if (w)
    gc__buf_printf (b, "%zu", w->id);
  else
    gc__buf_puts (b, "null");
  gc__buf_puts (b, ",\"worst_nu\":");
  gc__buf_json_number (b, r->worst_nu);
  gc__buf_puts (b, ",\"worst\":");
  if (w)
    direction_json (b, r, w, true);
  else
    gc__buf_puts (b, "null");
  const gc_diagnosis *dg = &r->diagnosis;
  gc__buf_printf (b, ",\"diagnosis\":{\"kind\":\"%s\",\"factor\":",
                  diagnosis_name (dg->kind));
  gc__buf_json_number (b, dg->factor);
  gc__buf_puts (b, ",\"closed_form\":");
  gc__buf_json_string (b, dg->closed_form);
  gc__buf_printf (b, ",\"shift\":%ld,\"block\":", dg->shift);
  gc__buf_json_string (b, dg->block);
  gc__buf_puts (b, ",\"text\":");
  gc__buf_json_string (b, dg->text);
  gc__buf_puts (b, "},\"constants\":{");
  for (size_t k = 0; k < r->n_constants; k++)
    {
      if (k)
        gc__buf_puts (b, ",");
      gc__buf_json_string (b, r->constants[k].name);
      gc__buf_puts (b, ":");
      gc__buf_json_number (b, r->constants[k].value);
    }
  gc__buf_puts (b, "},\"blocks\":[");
  for (size_t k = 0; k < r->n_blocks; k++)
    {
      const gc_block *bl = &r->blocks[k];
      gc__buf_printf (b, "%s{\"name\":", k ? "," : "");
      gc__buf_json_string (b, bl->name);
      gc__buf_printf (b, ",\"offset\":%zu,\"count\":%zu,\"shape\":[",
                      bl->offset, bl->count);
      for (size_t a = 0; a < bl->ndim; a++)
        gc__buf_printf (b, "%s%zu", a ? "," : "", bl->shape[a]);
      gc__buf_puts (b, "]}");
    }
  gc__buf_puts (b, "],\"results\":[");
  for (size_t k = 0; k < r->n_directions; k++)
    {
      if (k)
        gc__buf_puts (b, ",\n");
      direction_json (b, r, &r->dirs[k], false);
    }
  gc__buf_puts (b, "]}\n");
}

static void
report_tap (gc__buf *b, const gc_result *r)
{
  if (r->status != GC_OK)
    {
      gc__buf_printf (b, "1..0 # SKIP no directions\nBail out! %s: %s\n",
                      gc_strerror (r->status), r->detail);
      return;
    }
  /* A non-deterministic model is one more test point, not ok ("Determinism
     and reentrancy").  */
  gc__buf_printf (b, "1..%zu\n", r->n_directions
                  + (r->nondeterministic ? 1 : 0));
  gc__buf_printf (b, "# gradcheck %s: model %s, reference %s\n",
                  GC_VERSION_STRING, r->model_name,
                  gc_reference_name (r->reference));
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      char label[160];
      direction_label (r, d, label, sizeof label);
      /* An inconclusive direction is neither ok nor a failure: TAP's
         "not ok # TODO" (manual: "Inconclusive directions").  */
      const char *ok = d->verdict == GC_FAIL || d->verdict == GC_INCONCLUSIVE
                       ? "not ok" : "ok";
      gc__buf_printf (b, "%s %zu - %s nu=%.3g", ok, k + 1, label, d->nu);
      if (d->verdict == GC_NONSMOOTH)
        gc__buf_puts (b, " # SKIP non-smooth point");
      if (d->verdict == GC_INCONCLUSIVE)
        gc__buf_printf (b, " # TODO inconclusive: resolution %.3g >= 1, a "
                        "100%% error passes here", d->resolution);
      gc__buf_puts (b, "\n");
      if (d->verdict == GC_FAIL)
        gc__buf_printf (b, "#   analytic %.9g reference %.9g bar %.3e\n",
                        d->analytic, d->reference, d->bar);
    }
  if (r->diagnosis.kind != GC_DIAG_NONE)
    gc__buf_printf (b, "# diagnosis: %s\n", r->diagnosis.text);
  if (r->nondeterministic)
    gc__buf_printf (b, "not ok %zu - the model is deterministic: %s\n",
                    r->n_directions + 1, r->nd_detail);
  gc__buf_printf (b, "# verdict: %s\n", gc_verdict_name (r->verdict));
}

char *
gc_report (const gc_result *r, gc_format fmt)
{
  if (!r)
    return NULL;
  gc__buf b = { 0 };
  switch (fmt)
    {
    case GC_FMT_TEXT:
      report_text (&b, r);
      break;
    case GC_FMT_JSON:
      report_json (&b, r);
      break;
    case GC_FMT_MARKDOWN:
      if (r->worst != SIZE_MAX)
        derivation_markdown (&b, r, &r->dirs[r->worst]);
      else
        {
          gc__buf_printf (&b, "# gradcheck: %s\n\n", r->model_name);
          gc__buf_printf (&b, "Verdict: **%s** (%s)\n",
                          gc_verdict_name (r->verdict), r->detail);
        }
      break;
    case GC_FMT_TAP:
      report_tap (&b, r);
      break;
    }
  return gc__buf_take (&b);
}
