/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* noise.c -- measurements of the model itself that the bar rests on:
   whether its callbacks are functions of x (manual: "Determinism and
   reentrancy").  */

#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t
gc__float_spread (const float *a, const float *b, size_t n)
{
  size_t at = SIZE_MAX;
  double worst = -1;
  for (size_t i = 0; i < n; i++)
    {
      if (memcmp (&a[i], &b[i], sizeof a[i]) == 0)
        continue;
      double d = fabs ((double) a[i] - (double) b[i]);
      double m = fmax (fabs ((double) a[i]), fabs ((double) b[i]));
      double rel = m > 0 ? d / m : d;
      if (isnan (rel))
        rel = INFINITY;
      if (rel > worst)
        {
          worst = rel;
          at = i;
        }
    }
  return at;
}

void
gc__note_nondeterminism (gc_result *r, unsigned what, size_t index,
                         double first, double second, const char *fmt, ...)
{
  bool first_note = r->nondeterministic == 0;
  r->nondeterministic |= what;
  if (!first_note)
    return;
  r->nd_index = index;
  r->nd_first = first;
  r->nd_second = second;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (r->nd_detail, sizeof r->nd_detail, fmt, ap);
  va_end (ap);
}
