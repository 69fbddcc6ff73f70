/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* judge.c -- from measured values to verdicts: one direction against its
   bar (gc__judge), and a whole result from its directions (gc__summarise).
   Shared by the gradient check (check.c), the forward oracle (forward.c)
   and merged reports (merge.c).  */

#include "internal.h"

#include <math.h>

/* Judge one direction from its measured values.  */
void
gc__judge (gc_direction *d, double noise_j)
{
  d->bar = d->terms[0].value + d->terms[1].value + d->terms[2].value;
  d->diff = fabs (d->analytic - d->reference);
  if (d->diff == 0)
    d->nu = 0;
  else if (d->bar > 0)
    d->nu = d->diff / d->bar;
  else
    d->nu = INFINITY;
  d->resolution = d->reference != 0 ? d->bar / fabs (d->reference) : INFINITY;
  if (fabs (d->jump) > d->bar + noise_j)
    d->verdict = GC_NONSMOOTH;
  else
    d->verdict = d->nu <= 1 ? GC_PASS : GC_FAIL;
}

void
gc__summarise (gc_result *r)
{
  r->n_failed = r->n_nonsmooth = 0;
  r->worst = SIZE_MAX;
  r->worst_nu = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict == GC_FAIL)
        r->n_failed++;
      else if (d->verdict == GC_NONSMOOTH)
        r->n_nonsmooth++;
      if (d->forward_error_ulps > r->forward_error_ulps
          && r->reference == GC_REF_F32)
        r->forward_error_ulps = d->forward_error_ulps;
      if (r->worst == SIZE_MAX || d->nu > r->worst_nu)
        {
          r->worst = k;
          r->worst_nu = d->nu;
        }
    }
  if (r->status != GC_OK)
    r->verdict = GC_ERROR;
  else if (r->n_failed)
    r->verdict = GC_FAIL;
  else if (r->n_nonsmooth)
    r->verdict = GC_NONSMOOTH;
  else
    r->verdict = GC_PASS;
}
