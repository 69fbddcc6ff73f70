/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* predict.c -- would f64 do?  After an MPFR check, whether an f64
   reference would have given the same verdicts (manual: "Would f64 do?"),
   for gc_check's set-up of the next run.  */

#include "base/internal.h"

#include <math.h>
#include <string.h>


void
gc__predict_f64 (gc_result *r, bool has_f64, bool user_step)
{
  r->f64_same_verdict = 0;
  r->f64_term_ratio = 0;
  if (!has_f64 || r->reference != GC_REF_MPFR || r->status != GC_OK
      || r->kind != GC_CHECK_GRADIENT || r->n_directions == 0)
    return;
  /* f64's default step is 2^(e64 - e) times the MPFR one (both from the
     same scale); a user's step is the same for both.  */
  double hr = user_step ? 1
              : ldexp (1.0, gc__default_step_exponent (GC_REF_F64, 53)
                            - (int) r->step_exponent);
  bool same = true;
  double ratio = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict == GC_NONSMOOTH)
        {
          same = false;
          continue;
        }
      const gc_term *tr = &d->terms[GC_TERM_REFERENCE];
      double ml = r->loss_magnitude;
      for (size_t i = 0; i < tr->n_inputs; i++)
        if (strcmp (tr->inputs[i].name, "M_L") == 0)
          ml = tr->inputs[i].value;
      double h64 = d->step * hr;
      /* The f64 reference's own terms: truncation ~ h^2 scaled from the
         measured one (an overestimate where MPFR rounding dominates it),
         and f64 rounding ("Reference rounding" at p = 53).  */
      double e64 = d->terms[GC_TERM_TRUNCATION].value * hr * hr
                   + gc__eval_error (GC_REF_F64, 53, r->lambda_forward,
                                     r->forward_depth, ml) / h64
                   + GC_U64 * fabs (d->reference);
      double adj = d->terms[GC_TERM_ADJOINT].value;
      double mp = d->terms[GC_TERM_TRUNCATION].value
                  + d->terms[GC_TERM_REFERENCE].value;
      ratio = fmax (ratio, adj > 0 ? e64 / adj : INFINITY);
      /* |D64 - D_mpfr| <= e64 + mp, and f64's own bar lies between
         adj + e64 (its Richardson term at least the truncation) and
         adj + e64 + 1.5 (its rounding in that term) + e64: a pass stays
         one when diff + e64 + mp <= adj + e64, a failure when
         diff - e64 - mp > adj + 3.5 e64 (4 e64 taken).  */
      if (d->verdict == GC_PASS)
        same = same && d->diff + mp <= adj;
      else
        same = same && d->diff - mp > adj + 4 * e64;
    }
  r->f64_same_verdict = same ? 1 : -1;
  r->f64_term_ratio = ratio;
}
