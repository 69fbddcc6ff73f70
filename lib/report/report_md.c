/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report_md.c -- a result as Markdown: the derivation of the worst direction
   and the per-tensor table (or, without a worst, the verdict).  */

#include "report/report-internal.h"

#include <math.h>
#include <stdlib.h>

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
    gc__put_esc (b, s, GC__ESC_TEXT);
  else
    {
      gc__buf t = { 0 };
      gc__put_esc (&t, s, GC__ESC_TEXT);
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

void
gc__derivation_markdown (gc__buf *b, const gc_result *r, const gc_direction *d)
{
  gc__buf_puts (b, "# Derivation of the pass bar: ");
  gc__put_label (b, r, d, GC__ESC_MARKDOWN);
  gc__buf_puts (b, "\n\nModel ");
  put_md_code (b, r->model_name, false);
  gc__buf_printf (b, ", %zu parameters", r->n);
  if (r->device[0])
    {
      gc__buf_puts (b, ", computed on ");
      put_md_code (b, r->device, false);
      gc__buf_puts (b, " (the host's rounding modes do not reach it)");
    }
  gc__buf_puts (b, "; reference: ");
  gc__describe_reference (b, r);
  gc__buf_printf (b, ".  Confidence: false-alarm probability %g for the "
                  "whole check of %zu directions", r->false_alarm,
                  r->direction_kind == GC_DIR_SCREEN ? r->n_directions
                  : r->n_total);
  if (r->direction_kind == GC_DIR_SCREEN)   /* manual: "Screening" */
    gc__buf_printf (b, " (screened: counted as the %zu it could take)",
                    r->screen_room);
  gc__buf_puts (b, ".\n\n");
  gc__buf_puts (b, "| quantity | value |\n|---|---|\n");
  bool fwd = r->kind == GC_CHECK_FORWARD;
  gc__buf_printf (b, "| %s | %.9g |\n", fwd ? "f32 output" : "analytic ⟨ĝ, w⟩",
                  d->analytic);
  gc__buf_printf (b, "| %s | %.9g |\n", fwd ? "reference output (MPFR)"
                  : "reference D(h)", d->reference);
  gc__buf_printf (b, "| \\|analytic − reference\\| | %.3e |\n", d->diff);
  gc__buf_printf (b, "| bar | %.3e |\n", d->bar);
  gc__buf_printf (b, "| ν_32 = \\|diff\\| / bar | %.3g |\n", d->nu);
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
      gc__buf_printf (b, "| arithmetic ν_arith | %.3g: %s |\n", d->nu_arith,
                      gc__arith_words (d->arith, r->n_precisions > 0));
    }
  gc__buf_printf (b, "| verdict | **%s** |\n\n", gc_verdict_name (d->verdict));
  gc__buf_puts (b, "The bar is the sum of three terms; each is derived in the "
                "manual section named beside it (chapter \"Deriving the pass "
                "bar\").\n\n");
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      const gc_term *tm = &d->terms[t];
      gc__buf_puts (b, "## ");
      gc__put_esc (b, tm->name, GC__ESC_MARKDOWN);
      gc__buf_printf (b, " = %.3e\n\nFormula: ", tm->value);
      put_md_code (b, tm->formula, false);
      gc__buf_puts (b, ".  Manual: *");
      gc__put_esc (b, tm->section, GC__ESC_MARKDOWN);
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

static void
tensors_markdown (gc__buf *b, const gc_result *r)
{
  size_t nt;
  gc__tensor *t = gc__tensors_of (b, r, &nt);
  if (!t)
    return;
  if (r->diagnosis.kind != GC_DIAG_NONE)
    {
      gc__buf_puts (b, "## Diagnosis\n\n");
      gc__put_esc (b, r->diagnosis.text, GC__ESC_MARKDOWN);
      gc__buf_puts (b, "\n\n");
    }
  gc__buf_puts (b, "## Tensors\n\n| tensor | failed / checked | worst ν_32 "
                "| median resolution | structure of the failures, or what a pass "
                "rules out |\n"
                "|---|---|---|---|---|\n");
  for (size_t k = 0; k < nt; k++)
    {
      gc__buf_puts (b, "| ");
      put_md_code (b, t[k].name, true);
      gc__buf_printf (b, " | %zu / %zu", t[k].failed, t[k].checked);
      if (t[k].nonsmooth)
        gc__buf_printf (b, ", %zu non-smooth", t[k].nonsmooth);
      if (t[k].precision)
        gc__buf_printf (b, ", %zu precision", t[k].precision);
      if (t[k].inconclusive)
        gc__buf_printf (b, ", %zu inconclusive", t[k].inconclusive);
      gc__buf_printf (b, " | %.3g | %.3g | %s", t[k].worst_nu,
                      t[k].resolution, t[k].structure);
      /* manual: "Directional checks", "What a pass rules out" */
      if (isfinite (t[k].rules_out))
        gc__buf_printf (b, "%sa pass rules out ‖e‖₂ ≥ %.3g (%.3g of ‖g‖₂)%s",
                        t[k].structure[0] ? "; " : "", t[k].rules_out,
                        t[k].rules_out_rel,
                        r->twin ? " in both backwards" : "");
      if (isfinite (t[k].rules_out_f32))
        gc__buf_printf (b, ", in the f32 path alone ≥ %.3g (%.3g)",
                        t[k].rules_out_f32, t[k].rules_out_f32_rel);
      else if (isfinite (t[k].rules_out) && r->twin)
        gc__buf_printf (b, ", nothing in the f32 path alone");
      gc__buf_puts (b, " |\n");
    }
  gc__buf_puts (b, "\n");
  free (t);
}

void
gc__report_markdown (gc__buf *b, const gc_result *r)
{
  if (r->worst != SIZE_MAX && r->status == GC_OK && r->dirs)
    {
      gc__derivation_markdown (b, r, &r->dirs[r->worst]);
      tensors_markdown (b, r);
    }
  else
    {
      gc__buf_puts (b, "# gradcheck: ");
      gc__put_esc (b, r->model_name, GC__ESC_MARKDOWN);
      gc__buf_printf (b, "\n\nVerdict: **%s** (",
                      gc_verdict_name (r->verdict));
      gc__put_esc (b, r->detail, GC__ESC_MARKDOWN);
      gc__buf_puts (b, ")\n");
    }
}
