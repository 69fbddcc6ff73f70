/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* edges.h -- issue 24 round 3's correct models at the check's own edges
   (manual: "What the measurement does not support", "What f32 mode cannot
   judge", "Domain edges"): each is a correct model the check must not fail,
   and (where it has one) a buggy twin the check must not pass.  None has an
   f64 twin: they must be honest without one.  */

#ifndef EDGES_H
#define EDGES_H

#include "gradcheck.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum edge_kind
{
  /* L = sum c_i relu(a_i x_i - b_i) + q_i x_i with b_i = fl32(a_i x_i):
     the pre-activation is a rounding error of f32, its branch decided by
     the rounding mode; q_i = -(1.5 ... 2) c_i a_i puts the relu's half
     step within the f64 stencil's reach of the reference (manual: "The
     tiered reference").  Twin: the relu's gradient c_i a_i is 2 c_i a_i.  */
  EDGE_RELU_ROUNDED = 0,
  /* L = C sum x_i, C = 1 + D eps, whose backward forms C as a stagnating
     f32 sum 1 + eps + ... + eps (D = 4096, eps = 2^-25) on a thread
     created before the check: the rounding modes do not reach it.  Twin:
     the sum is formed as 1 - eps - ... (a sign error, C = 1 - D eps:
     a 2^-12 error hidden the same way).  */
  EDGE_POOL,
  /* Softmax cross-entropy, L = log sum exp x_j - x_0, logits about 1e3.
     Twin: the target's -1 is missing.  */
  EDGE_SOFTMAX_CE,
  /* L = sum c_i s_i sin(x_i / s_i), s_i from 1e-8 to 1e8 in one tensor.
     Twin: the smallest element's gradient doubled.  */
  EDGE_WIDE,
  /* L = sum c_i sinc(W x_i), W = 64: varies on a scale finer than f32
     mode's step.  Twin: gradient x 1.01.  */
  EDGE_SINC,
  /* L = sum c_i x_i + a t^3 + b t^5, t = x_i - x0_i (x0 the point), a =
     -5 b h^2 for f32 mode's step h = 2^-8 at |x| in [1, 2): the h^2 and
     h^4 terms of D(2h) - D(h) cancel, D(h) is off by 4 b h^4.  Twin: c_i
     x 1.01.  */
  EDGE_POLY,
  /* L = sum c_i exp(exp(x_i)), x_i about 2.5.  Twin: gradient x 1.01.  */
  EDGE_EXPEXP,
  /* L = sum c_i sqrt(x_i), one x_i at 1.5 default steps from 0 (set by
     edge_set_steps).  Twin: gradient x 1.1.  */
  EDGE_SQRT,
  /* L = sum_i (B + c_i x_i) - n B, B = 2^14: a small loss, a difference of
     large terms; M_L not declared.  Twin: gradient x 1.01.  */
  EDGE_CANCEL,
  /* L = sum c_i relu(x_i - k_i) + x_i^2 / 2, the knee k_i at 0.6 of f32
     mode's step h = 2^-8 below x_i in [1, 2).  Twin: the relu's gradient
     0.8 c_i, the biased difference quotient's value.  */
  EDGE_KNEE,
  /* L = sum_w c_w max(x in window w), windows of 4, with its f64 twin
     (edge_add_twin).  Twin: each window's gradient goes to its first
     element (in both f32 and f64: a bug of the algorithm).  */
  EDGE_MAXPOOL,
  EDGE_N_KINDS
} edge_kind;

typedef struct edge_model
{
  gc_model model;
  edge_kind kind;
  bool twin;
  size_t n;
  float *x;
  float *c, *a, *b, *q;
  double *k;               /* EDGE_KNEE: the knees */
  double ml_factor;         /* > 0: M_L declared as this times sum |terms| */
  void *pool;               /* EDGE_POOL: the pool thread */
  gc_block block;
} edge_model;

/* A model of KIND with N parameters from SEED, its twin when TWIN.  NULL
   when memory runs out or a thread cannot be started (EDGE_POOL).  */
edge_model *edge_new (edge_kind kind, size_t n, uint64_t seed, bool twin);
/* EDGE_SQRT: place the small element at STEPS default steps from 0, for a
   check whose step exponent (gc_result.step_exponent) is EXPONENT.  */
void edge_set_steps (edge_model *e, double steps, long exponent);
/* Whether the twin's bug changes the f32 gradient at the point, under
   the caller's rounding (relu-rounded's does only where an f32 rounding
   error of a pre-activation is positive): a bug without an effect there
   can pass, as the falsify matrix's mutants without one do.  */
bool edge_bug_has_effect (edge_model *e);
/* EDGE_CANCEL, EDGE_POLY: M_L declared as FACTOR times the honest
   magnitude (the sum of the |terms| of the final reduction); 0: not
   declared.  */
void edge_declare_ml (edge_model *e, double factor);
/* EDGE_CANCEL, EDGE_MAXPOOL: give the model its f64 twin (grad_f64).  */
void edge_add_twin (edge_model *e);
void edge_free (edge_model *e);
const char *edge_name (edge_kind kind);

#ifdef CHECK_H
/* check_hard's cases of these models (edges_tests.c).  */
void edges_add_tests (Suite *s);
#endif

#endif
