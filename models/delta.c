/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* delta.c -- see delta.h.  */

#include "delta.h"

#include <math.h>
#include <stdlib.h>

void
gcm_mm (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, size_t M, size_t N, size_t K,
        float alpha, const float *a, size_t lda, const float *b, size_t ldb,
        float beta, float *c, size_t ldc)
{
  cblas_sgemm (CblasRowMajor, ta, tb, (int) M, (int) N, (int) K, alpha, a,
               (int) lda, b, (int) ldb, beta, c, (int) ldc);
}

float
gcm_sigmoidf (float x)
{
  return 1.0f / (1.0f + expf (-x));
}

void
gcm_mm_d (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, size_t M, size_t N,
          size_t K, double alpha, const double *a, size_t lda,
          const double *b, size_t ldb, double beta, double *c, size_t ldc)
{
  cblas_dgemm (CblasRowMajor, ta, tb, (int) M, (int) N, (int) K, alpha, a,
               (int) lda, b, (int) ldb, beta, c, (int) ldc);
}

double
gcm_sigmoid (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

void
gcm_extra (gcm_instance *inst, const char *name, const float *data,
           size_t ndim, const size_t *shape)
{
  if (inst->n_extra >= sizeof inst->extra / sizeof inst->extra[0])
    return;
  size_t k = inst->n_extra++;
  inst->extra[k].name = name;
  inst->extra[k].data = data;
  inst->extra[k].ndim = ndim;
  for (size_t a = 0; a < ndim && a < GC_MAX_DIMS; a++)
    inst->extra[k].shape[a] = shape[a];
}

gcm_delta_mp *
gcm_delta_mp_new (size_t K, size_t V, size_t input_size, mpfr_prec_t p)
{
  size_t nv = K * V + V + input_size;
  gcm_delta_mp *w = malloc (sizeof *w);
  mpfr_t *z = malloc ((nv ? nv : 1) * sizeof *z);
  if (!w || !z)
    {
      free (w);
      free (z);
      return NULL;
    }
  for (size_t i = 0; i < nv; i++)
    mpfr_init2 (z[i], p);
  w->K = K;
  w->V = V;
  w->input_size = input_size;
  w->S = z;
  w->e = z + K * V;
  w->in = w->e + V;
  mpfr_inits2 (p, w->scale, w->s, w->a, w->t1, w->rq, w->rk, w->eps,
               (mpfr_ptr) 0);
  mpfr_set_ui (w->scale, (unsigned long) K, MPFR_RNDN);
  mpfr_rec_sqrt (w->scale, w->scale, MPFR_RNDN);
  mpfr_set_flt (w->eps, GCM_L2_EPS, MPFR_RNDN);
  return w;
}

void
gcm_delta_mp_free (gcm_delta_mp *w)
{
  if (!w)
    return;
  size_t nv = w->K * w->V + w->V + w->input_size;
  for (size_t i = 0; i < nv; i++)
    mpfr_clear (w->S[i]);
  free (w->S);
  mpfr_clears (w->scale, w->s, w->a, w->t1, w->rq, w->rk, w->eps,
               (mpfr_ptr) 0);
  free (w);
}

void
gcm_delta_mp_work_free (const void *ctx, void *work)
{
  (void) ctx;
  gcm_delta_mp_free (work);
}

mpfr_t *
gcm_delta_mp_state (void *work)
{
  return ((gcm_delta_mp *) work)->S;
}

void
gcm_delta_mp_normalize (gcm_delta_mp *w, mpfr_srcptr q, mpfr_srcptr k,
                        bool norm, mpfr_t *qn, mpfr_t *kn)
{
  size_t K = w->K;
  if (!norm)
    {
      for (size_t i = 0; i < K; i++)
        {
          mpfr_set (qn[i], q + i, MPFR_RNDN);
          mpfr_set (kn[i], k + i, MPFR_RNDN);
        }
      return;
    }
  mpfr_set (w->rq, w->eps, MPFR_RNDN);
  mpfr_set (w->rk, w->eps, MPFR_RNDN);
  for (size_t i = 0; i < K; i++)
    {
      mpfr_fma (w->rq, q + i, q + i, w->rq, MPFR_RNDN);
      mpfr_fma (w->rk, k + i, k + i, w->rk, MPFR_RNDN);
    }
  mpfr_rec_sqrt (w->rq, w->rq, MPFR_RNDN);
  mpfr_rec_sqrt (w->rk, w->rk, MPFR_RNDN);
  for (size_t i = 0; i < K; i++)
    {
      mpfr_mul (qn[i], q + i, w->rq, MPFR_RNDN);
      mpfr_mul (kn[i], k + i, w->rk, MPFR_RNDN);
    }
}

void
gcm_delta_mp_sigmoid (mpfr_ptr out, mpfr_srcptr x)
{
  mpfr_neg (out, x, MPFR_RNDN);
  mpfr_exp (out, out, MPFR_RNDN);
  mpfr_add_ui (out, out, 1, MPFR_RNDN);
  mpfr_ui_div (out, 1, out, MPFR_RNDN);
}

void
gcm_delta_mp_step (gcm_delta_mp *w, const mpfr_t *alpha, bool per_row,
                   const mpfr_t *kn, const mpfr_t *qn, const mpfr_t *v,
                   mpfr_srcptr beta, const float *dO, mpfr_ptr o,
                   mpfr_ptr acc)
{
  size_t K = w->K, V = w->V;
  mpfr_t *S = w->S, *e = w->e;
  for (size_t i = 0; i < K; i++)
    for (size_t j = 0; j < V; j++)
      mpfr_mul (S[i * V + j], S[i * V + j], alpha[per_row ? i : 0],
                MPFR_RNDN);
  for (size_t j = 0; j < V; j++)
    {
      mpfr_set_zero (w->s, 1);
      for (size_t i = 0; i < K; i++)
        mpfr_fma (w->s, kn[i], S[i * V + j], w->s, MPFR_RNDN);
      mpfr_sub (e[j], v[j], w->s, MPFR_RNDN);
      mpfr_mul (e[j], e[j], beta, MPFR_RNDN);
    }
  for (size_t i = 0; i < K; i++)
    for (size_t j = 0; j < V; j++)
      mpfr_fma (S[i * V + j], kn[i], e[j], S[i * V + j], MPFR_RNDN);
  if (o)
    for (size_t j = 0; j < V; j++)
      {
        mpfr_set_zero (w->s, 1);
        for (size_t i = 0; i < K; i++)
          mpfr_fma (w->s, qn[i], S[i * V + j], w->s, MPFR_RNDN);
        mpfr_mul (o + j, w->s, w->scale, MPFR_RNDN);
      }
  if (!acc)
    return;
  /* sum_j o_j dO_j = scale * sum_i qn_i sum_j S_ij dO_j  */
  mpfr_set_zero (w->a, 1);
  for (size_t i = 0; i < K; i++)
    {
      mpfr_set_zero (w->s, 1);
      for (size_t j = 0; j < V; j++)
        {
          mpfr_mul_d (w->t1, S[i * V + j], dO[j], MPFR_RNDN);
          mpfr_add (w->s, w->s, w->t1, MPFR_RNDN);
        }
      mpfr_fma (w->a, qn[i], w->s, w->a, MPFR_RNDN);
    }
  mpfr_fma (acc, w->scale, w->a, acc, MPFR_RNDN);
}

void
gcm_delta_mp_final (gcm_delta_mp *w, const float *dST, mpfr_ptr acc)
{
  for (size_t ij = 0; ij < w->K * w->V; ij++)
    {
      mpfr_mul_d (w->t1, w->S[ij], dST[ij], MPFR_RNDN);
      mpfr_add (acc, acc, w->t1, MPFR_RNDN);
    }
}

bool
gcm_mp_differs (mpfr_srcptr x, const float *x0, size_t off, size_t count)
{
  for (size_t i = off; i < off + count; i++)
    if (mpfr_cmp_d (x + i, x0[i]) != 0)
      return true;
  return false;
}
