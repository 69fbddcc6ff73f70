/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* declared.h -- issue 24's cases of passes that rest on a declaration
   (manual: "What the measurement does not support"): a wrapper that
   re-declares a correct model's depth, magnitudes or loss magnitude (and
   may scale one tensor of its gradient: a bug), and two models of their
   own: a tensor whose values span many decades, and a reduction
   accumulated at a lower precision whose error follows the rounding
   mode.  Every correct model must not fail; every bug must not pass.  */

#ifndef DECLARED_H
#define DECLARED_H

#include "gradcheck.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum declared_kind
{
  /* Another model, re-declared (declared_wrap).  */
  DECLARED_WRAP = 0,
  /* L = sum a_i sin(x_i), a_i = 2^(-8 i) (1 + U/2): one tensor whose
     gradient spans 2^-56.  Twin: the smallest element's gradient
     doubled.  */
  DECLARED_MIXED_SCALE,
  /* L = sum_i x_i sum_t z_ti over T = 1024 positive z: the backward
     reduces each sum in f32.  Twin: the running sum is cut to 16 bits
     after every addition, a cut that follows the rounding mode (as a
     _Float16 accumulator's does).  */
  DECLARED_LOW_PRECISION
} declared_kind;

typedef struct declared_model
{
  gc_model model;
  declared_kind kind;
  bool twin;
  size_t n;
  float *x;
  const gc_model *inner;    /* DECLARED_WRAP: the model re-declared */
  size_t bug_off, bug_cnt;  /* the elements the bug scales */
  float bug_scale;          /* 1: no bug */
  double mag_factor;        /* > 0: magnitudes declared as this times the
                               largest |g| of the model */
  bool loss_magnitude_zero; /* declare M_L = 0 */
  float *a, *z;
  gc_block block;
} declared_model;

/* INNER re-declared at X (copied): backward depth DEPTH (0: INNER's),
   magnitudes MAG_FACTOR times the largest |g| (0: INNER's), M_L declared
   0 when ML_ZERO; the gradient's elements [OFF, OFF + CNT) scaled by
   BUG_SCALE.  NULL when memory runs out.  */
declared_model *declared_wrap (const gc_model *inner, const float *x,
                               size_t depth, double mag_factor, bool ml_zero,
                               size_t off, size_t cnt, float bug_scale);
/* A model of KIND (not DECLARED_WRAP) with N parameters from SEED, its
   twin when TWIN; magnitudes declared (their honest value) when
   MAGNITUDES.  */
declared_model *declared_new (declared_kind kind, size_t n, uint64_t seed,
                              bool twin, bool magnitudes);
void declared_free (declared_model *d);

#endif
