/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* delta.h -- what the gated-delta models (gdn.c, kda.c) share: the BLAS
   and activation helpers of their f32 paths, and one step of the delta rule
   in MPFR (§2.2, §2.3 of models-kda-gdn.md) for their references.  */

#ifndef GCM_DELTA_H
#define GCM_DELTA_H

#include "models.h"

#include <cblas.h>
#include <stdbool.h>

/* The L2 norm's eps, inside the square root (FLA's), shared by the f32
   ops and their references.  */
#define GCM_L2_EPS 1e-6f

/* C = alpha op(A) op(B) + beta C, row-major, through OpenBLAS.  */
void gcm_mm (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, size_t M, size_t N,
             size_t K, float alpha, const float *a, size_t lda,
             const float *b, size_t ldb, float beta, float *c, size_t ldc);
float gcm_sigmoidf (float x);
/* The same two in f64, for the twins of the backwards (real.h: r_mm,
   r_sigmoid).  */
void gcm_mm_d (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, size_t M, size_t N,
               size_t K, double alpha, const double *a, size_t lda,
               const double *b, size_t ldb, double beta, double *c,
               size_t ldc);
double gcm_sigmoid (double x);

/* Name an extra tensor of an instance (cotangents) for --dump.  */
void gcm_extra (gcm_instance *inst, const char *name, const float *data,
                size_t ndim, const size_t *shape);

/* The MPFR state of one sequence and the scratch of its steps.  */
typedef struct gcm_delta_mp
{
  size_t K, V, input_size;
  mpfr_t *S;                 /* K*V: the state, S[i*V + j] */
  mpfr_t *e;                 /* V */
  mpfr_t *in;                /* input_size: one step's prepared inputs */
  mpfr_t scale, s, a, t1, rq, rk, eps;
} gcm_delta_mp;

/* At precision P, with read scale K^-1/2 and the L2 norm's eps = 1e-6 (as
   the f32 op's, exactly); NULL when memory runs out.  */
gcm_delta_mp *gcm_delta_mp_new (size_t K, size_t V, size_t input_size,
                                mpfr_prec_t p);
void gcm_delta_mp_free (gcm_delta_mp *w);
/* The same two as gcm_mpseq_ops callbacks (work_free, state).  */
void gcm_delta_mp_work_free (const void *ctx, void *work);
mpfr_t *gcm_delta_mp_state (void *work);

/* qn, kn = q, k over sqrt(|x|^2 + eps) (with NORM; copies otherwise).  */
void gcm_delta_mp_normalize (gcm_delta_mp *w, mpfr_srcptr q, mpfr_srcptr k,
                             bool norm, mpfr_t *qn, mpfr_t *kn);
/* out = 1 / (1 + exp(-x)).  */
void gcm_delta_mp_sigmoid (mpfr_ptr out, mpfr_srcptr x);

/* One step: S <- diag(alpha) S (alpha: K numbers, or one for all rows),
   e = beta (v - S^T kn), S <- S + kn e^T; with O, o = scale S^T qn (V
   numbers); with ACC, acc += scale qn . (S dO).  */
void gcm_delta_mp_step (gcm_delta_mp *w, const mpfr_t *alpha, bool per_row,
                        const mpfr_t *kn, const mpfr_t *qn, const mpfr_t *v,
                        mpfr_srcptr beta, const float *dO, mpfr_ptr o,
                        mpfr_ptr acc);
/* acc += <S, dST>  */
void gcm_delta_mp_final (gcm_delta_mp *w, const float *dST, mpfr_ptr acc);

/* Whether any of x[off .. off+count) differs from x0's.  */
bool gcm_mp_differs (mpfr_srcptr x, const float *x0, size_t off,
                     size_t count);

#endif
