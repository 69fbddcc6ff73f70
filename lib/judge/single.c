/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* single.c -- the verdicts a reference with one level cannot support
   (manual: "What f32 mode cannot judge").  */

#include "base/internal.h"

#include <math.h>

/* Manual: "What f32 mode cannot judge".  f32 mode evaluates one stencil:
   no finer step confirms what it sees, and the verdicts MPFR mode would
   confirm ("Confirming a direction") stand only where the measurement
   itself excludes the models confirmation corrects.  INCONCLUSIVE,
   marked unconfirmed (level -1, as a reference no two levels agreed on;
   a report read back keeps it): a non-smooth verdict (a kink at x, a
   kink within the stencil, or a smooth function the step does not
   resolve look alike at one step); any verdict whose truncation term
   exceeds the rest of its bar (it rests on the estimate); a failure that
   the measured kink could explain (|a - D| <= bar + |J|: a kink within
   the stencil shifts D by at most T + |J|) or that deep aliasing could
   ("A failure beyond doubt", with the measured T).  */
void
gc__judge_single_level (gc_reference ref, gc_direction *d)
{
  if (ref != GC_REF_F32 || d->verdict == GC_INCONCLUSIVE)
    return;
  double t = d->terms[GC_TERM_TRUNCATION].value;
  double e = d->terms[GC_TERM_REFERENCE].value;
  double a = d->terms[GC_TERM_ADJOINT].value;
  /* the measured T and J, as f32 mode's passes take them: no rounding
     is assumed to cancel an aliased D(2h) - D(h) or a kink's J */
  bool doubt = d->verdict == GC_FAIL
               && !(d->diff > d->bar + fabs (d->jump)
                    && gc__aliasing_excluded (d->reference, d->analytic, t,
                                              0, a));
  if (d->verdict == GC_NONSMOOTH || t > e + a || doubt)
    {
      d->verdict = GC_INCONCLUSIVE;
      d->level = -1;
    }
}
