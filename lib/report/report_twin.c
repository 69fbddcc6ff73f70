/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report_twin.c -- the text report's twin: block, the f64 twin's two
   questions (manual: "Two verdicts, one report").  */

#include "report/report-internal.h"

#include <math.h>
#include <stdlib.h>

/* Manual: "Two verdicts, one report": the twin's two questions.  */
void
gc__twin_text (gc__buf *b, const gc_result *r)
{
  if (!r->twin)
    return;
  gc__buf_puts (b, "twin: the f64 backward judged the algorithm and the "
                "f32 arithmetic apart (manual: \"The f64 twin\"); ");
  if (r->device[0])   /* manual: "Device arithmetic" */
    gc__buf_puts (b, "on the device, which no rounding mode reaches\n");
  else
    gc__buf_printf (b, "measured under %u other IEEE modes\n",
                    r->twin_rounding_modes);
  if (r->twin_rounding_note[0])
    {
      unsigned left = r->twin_rounding_modes < 3
                      ? 3 - r->twin_rounding_modes : 0;
      gc__buf_printf (b, "  %u mode%s left out of the twin's measurement: ",
                      left, left == 1 ? "" : "s");
      gc__put_esc (b, r->twin_rounding_note, GC__ESC_TEXT);
      gc__buf_puts (b, "\n");
    }
  /* Manual: "The measured floor" */
  gc__buf_printf (b, "  floor:      the twin at %u point(s) each parameter "
                  "moved by an f32 ulp; the arithmetic's bound is %d F_w "
                  "(F_w = P_w + u sum |w_j| m_j)%s (manual: \"The "
                  "measured floor\")\n", r->floor_draws, GC_FLOOR_MARGIN,
                  !r->floor_draws ? ": not measured, the derived bound "
                                    "stands"
                  : r->defaulted & GC_DEFAULTED_BACKWARD_DEPTH
                  ? ", the backward depth being defaulted"
                  : "; here the declared depth's bound stands");
  if (r->floor_note[0])
    {
      gc__buf_puts (b, "  a draw left out of the floor: ");
      gc__put_esc (b, r->floor_note, GC__ESC_TEXT);
      gc__buf_puts (b, "\n");
    }
  gc__buf_printf (b, "  algorithm:  g64 against the reference: %zu failed of "
                  "%zu", r->n_failed_algorithm, r->n_directions);
  if (r->worst_f64 != SIZE_MAX)
    {
      gc__buf_printf (b, "; worst nu_64 = %.3g at ", r->worst_nu_f64);
      gc__put_label (b, r, &r->dirs[r->worst_f64], GC__ESC_TEXT);
    }
  gc__buf_printf (b, "; resolution median %.3g, worst %.3g\n",
                  r->resolution_f64_median, r->resolution_f64_worst);
  /* Manual: "The f64 twin": against f32 central differences the twin's
     algorithm has f32's resolution (a new user's trial gave a twin and
     no f64 forward, and read nothing of why the check was coarse) */
  if (r->reference == GC_REF_F32)
    gc__buf_printf (b, "  note: the reference is the f32 forward's "
                    "central differences, so the twin's algorithm is "
                    "judged at f32's resolution (median %.3g); with an f64 "
                    "forward (loss_f64) the built-in models' is 1e-8 or "
                    "finer (manual: \"Richardson's stencil\")\n",
                    r->resolution_f64_median);
  /* Manual: "Twin rounding the modes do not reach" */
  if (r->n_unreached)
    gc__buf_printf (b, "  INCONCLUSIVE: %zu failure(s) of the algorithm "
                    "within the twin's worst case at the depth the "
                    "measurement implies: every spread of the twin is 0 "
                    "(the rounding modes reached nothing of it) and the "
                    "declared d_b = %zu is contradicted\n", r->n_unreached,
                    r->backward_depth);
  gc__buf_printf (b, "  arithmetic: g32 against g64 in units of %s derived "
                  "bound: %zu beyond it within 2^16 of it (PRECISION), %zu "
                  "mismatches (FAIL: beyond any rounding, or a logic "
                  "error's structure)",
                  r->n_precisions ? "the declared precisions'" : "f32's",
                  r->n_precision, r->n_mismatch);
  if (r->worst_arith != SIZE_MAX)
    {
      gc__buf_printf (b, "; worst nu_arith = %.3g at ", r->worst_nu_arith);
      gc__put_label (b, r, &r->dirs[r->worst_arith], GC__ESC_TEXT);
    }
  gc__buf_puts (b, "\n");
  /* Manual: "Structure decides the kind" */
  size_t hidden = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    hidden += r->dirs[k].arith == GC_ARITH_MISMATCH
              && r->dirs[k].nu_arith <= 1
              && !(r->dirs[k].arith_factor_points > 0
                   && !isnan (r->dirs[k].arith_factor));   /* below */
  if (hidden)
    gc__buf_printf (b, "  FAIL: %zu direction(s) within the declared "
                    "classes' bound whose g32 - g64 has a logic error's "
                    "structure, no rounding's scatter: the f32 path's bug "
                    "(manual: \"Structure decides the kind\")\n", hidden);
  /* Manual: "A factor the point does not move" */
  size_t held = 0, modes = 0, within = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    if (r->dirs[k].arith == GC_ARITH_MISMATCH
        && r->dirs[k].arith_factor_points > 0
        && !isnan (r->dirs[k].arith_factor))
      {
        held += r->dirs[k].arith_factor_points > 1;
        modes += r->dirs[k].arith_factor_points == 1;
        within += gc__factor_within (&r->dirs[k]);
      }
  if (held || modes)
    gc__buf_printf (b, "  FAIL: %zu direction(s) within 2^16 of the bound "
                    "whose g32 / g64 is one factor at x and at points each "
                    "parameter moved by 2^-5 to 2^-4 of itself, %zu under "
                    "every rounding mode where the points moved nothing: a "
                    "factor rounding would not keep, the f32 path's bug "
                    "(manual: \"A factor the point does not move\")\n",
                    held, modes);
  if (within)
    gc__buf_printf (b, "        %zu of them within the bound, or beyond it "
                    "by fewer than 16 bars, and tested on the band the "
                    "rounding modes measured, 4 (S_w + u |g64|) (manual: "
                    "\"Within the bound\")\n", within);
  if (r->classes_unshown)
    {
      gc__buf_puts (b, "  UNSUPPORTED: the declared class(es) ");
      for (size_t k = 0, j = 0; k < r->n_precisions; k++)
        if (r->precisions[k].backward_depth)
          {
            gc__buf_puts (b, j++ ? ", " : "");
            gc__put_esc (b, r->precisions[k].name, GC__ESC_TEXT);
            gc__buf_printf (b, " (u %.3g, d_b %zu)",
                            r->precisions[k].unit_roundoff,
                            r->precisions[k].backward_depth);
          }
      gc__buf_printf (b, ": g32 shows none of their roundings (measured: "
                      "every |g32 - g64| within f32's own bound%s); the "
                      "declaration explains nothing here (manual: "
                      "\"Structure decides the kind\")\n",
                      r->n_mismatch ? ", but the f32 path's logic errors"
                                    : "");
    }
  /* Manual: "Structure decides the kind", "A class depth the twin
     contradicts" */
  size_t at;
  double di = gc__class_depth_implied (r, &at);
  const gc_precision *c = NULL;
  for (size_t k = 0; k < r->n_precisions; k++)
    if (r->precisions[k].backward_depth)
      c = &r->precisions[k];
  if (c && di > 0 && at < r->n_directions
      && (di > (double) c->backward_depth
          || (double) c->backward_depth >= GC_COARSE_FACTOR * fmax (di, 1)))
    {
      bool small = di > (double) c->backward_depth;
      gc__buf_printf (b, "  %s: the declared ",
                      small ? "CONTRADICTED" : "UNSUPPORTED");
      gc__put_esc (b, c->name, GC__ESC_TEXT);
      gc__buf_printf (b, " d_b = %zu is %s: the twin's largest |g32 - g64| "
                      "beyond f32's own bound (at ", c->backward_depth,
                      small ? "too small" : "far above what it shows");
      gc__put_label (b, r, &r->dirs[at], GC__ESC_TEXT);
      gc__buf_printf (b, ") needs at least %.3g of its roundings at u = "
                      "%.3g%s (manual: \"A class depth the twin "
                      "contradicts\")\n", di, c->unit_roundoff,
                      small ? "" : ": the declared depth is 64 or more "
                      "times that lower bound");
    }
  /* Manual: "Spread against defaulted magnitudes" */
  if (r->n_spread_defaulted && r->spread_defaulted_at < r->n_directions)
    {
      const gc_direction *d = &r->dirs[r->spread_defaulted_at];
      double m = gc__term_input (&d->terms[GC_TERM_ADJOINT],
                                 "sum |w_i| m_i", NAN);
      gc__buf_printf (b, "  INCONCLUSIVE: %zu direction(s) beyond the bound "
                      "by the f32 spread alone (|g32 - g64| within it), "
                      "against defaulted magnitudes; at ",
                      r->n_spread_defaulted);
      gc__put_label (b, r, d, GC__ESC_TEXT);
      gc__buf_printf (b, " the defaulted magnitude %s%.4g, the spread implies "
                      "at least %.4g (%.3g times): declare grad_magnitude_f32 "
                      "(manual: \"Spread against defaulted magnitudes\")\n",
                      d->index == SIZE_MAX ? "sum |w_i| m_i = " : "m = ", m,
                      d->nu_arith * m, d->nu_arith);
    }
}
