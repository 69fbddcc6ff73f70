/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_rmsnorm.c -- a project's own model and its hand-written backward,
   checked by gradcheck inside make check.

   The model is an RMS norm with a gain, scalarised with a fixed cotangent:
     r = (mean_i x_i^2 + EPS)^(-1/2),   L(x, g) = sum_i dy_i g_i x_i r.
   Its backward, derived by hand:
     dL/dg_i = dy_i x_i r,
     dL/dx_j = r g_j dy_j - r^3 x_j s / N,   s = sum_i dy_i g_i x_i.
   The suite asserts that the backward passes and that a known slip (the
   1/N of the mean dropped from the second term) is caught.  */

/* Check kills a test that outlasts its test case's timeout, 4 s by
   default, with "Test timeout expired" and nothing else; a failing check
   costs more than a passing one.  The test case below sets its timeout,
   and GC_CK_TIMEOUT tells the assertions the same number: a check that
   would outlast it stops at 80% of it with a message that says so.  */
#define TEST_TIMEOUT 60
#define GC_CK_TIMEOUT TEST_TIMEOUT

#include <check.h>
#include <gradcheck-check.h>

#include <math.h>
#include <stdlib.h>

enum { N = 16 };
static const float EPS = 1e-6f;

/* The point checked: x, then g (2N floats), and the cotangent dy.  */
static float point[2 * N];
static float dy[N];

static float
rms_inv_f32 (const float *x)
{
  float ss = 0;
  for (int i = 0; i < N; i++)
    ss += x[i] * x[i];
  return 1.0f / sqrtf (ss / N + EPS);
}

/* The production forward.  */
static int
loss_f32 (void *ctx, const float *p, float *loss)
{
  (void) ctx;
  const float *x = p, *g = p + N;
  float r = rms_inv_f32 (x), l = 0;
  for (int i = 0; i < N; i++)
    l += dy[i] * g[i] * x[i] * r;
  *loss = l;
  return 0;
}

/* The backward under test; MEAN_SLIP drops the 1/N (a known bug).  */
static int
backward (const float *p, float *grad, int mean_slip)
{
  const float *x = p, *g = p + N;
  float r = rms_inv_f32 (x), s = 0;
  for (int i = 0; i < N; i++)
    s += dy[i] * g[i] * x[i];
  float n = mean_slip ? 1.0f : (float) N;
  for (int j = 0; j < N; j++)
    {
      grad[j] = r * g[j] * dy[j] - r * r * r * x[j] * s / n;
      grad[N + j] = dy[j] * x[j] * r;
    }
  return 0;
}

static int
grad_f32 (void *ctx, const float *p, float *grad)
{
  (void) ctx;
  return backward (p, grad, 0);
}

static int
grad_f32_mean_slip (void *ctx, const float *p, float *grad)
{
  (void) ctx;
  return backward (p, grad, 1);
}

/* The reference forward: the same function in MPFR, every operation at the
   precision gradcheck asks for.  */
static int
loss_mpfr (void *ctx, mpfr_srcptr p, mpfr_ptr loss)
{
  (void) ctx;
  mpfr_srcptr x = p, g = p + N;
  mpfr_t ss, t, r;
  mpfr_inits2 (mpfr_get_prec (loss), ss, t, r, (mpfr_ptr) 0);
  mpfr_set_zero (ss, 1);
  for (int i = 0; i < N; i++)
    {
      mpfr_sqr (t, x + i, MPFR_RNDN);
      mpfr_add (ss, ss, t, MPFR_RNDN);
    }
  mpfr_div_ui (ss, ss, N, MPFR_RNDN);
  mpfr_set_flt (t, EPS, MPFR_RNDN);
  mpfr_add (ss, ss, t, MPFR_RNDN);
  mpfr_rec_sqrt (r, ss, MPFR_RNDN);
  mpfr_set_zero (loss, 1);
  for (int i = 0; i < N; i++)
    {
      mpfr_mul_d (t, g + i, dy[i], MPFR_RNDN);
      mpfr_mul (t, t, x + i, MPFR_RNDN);
      mpfr_add (loss, loss, t, MPFR_RNDN);
    }
  mpfr_mul (loss, loss, r, MPFR_RNDN);
  mpfr_clears (ss, t, r, (mpfr_ptr) 0);
  return 0;
}

static const gc_block blocks[] = {
  { "x", 0, N, 1, { N } },
  { "g", N, N, 1, { N } },
};

static gc_model
rmsnorm_model (gc_grad_f32_fn grad)
{
  gc_model m = { .abi = GC_MODEL_ABI, .name = "rmsnorm", .n = 2 * N };
  m.loss_f32 = loss_f32;
  m.grad_f32 = grad;
  m.loss_mpfr = loss_mpfr;
  /* Depths (manual: "The accumulation factor"), the rounded operations on
     the longest chain.  Forward: x_i^2 (1), the sum of squares (N), / N,
     + EPS, sqrtf, 1 / (4), the product with r (1), the loss sum (N):
     2N + 6.  Backward, to dL/dx_j: r (N + 5), r * r * r (2), * x_j, * s,
     / N, the subtraction (4): N + 11.  */
  m.forward_depth = 2 * N + 6;
  m.backward_depth = N + 11;
  m.blocks = blocks;
  m.n_blocks = 2;
  return m;
}

static void
setup (void)
{
  unsigned s = 2026;
  for (int i = 0; i < 3 * N; i++)
    {
      s = s * 1103515245u + 12345u;
      float u = (float) ((int) (s >> 16 & 0x7fff) - 16384) / 16384.0f;
      if (i < N)
        point[i] = u;                   /* x in [-1, 1) */
      else if (i < 2 * N)
        point[i] = 1.0f + 0.25f * u;    /* g near 1 */
      else
        dy[i - 2 * N] = u;
    }
}

START_TEST (backward_is_right)
{
  gc_model m = rmsnorm_model (grad_f32);
  gc_ck_assert_gradient (&m, point, NULL);
}
END_TEST

START_TEST (backward_is_right_along_random_directions)
{
  gc_model m = rmsnorm_model (grad_f32);
  gc_options opts;
  gc_options_init (&opts);
  opts.directions = GC_DIR_RANDOM;
  opts.n_random = 8;
  gc_ck_assert_gradient (&m, point, &opts);
}
END_TEST

START_TEST (mean_slip_is_caught)
{
  gc_model m = rmsnorm_model (grad_f32_mean_slip);
  gc_ck_assert_gradient_fails (&m, point, NULL);
}
END_TEST

static Suite *
rmsnorm_suite (void)
{
  Suite *s = suite_create ("rmsnorm");
  TCase *tc = tcase_create ("gradient");
  tcase_set_timeout (tc, TEST_TIMEOUT);
  tcase_add_checked_fixture (tc, setup, NULL);
  tcase_add_test (tc, backward_is_right);
  tcase_add_test (tc, backward_is_right_along_random_directions);
  tcase_add_test (tc, mean_slip_is_caught);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (rmsnorm_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
