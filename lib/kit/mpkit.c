/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* mpkit.c -- the reference kit (gradcheck-mp.h; manual: "The reference
   kit"): arrays of MPFR numbers and the operations of a reference forward,
   each intermediate at the precision of the output.  */

#include "gradcheck-mp.h"

#include <stdint.h>
#include <stdlib.h>

mpfr_ptr
gc_mp_array_new (size_t n, mpfr_prec_t prec)
{
  if (n == 0 || prec < MPFR_PREC_MIN || prec > MPFR_PREC_MAX
      || n > SIZE_MAX / sizeof (__mpfr_struct))
    return NULL;
  mpfr_ptr a = malloc (n * sizeof *a);
  if (!a)
    return NULL;
  for (size_t i = 0; i < n; i++)
    {
      mpfr_init2 (a + i, prec);
      mpfr_set_zero (a + i, 1);
    }
  return a;
}

void
gc_mp_array_free (mpfr_ptr a, size_t n)
{
  if (!a)
    return;
  for (size_t i = 0; i < n; i++)
    mpfr_clear (a + i);
  free (a);
}

void
gc_mp_set_f32 (mpfr_ptr a, const float *x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mpfr_set_flt (a + i, x[i], MPFR_RNDN);
}

/* The largest precision among the N outputs Y: the working precision of
   the temporaries an operation shares between its outputs.  */
static mpfr_prec_t
max_prec (mpfr_srcptr y, size_t n)
{
  mpfr_prec_t p = MPFR_PREC_MIN;
  for (size_t i = 0; i < n; i++)
    if (mpfr_get_prec (y + i) > p)
      p = mpfr_get_prec (y + i);
  return p;
}

void
gc_mp_dot (mpfr_ptr r, mpfr_srcptr x, size_t incx, mpfr_srcptr y,
           size_t incy, size_t n)
{
  mpfr_t s;
  mpfr_init2 (s, mpfr_get_prec (r));
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < n; i++)
    mpfr_fma (s, x + i * incx, y + i * incy, s, MPFR_RNDN);
  mpfr_set (r, s, MPFR_RNDN);
  mpfr_clear (s);
}

void
gc_mp_dot_f32 (mpfr_ptr r, mpfr_srcptr x, const float *w, size_t n)
{
  mpfr_t s, wi;
  mpfr_init2 (s, mpfr_get_prec (r));
  mpfr_init2 (wi, 24);          /* a float, exactly */
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < n; i++)
    {
      mpfr_set_flt (wi, w[i], MPFR_RNDN);
      mpfr_fma (s, x + i, wi, s, MPFR_RNDN);
    }
  mpfr_set (r, s, MPFR_RNDN);
  mpfr_clear (s);
  mpfr_clear (wi);
}

void
gc_mp_axpy (mpfr_ptr y, mpfr_srcptr alpha, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mpfr_fma (y + i, alpha, x + i, y + i, MPFR_RNDN);
}

void
gc_mp_gemv (mpfr_ptr y, int trans, size_t m, size_t n, mpfr_srcptr a,
            size_t lda, mpfr_srcptr x)
{
  if (!trans)
    for (size_t i = 0; i < m; i++)
      gc_mp_dot (y + i, a + i * lda, 1, x, 1, n);
  else
    for (size_t j = 0; j < n; j++)
      gc_mp_dot (y + j, a + j, lda, x, 1, m);
}

void
gc_mp_gemm (mpfr_ptr c, int transa, int transb, size_t m, size_t n,
            size_t k, mpfr_srcptr a, size_t lda, mpfr_srcptr b, size_t ldb)
{
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++)
      gc_mp_dot (c + i * n + j, transa ? a + i : a + i * lda,
                 transa ? lda : 1, transb ? b + j * ldb : b + j,
                 transb ? 1 : ldb, k);
}

void
gc_mp_sum (mpfr_ptr r, mpfr_srcptr x, size_t n)
{
  mpfr_t s;
  mpfr_init2 (s, mpfr_get_prec (r));
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < n; i++)
    mpfr_add (s, s, x + i, MPFR_RNDN);
  mpfr_set (r, s, MPFR_RNDN);
  mpfr_clear (s);
}

void
gc_mp_exp (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mpfr_exp (y + i, x + i, MPFR_RNDN);
}

void
gc_mp_log (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mpfr_log (y + i, x + i, MPFR_RNDN);
}

void
gc_mp_log1p (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mpfr_log1p (y + i, x + i, MPFR_RNDN);
}

void
gc_mp_tanh (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mpfr_tanh (y + i, x + i, MPFR_RNDN);
}

void
gc_mp_sigmoid (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      mpfr_t t;
      mpfr_init2 (t, mpfr_get_prec (y + i));
      mpfr_neg (t, x + i, MPFR_RNDN);
      mpfr_exp (t, t, MPFR_RNDN);
      mpfr_add_ui (t, t, 1, MPFR_RNDN);
      mpfr_ui_div (y + i, 1, t, MPFR_RNDN);
      mpfr_clear (t);
    }
}

void
gc_mp_softplus (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      /* max(x, 0) + log1p(exp(-|x|)): no exp of a large positive x, and no
         log1p of a value that has lost x's digits.  */
      mpfr_t t;
      mpfr_init2 (t, mpfr_get_prec (y + i));
      mpfr_abs (t, x + i, MPFR_RNDN);
      mpfr_neg (t, t, MPFR_RNDN);
      mpfr_exp (t, t, MPFR_RNDN);
      mpfr_log1p (t, t, MPFR_RNDN);
      if (mpfr_sgn (x + i) > 0)
        mpfr_add (y + i, t, x + i, MPFR_RNDN);
      else
        mpfr_set (y + i, t, MPFR_RNDN);
      mpfr_clear (t);
    }
}

/* The index of the largest x_i (N >= 1).  */
static size_t
argmax (mpfr_srcptr x, size_t n)
{
  size_t k = 0;
  for (size_t i = 1; i < n; i++)
    if (mpfr_greater_p (x + i, x + k))
      k = i;
  return k;
}

void
gc_mp_logsumexp (mpfr_ptr r, mpfr_srcptr x, size_t n)
{
  mpfr_prec_t p = mpfr_get_prec (r);
  mpfr_t m, s, t;
  mpfr_init2 (m, p);
  mpfr_init2 (s, p);
  mpfr_init2 (t, p);
  mpfr_set (m, x + argmax (x, n), MPFR_RNDN);
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < n; i++)
    {
      mpfr_sub (t, x + i, m, MPFR_RNDN);
      mpfr_exp (t, t, MPFR_RNDN);
      mpfr_add (s, s, t, MPFR_RNDN);
    }
  mpfr_log (s, s, MPFR_RNDN);
  mpfr_add (r, s, m, MPFR_RNDN);
  mpfr_clear (m);
  mpfr_clear (s);
  mpfr_clear (t);
}

void
gc_mp_softmax (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  mpfr_prec_t p = max_prec (y, n);
  mpfr_t m, s;
  mpfr_init2 (m, p);
  mpfr_init2 (s, p);
  mpfr_set (m, x + argmax (x, n), MPFR_RNDN);
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < n; i++)
    {
      mpfr_sub (y + i, x + i, m, MPFR_RNDN);
      mpfr_exp (y + i, y + i, MPFR_RNDN);
      mpfr_add (s, s, y + i, MPFR_RNDN);
    }
  for (size_t i = 0; i < n; i++)
    mpfr_div (y + i, y + i, s, MPFR_RNDN);
  mpfr_clear (m);
  mpfr_clear (s);
}

/* s = sum_i x_i^2 at the precision of s.  */
static void
sum_squares (mpfr_ptr s, mpfr_srcptr x, size_t n)
{
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < n; i++)
    mpfr_fma (s, x + i, x + i, s, MPFR_RNDN);
}

void
gc_mp_norm2 (mpfr_ptr r, mpfr_srcptr x, size_t n)
{
  mpfr_t s;
  mpfr_init2 (s, mpfr_get_prec (r));
  sum_squares (s, x, n);
  mpfr_sqrt (r, s, MPFR_RNDN);
  mpfr_clear (s);
}

void
gc_mp_l2_normalize (mpfr_ptr y, mpfr_srcptr x, size_t n, double eps)
{
  mpfr_t s;
  mpfr_init2 (s, max_prec (y, n));
  sum_squares (s, x, n);
  mpfr_add_d (s, s, eps, MPFR_RNDN);
  mpfr_rec_sqrt (s, s, MPFR_RNDN);
  for (size_t i = 0; i < n; i++)
    mpfr_mul (y + i, x + i, s, MPFR_RNDN);
  mpfr_clear (s);
}

void
gc_mp_rmsnorm (mpfr_ptr y, mpfr_srcptr x, size_t n, double eps,
               mpfr_srcptr w)
{
  mpfr_t s;
  mpfr_init2 (s, max_prec (y, n));
  sum_squares (s, x, n);
  mpfr_div_ui (s, s, (unsigned long) n, MPFR_RNDN);
  mpfr_add_d (s, s, eps, MPFR_RNDN);
  mpfr_rec_sqrt (s, s, MPFR_RNDN);
  for (size_t i = 0; i < n; i++)
    {
      mpfr_mul (y + i, x + i, s, MPFR_RNDN);
      if (w)
        mpfr_mul (y + i, y + i, w + i, MPFR_RNDN);
    }
  mpfr_clear (s);
}

void
gc_mp_layernorm (mpfr_ptr y, mpfr_srcptr x, size_t n, double eps,
                 mpfr_srcptr w, mpfr_srcptr b)
{
  mpfr_prec_t p = max_prec (y, n);
  mpfr_t mean, s, t;
  mpfr_init2 (mean, p);
  mpfr_init2 (s, p);
  mpfr_init2 (t, p);
  /* The mean first, then the centred sum of squares: the two-pass
     variance, which loses nothing to cancellation when the mean is large
     against the spread.  */
  mpfr_set_zero (mean, 1);
  for (size_t i = 0; i < n; i++)
    mpfr_add (mean, mean, x + i, MPFR_RNDN);
  mpfr_div_ui (mean, mean, (unsigned long) n, MPFR_RNDN);
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < n; i++)
    {
      mpfr_sub (t, x + i, mean, MPFR_RNDN);
      mpfr_fma (s, t, t, s, MPFR_RNDN);
    }
  mpfr_div_ui (s, s, (unsigned long) n, MPFR_RNDN);
  mpfr_add_d (s, s, eps, MPFR_RNDN);
  mpfr_rec_sqrt (s, s, MPFR_RNDN);
  /* X is read for the last time at element i: Y may be X.  */
  for (size_t i = 0; i < n; i++)
    {
      mpfr_sub (t, x + i, mean, MPFR_RNDN);
      mpfr_mul (t, t, s, MPFR_RNDN);
      if (w)
        mpfr_mul (t, t, w + i, MPFR_RNDN);
      if (b)
        mpfr_add (y + i, t, b + i, MPFR_RNDN);
      else
        mpfr_set (y + i, t, MPFR_RNDN);
    }
  mpfr_clear (mean);
  mpfr_clear (s);
  mpfr_clear (t);
}

void
gc_mp_gelu_tanh (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      mpfr_prec_t p = mpfr_get_prec (y + i);
      mpfr_t c, t, u;
      mpfr_init2 (c, p);
      mpfr_init2 (t, p);
      mpfr_init2 (u, p);
      /* sqrt(2 / pi) at the working precision; 0.044715 as the decimal
         constant of the definition, not its double (the two differ by
         ~1e-18, far below an f32 forward's error).  */
      mpfr_const_pi (c, MPFR_RNDN);
      mpfr_ui_div (c, 2, c, MPFR_RNDN);
      mpfr_sqrt (c, c, MPFR_RNDN);
      mpfr_set_str (u, "0.044715", 10, MPFR_RNDN);
      mpfr_sqr (t, x + i, MPFR_RNDN);
      mpfr_mul (t, t, x + i, MPFR_RNDN);
      mpfr_fma (t, u, t, x + i, MPFR_RNDN);      /* x + 0.044715 x^3 */
      mpfr_mul (t, t, c, MPFR_RNDN);
      mpfr_tanh (t, t, MPFR_RNDN);
      mpfr_add_ui (t, t, 1, MPFR_RNDN);
      mpfr_mul (t, t, x + i, MPFR_RNDN);
      mpfr_div_2ui (y + i, t, 1, MPFR_RNDN);
      mpfr_clear (c);
      mpfr_clear (t);
      mpfr_clear (u);
    }
}

void
gc_mp_gelu_erf (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      mpfr_t t;
      mpfr_init2 (t, mpfr_get_prec (y + i));
      /* 0.5 x erfc(-x / sqrt 2): no cancellation in 1 + erf for x << 0,
         where GELU is a tiny negative number.  */
      mpfr_sqrt_ui (t, 2, MPFR_RNDN);
      mpfr_div (t, x + i, t, MPFR_RNDN);
      mpfr_neg (t, t, MPFR_RNDN);
      mpfr_erfc (t, t, MPFR_RNDN);
      mpfr_mul (t, t, x + i, MPFR_RNDN);
      mpfr_div_2ui (y + i, t, 1, MPFR_RNDN);
      mpfr_clear (t);
    }
}

void
gc_mp_silu (mpfr_ptr y, mpfr_srcptr x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      mpfr_t t;
      mpfr_init2 (t, mpfr_get_prec (y + i));
      mpfr_neg (t, x + i, MPFR_RNDN);
      mpfr_exp (t, t, MPFR_RNDN);
      mpfr_add_ui (t, t, 1, MPFR_RNDN);
      mpfr_div (y + i, x + i, t, MPFR_RNDN);
      mpfr_clear (t);
    }
}

void
gc_mp_mul (mpfr_ptr y, mpfr_srcptr a, mpfr_srcptr b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mpfr_mul (y + i, a + i, b + i, MPFR_RNDN);
}

void
gc_mp_add_bias (mpfr_ptr y, mpfr_srcptr x, size_t rows, size_t cols,
                mpfr_srcptr bias)
{
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++)
      mpfr_add (y + i * cols + j, x + i * cols + j, bias + j, MPFR_RNDN);
}
