/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report.c -- render a result as text, JSON, Markdown or TAP, and the
   derivation of one direction's bar.  The JSON field names are documented in
   the manual, section "JSON report"; keep the two in step.  */

#include "internal.h"
#include "escape.h"

#include <jansson.h>
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
    case GC_DIAG_FORWARD_MISMATCH: return "forward-mismatch";
    case GC_DIAG_AXIS_OFFSET: return "axis-offset";
    case GC_DIAG_APPROX_SHIFT: return "approximate-shift";
    }
  return "unknown";
}

/* How many directions of R reference REF decided (manual: "The tiered
   reference").  */
static size_t
decided_count (const gc_result *r, gc_reference ref)
{
  size_t n = 0;
  for (size_t k = 0; r->dirs && k < r->n_directions; k++)
    n += r->dirs[k].verdict != GC_ERROR && r->dirs[k].decided_by == ref;
  return n;
}

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

static void
describe_reference (gc__buf *b, const gc_result *r)
{
  if (r->reference == GC_REF_AUTO)
    gc__buf_printf (b, "tiered: f64 central differences, MPFR at %ld bits "
                    "wherever f64 may not give MPFR's verdict",
                    (long) r->precision);
  else if (r->reference == GC_REF_MPFR && r->precision > 0)
    gc__buf_printf (b, "MPFR central differences at %ld bits",
                    (long) r->precision);
  else if (r->reference == GC_REF_MPFR)
    gc__buf_puts (b, "MPFR central differences");
  else
    gc__buf_printf (b, "%s central differences",
                    r->reference == GC_REF_F32 ? "f32" : "f64");
  if (r->truncation_source != r->reference && r->status == GC_OK
      && r->reference != GC_REF_AUTO)
    gc__buf_printf (b, " (truncation from the %s forward)",
                    gc_reference_name (r->truncation_source));
}

/* Names in the text, Markdown and TAP renderings come from plugins and
   shard files: each goes through gc__escape (escape.h), so that a name
   cannot start a line, a TAP directive or a terminal escape sequence.  The
   JSON writer escapes its own way.  */

/* Append S escaped for KIND, padded with spaces to WIDTH bytes.  */
static void
put_esc_pad (gc__buf *b, const char *s, gc__escape_kind kind, size_t width)
{
  if (!s)
    s = "";
  char small[256];
  size_t n = gc__escape (small, sizeof small, s, kind);
  if (n < sizeof small)
    gc__buf_puts (b, small);
  else
    {
      char *t = malloc (n + 1);
      if (!t)
        {
          b->failed = true;
          return;
        }
      gc__escape (t, n + 1, s, kind);
      gc__buf_puts (b, t);
      free (t);
    }
  for (; n < width; n++)
    gc__buf_puts (b, " ");
}

static void
put_esc (gc__buf *b, const char *s, gc__escape_kind kind)
{
  put_esc_pad (b, s, kind, 0);
}

/* S as a Markdown code span: escaped as text, between backtick fences
   longer than any run of backticks inside (CommonMark, "Code spans").  In
   a table cell (IN_TABLE) a '|' ends the cell even inside a code span
   unless written \| (GitHub Flavored Markdown, "Tables").  */
static void
put_md_code (gc__buf *b, const char *s, bool in_table)
{
  if (!s)
    s = "";
  size_t run = 0, longest = 0;
  for (const char *p = s; *p; p++)
    {
      run = *p == '`' ? run + 1 : 0;
      if (run > longest)
        longest = run;
    }
  bool pad = longest > 0;
  for (size_t k = 0; k <= longest; k++)
    gc__buf_puts (b, "`");
  if (pad)
    gc__buf_puts (b, " ");
  if (!in_table)
    put_esc (b, s, GC__ESC_TEXT);
  else
    {
      gc__buf t = { 0 };
      put_esc (&t, s, GC__ESC_TEXT);
      char *e = gc__buf_take (&t);
      if (!e)
        {
          b->failed = true;
          return;
        }
      for (const char *p = e; *p; p++)
        {
          char c[2] = { *p, 0 };
          gc__buf_puts (b, *p == '|' ? "\\|" : c);
        }
      free (e);
    }
  if (pad)
    gc__buf_puts (b, " ");
  for (size_t k = 0; k <= longest; k++)
    gc__buf_puts (b, "`");
}

static void
put_label (gc__buf *b, const gc_result *r, const gc_direction *d,
           gc__escape_kind kind)
{
  size_t rb = d->index == SIZE_MAX ? gc__direction_block (r, d) : SIZE_MAX;
  if (rb != SIZE_MAX)
    {
      gc__buf_printf (b, "random direction %zu within ", d->id);
      put_esc (b, r->blocks[rb].name, kind);
    }
  else if (d->index == SIZE_MAX)
    gc__buf_printf (b, "random direction %zu", d->id);
  else
    {
      char nm[96];
      gc_param_name (r, d->index, nm, sizeof nm);
      put_esc (b, nm, kind);
      gc__buf_printf (b, " (%s %zu)",
                      r->kind == GC_CHECK_FORWARD ? "output" : "parameter",
                      d->index);
    }
}

/* ---------------------------------------------------------------------- */
/* Derivation of one direction.  */

/* One term of a derivation: name = formula = value [section], then its
   inputs.  */
static void
term_text (gc__buf *b, const gc_term *tm, const char *indent)
{
  gc__buf_printf (b, "%s  ", indent);
  put_esc_pad (b, tm->name, GC__ESC_TEXT, 19);
  gc__buf_puts (b, " = ");
  put_esc_pad (b, tm->formula, GC__ESC_TEXT, 42);
  gc__buf_printf (b, " = %.3e   [manual: ", tm->value);
  put_esc (b, tm->section, GC__ESC_TEXT);
  gc__buf_printf (b, "]\n%s  %-19s   ", indent, "");
  for (size_t k = 0; k < tm->n_inputs; k++)
    {
      gc__buf_puts (b, k ? ", " : "");
      put_esc (b, tm->inputs[k].name, GC__ESC_TEXT);
      gc__buf_printf (b, " = %.6g", tm->inputs[k].value);
    }
  gc__buf_puts (b, "\n");
}

static void
derivation_text (gc__buf *b, const gc_direction *d, const char *indent)
{
  gc__buf_printf (b, "%sbar = ", indent);
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      gc__buf_puts (b, t ? " + " : "");
      put_esc (b, d->terms[t].name, GC__ESC_TEXT);
    }
  gc__buf_printf (b, " = %.3e\n", d->bar);
  for (int t = 0; t < GC_N_TERMS; t++)
    term_text (b, &d->terms[t], indent);
  /* Manual: "Two verdicts, one report" */
  if (isnan (d->analytic_f64))
    return;
  if (d->richardson_used)
    {
      gc__buf_printf (b, "%sbar_64 = Richardson truncation + Richardson "
                      "rounding + twin adjoint rounding = %.3e   (the "
                      "algorithm: g64 against R(h) = %.17g)\n", indent,
                      d->bar_f64, d->richardson);
      term_text (b, &d->richardson_terms[0], indent);
      term_text (b, &d->richardson_terms[1], indent);
    }
  else
    gc__buf_printf (b, "%sbar_64 = truncation + reference rounding + twin "
                    "adjoint rounding = %.3e   (the algorithm: g64 against "
                    "the reference%s)\n", indent, d->bar_f64,
                    isnan (d->richardson) ? ""
                    : "; Richardson's R(h) disagreed with it beyond their "
                      "terms, and was not used");
  term_text (b, &d->adjoint_f64, indent);
  gc__buf_printf (b, "%sarithmetic bound = gamma_d / u * (u * sum_i |w_i| "
                  "m_i + 2^-150 * sum_i |w_i|) + twin adjoint rounding = "
                  "%.3e   (against max(|g32 - g64|, S_w / C), C = 4 (1 - d u) "
                  "/ (1 - 2 d u): f32's worst case; beyond 2^16 of it, no "
                  "rounding explains it)   [manual: The f64 twin]\n",
                  indent, d->arith_bar);
}

/* The arithmetic class's words.  */
static const char *
arith_words (gc_arith a)
{
  switch (a)
    {
    case GC_ARITH_OK: return "within the derived f32 bound";
    case GC_ARITH_PRECISION:
      return "beyond the derived f32 bound, within 2^16 of it: PRECISION "
             "(a reduced-precision operation or a cancellation in the f32 "
             "path)";
    case GC_ARITH_MISMATCH:
      return "beyond any rounding: the f32 path alone is wrong, or the twin "
             "is not the same algorithm";
    case GC_ARITH_NONE: break;
    }
  return "no twin";
}

static void
derivation_markdown (gc__buf *b, const gc_result *r, const gc_direction *d)
{
  gc__buf_puts (b, "# Derivation of the pass bar: ");
  put_label (b, r, d, GC__ESC_MARKDOWN);
  gc__buf_puts (b, "\n\nModel ");
  put_md_code (b, r->model_name, false);
  gc__buf_printf (b, ", %zu parameters; reference: ", r->n);
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
      if (isnan (d->jump))
        gc__buf_puts (b, "| kink estimate J | not measured: the +-2h pair "
                      "was skipped, f64's stencil bounds J (manual: "
                      "\"Skipping the 2h pair\") |\n");
      else
        gc__buf_printf (b, "| kink estimate J | %.3e |\n", d->jump);
      if (r->reference == GC_REF_AUTO)
        gc__buf_printf (b, "| decided by | %s |\n",
                        gc_reference_name (d->decided_by));
    }
  if (!isnan (d->analytic_f64))
    {
      /* Manual: "Two verdicts, one report" */
      gc__buf_printf (b, "| twin g64 ⟨g64, w⟩ | %.9g |\n", d->analytic_f64);
      if (d->richardson_used)
        gc__buf_printf (b, "| algorithm reference: Richardson R(h) | %.9g "
                        "(truncation %.3e, rounding %.3e) |\n",
                        d->richardson, d->richardson_terms[0].value,
                        d->richardson_terms[1].value);
      gc__buf_printf (b, "| algorithm bar_64 | %.3e |\n", d->bar_f64);
      gc__buf_printf (b, "| algorithm ν_64 | %.3g (%s) |\n", d->nu_f64,
                      gc_verdict_name (d->verdict_algorithm));
      gc__buf_printf (b, "| algorithm resolution | %.3e |\n",
                      d->resolution_f64);
      gc__buf_printf (b, "| arithmetic error max(\\|g32 − g64\\|, S_w / C) "
                      "| %.3e |\n", d->arith_diff);
      gc__buf_printf (b, "| arithmetic bound | %.3e |\n", d->arith_bar);
      gc__buf_printf (b, "| arithmetic ν | %.3g: %s |\n", d->nu_arith,
                      arith_words (d->arith));
    }
  gc__buf_printf (b, "| verdict | **%s** |\n\n", gc_verdict_name (d->verdict));
  gc__buf_puts (b, "The bar is the sum of three terms; each is derived in the "
                "manual section named beside it (chapter \"Deriving the pass "
                "bar\").\n\n");
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      const gc_term *tm = &d->terms[t];
      gc__buf_puts (b, "## ");
      put_esc (b, tm->name, GC__ESC_MARKDOWN);
      gc__buf_printf (b, " = %.3e\n\nFormula: ", tm->value);
      put_md_code (b, tm->formula, false);
      gc__buf_puts (b, ".  Manual: *");
      put_esc (b, tm->section, GC__ESC_MARKDOWN);
      gc__buf_puts (b, "*.\n\n| input | value |\n|---|---|\n");
      for (size_t k = 0; k < tm->n_inputs; k++)
        {
          /* A '|' ends a table cell even inside a code span (GFM).  */
          gc__buf_puts (b, "| ");
          put_md_code (b, tm->inputs[k].name, true);
          gc__buf_printf (b, " | %.9g |\n", tm->inputs[k].value);
        }
      gc__buf_puts (b, "\n");
    }
  if (!isnan (d->analytic_f64))
    {
      const gc_term *tm = &d->adjoint_f64;
      gc__buf_printf (b, "## twin adjoint rounding = %.3e\n\nThe algorithm's "
                      "bar is truncation + reference rounding + this term; "
                      "the arithmetic's bound is the adjoint rounding + this "
                      "term.  Formula: ", tm->value);
      put_md_code (b, tm->formula, false);
      gc__buf_puts (b, ".  Manual: *The f64 twin*.\n\n| input | value |\n"
                    "|---|---|\n");
      for (size_t k = 0; k < tm->n_inputs; k++)
        {
          gc__buf_puts (b, "| ");
          put_md_code (b, tm->inputs[k].name, true);
          gc__buf_printf (b, " | %.9g |\n", tm->inputs[k].value);
        }
      gc__buf_puts (b, "\n");
    }
}

/* ---------------------------------------------------------------------- */
/* JSON (through Jansson).  Every value the writer emits reads back to the
   same value (manual: "JSON report"): doubles with 17 significant digits
   in the C locale's notation whatever the host's locale, the non-finite
   ones as the strings "nan", "inf" and "-inf"; integers beyond 2^53 (which
   other JSON readers round) as strings of decimal digits; text as valid
   UTF-8, each invalid byte replaced by U+FFFD.  A constructor given NULL
   (an allocation failed) makes the whole report NULL.  */

static json_t *
jnum (double v)
{
  if (isfinite (v))
    return json_real (v);
  return json_string (isnan (v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static json_t *
juint (uint64_t v)
{
  if (v <= (uint64_t) 1 << 53)
    return json_integer ((json_int_t) v);
  char d[24];
  snprintf (d, sizeof d, "%llu", (unsigned long long) v);
  return json_string (d);
}

static json_t *
jhex (uint64_t v)
{
  char d[24];
  snprintf (d, sizeof d, "%016llx", (unsigned long long) v);
  return json_string (d);
}

static json_t *
jstr (const char *s)
{
  gc__buf b = { 0 };
  gc__buf_utf8 (&b, s ? s : "");
  char *t = gc__buf_take (&b);
  json_t *j = t ? json_string (t) : NULL;
  free (t);
  return j;
}

/* Set KEY of O to V (taking V); false when either is NULL or memory ran
   out.  */
static bool
put (json_t *o, const char *key, json_t *v)
{
  if (!o)
    {
      json_decref (v);
      return false;
    }
  return json_object_set_new (o, key, v) == 0;
}

static bool
push (json_t *a, json_t *v)
{
  if (!a)
    {
      json_decref (v);
      return false;
    }
  return json_array_append_new (a, v) == 0;
}

static json_t *
term_json (const gc_term *tm)
{
  json_t *o = json_object (), *in = json_object ();
  bool ok = put (o, "name", jstr (tm->name))
            && put (o, "formula", jstr (tm->formula))
            && put (o, "section", jstr (tm->section))
            && put (o, "value", jnum (tm->value));
  for (size_t k = 0; ok && in && k < tm->n_inputs; k++)
    {
      json_t *name = jstr (tm->inputs[k].name);
      ok = name && put (in, json_string_value (name),
                        jnum (tm->inputs[k].value));
      json_decref (name);
    }
  ok = ok && put (o, "inputs", json_incref (in));
  json_decref (in);
  if (!ok)
    {
      json_decref (o);
      return NULL;
    }
  return o;
}

static json_t *
direction_json (const gc_result *r, const gc_direction *d, bool terms)
{
  json_t *o = json_object ();
  bool ok = put (o, "id", juint (d->id))
            && put (o, "index", d->index == SIZE_MAX ? json_null ()
                                : juint (d->index));
  char nm[96];
  if (ok && d->index != SIZE_MAX)
    ok = put (o, "name", jstr (gc_param_name (r, d->index, nm, sizeof nm)));
  ok = ok && put (o, "verdict", jstr (gc_verdict_name (d->verdict)));
  static const char *const keys[] = { "analytic", "reference", "d2h", "diff",
                                      "bar", "nu", "resolution", "step",
                                      "jump", "forward_error_ulps",
                                      "jump_next", "bar_worst_case",
                                      "nu_worst_case" };
  const double vals[] = { d->analytic, d->reference, d->d2h, d->diff, d->bar,
                          d->nu, d->resolution, d->step, d->jump,
                          d->forward_error_ulps, d->jump_next,
                          d->bar_worst_case, d->nu_worst_case };
  for (size_t k = 0; ok && k < sizeof vals / sizeof vals[0]; k++)
    ok = put (o, keys[k], jnum (vals[k]));
  json_t *a = json_array ();
  for (int t = 0; ok && a && t < GC_N_TERMS; t++)
    ok = push (a, terms ? term_json (&d->terms[t]) : jnum (d->terms[t].value));
  /* Manual: "What the measurement does not support": the adjoint term's
     inputs that its rules (and "Measured rounding sensitivity"'s) read,
     so that a merge judges as the check did.  */
  if (ok && !terms && d->terms[GC_TERM_ADJOINT].n_inputs)
    {
      static const char *const want[] = { "lambda", "lambda_n", "d_b",
                                          "gamma_d / u", "sum |w_i| m_i",
                                          "sum |w_i|", "S_w" };
      const gc_term *at = &d->terms[GC_TERM_ADJOINT];
      json_t *in = json_object ();
      ok = in != NULL;
      for (size_t k = 0; ok && k < at->n_inputs; k++)
        for (size_t q = 0; ok && q < sizeof want / sizeof *want; q++)
          if (strcmp (at->inputs[k].name, want[q]) == 0)
            ok = put (in, want[q], jnum (at->inputs[k].value));
      ok = ok && put (o, "adjoint_inputs", json_incref (in));
      json_decref (in);
    }
  ok = ok && put (o, terms ? "terms" : "term_values", json_incref (a))
       && put (o, "level", json_integer (d->level))
       /* manual: "The tiered reference" */
       && put (o, "decided_by", jstr (gc_reference_name (d->decided_by)));
  json_decref (a);
  /* manual: "Two verdicts, one report" */
  if (ok && !isnan (d->analytic_f64))
    {
      static const char *const tkeys[] = { "analytic_f64", "bar_f64",
                                           "nu_f64", "resolution_f64",
                                           "arith_diff", "arith_bar",
                                           "nu_arith" };
      const double tvals[] = { d->analytic_f64, d->bar_f64, d->nu_f64,
                               d->resolution_f64, d->arith_diff,
                               d->arith_bar, d->nu_arith };
      for (size_t k = 0; ok && k < sizeof tvals / sizeof tvals[0]; k++)
        ok = put (o, tkeys[k], jnum (tvals[k]));
      /* manual: "Richardson's stencil" */
      if (ok && !isnan (d->richardson))
        {
          json_t *ra = json_array ();
          for (int t = 0; ok && ra && t < 2; t++)
            ok = push (ra, terms ? term_json (&d->richardson_terms[t])
                                 : jnum (d->richardson_terms[t].value));
          ok = ok && put (o, "richardson", jnum (d->richardson))
               && put (o, "richardson_used",
                       json_boolean (d->richardson_used))
               && put (o, terms ? "richardson_terms"
                                : "richardson_term_values",
                       json_incref (ra));
          json_decref (ra);
        }
      ok = ok && put (o, "verdict_algorithm",
                      jstr (gc_verdict_name (d->verdict_algorithm)))
           && put (o, "arith", jstr (gc__arith_name (d->arith)))
           && (terms ? put (o, "adjoint_f64", term_json (&d->adjoint_f64))
               : put (o, "adjoint_f64_value", jnum (d->adjoint_f64.value))
                 && put (o, "spread_f64",
                         jnum (gc__term_input (&d->adjoint_f64, "S_w64", 0)))
                 && put (o, "m_defaulted",
                         jnum (gc__term_input (&d->adjoint_f64,
                                               "m defaulted", 0))));
    }
  if (!ok)
    {
      json_decref (o);
      return NULL;
    }
  return o;
}

static int
dump_to_buf (const char *s, size_t n, void *data)
{
  gc__buf *b = data;
  char *t = malloc (n + 1);
  if (!t)
    {
      b->failed = true;
      return -1;
    }
  memcpy (t, s, n);
  t[n] = 0;
  gc__buf_puts (b, t);
  free (t);
  return b->failed ? -1 : 0;
}

/* Append J (taken) to B as compact JSON; fails B when J is NULL.  */
static void
json_out (gc__buf *b, json_t *j)
{
  if (!j || json_dump_callback (j, dump_to_buf, b,
                                JSON_COMPACT | JSON_ENCODE_ANY
                                | JSON_REAL_PRECISION (17)) != 0)
    b->failed = true;
  json_decref (j);
}

static void direction_summary (gc__buf *b, const gc_result *r,
                               const gc_direction *d);

static char *
derivation (const gc_result *r, size_t dir, gc_format fmt)
{
  if (!r || !r->dirs || dir >= r->n_directions)
    return NULL;
  const gc_direction *d = &r->dirs[dir];
  gc__buf b = { 0 };
  switch (fmt)
    {
    case GC_FMT_MARKDOWN:
      derivation_markdown (&b, r, d);
      break;
    case GC_FMT_JSON:
      json_out (&b, direction_json (r, d, true));
      gc__buf_puts (&b, "\n");
      break;
    case GC_FMT_TEXT:
    case GC_FMT_TAP:
      gc__buf_puts (&b, "direction: ");
      put_label (&b, r, d, GC__ESC_TEXT);
      gc__buf_printf (&b, ", %s\n", gc_verdict_name (d->verdict));
      direction_summary (&b, r, d);
      gc__buf_puts (&b, "\n");
      derivation_text (&b, d, "");
      break;
    }
  return gc__buf_take (&b);
}

/* ---------------------------------------------------------------------- */
/* Per-tensor summary (manual: "Diagnosis").  */

/* The tensors of R, or NULL: none to show, or memory ran out (which fails
   the report: B is marked failed).  */
static gc__tensor *
tensors_of (gc__buf *b, const gc_result *r, size_t *nt)
{
  gc__tensor *t = NULL;
  *nt = 0;
  if (r->status != GC_OK || r->n_directions == 0 || !r->dirs)
    return NULL;
  if (gc__tensors (r, &t, nt) != GC_OK)
    b->failed = true;
  return t;
}

static void
tensors_text (gc__buf *b, const gc_result *r, const char *prefix)
{
  size_t nt;
  gc__tensor *t = tensors_of (b, r, &nt);
  if (!t)
    return;
  size_t w = 6;
  for (size_t k = 0; k < nt; k++)
    w = strlen (t[k].name) > w ? strlen (t[k].name) : w;
  if (w > 24)
    w = 24;
  gc__buf_printf (b, "%stensors (failed/checked, worst nu, median "
                  "resolution):\n", prefix);
  for (size_t k = 0; k < nt; k++)
    {
      char counts[48];
      snprintf (counts, sizeof counts, "%zu/%zu", t[k].failed, t[k].checked);
      gc__buf_printf (b, "%s  ", prefix);
      put_esc_pad (b, t[k].name, prefix[0] ? GC__ESC_TAP : GC__ESC_TEXT, w);
      gc__buf_printf (b, " %11s  worst nu %-9.3g  resolution %.3g", counts,
                      t[k].worst_nu, t[k].resolution);
      if (t[k].nonsmooth)
        gc__buf_printf (b, "  %zu non-smooth", t[k].nonsmooth);
      if (t[k].structure[0])
        gc__buf_printf (b, "  %s", t[k].structure);
      gc__buf_puts (b, "\n");
    }
  free (t);
}

static void
tensors_markdown (gc__buf *b, const gc_result *r)
{
  size_t nt;
  gc__tensor *t = tensors_of (b, r, &nt);
  if (!t)
    return;
  if (r->diagnosis.kind != GC_DIAG_NONE)
    {
      gc__buf_puts (b, "## Diagnosis\n\n");
      put_esc (b, r->diagnosis.text, GC__ESC_MARKDOWN);
      gc__buf_puts (b, "\n\n");
    }
  gc__buf_puts (b, "## Tensors\n\n| tensor | failed / checked | worst ν "
                "| median resolution | structure of the failures |\n"
                "|---|---|---|---|---|\n");
  for (size_t k = 0; k < nt; k++)
    {
      gc__buf_puts (b, "| ");
      put_md_code (b, t[k].name, true);
      gc__buf_printf (b, " | %zu / %zu | %.3g | %.3g | %s |\n", t[k].failed,
                      t[k].checked, t[k].worst_nu, t[k].resolution,
                      t[k].structure);
    }
  gc__buf_puts (b, "\n");
  free (t);
}

/* The per-tensor summary as a JSON array (a new reference), or NULL when
   memory ran out.  */
static json_t *
tensors_json (const gc_result *r)
{
  size_t nt = 0;
  gc__tensor *t = NULL;
  json_t *a = json_array ();
  if (!a)
    return NULL;
  if (r->status == GC_OK && r->n_directions > 0 && r->dirs
      && gc__tensors (r, &t, &nt) != GC_OK)
    {
      json_decref (a);
      return NULL;
    }
  bool ok = true;
  for (size_t k = 0; ok && t && k < nt; k++)
    {
      json_t *o = json_object ();
      ok = o && put (o, "name", jstr (t[k].name))
           && put (o, "checked", juint (t[k].checked))
           && put (o, "failed", juint (t[k].failed))
           && put (o, "nonsmooth", juint (t[k].nonsmooth))
           && put (o, "worst_nu", jnum (t[k].worst_nu))
           && put (o, "resolution", jnum (t[k].resolution))
           && put (o, "structure", jstr (t[k].structure))
           && json_array_append_new (a, o) == 0;
      if (!ok)
        json_decref (o);
    }
  free (t);
  if (!ok)
    {
      json_decref (a);
      return NULL;
    }
  return a;
}

/* ---------------------------------------------------------------------- */
/* Whole reports.  */

/* The f32 forward's measured error beside its budget and worst case
   (manual: "Forward disagreement"): a depth declared too small is blamed
   only where it can explain the error.  */
static void
forward_agreement_text (gc__buf *b, const gc_result *r)
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
  else if (level == 3)
    gc__buf_printf (b, "; beyond the worst case %.3g ulp for M_L = |L|: the "
                    "forwards disagree, or the loss cancels", worst);
  gc__buf_puts (b, ")");
  if ((level == 2 || level == 3) && r->n_failed == 0)
    gc__buf_printf (b, "\nnote: the f32 forward and the %s reference forward "
                    "compute different functions at x (L = %.4g vs %.4g)%s; "
                    "their gradients agree within the bar here",
                    gc_reference_name (r->truncation_source), r->loss_f32,
                    r->loss_reference, level == 3 ? ", or the loss cancels"
                    : "");
}

/* Whether the f64 reference would have given the same verdict (manual:
   "Would f64 do?").  */
static void
f64_text (gc__buf *b, const gc_result *r)
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

/* Manual: "Measured rounding sensitivity": what the reruns under the
   other rounding modes measured, and what they say of the declarations.  */
static void
rounding_text (gc__buf *b, const gc_result *r)
{
  if (r->rounding_modes == 0 && r->rounding_dropped == 0)
    return;
  gc__buf_printf (b, "rounding: measured under %u other IEEE mode%s",
                  r->rounding_modes, r->rounding_modes == 1 ? "" : "s");
  if (r->spread_loss > 0)
    gc__buf_printf (b, "; reference forward's spread S_L = %.3g",
                    r->spread_loss);
  if (r->depth_implied_at != SIZE_MAX)
    {
      char nm[96];
      gc__buf_printf (b, "; implied backward depth >= %.3g (at ",
                      r->depth_implied);
      put_esc (b, gc_param_name (r, r->depth_implied_at, nm, sizeof nm),
               GC__ESC_TEXT);
      gc__buf_puts (b, ")");
    }
  if (r->forward_depth_implied >= 1)
    gc__buf_printf (b, ", forward >= %.3g", r->forward_depth_implied);
  gc__buf_puts (b, "\n");
  if (r->rounding_dropped)
    {
      gc__buf_printf (b, "  %u mode%s left out: ", r->rounding_dropped,
                      r->rounding_dropped == 1 ? "" : "s");
      put_esc (b, r->rounding_note, GC__ESC_TEXT);
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
  if (r->depth_implied > (double) r->backward_depth)
    {
      char nm[96];
      gc__buf_puts (b, "  WARNING: the backward's spread at ");
      put_esc (b, gc_param_name (r, r->depth_implied_at, nm, sizeof nm),
               GC__ESC_TEXT);
      gc__buf_printf (b, " needs at least %.3g roundings of magnitude m_i, "
                      "more than the declared d_b = %zu: the depth or that "
                      "magnitude is too small", r->depth_implied,
                      r->backward_depth);
      if (r->n_spread_beyond)
        gc__buf_printf (b, "; %zu direction(s) whose spread exceeds the "
                        "worst case 2 gamma_d of d_b are PRECISION (a "
                        "spread beyond it is not a rounding of the declared "
                        "arithmetic: a lower precision, or a wrong "
                        "declaration)", r->n_spread_beyond);
      else
        gc__buf_puts (b, " (the bar includes the measured spread)");
      gc__buf_puts (b, "\n");
    }
  else if (r->depth_supported > 0)
    {
      /* Manual: "What the measurement does not support".  */
      double f = (double) r->backward_depth / r->depth_implied;
      if (!(r->defaulted & GC_DEFAULTED_MAGNITUDES) && r->depth_implied < 1)
        gc__buf_printf (b, "  UNSUPPORTED: the declared magnitudes "
                        "(grad_magnitude_f32) leave the measured spreads "
                        "%.3g rounding(s) of them, fewer than one; with d_b "
                        "= %zu they are %.3g times what the spreads imply, "
                        "and the measurement supports magnitudes up to %.3g "
                        "times the declared ones;", r->depth_implied,
                        r->backward_depth, f,
                        r->depth_supported / (double) r->backward_depth);
      else
        gc__buf_printf (b, "  UNSUPPORTED: the declared d_b = %zu is %.3g "
                        "times the depth the measured spreads imply "
                        "(%.3g);", r->backward_depth, f, r->depth_implied);
      gc__buf_printf (b, " the measurement supports d_b m_i up to %d times "
                      "the implied (%.3g roundings of the declared "
                      "magnitudes)", GC_COARSE_FACTOR, r->depth_supported);
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
  else if (r->rounding_modes && r->depth_implied_at == SIZE_MAX)
    gc__buf_puts (b, "  note: every spread of the backward is 0: its "
                  "arithmetic is exact, or the directed modes did not reach "
                  "it (threads started before the check keep their own "
                  "mode); the measurement vouches for nothing\n");
  else if (r->n_spread_beyond)
    gc__buf_printf (b, "  PRECISION: %zu direction(s) whose measured spread "
                    "exceeds the worst case 2 gamma_d of the declared d_b = "
                    "%zu\n", r->n_spread_beyond, r->backward_depth);
  if (r->forward_depth_implied > (double) r->forward_depth)
    gc__buf_printf (b, "  WARNING: the reference forward's spread S_L needs "
                    "at least %.3g roundings of magnitude M_L, more than the "
                    "declared d_f = %zu (the bar includes S_L)\n",
                    r->forward_depth_implied, r->forward_depth);
}

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
                  d & GC_DEFAULTED_LOSS_MAGNITUDE ? "defaulted (|L|)"
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
  if (r->n_blind_defaulted)
    gc__buf_printf (b, "  %zu blind direction(s) INCONCLUSIVE: their "
                    "magnitude was defaulted (the tensor's largest |g|), "
                    "which makes the blindness; declare grad_magnitude_f32 "
                    "(\"What the measurement does not support\")\n",
                    r->n_blind_defaulted);
  rounding_text (b, r);
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
  gc__buf_printf (b, "bounds: adjoint multiplier %s decided (lambda "
                  "sqrt(d_b) = %.3g, gamma_d / u = %.3g); under the "
                  "worst-case bounds gamma_d the worst nu is %.3g",
                  prob <= gu ? "lambda sqrt(d_b), probabilistic,"
                             : "gamma_d / u, worst case,", prob, gu,
                  r->worst_nu_worst_case);
  if (r->n_failed)
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
  gc__buf_printf (b, "resolution: median %.3g, worst %.3g; %zu of %zu "
                  "directions coarser than 1e-3, %zu blind (>= 1: a 100%% "
                  "error passes there)\n", r->resolution_median,
                  r->resolution_worst, r->n_resolution_coarse,
                  r->n_directions, r->n_resolution_blind);
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
      put_label (b, r, bi, GC__ESC_TEXT);
      gc__buf_printf (b, ", has bar %.3e against a reference of %.3e\n",
                      bi->bar, bi->reference);
    }
}

/* Direction D's values, bar, resolution, step, and how its reference
   was reached: the worst direction's lines of the text report, and the
   head of explain's text.  */
static void
direction_summary (gc__buf *b, const gc_result *r, const gc_direction *d)
{
  bool fwd = r->kind == GC_CHECK_FORWARD;
  gc__buf_printf (b, "  %-11s %+.9e\n", fwd ? "f32" : "analytic", d->analytic);
  gc__buf_printf (b, "  reference   %+.9e", d->reference);
  if (d->reference != 0)
    {
      char rt[40];
      gc__buf_printf (b, "   %s / reference = %s", fwd ? "f32" : "analytic",
                      gc__ratio_text (rt, sizeof rt,
                                      d->analytic / d->reference, 6));
    }
  else
    gc__buf_puts (b, "   reference 0: no ratio");
  gc__buf_printf (b, "\n  |diff|       %.3e\n", d->diff);
  gc__buf_printf (b, "  bar          %.3e   nu = |diff| / bar = %.3g\n",
                  d->bar, d->nu);
  /* Manual: "Inconclusive directions": a relative error above twice the
     resolution cannot pass (a correct backward's own error is within the
     bar and may offset up to one bar of it).  */
  gc__buf_printf (b, "  resolution   %.3e   (bar / |reference|: a relative "
                  "error above twice this cannot pass here)\n",
                  d->resolution);
  if (!fwd)
    {
      gc__buf_printf (b, "  step h       %.6g\n", d->step);
      if (!isnan (d->analytic_f64))
        {
          /* manual: "Two verdicts, one report" */
          gc__buf_printf (b, "  twin g64     %+.9e   algorithm: nu_64 = "
                          "|g64 - reference| / bar_64 = %.3g, bar_64 = "
                          "%.3e, resolution %.3e: %s\n", d->analytic_f64,
                          d->nu_f64, d->bar_f64, d->resolution_f64,
                          gc_verdict_name (d->verdict_algorithm));
          gc__buf_printf (b, "  arithmetic   max(|g32 - g64|, S_w / C) = %.3e, "
                          "bound %.3e, nu = %.3g: %s\n", d->arith_diff,
                          d->arith_bar, d->nu_arith, arith_words (d->arith));
        }
      if (r->reference == GC_REF_AUTO)
        gc__buf_printf (b, "  decided by   %s\n",
                        gc_reference_name (d->decided_by));
      /* manual: "Confirming a direction", "Raising the precision" */
      if (d->level > 0)
        gc__buf_printf (b, "  confirmed    at level %d: step h / 2^%d (the "
                        "first step's truncation estimate did not hold)\n",
                        d->level, 8 * d->level);
      else if (d->level < 0)
        gc__buf_printf (b, "  unconfirmed  no two finer steps agreed: the "
                        "reference is not trustworthy here\n");
      const gc_term *e = &d->terms[GC_TERM_REFERENCE];
      if (d->decided_by == GC_REF_MPFR && e->n_inputs > 2
          && e->inputs[2].value != (double) r->precision)
        gc__buf_printf (b, "  precision    raised to %.0f bits (the %ld-bit "
                        "reference's rounding dominated)\n",
                        e->inputs[2].value, (long) r->precision);
    }
}

/* Manual: "Two verdicts, one report": the twin's two questions.  */
static void
twin_text (gc__buf *b, const gc_result *r)
{
  if (!r->twin)
    return;
  gc__buf_printf (b, "twin: the f64 backward judged the algorithm and the "
                  "f32 arithmetic apart (manual: \"The f64 twin\"); measured "
                  "under %u other IEEE modes\n", r->twin_rounding_modes);
  gc__buf_printf (b, "  algorithm:  g64 against the reference: %zu failed of "
                  "%zu", r->n_failed_algorithm, r->n_directions);
  if (r->worst_f64 != SIZE_MAX)
    {
      gc__buf_printf (b, "; worst nu_64 = %.3g at ", r->worst_nu_f64);
      put_label (b, r, &r->dirs[r->worst_f64], GC__ESC_TEXT);
    }
  gc__buf_printf (b, "; resolution median %.3g, worst %.3g\n",
                  r->resolution_f64_median, r->resolution_f64_worst);
  gc__buf_printf (b, "  arithmetic: g32 against g64 in units of f32's derived "
                  "bound: %zu beyond it within 2^16 of it (PRECISION), %zu "
                  "beyond any rounding (FAIL)", r->n_precision, r->n_mismatch);
  if (r->worst_arith != SIZE_MAX)
    {
      gc__buf_printf (b, "; worst nu = %.3g at ", r->worst_nu_arith);
      put_label (b, r, &r->dirs[r->worst_arith], GC__ESC_TEXT);
    }
  gc__buf_puts (b, "\n");
}

static void
report_text (gc__buf *b, const gc_result *r)
{
  bool fwd = r->kind == GC_CHECK_FORWARD;
  gc__buf_printf (b, "gradcheck %s: %smodel ", GC_VERSION_STRING,
                  gc__kind_label (r->kind));
  put_esc (b, r->model_name, GC__ESC_TEXT);
  if (fwd && r->precision > 0)
    gc__buf_printf (b, ", %zu outputs\n"
                    "reference: the MPFR forward at %ld bits, element by "
                    "element\n", r->n, (long) r->precision);
  else if (fwd)   /* refused before a precision was set */
    gc__buf_printf (b, ", %zu outputs\n"
                    "reference: the MPFR forward, element by element\n",
                    r->n);
  else
    {
      gc__buf_printf (b, ", %zu parameters\n", r->n);
      gc__buf_puts (b, "reference: ");
      describe_reference (b, r);
      gc__buf_printf (b, "\ndirections: %s",
                      direction_kind_name (r->direction_kind));
      if (r->direction_kind == GC_DIR_RANDOM)
        gc__buf_printf (b, " (seed %llu)", (unsigned long long) r->seed);
      if (r->random_per_block)
        gc__buf_printf (b, ", %zu per block", r->random_per_block);
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
        {
          gc__buf_puts (b, "  ");
          put_esc (b, r->detail, GC__ESC_TEXT);
          gc__buf_puts (b, "\n");
        }
      return;
    }
  if (!fwd)
    gc__buf_printf (b, "loss: f32 %.9g, reference %.9g, magnitude M_L %.4g",
                    r->loss_f32, r->loss_reference, r->loss_magnitude);
  if (!fwd && r->forward_error_ulps >= 0)
    forward_agreement_text (b, r);
  gc__buf_puts (b, "\n");
  if (!fwd)
    {
      inputs_text (b, r);
      gc__buf_puts (b, "\n");
    }
  const char *vname = r->verdict == GC_PASS ? "PASS" : r->verdict == GC_FAIL
                      ? "FAIL" : r->verdict == GC_NONSMOOTH ? "NON-SMOOTH"
                      : r->verdict == GC_INCONCLUSIVE ? "INCONCLUSIVE"
                      : r->verdict == GC_NONDETERMINISTIC ? "NON-DETERMINISTIC"
                      : r->verdict == GC_PRECISION ? "PRECISION"
                      : "ERROR";
  if (fwd)
    gc__buf_printf (b, "verdict: %s -- %zu of %zu outputs off; worst nu = "
                    "%.3g\n", vname, r->n_failed, r->n_directions,
                    r->worst_nu);
  else
    {
      gc__buf_printf (b, "verdict: %s -- %zu failed, %zu non-smooth",
                      vname, r->n_failed, r->n_nonsmooth);
      if (r->n_precision)
        gc__buf_printf (b, ", %zu precision", r->n_precision);
      if (r->n_inconclusive)
        gc__buf_printf (b, ", %zu inconclusive", r->n_inconclusive);
      gc__buf_printf (b, " of %zu; worst nu = %.3g\n", r->n_directions,
                      r->worst_nu);
      twin_text (b, r);
    }
  /* The findings first (a forward disagreement, a non-deterministic
     model, the diagnosis), then the resolution and the tensors.  */
  if (r->nondeterministic)
    {
      gc__buf_puts (b, "non-deterministic model: ");
      put_esc (b, r->nd_detail, GC__ESC_TEXT);
      gc__buf_puts (b, "; no single gradient to judge (the directions below "
                    "used the first call's)\n");
    }
  if (r->diagnosis.kind != GC_DIAG_NONE)
    {
      gc__buf_puts (b, "diagnosis: ");
      put_esc (b, r->diagnosis.text, GC__ESC_TEXT);
      gc__buf_puts (b, "\n");
    }
  if (!fwd)
    resolution_text (b, r);
  if (r->reference == GC_REF_AUTO)
    {
      gc__buf_printf (b, "tiered reference: f64 decided %zu of %zu "
                      "directions, MPFR %zu (manual: \"The tiered "
                      "reference\")\n", decided_count (r, GC_REF_F64),
                      r->n_directions, decided_count (r, GC_REF_MPFR));
      size_t np = pair_skipped_count (r);
      if (np)
        gc__buf_printf (b, "  %zu of MPFR's without their +-2h pair, their "
                        "truncation predicted from f64's stencil (manual: "
                        "\"Skipping the 2h pair\")\n", np);
    }
  if (!fwd)
    confirmation_text (b, r);
  tensors_text (b, r, "");
  f64_text (b, r);
  if (r->worst == SIZE_MAX)
    return;
  const gc_direction *d = &r->dirs[r->worst];
  gc__buf_printf (b, "\nworst %s: ", fwd ? "output" : "direction");
  put_label (b, r, d, GC__ESC_TEXT);
  gc__buf_puts (b, "\n");
  direction_summary (b, r, d);
  gc__buf_puts (b, "\n");
  gc__buf_puts (b, "derivation (manual, chapter \"Deriving the pass bar\"):\n");
  derivation_text (b, d, "  ");
}

static json_t *
report_json (const gc_result *r)
{
  json_t *o = json_object ();
  bool ok = put (o, "gradcheck", jstr (GC_VERSION_STRING))
    && put (o, "kind", jstr (gc__kind_name (r->kind)))
    && put (o, "model", jstr (r->model_name))
    && put (o, "n", juint (r->n))
    && put (o, "reference", jstr (gc_reference_name (r->reference)))
    && put (o, "precision", juint (r->precision > 0
                                   ? (uint64_t) r->precision : 0))
    && put (o, "truncation_source",
            jstr (gc_reference_name (r->truncation_source)))
    && put (o, "directions", jstr (direction_kind_name (r->direction_kind)))
    && put (o, "seed", juint (r->seed))
    && put (o, "random_per_block", juint (r->random_per_block))
    && put (o, "false_alarm", jnum (r->false_alarm))
    && put (o, "lambda_forward", jnum (r->lambda_forward))
    && put (o, "lambda_backward", jnum (r->lambda_backward))
    && put (o, "forward_depth", juint (r->forward_depth))
    && put (o, "backward_depth", juint (r->backward_depth))
    && put (o, "loss_f32", jnum (r->loss_f32))
    && put (o, "loss_reference", jnum (r->loss_reference))
    && put (o, "loss_magnitude", jnum (r->loss_magnitude))
    && put (o, "forward_error_ulps", r->forward_error_ulps >= 0
            ? jnum (r->forward_error_ulps) : json_null ())
    && put (o, "forward_budget_ulps", jnum (r->forward_budget_ulps))
    && put (o, "status", jstr (gc__status_name (r->status)))
    && put (o, "detail", jstr (r->detail))
    && put (o, "verdict", jstr (gc_verdict_name (r->verdict)))
    && put (o, "n_directions", juint (r->n_directions))
    && put (o, "n_total", juint (r->n_total))
    && put (o, "shard_index", juint (r->shard_index))
    && put (o, "shard_count", juint (r->shard_count))
    && put (o, "n_failed", juint (r->n_failed))
    && put (o, "n_nonsmooth", juint (r->n_nonsmooth))
    && put (o, "n_inconclusive", juint (r->n_inconclusive))
    && put (o, "n_decided_f64", juint (decided_count (r, GC_REF_F64)))
    && put (o, "n_decided_mpfr", juint (decided_count (r, GC_REF_MPFR)))
    /* manual: "Determinism and reentrancy", "What the bar assumes" */
    && put (o, "nondeterministic", juint (r->nondeterministic))
    && put (o, "nd_detail", jstr (r->nd_detail))
    && put (o, "nd_index", r->nd_index == SIZE_MAX ? json_null ()
                           : juint (r->nd_index))
    && put (o, "nd_first", jnum (r->nd_first))
    && put (o, "nd_second", jnum (r->nd_second))
    && put (o, "defaulted", juint (r->defaulted))
    && put (o, "n_magnitude_low", juint (r->n_magnitude_low))
    /* manual: "Measured rounding sensitivity" */
    && put (o, "rounding_modes", juint (r->rounding_modes))
    && put (o, "rounding_dropped", juint (r->rounding_dropped))
    && put (o, "rounding_note", jstr (r->rounding_note))
    && put (o, "spread_loss", jnum (r->spread_loss))
    && put (o, "depth_implied", jnum (r->depth_implied))
    && put (o, "depth_implied_at", r->depth_implied_at == SIZE_MAX
                                   ? json_null ()
                                   : juint (r->depth_implied_at))
    && put (o, "forward_depth_implied", jnum (r->forward_depth_implied))
    && put (o, "depth_supported", jnum (r->depth_supported))
    && put (o, "n_unsupported", juint (r->n_unsupported))
    && put (o, "n_blind_defaulted", juint (r->n_blind_defaulted))
    && put (o, "n_spread_beyond", juint (r->n_spread_beyond))
    && put (o, "loss_magnitude_low", juint (r->loss_magnitude_low))
    && put (o, "loss_magnitude_declared",
            jnum (r->loss_magnitude_declared))
    /* manual: "The worst case" */
    && put (o, "worst_nu_worst_case", jnum (r->worst_nu_worst_case))
    && put (o, "n_failed_certain", juint (r->n_failed_certain));
  /* manual: "Two verdicts, one report" */
  if (ok && r->twin)
    {
      json_t *tw = json_object ();
      ok = put (tw, "n_failed_algorithm", juint (r->n_failed_algorithm))
           && put (tw, "n_precision", juint (r->n_precision))
           && put (tw, "n_mismatch", juint (r->n_mismatch))
           && put (tw, "worst_nu_arith", jnum (r->worst_nu_arith))
           && put (tw, "worst_nu_f64", jnum (r->worst_nu_f64))
           && put (tw, "resolution_f64_median",
                   jnum (r->resolution_f64_median))
           && put (tw, "resolution_f64_worst", jnum (r->resolution_f64_worst))
           && put (tw, "rounding_modes", juint (r->twin_rounding_modes))
           && put (o, "twin", json_incref (tw));
      json_decref (tw);
    }
  const gc_identity *id = &r->identity;
  char version[sizeof id->version + 1];
  memcpy (version, id->version, sizeof id->version);
  version[sizeof id->version] = 0;
  json_t *ident = json_object ();
  ok = ok && put (ident, "version", jstr (version))
       && put (ident, "step", jnum (id->step))
       && put (ident, "x_digest", jhex (id->x_digest))
       && put (ident, "directions_digest", jhex (id->directions_digest))
       && put (ident, "model_digest", jhex (id->model_digest))
       && put (ident, "digest", jhex (id->digest))
       && put (o, "identity", json_incref (ident));
  json_decref (ident);
  const gc_direction *w = r->worst < r->n_directions && r->dirs
                          ? &r->dirs[r->worst] : NULL;
  ok = ok && put (o, "worst_index", w && w->index != SIZE_MAX
                                    ? juint (w->index) : json_null ())
       && put (o, "worst_id", w ? juint (w->id) : json_null ())
       && put (o, "worst_nu", jnum (r->worst_nu))
       && put (o, "worst", w ? direction_json (r, w, true) : json_null ());
  const gc_diagnosis *dg = &r->diagnosis;
  json_t *dj = json_object ();
  ok = ok && put (dj, "kind", jstr (diagnosis_name (dg->kind)))
       && put (dj, "factor", jnum (dg->factor))
       && put (dj, "closed_form", jstr (dg->closed_form))
       && put (dj, "shift", json_integer (dg->shift))
       && put (dj, "block", jstr (dg->block))
       && put (dj, "text", jstr (dg->text))
       && put (o, "diagnosis", json_incref (dj))
       && put (o, "tensors", tensors_json (r));
  json_decref (dj);
  /* constants: an object by name; a repeated name keeps its first value  */
  json_t *cs = json_object ();
  for (size_t k = 0; ok && cs && k < r->n_constants; k++)
    {
      json_t *name = jstr (r->constants[k].name);
      ok = name != NULL;
      if (ok && !json_object_get (cs, json_string_value (name)))
        ok = put (cs, json_string_value (name),
                  jnum (r->constants[k].value));
      json_decref (name);
    }
  ok = ok && put (o, "constants", json_incref (cs));
  json_decref (cs);
  json_t *bs = json_array ();
  for (size_t k = 0; ok && bs && k < r->n_blocks; k++)
    {
      const gc_block *bl = &r->blocks[k];
      json_t *bo = json_object (), *sh = json_array ();
      bool bok = put (bo, "name", jstr (bl->name))
                 && put (bo, "offset", juint (bl->offset))
                 && put (bo, "count", juint (bl->count));
      for (size_t a = 0; bok && sh && a < bl->ndim; a++)
        bok = push (sh, juint (bl->shape[a]));
      bok = bok && put (bo, "shape", json_incref (sh));
      json_decref (sh);
      ok = bok && push (bs, json_incref (bo));
      json_decref (bo);
    }
  ok = ok && put (o, "blocks", json_incref (bs));
  json_decref (bs);
  json_t *rs = json_array ();
  for (size_t k = 0; ok && rs && k < r->n_directions && r->dirs; k++)
    ok = push (rs, direction_json (r, &r->dirs[k], false));
  ok = ok && put (o, "results", json_incref (rs));
  json_decref (rs);
  if (!ok)
    {
      json_decref (o);
      return NULL;
    }
  return o;
}

static void
report_tap (gc__buf *b, const gc_result *r)
{
  if (r->status != GC_OK)
    {
      /* A check that could not run is an error of the test run, not a
         skip: one "Bail out!" line and no plan (TAP 13, "Bail out!"), the
         detail only when it says more than the status.  */
      gc__buf_printf (b, "Bail out! %s", gc_strerror (r->status));
      if (strcmp (r->detail, gc_strerror (r->status)) != 0)
        {
          gc__buf_puts (b, ": ");
          put_esc (b, r->detail, GC__ESC_TAP);
        }
      gc__buf_puts (b, "\n");
      return;
    }
  /* A non-deterministic model is one more test point, not ok ("Determinism
     and reentrancy").  */
  gc__buf_printf (b, "1..%zu\n", r->n_directions
                  + (r->nondeterministic ? 1 : 0));
  gc__buf_printf (b, "# gradcheck %s: model ", GC_VERSION_STRING);
  put_esc (b, r->model_name, GC__ESC_TAP);
  gc__buf_printf (b, ", reference %s\n", gc_reference_name (r->reference));
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      /* An inconclusive direction is neither ok nor a failure: TAP's
         "not ok # TODO" (manual: "Inconclusive directions").  */
      const char *ok = d->verdict == GC_FAIL || d->verdict == GC_INCONCLUSIVE
                       || d->verdict == GC_PRECISION ? "not ok" : "ok";
      gc__buf_printf (b, "%s %zu - ", ok, k + 1);
      put_label (b, r, d, GC__ESC_TAP);
      /* with a twin, the worst of its two questions ("Two verdicts, one
         report"), as the verdict's */
      gc__buf_printf (b, " nu=%.3g", !isnan (d->analytic_f64)
                                     ? fmax (d->nu_f64, d->nu_arith) : d->nu);
      if (r->reference == GC_REF_AUTO)
        gc__buf_printf (b, " ref=%s", gc_reference_name (d->decided_by));
      if (d->verdict == GC_NONSMOOTH)
        gc__buf_puts (b, " # SKIP non-smooth point");
      if (d->verdict == GC_INCONCLUSIVE)
        gc__buf_printf (b, " # TODO inconclusive: resolution %.3g >= 1, a "
                        "100%% error passes here", d->resolution);
      gc__buf_puts (b, "\n");
      if (d->verdict == GC_FAIL)
        gc__buf_printf (b, "#   analytic %.9g reference %.9g bar %.3e\n",
                        d->analytic, d->reference, d->bar);
      /* manual: "Two verdicts, one report" */
      if ((d->verdict == GC_FAIL || d->verdict == GC_PRECISION)
          && !isnan (d->analytic_f64))
        gc__buf_printf (b, "#   twin g64 %.17g nu_64 %.3g (%s); arithmetic "
                        "nu %.3g: %s\n", d->analytic_f64, d->nu_f64,
                        gc_verdict_name (d->verdict_algorithm), d->nu_arith,
                        arith_words (d->arith));
    }
  if (r->diagnosis.kind != GC_DIAG_NONE)
    {
      gc__buf_puts (b, "# diagnosis: ");
      put_esc (b, r->diagnosis.text, GC__ESC_TAP);
      gc__buf_puts (b, "\n");
    }
  tensors_text (b, r, "# ");
  if (r->nondeterministic)
    {
      gc__buf_printf (b, "not ok %zu - the model is deterministic: ",
                      r->n_directions + 1);
      put_esc (b, r->nd_detail, GC__ESC_TAP);
      gc__buf_puts (b, "\n");
    }
  gc__buf_printf (b, "# verdict: %s\n", gc_verdict_name (r->verdict));
}

static char *
report (const gc_result *r, gc_format fmt)
{
  if (!r)
    return NULL;
  /* A result that lost its directions (or a worst beyond them) renders as
     one without directions, never by reading through a NULL.  */
  gc_result safe;
  if ((r->n_directions && !r->dirs)
      || (r->worst != SIZE_MAX && r->worst >= r->n_directions))
    {
      safe = *r;
      if (!safe.dirs)
        safe.n_directions = 0;
      if (safe.worst >= safe.n_directions)
        safe.worst = SIZE_MAX;
      r = &safe;
    }
  gc__buf b = { 0 };
  switch (fmt)
    {
    case GC_FMT_TEXT:
      report_text (&b, r);
      break;
    case GC_FMT_JSON:
      json_out (&b, report_json (r));
      gc__buf_puts (&b, "\n");
      break;
    case GC_FMT_MARKDOWN:
      if (r->worst != SIZE_MAX && r->status == GC_OK && r->dirs)
        {
          derivation_markdown (&b, r, &r->dirs[r->worst]);
          tensors_markdown (&b, r);
        }
      else
        {
          gc__buf_puts (&b, "# gradcheck: ");
          put_esc (&b, r->model_name, GC__ESC_MARKDOWN);
          gc__buf_printf (&b, "\n\nVerdict: **%s** (",
                          gc_verdict_name (r->verdict));
          put_esc (&b, r->detail, GC__ESC_MARKDOWN);
          gc__buf_puts (&b, ")\n");
        }
      break;
    case GC_FMT_TAP:
      report_tap (&b, r);
      break;
    }
  return gc__buf_take (&b);
}

/* The default floating-point environment (to nearest, no trap) while the derivation
   is written, the caller's
   set back whole on return (manual: "Floating-point environment").  */
char *
gc_derivation (const gc_result *r, size_t dir, gc_format fmt)
{
  fenv_t caller;
  fegetenv (&caller);
  fesetenv (FE_DFL_ENV);
  char *text = derivation (r, dir, fmt);
  fesetenv (&caller);
  return text;
}

/* The default floating-point environment (to nearest, no trap) while the report is
   written, the caller's
   set back whole on return (manual: "Floating-point environment").  */
char *
gc_report (const gc_result *r, gc_format fmt)
{
  fenv_t caller;
  fegetenv (&caller);
  fesetenv (FE_DFL_ENV);
  char *text = report (r, fmt);
  fesetenv (&caller);
  return text;
}
