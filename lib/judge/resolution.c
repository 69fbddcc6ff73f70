/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* resolution.c -- a blind direction (resolution >= 1): the check's
   blindness, inconclusive, or an element below the rounding a correct
   backward may make (manual: "Inconclusive directions").  Below both
   judgements: judge.c's and the twin's (judge_twin.c).  */

#include "base/internal.h"

#include <math.h>

/* Manual: "Inconclusive directions": whether blind direction D is below
   the rounding a correct backward may make by the derived part of its
   adjoint term A (A less the measured SPREAD): that part alone above the
   reference's terms, or at least |reference| and above the reference's
   terms less the spread.  */
bool
gc__below_rounding (const gc_direction *d, const gc_term *a, double spread)
{
  double ref = d->terms[GC_TERM_TRUNCATION].value
               + d->terms[GC_TERM_REFERENCE].value + spread;
  double derived = a->value - spread;
  return ref < derived
         || (!(derived < fabs (d->reference)) && derived > ref - spread);
}

/* Manual: "Inconclusive directions".  A direction that passes with a bar
   at least as large as its reference (resolution >= 1, including a
   reference of 0) cannot see a 100% error; when the reference's own terms
   (truncation, reference rounding) make up at least half of that bar, the
   blindness is the check's and the direction is inconclusive.  When the
   adjoint term dominates, the element is below the rounding a correct f32
   backward may make at its scale: no check can see more, and it passes.  A
   failing direction stays a failure at any resolution.  Manual: "Measured
   rounding sensitivity": a blindness that the measured spread S_w makes
   is the check's (the spread is measured under modes the code does not
   run in), and the direction is inconclusive -- unless the derived part of
   the adjoint term, A - S_w, is itself at least |reference| and above the
   reference's terms: the element is then below the rounding a correct
   backward may make by the derived bound alone.  */
void
gc__judge_resolution (gc_direction *d)
{
  const gc_term *a = &d->terms[GC_TERM_ADJOINT];
  if (d->verdict == GC_PASS && !(d->resolution < 1)
      && !gc__below_rounding (d, a, gc__term_input (a, "S_w", 0)))
    d->verdict = GC_INCONCLUSIVE;
}
