/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gctest.h -- helpers shared by the Check suites: models with closed-form
   derivatives, their exact gradients in MPFR, a JSON syntax checker, and the
   seed every randomised test prints.  */

#ifndef GCTEST_H
#define GCTEST_H

#include "gradcheck.h"
#include "models.h"

#include <check.h>
#include <stdbool.h>

typedef struct gct_model gct_model;
struct gct_model
{
  gc_model model;
  float *x;
  size_t n;
  /* The exact gradient at x (computed at 256 bits, rounded to double).  */
  void (*exact_grad) (gct_model *t, double *g);
  /* The model's own data for exact_grad (freed by gct_free), or NULL.  */
  void *priv;
  gcm_instance *inst;   /* when built on a catalogue model */
  float *coef;          /* model coefficients */
};

/* f(x) = sum_i a_i x_i^4 + b_i x_i^3 + x_i x_(i+1): a smooth polynomial
   whose third derivative does not vanish, so truncation is measurable.  */
gct_model *gct_poly (size_t n, uint64_t seed);
/* f(x) = log sum_i exp(x_i).  */
gct_model *gct_lse (size_t n, uint64_t seed);
/* The catalogue's tanh-gemm example, with an exact MPFR backward.  */
gct_model *gct_tanh_gemm (long m, long k, long n, uint64_t seed, int mutant);
/* The index of tanh-gemm's mutant NAME (the test fails when it has none).  */
int gct_tanh_mutant (const char *name);
/* f(x) = sum_i |x_i| + x_i^2 / 2: a kink wherever x_i = 0.  */
gct_model *gct_abs (size_t n, uint64_t seed);
void gct_free (gct_model *t);

/* A wrapper whose backward is BASE's, with elements [lo, hi) multiplied by
   FACTOR (or, with SHIFT != 0, read SHIFT places on: g[i] <- g[i + shift],
   zero beyond the range), then ADD added to element ADD_AT (SIZE_MAX:
   none): injected bugs of known size and shape.  Where BASE has an f64
   twin the wrapper's twin carries the same bug (a bug of the algorithm).  */
typedef struct gct_wrap
{
  gc_model model;
  const gct_model *base;
  size_t lo, hi;
  double factor;
  long shift;
  size_t add_at;
  double add;
} gct_wrap;
void gct_wrap_init (gct_wrap *w, const gct_model *base);

/* The seed of a randomised test: GC_TEST_SEED from the environment, or a
   fixed default; printed once per process so a failure can be replayed.  */
uint64_t gct_seed (void);

/* How many seeds a randomised loop runs: FULL, or 2 when GC_TEST_QUICK is
   set (CI's valgrind stage: memory errors do not depend on the seed, and
   the full counts run in the plain and sanitizer stages).  */
uint64_t gct_seeds (uint64_t full);

/* Whether TEXT is one well-formed JSON value (RFC 8259 syntax).  */
bool gct_json_valid (const char *text);

/* gc_check (M, X, O) that must succeed: its result, or the test fails
   with the status and the result's detail.  */
gc_result *gct_check_ok (const gc_model *m, const float *x,
                         const gc_options *o);

/* Run SUITE under Check and return the process exit status: 0 when every
   test passed, GCT_EXIT_UNSUPPORTED when every failure is a forked test
   killed by SIGILL (the CPU lacks an instruction: not a failure of the
   code under test; the rule of gradcheck kernels), else 1.  */
enum { GCT_EXIT_UNSUPPORTED = 77 };
int gct_run (Suite *suite);

/* "Not absurdly loose": a bound of the error model is at most this many
   times the true error it bounds, where that error is measurable.  Not a
   tolerance but the requirement itself (the foundation issue: "each bound
   at least the true error and ... at most 1000 times it").  */
#define GCT_LOOSENESS_MAX 1000

/* How far the constant factor diagnosed in R may lie from C, for a mutant
   whose values are C times a correct f32 result: max(1, |C|) times the
   resolution at index nf/2 of the failures' sorted resolutions (derived in
   gctest.c).  */
double gct_factor_tolerance (const gc_result *r, double c);

#endif
