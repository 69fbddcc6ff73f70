/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_mpkit.c -- the reference kit (gradcheck-mp.h) against closed forms
   and against MPFR itself at four times the working precision.  Each
   tolerance is the kit's own rounding bound, derived beside the test from
   the operations it performs (u = 2^-p at the working precision p, first
   order; a factor 2 of headroom covers the second-order terms).  */

#include "gctest.h"
#include "gradcheck-mp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { P = 113, HI = 4 * P, N = 24 };

static uint64_t rng_state;

/* A uniform double in [-R, R), from the printed seed.  */
static double
uniform (double r)
{
  rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
  return ((double) (rng_state >> 11) * 0x1p-53 * 2 - 1) * r;
}

/* N numbers at precision PREC, random in [-R, R) (exact doubles).  */
static mpfr_ptr
random_array (size_t n, mpfr_prec_t prec, double r)
{
  mpfr_ptr a = gc_mp_array_new (n, prec);
  ck_assert_ptr_nonnull (a);
  for (size_t i = 0; i < n; i++)
    mpfr_set_d (a + i, uniform (r), MPFR_RNDN);
  return a;
}

/* |got - want| <= tol, in doubles (the errors tested are far above the
   double rounding of the comparison: tolerances are >= 2^-113 relative,
   and the difference is taken in MPFR at HI bits before conversion).  */
static void
assert_close (mpfr_srcptr got, mpfr_srcptr want, double tol, const char *what)
{
  mpfr_t d;
  mpfr_init2 (d, HI);
  mpfr_sub (d, got, want, MPFR_RNDN);
  double e = fabs (mpfr_get_d (d, MPFR_RNDN));
  mpfr_clear (d);
  ck_assert_msg (e <= tol, "%s: error %g beyond the bound %g (value %g)",
                 what, e, tol, mpfr_get_d (want, MPFR_RNDN));
}

static const double U = 0x1p-113;   /* u = 2^-P */

START_TEST (test_arrays)
{
  ck_assert_ptr_null (gc_mp_array_new (0, P));
  ck_assert_ptr_null (gc_mp_array_new (4, 0));
  ck_assert_ptr_null (gc_mp_array_new (SIZE_MAX / 2, P));
  mpfr_ptr a = gc_mp_array_new (5, P);
  ck_assert_ptr_nonnull (a);
  for (size_t i = 0; i < 5; i++)
    {
      ck_assert_int_eq (mpfr_get_prec (a + i), P);
      ck_assert (mpfr_zero_p (a + i));
    }
  static const float f[5] = { 1.5f, -0x1p-30f, 3.1415927f, 0, 1e30f };
  gc_mp_set_f32 (a, f, 5);
  for (size_t i = 0; i < 5; i++)
    ck_assert (mpfr_cmp_d (a + i, (double) f[i]) == 0);
  gc_mp_array_free (a, 5);
  gc_mp_array_free (NULL, 3);
}
END_TEST

/* Closed forms: sums and dots of small integers are exact at P bits.  */
START_TEST (test_closed_forms)
{
  mpfr_ptr x = gc_mp_array_new (N, P), r = gc_mp_array_new (2, P);
  for (size_t i = 0; i < N; i++)
    mpfr_set_ui (x + i, (unsigned long) i + 1, MPFR_RNDN);
  gc_mp_sum (r, x, N);
  ck_assert (mpfr_cmp_ui (r, N * (N + 1) / 2) == 0);
  gc_mp_dot (r, x, 1, x, 1, N);
  ck_assert (mpfr_cmp_ui (r, N * (N + 1) * (2 * N + 1) / 6) == 0);
  /* strides: the odd elements 1, 3, ..., 23 */
  gc_mp_dot (r, x, 2, x, 2, N / 2);
  unsigned long odd = 0;
  for (unsigned long k = 1; k < N; k += 2)
    odd += k * k;
  ck_assert (mpfr_cmp_ui (r, odd) == 0);
  /* sigmoid(0) = 1/2, softmax of equal values 1/N, their sum: exact */
  mpfr_set_zero (r, 1);
  gc_mp_sigmoid (r + 1, r, 1);
  ck_assert (mpfr_cmp_d (r + 1, 0.5) == 0);
  for (size_t i = 0; i < N; i++)
    mpfr_set_d (x + i, 0.75, MPFR_RNDN);
  gc_mp_softmax (x, x, N);
  mpfr_t want;
  mpfr_init2 (want, HI);
  mpfr_set_ui (want, 1, MPFR_RNDN);
  mpfr_div_ui (want, want, N, MPFR_RNDN);
  /* exp(0) = 1 exactly, the sum N exactly, one division: u / N */
  assert_close (x + 5, want, U / N, "softmax of equal values");
  /* logsumexp of N equal values v = v + log N: subtraction and exp exact,
     sum exact, log and the final add round once each: 2u |r| */
  for (size_t i = 0; i < N; i++)
    mpfr_set_d (x + i, -2.5, MPFR_RNDN);
  gc_mp_logsumexp (r, x, N);
  mpfr_log_ui (want, N, MPFR_RNDN);
  mpfr_sub_d (want, want, 2.5, MPFR_RNDN);
  assert_close (r, want, 2 * U * fabs (mpfr_get_d (want, MPFR_RNDN)),
                "logsumexp of equal values");
  /* softplus(0) = log 2: exp(0) = 1 exact, log1p rounds once */
  mpfr_set_zero (r, 1);
  gc_mp_softplus (r + 1, r, 1);
  mpfr_const_log2 (want, MPFR_RNDN);
  assert_close (r + 1, want, U, "softplus(0)");
  /* norm2 of (3, 4) = 5, rmsnorm of (c, c, ...) = sign(c) / sqrt(1 + eps/c^2)
     with eps = 0: exactly 1 */
  mpfr_set_ui (x, 3, MPFR_RNDN);
  mpfr_set_ui (x + 1, 4, MPFR_RNDN);
  gc_mp_norm2 (r, x, 2);
  ck_assert (mpfr_cmp_ui (r, 5) == 0);
  for (size_t i = 0; i < 4; i++)
    mpfr_set_d (x + i, -0.5, MPFR_RNDN);
  gc_mp_rmsnorm (x, x, 4, 0, NULL);
  ck_assert (mpfr_cmp_si (x + 2, -1) == 0);
  mpfr_clear (want);
  gc_mp_array_free (x, N);
  gc_mp_array_free (r, 2);
}
END_TEST

/* Against MPFR at HI bits, on random inputs of their own precision (some
   above P: the kit must not lose them).  */
START_TEST (test_against_mpfr)
{
  rng_state = gct_seed () + 0x9e3779b97f4a7c15u * (uint64_t) _i;
  mpfr_ptr x = random_array (N, _i % 2 ? 2 * P : P, 3.0);
  mpfr_ptr y = random_array (N, P, 3.0);
  mpfr_ptr out = gc_mp_array_new (N, P);
  mpfr_ptr hi = gc_mp_array_new (N, HI);
  mpfr_t want, t, s;
  mpfr_init2 (want, HI);
  mpfr_init2 (t, HI);
  mpfr_init2 (s, HI);

  /* dot: N fused multiply-adds, each rounding by at most u times the
     running sum, itself at most sum |x_i y_i| (1 + O(u)): N u sum |x y| */
  double sabs = 0;
  mpfr_set_zero (want, 1);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_mul (t, x + i, y + i, MPFR_RNDN);
      mpfr_add (want, want, t, MPFR_RNDN);
      sabs += fabs (mpfr_get_d (t, MPFR_RNDN));
    }
  gc_mp_dot (out, x, 1, y, 1, N);
  assert_close (out, want, 2 * N * U * sabs, "dot");
  /* dot_f32 with float weights: the same bound */
  float w[N];
  for (size_t i = 0; i < N; i++)
    w[i] = (float) uniform (2.0);
  mpfr_set_zero (want, 1);
  sabs = 0;
  for (size_t i = 0; i < N; i++)
    {
      mpfr_mul_d (t, x + i, (double) w[i], MPFR_RNDN);
      mpfr_add (want, want, t, MPFR_RNDN);
      sabs += fabs (mpfr_get_d (t, MPFR_RNDN));
    }
  gc_mp_dot_f32 (out, x, w, N);
  assert_close (out, want, 2 * N * U * sabs, "dot_f32");
  /* sum: N additions, each at most u times the running sum: N u sum |x| */
  mpfr_set_zero (want, 1);
  sabs = 0;
  for (size_t i = 0; i < N; i++)
    {
      mpfr_add (want, want, x + i, MPFR_RNDN);
      sabs += fabs (mpfr_get_d (x + i, MPFR_RNDN));
    }
  gc_mp_sum (out, x, N);
  assert_close (out, want, 2 * N * U * sabs, "sum");
  /* axpy: one fused rounding per element, u |result| */
  mpfr_ptr yy = gc_mp_array_new (N, P);
  for (size_t i = 0; i < N; i++)
    mpfr_set (yy + i, y + i, MPFR_RNDN);
  gc_mp_axpy (yy, x, y, N);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_fma (want, x, y + i, y + i, MPFR_RNDN);
      assert_close (yy + i, want, 2 * U * fabs (mpfr_get_d (want, MPFR_RNDN)),
                    "axpy");
    }
  gc_mp_array_free (yy, N);

  /* elementwise: exp, log, log1p, tanh are MPFR's correctly rounded
     functions at P: u |f|; sigmoid: exp (u), 1 + t (u), 1 / . (u): 3u |f|;
     softplus: exp(-|x|) (u), log1p of it (u absolute, as t/(1+t) <= 1),
     the addition (u |f|): 2u + u |f| */
  for (int f = 0; f < 6; f++)
    {
      static const char *const names[] = { "exp", "log", "log1p", "tanh",
                                           "sigmoid", "softplus" };
      for (size_t i = 0; i < N; i++)
        {
          mpfr_abs (t, x + i, MPFR_RNDN);    /* log's argument: positive */
          mpfr_srcptr arg = f == 1 || f == 2 ? t : x + i;
          mpfr_set (hi + i, arg, MPFR_RNDN);
        }
      switch (f)
        {
        case 0: gc_mp_exp (out, x, N); break;
        case 1: gc_mp_log (out, hi, N); break;
        case 2: gc_mp_log1p (out, hi, N); break;
        case 3: gc_mp_tanh (out, x, N); break;
        case 4: gc_mp_sigmoid (out, x, N); break;
        case 5: gc_mp_softplus (out, x, N); break;
        }
      for (size_t i = 0; i < N; i++)
        {
          switch (f)
            {
            case 0: mpfr_exp (want, hi + i, MPFR_RNDN); break;
            case 1: mpfr_log (want, hi + i, MPFR_RNDN); break;
            case 2: mpfr_log1p (want, hi + i, MPFR_RNDN); break;
            case 3: mpfr_tanh (want, hi + i, MPFR_RNDN); break;
            case 4:
              mpfr_neg (want, hi + i, MPFR_RNDN);
              mpfr_exp (want, want, MPFR_RNDN);
              mpfr_add_ui (want, want, 1, MPFR_RNDN);
              mpfr_ui_div (want, 1, want, MPFR_RNDN);
              break;
            case 5:
              mpfr_exp (want, hi + i, MPFR_RNDN);
              mpfr_log1p (want, want, MPFR_RNDN);
              break;
            }
          double fv = fabs (mpfr_get_d (want, MPFR_RNDN));
          double tol = f == 4 ? 3 * U * fv : f == 5 ? 2 * U + U * fv
                       : U * fv;
          assert_close (out + i, want, 2 * tol, names[f]);
        }
    }

  /* logsumexp: x_i - m (u |x_i - m| <= u D), its exp (relative u D + u),
     the sum (N u relative), log (u |log s|), + m (u |r|): with D the
     largest |x_i - m|, (D + N + 1) u + u |log s| + u |r| absolute */
  gc_mp_logsumexp (out, x, N);
  double m = -INFINITY;
  for (size_t i = 0; i < N; i++)
    m = fmax (m, mpfr_get_d (x + i, MPFR_RNDN));
  mpfr_set_zero (s, 1);
  double dmax = 0;
  for (size_t i = 0; i < N; i++)
    {
      mpfr_exp (t, x + i, MPFR_RNDN);
      mpfr_add (s, s, t, MPFR_RNDN);
      dmax = fmax (dmax, m - mpfr_get_d (x + i, MPFR_RNDN));
    }
  mpfr_log (want, s, MPFR_RNDN);
  double rv = fabs (mpfr_get_d (want, MPFR_RNDN));
  assert_close (out, want, 2 * ((dmax + N + 1) * U + U * fabs (rv - m)
                                + U * rv), "logsumexp");
  /* softmax: exp(x_i - m) relative (D + 1) u, the sum (D + 1 + N) u, the
     division u: (2D + N + 3) u relative per element */
  gc_mp_softmax (out, x, N);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_exp (want, x + i, MPFR_RNDN);
      mpfr_div (want, want, s, MPFR_RNDN);
      assert_close (out + i, want, 2 * (2 * dmax + N + 3) * U
                    * mpfr_get_d (want, MPFR_RNDN), "softmax");
    }
  /* in place gives the same numbers */
  mpfr_ptr xc = gc_mp_array_new (N, P);
  for (size_t i = 0; i < N; i++)
    mpfr_set (xc + i, x + i, MPFR_RNDN);
  if (mpfr_get_prec (x) == P)
    {
      gc_mp_softmax (xc, xc, N);
      for (size_t i = 0; i < N; i++)
        ck_assert (mpfr_equal_p (xc + i, out + i));
    }
  gc_mp_array_free (xc, N);

  /* norm2: the sum of squares (N u relative), sqrt halves it and rounds
     (u): (N / 2 + 1) u |r| */
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_sqr (t, x + i, MPFR_RNDN);
      mpfr_add (s, s, t, MPFR_RNDN);
    }
  mpfr_sqrt (want, s, MPFR_RNDN);
  gc_mp_norm2 (out, x, N);
  assert_close (out, want, 2 * (N / 2.0 + 1) * U
                * mpfr_get_d (want, MPFR_RNDN), "norm2");
  /* l2_normalize with eps: sum (N u), + eps (u), rec_sqrt (half, + u),
     product (u): (N / 2 + 3) u relative */
  const double eps = 1e-6;
  gc_mp_l2_normalize (out, x, N, eps);
  mpfr_add_d (t, s, eps, MPFR_RNDN);
  mpfr_rec_sqrt (t, t, MPFR_RNDN);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_mul (want, x + i, t, MPFR_RNDN);
      assert_close (out + i, want, 2 * (N / 2.0 + 3) * U
                    * fabs (mpfr_get_d (want, MPFR_RNDN)), "l2_normalize");
    }
  /* rmsnorm with gains y: one division more and one product more:
     (N / 2 + 5) u relative */
  gc_mp_rmsnorm (out, x, N, eps, y);
  mpfr_div_ui (t, s, N, MPFR_RNDN);
  mpfr_add_d (t, t, eps, MPFR_RNDN);
  mpfr_rec_sqrt (t, t, MPFR_RNDN);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_mul (want, x + i, t, MPFR_RNDN);
      mpfr_mul (want, want, y + i, MPFR_RNDN);
      assert_close (out + i, want, 2 * (N / 2.0 + 5) * U
                    * fabs (mpfr_get_d (want, MPFR_RNDN)), "rmsnorm");
    }
  mpfr_clear (want);
  mpfr_clear (t);
  mpfr_clear (s);
  gc_mp_array_free (x, N);
  gc_mp_array_free (y, N);
  gc_mp_array_free (out, N);
  gc_mp_array_free (hi, N);
}
END_TEST

/* gemv and gemm: each element is a dot (the dot's bound), and the
   transposed storages compute the same numbers exactly (the same
   operations in the same order).  */
START_TEST (test_gemm)
{
  rng_state = gct_seed () ^ 0x5bd1e995u;
  enum { M = 5, K = 7, NN = 3 };
  mpfr_ptr a = random_array (M * K, P, 2.0), b = random_array (K * NN, P, 2.0);
  mpfr_ptr at = gc_mp_array_new (K * M, P), bt = gc_mp_array_new (NN * K, P);
  for (size_t i = 0; i < M; i++)
    for (size_t l = 0; l < K; l++)
      mpfr_set (at + l * M + i, a + i * K + l, MPFR_RNDN);
  for (size_t l = 0; l < K; l++)
    for (size_t j = 0; j < NN; j++)
      mpfr_set (bt + j * K + l, b + l * NN + j, MPFR_RNDN);
  mpfr_ptr c = gc_mp_array_new (M * NN, P), c2 = gc_mp_array_new (M * NN, P);
  gc_mp_gemm (c, 0, 0, M, NN, K, a, K, b, NN);
  mpfr_t want, t;
  mpfr_init2 (want, HI);
  mpfr_init2 (t, HI);
  for (size_t i = 0; i < M; i++)
    for (size_t j = 0; j < NN; j++)
      {
        double sabs = 0;
        mpfr_set_zero (want, 1);
        for (size_t l = 0; l < K; l++)
          {
            mpfr_mul (t, a + i * K + l, b + l * NN + j, MPFR_RNDN);
            mpfr_add (want, want, t, MPFR_RNDN);
            sabs += fabs (mpfr_get_d (t, MPFR_RNDN));
          }
        assert_close (c + i * NN + j, want, 2 * K * U * sabs, "gemm");
      }
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++)
      {
        gc_mp_gemm (c2, ta, tb, M, NN, K, ta ? at : a, ta ? M : K,
                    tb ? bt : b, tb ? K : NN);
        for (size_t e = 0; e < M * NN; e++)
          ck_assert (mpfr_equal_p (c2 + e, c + e));
      }
  /* gemv: A b_col (b's column 0 as a vector) is c's column 0; A^T on the
     transposed storage too */
  mpfr_ptr v = gc_mp_array_new (K, P), yv = gc_mp_array_new (M, P);
  for (size_t l = 0; l < K; l++)
    mpfr_set (v + l, b + l * NN, MPFR_RNDN);
  gc_mp_gemv (yv, 0, M, K, a, K, v);
  for (size_t i = 0; i < M; i++)
    ck_assert (mpfr_equal_p (yv + i, c + i * NN));
  gc_mp_gemv (yv, 1, K, M, at, M, v);
  for (size_t i = 0; i < M; i++)
    ck_assert (mpfr_equal_p (yv + i, c + i * NN));
  mpfr_clear (want);
  mpfr_clear (t);
  gc_mp_array_free (a, M * K);
  gc_mp_array_free (b, K * NN);
  gc_mp_array_free (at, K * M);
  gc_mp_array_free (bt, NN * K);
  gc_mp_array_free (c, M * NN);
  gc_mp_array_free (c2, M * NN);
  gc_mp_array_free (v, K);
  gc_mp_array_free (yv, M);
}
END_TEST

/* The value of the decimal string V at HI bits.  */
static void
set_str (mpfr_ptr w, const char *v)
{
  ck_assert_int_eq (mpfr_set_str (w, v, 10, MPFR_RNDN), 0);
}

/* GELU (both forms), SiLU, LayerNorm, elementwise product and broadcast
   bias add against values computed independently: 36-digit values from
   mpmath at 40 digits (x/2 (1 + erf(x/sqrt 2)), x/2 (1 + tanh(sqrt(2/pi)
   (x + 0.044715 x^3))), x / (1 + exp(-x)): other formulas than the kit's
   erfc and sigmoid forms), whose own error, 5e-37 relative, is below
   u = 2^-113 = 9.6e-35; and exact small-integer results.  */
START_TEST (test_new_ops_known)
{
  static const struct { double x; const char *erf, *tanh, *silu; } v[] = {
    { 1, "0.841344746068542948585232545632037922",
      "0.841191990608276704781995777045183861",
      "0.731058578630004879251159241821836274" },
    { -1, "-0.158655253931457051414767454367962078",
      "-0.158808009391723295218004222954816139",
      "-0.268941421369995120748840758178163726" },
    { 0.5, "0.34573123063700655181885230530416887",
      "0.34571400982514392203775725736452322",
      "0.311229665600927282319450282872754239" },
    { -3, "-0.00404969409489028357995544430278493213",
      "-0.00363739208177301883781646613189139183",
      "-0.142277619532700342636544455315256604" } };
  mpfr_ptr x = gc_mp_array_new (4, P), y = gc_mp_array_new (4, P);
  mpfr_t want;
  mpfr_init2 (want, HI);
  for (size_t k = 0; k < 4; k++)
    {
      mpfr_set_d (x, v[k].x, MPFR_RNDN);
      double ax = fabs (v[k].x);
      /* erf form: sqrt 2 (u), x / sqrt 2 (u), erfc (u, and the relative
         error 2u of its argument z amplified by |z erfc'(z) / erfc(z)| <=
         2 z^2 + 2 <= 11 at |z| <= 3/sqrt 2), x times it (u; / 2 exact):
         (3 + 2 * 11) u |y|, twice for second-order terms */
      gc_mp_gelu_erf (y, x, 1);
      set_str (want, v[k].erf);
      assert_close (y, want, 2 * 25 * U * fabs (mpfr_get_d (want, MPFR_RNDN)),
                    "gelu_erf");
      /* tanh form: sqrt(2/pi) (3u), 0.044715 (u), x^3 (2u), the fma (u),
         times c (u): z within 8u |z|; tanh's condition is <= 1, plus its
         rounding: |t| 9u absolute; 1 + t (u), x times it (u): absolute
         |x| (9u + 2u) / 2 + u |y|, twice */
      gc_mp_gelu_tanh (y, x, 1);
      set_str (want, v[k].tanh);
      assert_close (y, want, 2 * (5.5 * ax + 1) * U, "gelu_tanh");
      /* SiLU: exp (u), + 1 (u), x / it (u): e^-x / (1 + e^-x) <= 1 damps
         exp's error: 3u |y|, twice */
      gc_mp_silu (y, x, 1);
      set_str (want, v[k].silu);
      assert_close (y, want, 2 * 3 * U * fabs (mpfr_get_d (want, MPFR_RNDN)),
                    "silu");
    }
  /* in place */
  mpfr_set_d (x, 1, MPFR_RNDN);
  gc_mp_silu (x, x, 1);
  set_str (want, v[0].silu);
  assert_close (x, want, 6 * U, "silu in place");

  /* LayerNorm of (1, 2, 3, 4), eps 0: the mean 2.5 and the centred values
     are exact, var = 5/4 exact, 1 / sqrt(5/4) = 2 / sqrt 5 rounds once,
     one product: y = (-3, -1, 1, 3) / sqrt 5 within 2u |y|, twice.  With
     gains 2 and biases 1: y = 1 + 2 (...), two roundings more.  */
  for (size_t i = 0; i < 4; i++)
    mpfr_set_ui (x + i, (unsigned long) i + 1, MPFR_RNDN);
  mpfr_ptr w = gc_mp_array_new (4, P), b = gc_mp_array_new (4, P);
  for (size_t i = 0; i < 4; i++)
    {
      mpfr_set_ui (w + i, 2, MPFR_RNDN);
      mpfr_set_ui (b + i, 1, MPFR_RNDN);
    }
  for (int gains = 0; gains < 2; gains++)
    {
      gc_mp_layernorm (y, x, 4, 0, gains ? w : NULL, gains ? b : NULL);
      for (size_t i = 0; i < 4; i++)
        {
          set_str (want, "1.34164078649987381784550420123876574");  /* 3/sqrt 5 */
          mpfr_mul_si (want, want, (long) i * 2 - 3, MPFR_RNDN);
          mpfr_div_ui (want, want, 3, MPFR_RNDN);
          if (gains)
            {
              mpfr_mul_ui (want, want, 2, MPFR_RNDN);
              mpfr_add_ui (want, want, 1, MPFR_RNDN);
            }
          assert_close (y + i, want, 2 * (2 + 2 * gains) * U * 3,
                        "layernorm of 1, 2, 3, 4");
        }
    }
  /* Y may be X */
  gc_mp_layernorm (x, x, 4, 0, NULL, NULL);
  for (size_t i = 0; i < 4; i++)
    {
      set_str (want, "1.34164078649987381784550420123876574");
      mpfr_mul_si (want, want, (long) i * 2 - 3, MPFR_RNDN);
      mpfr_div_ui (want, want, 3, MPFR_RNDN);
      assert_close (x + i, want, 2 * 2 * U * 3, "layernorm in place");
    }

  /* product and bias add of small integers: exact */
  mpfr_ptr a = gc_mp_array_new (6, P), c = gc_mp_array_new (6, P);
  for (size_t i = 0; i < 6; i++)
    {
      mpfr_set_si (a + i, (long) i - 2, MPFR_RNDN);
      mpfr_set_ui (c + i, (unsigned long) i + 3, MPFR_RNDN);
    }
  mpfr_ptr p = gc_mp_array_new (6, P);
  gc_mp_mul (p, a, c, 6);
  for (size_t i = 0; i < 6; i++)
    ck_assert (mpfr_cmp_si (p + i, ((long) i - 2) * ((long) i + 3)) == 0);
  gc_mp_mul (a, a, a, 6);   /* in place, both inputs */
  for (size_t i = 0; i < 6; i++)
    ck_assert (mpfr_cmp_si (a + i, ((long) i - 2) * ((long) i - 2)) == 0);
  /* a 2 x 3 matrix plus a bias of 3: row i, column j gets bias j */
  gc_mp_add_bias (p, c, 2, 3, b);
  mpfr_set_si (b + 1, -10, MPFR_RNDN);
  gc_mp_add_bias (c, c, 2, 3, b);   /* in place */
  for (size_t i = 0; i < 2; i++)
    for (size_t j = 0; j < 3; j++)
      {
        long e = (long) (i * 3 + j) + 3;
        ck_assert (mpfr_cmp_si (p + i * 3 + j, e + 1) == 0);
        ck_assert (mpfr_cmp_si (c + i * 3 + j, e + (j == 1 ? -10 : 1)) == 0);
      }
  mpfr_clear (want);
  gc_mp_array_free (x, 4);
  gc_mp_array_free (y, 4);
  gc_mp_array_free (w, 4);
  gc_mp_array_free (b, 4);
  gc_mp_array_free (a, 6);
  gc_mp_array_free (c, 6);
  gc_mp_array_free (p, 6);
}
END_TEST

/* On random inputs, against MPFR at HI bits by other formulas: LayerNorm
   by the one-pass variance E[x^2] - mean^2 (exact enough at HI bits),
   GELU-tanh with tanh from exp, GELU-erf with 1 + erf, SiLU as
   x sigmoid(x).  */
START_TEST (test_new_ops_random)
{
  rng_state = gct_seed () ^ 0x2545f4914f6cdd1du;
  mpfr_ptr x = random_array (N, P, 4.0), w = random_array (N, P, 2.0);
  mpfr_ptr b = random_array (N, P, 1.0), y = gc_mp_array_new (N, P);
  /* a mean far from 0 against the spread: the two-pass variance keeps it */
  for (size_t i = 0; i < N; i++)
    mpfr_add_ui (x + i, x + i, 100, MPFR_RNDN);
  mpfr_t m, s, t, want;
  mpfr_init2 (m, HI);
  mpfr_init2 (s, HI);
  mpfr_init2 (t, HI);
  mpfr_init2 (want, HI);
  mpfr_set_zero (m, 1);
  mpfr_set_zero (s, 1);
  double sabs = 0;
  for (size_t i = 0; i < N; i++)
    {
      mpfr_add (m, m, x + i, MPFR_RNDN);
      mpfr_sqr (t, x + i, MPFR_RNDN);
      mpfr_add (s, s, t, MPFR_RNDN);
      sabs += fabs (mpfr_get_d (x + i, MPFR_RNDN));
    }
  mpfr_div_ui (m, m, N, MPFR_RNDN);
  mpfr_div_ui (s, s, N, MPFR_RNDN);
  mpfr_sqr (t, m, MPFR_RNDN);
  mpfr_sub (s, s, t, MPFR_RNDN);   /* var, at HI bits: ~2^-440 relative */
  const double eps = 1e-5;
  mpfr_add_d (s, s, eps, MPFR_RNDN);
  mpfr_rec_sqrt (s, s, MPFR_RNDN);
  double rs = mpfr_get_d (s, MPFR_RNDN);
  gc_mp_layernorm (y, x, N, eps, w, b);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_sub (t, x + i, m, MPFR_RNDN);
      double ti = fabs (mpfr_get_d (t, MPFR_RNDN));
      mpfr_mul (t, t, s, MPFR_RNDN);
      mpfr_mul (t, t, w + i, MPFR_RNDN);
      mpfr_add (want, t, b + i, MPFR_RNDN);
      /* The kit's mean errs by at most N u sum|x| / N + u |mean| (the sum
         and the division), shifting every centred value by it (first
         order: the variance does not move, sum of centred values = 0);
         each centred value rounds (u |t_i|); the centred sum of squares
         (N + 1 roundings), / N, + eps and rec_sqrt: (N + 4) u / 2 + u
         relative in s; the products (2u) and the bias add (u |y|).
         |w_i| s (dmean + u |t_i|) + |w_i| s |t_i| ((N + 4) / 2 + 3) u
         + u |y_i|, twice.  */
      double dmean = (double) N * U * sabs / N + U * fabs (mpfr_get_d (m, MPFR_RNDN));
      double wi = fabs (mpfr_get_d (w + i, MPFR_RNDN));
      double tol = wi * rs * (dmean + U * ti)
                   + wi * rs * ti * ((N + 4) / 2.0 + 3) * U
                   + U * fabs (mpfr_get_d (want, MPFR_RNDN));
      assert_close (y + i, want, 2 * tol, "layernorm");
    }
  for (size_t i = 0; i < N; i++)
    mpfr_sub_ui (x + i, x + i, 100, MPFR_RNDN);
  /* GELU tanh: the bound of test_new_ops_known, absolute 2 (5.5 |x| + 1) u
     with |y| <= |x|; the reference's tanh(z) = 1 - 2 / (exp(2z) + 1) */
  gc_mp_gelu_tanh (y, x, N);
  mpfr_t c;
  mpfr_init2 (c, HI);
  mpfr_const_pi (c, MPFR_RNDN);
  mpfr_ui_div (c, 2, c, MPFR_RNDN);
  mpfr_sqrt (c, c, MPFR_RNDN);
  for (size_t i = 0; i < N; i++)
    {
      double xi = fabs (mpfr_get_d (x + i, MPFR_RNDN));
      set_str (want, "0.044715");
      mpfr_pow_ui (t, x + i, 3, MPFR_RNDN);
      mpfr_mul (t, t, want, MPFR_RNDN);
      mpfr_add (t, t, x + i, MPFR_RNDN);
      mpfr_mul (t, t, c, MPFR_RNDN);
      mpfr_mul_2ui (t, t, 1, MPFR_RNDN);
      mpfr_exp (t, t, MPFR_RNDN);
      mpfr_add_ui (t, t, 1, MPFR_RNDN);
      mpfr_ui_div (t, 2, t, MPFR_RNDN);
      mpfr_ui_sub (t, 2, t, MPFR_RNDN);     /* 1 + tanh(z) */
      mpfr_mul (t, t, x + i, MPFR_RNDN);
      mpfr_div_2ui (want, t, 1, MPFR_RNDN);
      assert_close (y + i, want, 2 * (5.5 * xi + 1) * U, "gelu_tanh");
    }
  /* GELU erf: (3 + 2 kappa) u |y| relative, kappa = |z erfc'(z) /
     erfc(z)| the condition of erfc at z = -x / sqrt 2 (computed here);
     twice */
  gc_mp_gelu_erf (y, x, N);
  for (size_t i = 0; i < N; i++)
    {
      double z = -mpfr_get_d (x + i, MPFR_RNDN) / sqrt (2);
      double kappa = fabs (z) * 2 / sqrt (M_PI) * exp (-z * z) / erfc (z);
      mpfr_sqrt_ui (t, 2, MPFR_RNDN);
      mpfr_div (t, x + i, t, MPFR_RNDN);
      mpfr_erf (t, t, MPFR_RNDN);
      mpfr_add_ui (t, t, 1, MPFR_RNDN);
      mpfr_mul (t, t, x + i, MPFR_RNDN);
      mpfr_div_2ui (want, t, 1, MPFR_RNDN);
      assert_close (y + i, want, 2 * (3 + 2 * kappa) * U
                    * fabs (mpfr_get_d (want, MPFR_RNDN)), "gelu_erf");
    }
  /* SiLU: 3u |y|, twice; the reference x sigmoid(x) */
  gc_mp_silu (y, x, N);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_neg (t, x + i, MPFR_RNDN);
      mpfr_exp (t, t, MPFR_RNDN);
      mpfr_add_ui (t, t, 1, MPFR_RNDN);
      mpfr_ui_div (t, 1, t, MPFR_RNDN);
      mpfr_mul (want, t, x + i, MPFR_RNDN);
      assert_close (y + i, want, 2 * 3 * U
                    * fabs (mpfr_get_d (want, MPFR_RNDN)), "silu");
    }
  /* product: one rounding, u |y|; bias add: one rounding, u |y| */
  gc_mp_mul (y, x, w, N);
  for (size_t i = 0; i < N; i++)
    {
      mpfr_mul (want, x + i, w + i, MPFR_RNDN);
      assert_close (y + i, want, U * fabs (mpfr_get_d (want, MPFR_RNDN)),
                    "mul");
    }
  gc_mp_add_bias (y, x, 4, 6, b);
  for (size_t i = 0; i < 4; i++)
    for (size_t j = 0; j < 6; j++)
      {
        mpfr_add (want, x + i * 6 + j, b + j, MPFR_RNDN);
        assert_close (y + i * 6 + j, want,
                      U * fabs (mpfr_get_d (want, MPFR_RNDN)), "add_bias");
      }
  mpfr_clear (c);
  mpfr_clear (m);
  mpfr_clear (s);
  mpfr_clear (t);
  mpfr_clear (want);
  gc_mp_array_free (x, N);
  gc_mp_array_free (w, N);
  gc_mp_array_free (b, N);
  gc_mp_array_free (y, N);
}
END_TEST

/* The magnitude helpers (gradcheck.h, manual "Magnitude backwards"):
   on a grid of x in [-9, 9], each is within f32 rounding (2^-24
   relative, 2^-23 taken for double's part) of its documented formula
   computed in MPFR at HI bits, and at least |f'(x)| (f' computed in MPFR
   by another formula: tanh' = 1 / cosh^2, sigmoid' = e^-x / (1 + e^-x)^2,
   SiLU' and GELU' by the product rule on the kit's forms); and of order
   one where the formula cancels (tanh' at |x| = 9, sigmoid' at x = 9:
   |f'| ~ 1e-4 or less against a magnitude >= 1/2).  */
START_TEST (test_magnitude_helpers)
{
  mpfr_t x, t, s, d, m, a, c, q;
  mpfr_inits2 (HI, x, t, s, d, m, a, c, q, (mpfr_ptr) 0);
  set_str (a, "0.044715");
  mpfr_const_pi (c, MPFR_RNDN);
  mpfr_ui_div (c, 2, c, MPFR_RNDN);
  mpfr_sqrt (c, c, MPFR_RNDN);
  for (int k = -36; k <= 36; k++)
    {
      float xf = (float) k * 0.25f;
      mpfr_set_flt (x, xf, MPFR_RNDN);
      double ax = fabs ((double) xf);
      for (int f = 0; f < 5; f++)
        {
          float got = f == 0 ? gc_mag_dtanh (xf) : f == 1
                      ? gc_mag_dsigmoid (xf) : f == 2 ? gc_mag_dsilu (xf)
                      : f == 3 ? gc_mag_dgelu_tanh (xf)
                      : gc_mag_dgelu_erf (xf);
          /* s = sigmoid(x) */
          mpfr_neg (s, x, MPFR_RNDN);
          mpfr_exp (s, s, MPFR_RNDN);
          mpfr_add_ui (s, s, 1, MPFR_RNDN);
          mpfr_ui_div (s, 1, s, MPFR_RNDN);
          switch (f)
            {
            case 0:   /* m = 1 + t^2, d = 1 / cosh^2 */
              mpfr_tanh (t, x, MPFR_RNDN);
              mpfr_sqr (m, t, MPFR_RNDN);
              mpfr_add_ui (m, m, 1, MPFR_RNDN);
              mpfr_cosh (d, x, MPFR_RNDN);
              mpfr_sqr (d, d, MPFR_RNDN);
              mpfr_ui_div (d, 1, d, MPFR_RNDN);
              break;
            case 1:   /* m = s (1 + s), d = e^-x / (1 + e^-x)^2 */
              mpfr_add_ui (m, s, 1, MPFR_RNDN);
              mpfr_mul (m, m, s, MPFR_RNDN);
              mpfr_neg (t, x, MPFR_RNDN);
              mpfr_exp (t, t, MPFR_RNDN);
              mpfr_add_ui (d, t, 1, MPFR_RNDN);
              mpfr_sqr (d, d, MPFR_RNDN);
              mpfr_div (d, t, d, MPFR_RNDN);
              break;
            case 2:   /* m = s (1 + |x| (1 + s)); d = s + x s (1 - s) */
              mpfr_add_ui (m, s, 1, MPFR_RNDN);
              mpfr_mul_d (m, m, ax, MPFR_RNDN);
              mpfr_add_ui (m, m, 1, MPFR_RNDN);
              mpfr_mul (m, m, s, MPFR_RNDN);
              mpfr_ui_sub (d, 1, s, MPFR_RNDN);
              mpfr_mul (d, d, s, MPFR_RNDN);
              mpfr_mul (d, d, x, MPFR_RNDN);
              mpfr_add (d, d, s, MPFR_RNDN);
              break;
            case 3:   /* t = tanh(c (x + a x^3)); q = c (1 + 3a x^2) */
              mpfr_pow_ui (t, x, 3, MPFR_RNDN);
              mpfr_mul (t, t, a, MPFR_RNDN);
              mpfr_add (t, t, x, MPFR_RNDN);
              mpfr_mul (t, t, c, MPFR_RNDN);
              mpfr_tanh (t, t, MPFR_RNDN);
              mpfr_sqr (q, x, MPFR_RNDN);
              mpfr_mul (q, q, a, MPFR_RNDN);
              mpfr_mul_ui (q, q, 3, MPFR_RNDN);
              mpfr_add_ui (q, q, 1, MPFR_RNDN);
              mpfr_mul (q, q, c, MPFR_RNDN);
              /* m = (1 + |t|) / 2 + |x| (1 + t^2) q / 2 */
              mpfr_sqr (m, t, MPFR_RNDN);
              mpfr_add_ui (m, m, 1, MPFR_RNDN);
              mpfr_mul (m, m, q, MPFR_RNDN);
              mpfr_mul_d (m, m, ax, MPFR_RNDN);
              mpfr_abs (d, t, MPFR_RNDN);
              mpfr_add_ui (d, d, 1, MPFR_RNDN);
              mpfr_add (m, m, d, MPFR_RNDN);
              mpfr_div_2ui (m, m, 1, MPFR_RNDN);
              /* d = (1 + t) / 2 + x (1 - t^2) q / 2 */
              mpfr_sqr (d, t, MPFR_RNDN);
              mpfr_ui_sub (d, 1, d, MPFR_RNDN);
              mpfr_mul (d, d, q, MPFR_RNDN);
              mpfr_mul (d, d, x, MPFR_RNDN);
              mpfr_add (d, d, t, MPFR_RNDN);
              mpfr_add_ui (d, d, 1, MPFR_RNDN);
              mpfr_div_2ui (d, d, 1, MPFR_RNDN);
              break;
            default:  /* Phi = erfc(-x / sqrt 2) / 2, phi = e^(-x^2/2) /
                         sqrt(2 pi); m = Phi + |x| phi, d = Phi + x phi */
              mpfr_sqrt_ui (t, 2, MPFR_RNDN);
              mpfr_div (t, x, t, MPFR_RNDN);
              mpfr_neg (t, t, MPFR_RNDN);
              mpfr_erfc (t, t, MPFR_RNDN);
              mpfr_div_2ui (t, t, 1, MPFR_RNDN);
              mpfr_sqr (q, x, MPFR_RNDN);
              mpfr_div_2ui (q, q, 1, MPFR_RNDN);
              mpfr_neg (q, q, MPFR_RNDN);
              mpfr_exp (q, q, MPFR_RNDN);
              mpfr_const_pi (m, MPFR_RNDN);
              mpfr_mul_2ui (m, m, 1, MPFR_RNDN);
              mpfr_sqrt (m, m, MPFR_RNDN);
              mpfr_div (q, q, m, MPFR_RNDN);
              mpfr_mul (d, q, x, MPFR_RNDN);
              mpfr_add (d, d, t, MPFR_RNDN);
              mpfr_mul_d (m, q, ax, MPFR_RNDN);
              mpfr_add (m, m, t, MPFR_RNDN);
              break;
            }
          double want = mpfr_get_d (m, MPFR_RNDN);
          double deriv = fabs (mpfr_get_d (d, MPFR_RNDN));
          ck_assert_msg (fabs (got - want) <= 0x1p-23 * want,
                         "helper %d at x = %g: %.9g, the formula %.9g", f,
                         ax * (xf < 0 ? -1 : 1), (double) got, want);
          ck_assert_msg (got >= deriv * (1 - 0x1p-23),
                         "helper %d at x = %g: %.9g below |f'| = %.9g", f,
                         (double) xf, (double) got, deriv);
          /* 1 - t^2 cancels at either end, 1 - s at the upper one */
          if ((f == 0 && ax >= 9) || (f == 1 && xf >= 9))
            ck_assert_msg (deriv < 1e-3 && got >= 0.5, "helper %d at x = "
                           "%g: %g (|f'| %g)", f, (double) xf,
                           (double) got, deriv);
        }
    }
  mpfr_clears (x, t, s, d, m, a, c, q, (mpfr_ptr) 0);
}
END_TEST

/* gc_mag_gemm: |op(A)| |op(B)| for every storage, against a sum in
   double (non-negative terms: relative error <= K 2^-53, then one f32
   rounding, 2^-24: 2^-23 taken), and at least |op(A) op(B)|.  */
START_TEST (test_mag_gemm)
{
  rng_state = gct_seed () ^ 0x3c6ef372u;
  enum { M = 4, K = 6, NN = 5 };
  float a[M * K], at[K * M], b[K * NN], bt[NN * K], c[M * NN];
  for (size_t i = 0; i < M; i++)
    for (size_t l = 0; l < K; l++)
      at[l * M + i] = a[i * K + l] = (float) uniform (3);
  for (size_t l = 0; l < K; l++)
    for (size_t j = 0; j < NN; j++)
      bt[j * K + l] = b[l * NN + j] = (float) uniform (3);
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++)
      {
        gc_mag_gemm (c, ta, tb, M, NN, K, ta ? at : a, ta ? M : K,
                     tb ? bt : b, tb ? K : NN);
        for (size_t i = 0; i < M; i++)
          for (size_t j = 0; j < NN; j++)
            {
              double s = 0, p = 0;
              for (size_t l = 0; l < K; l++)
                {
                  s += fabs ((double) a[i * K + l]) * fabs ((double) b[l * NN + j]);
                  p += (double) a[i * K + l] * (double) b[l * NN + j];
                }
              ck_assert_msg (fabs (c[i * NN + j] - s) <= 0x1p-23 * s,
                             "(%zu, %zu) storage %d%d: %g vs %g", i, j, ta,
                             tb, (double) c[i * NN + j], s);
              ck_assert (c[i * NN + j] >= fabs (p) * (1 - 0x1p-23));
            }
      }
}
END_TEST

static Suite *
mpkit_suite (void)
{
  Suite *s = suite_create ("mpkit");
  TCase *tc = tcase_create ("kit");
  tcase_add_test (tc, test_arrays);
  tcase_add_test (tc, test_closed_forms);
  tcase_add_loop_test (tc, test_against_mpfr, 0, 8);
  tcase_add_test (tc, test_gemm);
  tcase_add_test (tc, test_new_ops_known);
  tcase_add_test (tc, test_new_ops_random);
  tcase_add_test (tc, test_magnitude_helpers);
  tcase_add_test (tc, test_mag_gemm);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (mpkit_suite ());
}
