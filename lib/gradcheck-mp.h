/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gradcheck-mp.h -- the reference kit: the operations every model's MPFR
   reference forward needs, on arrays of MPFR numbers (manual: "The
   reference kit").

   A header of its own, beside gradcheck.h: only a reference forward needs
   it, and gradcheck.h stays the check's interface.

   Conventions (MPFR's): outputs first, inputs const.  An array is N
   contiguous MPFR numbers (a + i is element i), as the check hands a
   reference forward its parameters.  Every result is computed at the
   precision of its output, the working precision: each intermediate is
   held at that precision and rounded to nearest, so a forward written on
   the kit is as precise as one written on MPFR by hand with every
   temporary at mpfr_get_prec (loss).  Inputs may be at any precision.
   Unless a function says otherwise its output must not overlap its
   inputs.  Temporaries come from mpfr_init2, which, like all of MPFR,
   aborts when memory runs out; only gc_mp_array_new reports it.  */

#ifndef GRADCHECK_MP_H
#define GRADCHECK_MP_H

#include <stddef.h>
#include <mpfr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* N MPFR numbers at precision PREC, each set to +0, in one allocation:
   free with gc_mp_array_free (a, n).  NULL when N is 0, PREC is outside
   [MPFR_PREC_MIN, MPFR_PREC_MAX] or memory runs out.  */
mpfr_ptr gc_mp_array_new (size_t n, mpfr_prec_t prec);

/* Clear the N numbers of A and free it.  A may be NULL.  */
void gc_mp_array_free (mpfr_ptr a, size_t n);

/* a_i = x_i for N floats (exact when a_i has 24 bits or more).  */
void gc_mp_set_f32 (mpfr_ptr a, const float *x, size_t n);

/* r = sum_i x[i * incx] * y[i * incy]: one fused multiply-add (one
   rounding) per term.  R may be an element of neither input.  */
void gc_mp_dot (mpfr_ptr r, mpfr_srcptr x, size_t incx, mpfr_srcptr y,
                size_t incy, size_t n);

/* r = sum_i x_i * w_i with f32 weights W (cotangents, fixed data): each
   w_i enters exactly.  */
void gc_mp_dot_f32 (mpfr_ptr r, mpfr_srcptr x, const float *w, size_t n);

/* y_i = y_i + alpha * x_i, one rounding per element.  */
void gc_mp_axpy (mpfr_ptr y, mpfr_srcptr alpha, mpfr_srcptr x, size_t n);

/* y = op(A) x with A an M x N row-major matrix of leading dimension LDA
   (element (i, j) at a + i * lda + j); op(A) = A (TRANS 0, y has M
   elements, x N) or A^T (TRANS non-zero, y has N, x M).  */
void gc_mp_gemv (mpfr_ptr y, int trans, size_t m, size_t n, mpfr_srcptr a,
                 size_t lda, mpfr_srcptr x);

/* C = op(A) op(B), C M x N row-major and contiguous, op(A) M x K, op(B)
   K x N; A stored M x K (TRANSA 0) or K x M (non-zero) with leading
   dimension LDA, B stored K x N or N x K with LDB.  Each element is one
   gc_mp_dot.  */
void gc_mp_gemm (mpfr_ptr c, int transa, int transb, size_t m, size_t n,
                 size_t k, mpfr_srcptr a, size_t lda, mpfr_srcptr b,
                 size_t ldb);

/* r = sum_i x_i, accumulated at the precision of R.  R may be one of the
   x_i.  */
void gc_mp_sum (mpfr_ptr r, mpfr_srcptr x, size_t n);

/* Elementwise y_i = f(x_i) for i < N; Y may be X (in place).
   sigmoid(x) = 1 / (1 + exp(-x)); softplus(x) = log(1 + exp(x)), computed
   as max(x, 0) + log1p(exp(-|x|)).  */
void gc_mp_exp (mpfr_ptr y, mpfr_srcptr x, size_t n);
void gc_mp_log (mpfr_ptr y, mpfr_srcptr x, size_t n);
void gc_mp_log1p (mpfr_ptr y, mpfr_srcptr x, size_t n);
void gc_mp_tanh (mpfr_ptr y, mpfr_srcptr x, size_t n);
void gc_mp_sigmoid (mpfr_ptr y, mpfr_srcptr x, size_t n);
void gc_mp_softplus (mpfr_ptr y, mpfr_srcptr x, size_t n);

/* r = log sum_i exp(x_i), shifted by max x_i.  R may be one of the x_i.
   N >= 1.  */
void gc_mp_logsumexp (mpfr_ptr r, mpfr_srcptr x, size_t n);

/* y_i = exp(x_i - max x) / sum_j exp(x_j - max x); Y may be X.  N >= 1.  */
void gc_mp_softmax (mpfr_ptr y, mpfr_srcptr x, size_t n);

/* r = sqrt(sum_i x_i^2), the L2 norm.  R may be one of the x_i.  */
void gc_mp_norm2 (mpfr_ptr r, mpfr_srcptr x, size_t n);

/* y_i = x_i / sqrt(sum_j x_j^2 + EPS): L2 normalisation (EPS >= 0 exact as
   a double, inside the square root).  Y may be X.  */
void gc_mp_l2_normalize (mpfr_ptr y, mpfr_srcptr x, size_t n, double eps);

/* y_i = x_i / sqrt(mean_j x_j^2 + EPS) * w_i: RMS normalisation, W an
   array of N gains or NULL for none.  Y may be X (not W).  N >= 1.  */
void gc_mp_rmsnorm (mpfr_ptr y, mpfr_srcptr x, size_t n, double eps,
                    mpfr_srcptr w);

/* y_i = (x_i - mean) / sqrt(var + EPS) * w_i + b_i: layer normalisation
   over N elements, mean and var = mean_j (x_j - mean)^2 (the biased
   variance, two passes), EPS >= 0 exact as a double inside the square
   root; W gains and B biases are arrays of N, or NULL for none.  Y may be
   X (not W or B).  N >= 1.  */
void gc_mp_layernorm (mpfr_ptr y, mpfr_srcptr x, size_t n, double eps,
                      mpfr_srcptr w, mpfr_srcptr b);

/* Elementwise GELU for i < N; Y may be X.  The tanh form:
   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), sqrt(2/pi) and
   0.044715 at the working precision.  The erf form (exact GELU):
   0.5 x (1 + erf(x / sqrt 2)), computed as 0.5 x erfc(-x / sqrt 2).  */
void gc_mp_gelu_tanh (mpfr_ptr y, mpfr_srcptr x, size_t n);
void gc_mp_gelu_erf (mpfr_ptr y, mpfr_srcptr x, size_t n);

/* Elementwise SiLU (swish) y_i = x_i sigmoid(x_i) = x_i / (1 + exp(-x_i))
   for i < N; Y may be X.  */
void gc_mp_silu (mpfr_ptr y, mpfr_srcptr x, size_t n);

/* Elementwise product y_i = a_i b_i, one rounding each; Y may be A or B.  */
void gc_mp_mul (mpfr_ptr y, mpfr_srcptr a, mpfr_srcptr b, size_t n);

/* Broadcast bias add: y[i * COLS + j] = x[i * COLS + j] + bias[j] for a
   ROWS x COLS row-major X (the bias of a linear layer added to each row).
   Y may be X (not BIAS).  */
void gc_mp_add_bias (mpfr_ptr y, mpfr_srcptr x, size_t rows, size_t cols,
                     mpfr_srcptr bias);

#ifdef __cplusplus
}
#endif

#endif /* GRADCHECK_MP_H */
