/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* disagreement.c -- how far the f32 forward disagrees with its reference at
   the centre, and when that leaves the gradient unjudged (manual: "Forward
   disagreement", "Never a pass").  The judgement (judge.c) and the
   diagnosis both ask.  */

#include "base/internal.h"

#include <math.h>


int
gc__forward_disagreement (const gc_result *r, double *worst_ulps)
{
  *worst_ulps = 0;
  if (r->kind != GC_CHECK_GRADIENT || r->status != GC_OK
      || !(r->forward_error_ulps > r->forward_budget_ulps))
    return 0;
  /* The deterministic worst case of d_f roundings: gamma_{d_f} M_L,
     expressed in ulps of M_L ("The accumulation factor").  */
  double df = (double) r->forward_depth;
  double ulp = gc__ulp (r->loss_magnitude, 24);
  if (df * GC_U32 >= 1 || ulp <= 0)
    return 1;
  double gamma = df * GC_U32 / (1 - df * GC_U32);
  *worst_ulps = gamma * r->loss_magnitude / ulp;
  if (r->forward_error_ulps <= *worst_ulps)
    return 1;
  /* Beyond the worst case for M_L.  When M_L is only |L| (the model
     declares no larger magnitude), a loss that cancels errs by more: the
     bound is not known to hold.  */
  return r->loss_magnitude > fabs (r->loss_f32) ? 2 : 3;
}

bool
gc__forward_spread_measured (const gc_result *r)
{
  return r->reference != GC_REF_F32 && !isnan (r->spread_loss_f32);
}

/* Manual: "Forward disagreement", "Never a pass": the forwards differ
   beyond the worst case for a declared or measured M_L (level 2); for
   M_L = |L| (level 3), where the f32 forward's spread was measured (a
   loss that cancels shows there, and raises M_L: it did not), or beyond
   GC_PRECISION_CUT times the worst case where it was not (a loss that
   cancels by 2^16 keeps no f32 digit of it; the twin's cut between a
   precision loss and no rounding at all).  */
bool
gc__forward_unjudged (const gc_result *r)
{
  double worst;
  int level = gc__forward_disagreement (r, &worst);
  return level == 2
         || (level == 3 && (gc__forward_spread_measured (r)
                            || r->forward_error_ulps
                               > GC_PRECISION_CUT * worst));
}
