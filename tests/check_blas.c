/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_blas.c -- f32 mode on a BLAS-heavy loss (tanh of an sgemm product,
   K = 64): the derived bar covers the real f32 noise of the central
   difference, and an injected error larger than the bar fails, in every
   reference mode.  Runs under whatever OpenBLAS kernel the process got;
   tests/kernels.sh runs the same check under every kernel.  */

#include "gctest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { M = 8, K = 64, N = 8 };

/* 96 coordinates spread over both tensors.  */
static size_t idx[96];

static void
pick (gc_options *o, size_t n, uint64_t seed)
{
  gcm_rng r;
  gcm_rng_seed (&r, seed, 99);
  for (size_t k = 0; k < 96; k++)
    idx[k] = (size_t) (gcm_uniform (&r) * (double) n);
  gc_options_init (o);
  o->directions = GC_DIR_LIST;
  o->indices = idx;
  o->n_indices = 96;
}

/* f32 reference: |D_f32(h) - g*| <= truncation + reference rounding on
   every direction, and the check passes.  */
START_TEST (test_f32_noise_covered)
{
  for (uint64_t s = 0; s < gct_seeds (4); s++)
    {
      gct_model *t = gct_tanh_gemm (M, K, N, gct_seed () + s, 0);
      double *g = malloc (t->n * sizeof *g);
      t->exact_grad (t, g);
      gc_options o;
      pick (&o, t->n, gct_seed () + s);
      o.reference = GC_REF_F32;
      gc_result *r = gct_check_ok (&t->model, t->x, &o);
      /* no false alarm; blind directions are inconclusive (manual:
         "Inconclusive directions")  */
      ck_assert_msg (r->verdict == GC_PASS || r->verdict == GC_INCONCLUSIVE,
                     "seed %llu: worst nu %g",
                     (unsigned long long) (gct_seed () + s), r->worst_nu);
      double max_err = 0, max_term = 0;
      for (size_t k = 0; k < r->n_directions; k++)
        {
          const gc_direction *d = &r->dirs[k];
          double err = fabs (d->reference - g[d->index]);
          double term = d->terms[GC_TERM_TRUNCATION].value
                        + d->terms[GC_TERM_REFERENCE].value;
          ck_assert_msg (err <= term, "%s: f32 FD error %g > terms %g",
                         "direction", err, term);
          max_err = fmax (max_err, err);
          max_term = fmax (max_term, term);
        }
      /* not absurdly loose: within GCT_LOOSENESS_MAX times the largest
         real noise */
      ck_assert_msg (max_term <= GCT_LOOSENESS_MAX * max_err,
                     "terms %g vs noise %g", max_term, max_err);
      /* the measured forward error sits inside its budget */
      ck_assert (r->forward_error_ulps >= 0);
      ck_assert_msg (r->forward_error_ulps <= r->forward_budget_ulps,
                     "forward error %g ulp > budget %g",
                     r->forward_error_ulps, r->forward_budget_ulps);
      gc_result_free (r);
      free (g);
      gct_free (t);
    }
}
END_TEST

/* An error of twice the bar, added to one element, fails the check at that
   element; in the mode given by the loop index.  */
START_TEST (test_injected_error_fails)
{
  static const gc_reference refs[] = { GC_REF_MPFR, GC_REF_F32, GC_REF_F64 };
  gct_model *t = gct_tanh_gemm (M, K, N, gct_seed (), 0);
  gc_options o;
  pick (&o, t->n, gct_seed ());
  o.reference = refs[_i];
  gc_result *r = gct_check_ok (&t->model, t->x, &o);
  /* no failure (an f32 reference may leave directions inconclusive) */
  ck_assert (r->verdict == GC_PASS || r->verdict == GC_INCONCLUSIVE);
  const gc_direction *d = &r->dirs[17];
  size_t at = d->index;
  double bump = 2 * d->bar;
  gc_result_free (r);

  gct_wrap w;
  gct_wrap_init (&w, t);
  w.add_at = at;
  w.add = bump;
  r = gct_check_ok (&w.model, t->x, &o);
  ck_assert_msg (r->verdict == GC_FAIL, "%s: an error of 2 bars passed",
                 gc_reference_name (refs[_i]));
  ck_assert_uint_eq (r->dirs[r->worst].index, at);
  ck_assert (r->worst_nu > 1);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The f32 adjoint's real error, measured against the exact gradient, lies
   within the adjoint term on every element, at a reduction length of 64.  */
START_TEST (test_adjoint_noise_covered)
{
  gct_model *t = gct_tanh_gemm (M, K, N, gct_seed (), 0);
  double *g = malloc (t->n * sizeof *g);
  t->exact_grad (t, g);
  gc_options o;
  pick (&o, t->n, gct_seed ());
  gc_result *r = gct_check_ok (&t->model, t->x, &o);
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      ck_assert (fabs (d->analytic - g[d->index])
                 <= d->terms[GC_TERM_ADJOINT].value);
    }
  gc_result_free (r);
  free (g);
  gct_free (t);
}
END_TEST

static Suite *
blas_suite (void)
{
  Suite *s = suite_create ("blas");
  TCase *tc = tcase_create ("f32 noise");
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_f32_noise_covered);
  tcase_add_loop_test (tc, test_injected_error_fails, 0, 3);
  tcase_add_test (tc, test_adjoint_noise_covered);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (blas_suite ());
}
