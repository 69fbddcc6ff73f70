/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* hard.h -- hard correct models, each with a buggy twin: the classes of
   issue 13 where the bar was wrong in either direction (manual: "What the
   bar assumes").  Every correct model must pass under >= 20 seeds, every
   twin must fail or be inconclusive -- never pass (tests/check_hard.c).  */

#ifndef HARD_H
#define HARD_H

#include "gradcheck.h"

#include <stdbool.h>

typedef enum hard_kind
{
  /* L = sum c_i sin(x_i) + 2^-130 sum y_j^2 / 2: an O(1) loss with a
     gradient tensor (dy) in f32's subnormal range.  Twin: dy doubled.  */
  HARD_SUBNORMAL = 0,
  /* L = sum c_i x_i^3 / 3 whose backward accumulates into a buffer of the
     model; the correct one zeroes it on every call.  Twin: it does not
     (kda's reduction-buffer bug: right on the first call only).  */
  HARD_STALE_BUFFER,
  /* The same loss whose MPFR forward goes through one scratch array shared
     by all calls.  The correct one holds a lock around it.  Twin: no lock
     (thread-unsafe: wrong values under --threads 2).  */
  HARD_SHARED_SCRATCH,
  /* L = sum c_i sin(x_i) at |x_i| ~ 1e20: the function varies on a scale
     of 1, the parameter's scale is 1e20.  Twin: dx off by 1%.  */
  HARD_LARGE_PARAM,
  /* L = 1 + sum c_i x_i (1 + 1e24 x_i) at |x_i| ~ 1e-25: an O(1) loss of
     tiny parameters with O(1) gradients, where the 128-bit reference's
     rounding over the step (2^-42 |x|) is 5 times the gradient.  Twin: dx
     off by 86%.  */
  HARD_TINY_PARAM,
  /* L = sum c_i relu(x_i - k_i) + x_i^2 / 2 with the knee k_i at 0.6 of
     the default MPFR step below x_i: smooth at the point, a kink inside
     the first stencil (D(h) averages to 0.8 c_i).  Twin: the relu part's
     gradient is 0.8 c_i, the biased difference quotient's value.  */
  HARD_KNEE,
  /* L = sum_p [mean_t (b_p + z_t) + b_p^2 / 2] over HARD_NPOS positions:
     the backward reduces the mean's gradient 1/N naively in f32, N equal
     terms, which stagnates (every addition rounds the same way).  Twin: the
     regulariser's gradient b_p is missing.  */
  HARD_MEAN_REDUCTION,
  /* L = sum c_i sin(1000 x_i): the backward 1000 c_i cos(1000 x_i) rounds
     the argument 1000 x_i, an error the cosine amplifies 1000-fold.  Twin:
     a scale 1 + 2^-8 too large (a mistyped constant).  */
  HARD_AMPLIFIED_ARGUMENT,
  /* A positional encoding, L = sum_i c_i sum_k (sin(2^k x_i) + cos(2^k
     x_i)) / (k + 1), k = 0..10: the backward sums eleven terms up to 2^10
     c_i.  Twin: the top frequency's chain factor is 2^9, not 2^10.  */
  HARD_POSITIONAL,
  /* L = sum c_i exp(3 x_i) at x_i ~ 25: the rounding of 3 x_i is amplified
     75-fold in exp.  Twin: each element reads its neighbour's x.  */
  HARD_EXP_ARGUMENT,
  /* L = sum c_i x_i^4 / 4 at x = 0: analytic, with a fourth difference
     that does not vanish (x^4 is not a kink), in a loss of size h^4 whose
     rounding is far below J.  Twin: dx carries a constant offset
     2^-10 c_i.  */
  HARD_QUARTIC_ZERO,
  HARD_N_KINDS
} hard_kind;

/* Positions of the mean-reduction model.  */
#define HARD_NPOS 100000

typedef struct hard_model
{
  gc_model model;
  float *x;
  size_t n;
  hard_kind kind;
  bool twin;
  float *c;               /* coefficients */
  float *acc;             /* the stale-buffer model's accumulator */
  void *scratch;          /* the shared-scratch model's MPFR scratch */
  void *lock;
  double *knee;           /* the knee model's k_i */
  float *z;               /* the mean-reduction model's data z_t */
  gc_block blocks[2];
} hard_model;

/* A hard model of KIND with N parameters (per tensor where it has two),
   inputs drawn from SEED; its buggy twin when TWIN.  NULL when memory runs
   out.  */
hard_model *hard_new (hard_kind kind, size_t n, uint64_t seed, bool twin);
void hard_free (hard_model *h);
const char *hard_name (hard_kind kind);

#endif
