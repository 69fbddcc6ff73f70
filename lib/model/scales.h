/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* scales.h -- the scales of a step and the default magnitudes, one rule
   for the gradient check (check.c, directions.c) and the checks beyond it
   (hvp.c, taylor.c): scales.c.  Not installed.  */

#ifndef GC_SCALES_H
#define GC_SCALES_H

#include "gradcheck.h"

#include <stddef.h>

/* Manual: "Default precision and step", the scale of a coordinate:
   SCALE[i] = max(|x_i|, the RMS of X over i's block (of all of X without
   blocks)), 1 where both vanish, for every i < m->n.  */
void gc__scales (const gc_model *m, const float *x, double *scale);

/* Manual: "Default precision and step", the scale of another direction:
   the norm of X over [LO, HI) restricted to V's support (all of it when V
   is NULL), 1 where that is 0.  */
double gc__support_norm (const float *x, const float *v, size_t lo,
                         size_t hi);

/* Manual: "Adjoint rounding", the default magnitude: MAG[i] the largest
   |G[j]| over the block holding i (over all of G without blocks).  MAG
   may be G.  */
void gc__block_max (const gc_model *m, const double *g, double *mag);

#endif
