/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report_tap.c -- a result as TAP 13: one test point a direction.  */

#include "report/report-internal.h"

#include <math.h>
#include <string.h>

void
gc__report_tap (gc__buf *b, const gc_result *r)
{
  if (r->status != GC_OK)
    {
      /* A check that could not run is an error of the test run, not a
         skip: one "Bail out!" line and no plan (TAP 13, "Bail out!"), the
         detail only when it says more than the status.  */
      char lead[128];
      gc__buf_printf (b, "Bail out! %s", gc__status_lead (r->status,
                                                          r->detail, lead,
                                                          sizeof lead));
      if (strcmp (r->detail, gc_strerror (r->status)) != 0)
        {
          gc__buf_puts (b, ": ");
          gc__put_esc (b, r->detail, GC__ESC_TAP);
        }
      gc__buf_puts (b, "\n");
      return;
    }
  /* A non-deterministic model is one more test point, not ok ("Determinism
     and reentrancy").  */
  gc__buf_printf (b, "1..%zu\n", r->n_directions
                  + (r->nondeterministic ? 1 : 0));
  gc__buf_printf (b, "# gradcheck %s: model ", GC_VERSION_STRING);
  gc__put_esc (b, r->model_name, GC__ESC_TAP);
  gc__buf_printf (b, ", reference %s\n", gc_reference_name (r->reference));
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      /* An inconclusive direction is neither ok nor a failure: TAP's
         "not ok # TODO" (manual: "Inconclusive directions").  */
      const char *ok = d->verdict == GC_FAIL || d->verdict == GC_INCONCLUSIVE
                       || d->verdict == GC_PRECISION ? "not ok" : "ok";
      gc__buf_printf (b, "%s %zu - ", ok, k + 1);
      gc__put_label (b, r, d, GC__ESC_TAP);
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
                        gc__arith_words (d->arith, r->n_precisions > 0));
    }
  if (r->diagnosis.kind != GC_DIAG_NONE)
    {
      gc__buf_puts (b, "# diagnosis: ");
      gc__put_esc (b, r->diagnosis.text, GC__ESC_TAP);
      gc__buf_puts (b, "\n");
    }
  gc__tensors_text (b, r, "# ");
  if (r->nondeterministic)
    {
      gc__buf_printf (b, "not ok %zu - the model is deterministic: ",
                      r->n_directions + 1);
      gc__put_esc (b, r->nd_detail, GC__ESC_TAP);
      gc__buf_puts (b, "\n");
    }
  gc__buf_printf (b, "# verdict: %s\n", gc_verdict_name (r->verdict));
}
