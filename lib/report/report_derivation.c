/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report_derivation.c -- one direction as text: its summary and the
   derivation of its bar, term by term (gc_derivation's text, and the worst
   direction of the text report).  */

#include "report/report-internal.h"

#include <math.h>
#include <string.h>

/* One term of a derivation: name = formula = value [section], then its
   inputs.  */
static void
term_text (gc__buf *b, const gc_term *tm, const char *indent)
{
  gc__buf_printf (b, "%s  ", indent);
  gc__put_esc_pad (b, tm->name, GC__ESC_TEXT, 19);
  gc__buf_puts (b, " = ");
  gc__put_esc_pad (b, tm->formula, GC__ESC_TEXT, 42);
  gc__buf_printf (b, " = %.3e   [manual: ", tm->value);
  gc__put_esc (b, tm->section, GC__ESC_TEXT);
  gc__buf_printf (b, "]\n%s  %-19s   ", indent, "");
  for (size_t k = 0; k < tm->n_inputs; k++)
    {
      gc__buf_puts (b, k ? ", " : "");
      gc__put_esc (b, tm->inputs[k].name, GC__ESC_TEXT);
      gc__buf_printf (b, " = %.6g", tm->inputs[k].value);
    }
  gc__buf_puts (b, "\n");
}

static void
derivation_text (gc__buf *b, const gc_result *r, const gc_direction *d,
                 const char *indent)
{
  gc__buf_printf (b, "%sbar = ", indent);
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      gc__buf_puts (b, t ? " + " : "");
      gc__put_esc (b, d->terms[t].name, GC__ESC_TEXT);
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
                    : d->richardson_terms[0].value
                      + d->richardson_terms[1].value
                      >= d->terms[GC_TERM_TRUNCATION].value
                         + d->terms[GC_TERM_REFERENCE].value
                    ? "; Richardson's R(h) has terms no smaller, and was "
                      "not used"
                    : "; Richardson's R(h) disagreed with it beyond their "
                      "terms, and was not used");
  term_text (b, &d->adjoint_f64, indent);
  if (gc__term_input (&d->terms[GC_TERM_ADJOINT], "A_classes", -1) >= 0)
    /* manual: "Rounding classes": a model with classes */
    gc__buf_printf (b, "%sarithmetic bound = sum over f32's class and the "
                    "declared ones of gamma_dk(u_k) / u_k * (u_k * sum_i "
                    "|w_i| m_i + eta_k * sum_i |w_i|) + twin adjoint "
                    "rounding = %.3e   (against max(|g32 - g64|, S_w / C), "
                    "C = W / B', W the classes' largest spread: their worst "
                    "case)   [manual: Rounding classes]\n", indent,
                    d->arith_bar);
  else
  gc__buf_printf (b, "%sarithmetic bound = gamma_d / u * (u * sum_i |w_i| "
                  "m_i + 2^-150 * sum_i |w_i|) + twin adjoint rounding = "
                  "%.3e   (against max(|g32 - g64|, S_w / C), C = 4 (1 - d u) "
                  "/ (1 - 2 d u): f32's worst case; beyond 2^16 of it, no "
                  "rounding explains it)   [manual: The f64 twin]\n",
                  indent, d->arith_bar);
  /* manual: "The measured floor": the bound above is then the larger of
     kappa F_w and the declared one's (kappa F_w alone, the depth
     defaulted) */
  if (d->arith_floor >= 0)
    {
      double k = GC_FLOOR_MARGIN * d->arith_floor;
      double a = d->arith_bar - d->adjoint_f64.value;
      bool floor_set = (r->defaulted & GC_DEFAULTED_BACKWARD_DEPTH) != 0;
      (void) a;
      gc__buf_printf (b, "%s  measured floor F_w = P_w + u * sum_j |w_j| m_j "
                      "= %.3e + %.3e = %.3e, kappa = %d, kappa F_w "
                      "= %.3e: the bound is set by %s   [manual: The "
                      "measured floor]\n", indent, d->arith_floor_probe,
                      d->arith_floor - d->arith_floor_probe,
                      d->arith_floor, GC_FLOOR_MARGIN, k,
                      floor_set ? "the measured floor (plus the declared "
                                  "classes and the twin's term)"
                      : "the declared depth");
    }
  /* manual: "A factor the point does not move" */
  if (d->arith_factor_points == 1 && !isnan (d->arith_factor))
    gc__buf_printf (b, "%s  a factor the modes do not move: g32 / g64 = "
                    "%.9g, its f32 spread over the rounding modes below "
                    "2^-10 of |g32 - g64| (at points each parameter moved "
                    "by 2^-5 to 2^-4 of itself neither g32 nor g64 moved): "
                    "no rounding's scatter, the f32 path's logic error   "
                    "[manual: A factor the point does not move]\n", indent,
                    d->arith_factor);
  else if (d->arith_factor_points == 1)
    gc__buf_printf (b, "%s  neither the points each parameter moved by 2^-5 "
                    "to 2^-4 of itself (g32 and g64 did not move) nor the "
                    "rounding modes tell a factor from a rounding of fixed "
                    "data here: precision stands   [manual: A factor the "
                    "point does not move]\n", indent);
  else if (d->arith_factor_points > 0 && !isnan (d->arith_factor)
           && gc__factor_within (d))
    gc__buf_printf (b, "%s  a factor the point does not move: g32 = c g64, "
                    "c = %.9g, within the band 4 (S_w + u |g64|) = %.4g (the "
                    "rounding the modes measured; the discrepancy is %.3g "
                    "of it) at x and at %u points each parameter moved by "
                    "2^-5 to 2^-4 of itself: no rounding's scatter, the "
                    "f32 path's logic error   [manual: Within the bound]\n",
                    indent, d->arith_factor, gc__factor_band_within (d),
                    fabs (d->analytic - d->analytic_f64)
                    / gc__factor_band_within (d),
                    d->arith_factor_points - 1);
  else if (d->arith_factor_points > 0 && !isnan (d->arith_factor))
    gc__buf_printf (b, "%s  a factor the point does not move: g32 = c g64, "
                    "c = %.9g, within the bound at x and at %u points each "
                    "parameter moved by 2^-5 to 2^-4 of itself: no "
                    "rounding's scatter, the f32 path's logic error   "
                    "[manual: A factor the point does not move]\n", indent,
                    d->arith_factor, d->arith_factor_points - 1);
  else if (d->arith_factor_points > 0 && gc__factor_within (d)
           && !(d->arith_drift <= GC_TERM_DRIFT))
    gc__buf_printf (b, "%s  no one factor c has g32 = c g64 within the band "
                    "4 (S_w + u |g64|) = %.4g (the rounding the modes "
                    "measured at x), with g32 at least 4 bands from g64, at "
                    "x and at %u points each parameter moved by 2^-5 to "
                    "2^-4 of itself: the discrepancy moved with the point "
                    "as rounding does, or the f32 path's own rounding at "
                    "the points is wider than the band   [manual: Within "
                    "the bound]\n", indent, gc__factor_band_within (d),
                    d->arith_factor_points - 1);
  else if (d->arith_factor_points > 0
           && !(d->arith_drift <= GC_TERM_DRIFT))   /* else the drift's */
    gc__buf_printf (b, "%s  no one factor c has g32 = c g64 within the bound, "
                    "with g32 at least 4 bounds from g64, at x and at %u "
                    "points each parameter moved by 2^-5 to 2^-4 of itself: "
                    "the discrepancy moves with the point, as rounding "
                    "does   [manual: A factor the point does not move]\n",
                    indent, d->arith_factor_points - 1);
  /* manual: "A term the point does not redraw" */
  if (!isnan (d->arith_drift))
    gc__buf_printf (b, "%s  g32 - g64 drifts by at most %.3g of itself at "
                    "points each parameter moved by 2^-5 to 2^-4 of itself "
                    "(g32 moved): %s   [manual: A term the point "
                    "does not redraw]\n", indent, d->arith_drift,
                    d->arith_drift <= GC_TERM_DRIFT
                    ? "a smooth term, no rounding's scatter: the f32 path's "
                      "logic error, or a rounding that leans one way (a "
                      "truncating accumulator)"
                    : "moved as a redrawn rounding does");
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
  gc__buf_printf (b, "  bar          %.3e   nu_32 = |diff| / bar = %.3g\n",
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
                          "bound %.3e, nu_arith = %.3g: %s\n", d->arith_diff,
                          d->arith_bar, d->nu_arith,
                          gc__arith_words (d->arith, r->n_precisions > 0));
        }
      if (r->reference == GC_REF_AUTO)
        gc__buf_printf (b, "  decided by   %s\n",
                        gc_reference_name (d->decided_by));
      /* manual: "Confirming a direction", "Raising the precision" */
      if (d->level > 0)
        gc__buf_printf (b, "  confirmed    at level %d: step h / 2^%d (the "
                        "first step's truncation estimate did not hold)\n",
                        d->level, 8 * d->level);
      else if (d->level == -2)
        gc__buf_printf (b, "  unconfirmed  the f64 forward is constant at "
                        "the step, or steps within it, where a longer one "
                        "sees a slope: a forward rounded to a grid (a "
                        "cast, round (x, k)), "
                        "whose derivative (0, or the slope's) is a "
                        "convention no difference quotient decides "
                        "(manual: \"Richardson's stencil\")\n");
      else if (d->level < 0 && r->reference == GC_REF_F32)
        gc__buf_printf (b, "  unconfirmed  f32 mode has no finer step to "
                        "confirm a kink or a failure in doubt at (manual: "
                        "\"What f32 mode cannot judge\")\n");
      else if (d->level < 0 && r->reference == GC_REF_F64)
        gc__buf_printf (b, "  unconfirmed  f64's step does not resolve "
                        "this direction: h / 2^%d still exceeds the "
                        "element, or f64's difference quotients at h and "
                        "h / 2^%d disagree beyond their terms (a structure "
                        "finer than the step, a step too long, or a tensor "
                        "whose values span many scales: give such values a "
                        "tensor of their own, or check with --ref auto; "
                        "manual: \"What f64 mode cannot judge\")\n",
                        GC_F64_CONFIRM_SHIFT, GC_F64_CONFIRM_SHIFT);
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

/* The derivation of D as text: its label, verdict and summary, then every
   term of its bar.  */
void
gc__derivation_text (gc__buf *b, const gc_result *r, const gc_direction *d)
{
  gc__buf_puts (b, "direction: ");
  gc__put_label (b, r, d, GC__ESC_TEXT);
  gc__buf_printf (b, ", %s\n", gc_verdict_name (d->verdict));
  direction_summary (b, r, d);
  gc__buf_puts (b, "\n");
  derivation_text (b, r, d, "");
}

/* The worst direction D of R, as the text report ends: its label and
   summary, then the derivation of its bar.  */
void
gc__worst_text (gc__buf *b, const gc_result *r, const gc_direction *d)
{
  bool fwd = r->kind == GC_CHECK_FORWARD;
  gc__buf_printf (b, "\nworst %s: ", fwd ? "output" : "direction");
  gc__put_label (b, r, d, GC__ESC_TEXT);
  gc__buf_puts (b, "\n");
  direction_summary (b, r, d);
  gc__buf_puts (b, "\n");
  gc__buf_puts (b, "derivation (manual, chapter \"Deriving the pass bar\"):\n");
  derivation_text (b, r, d, "  ");
}
