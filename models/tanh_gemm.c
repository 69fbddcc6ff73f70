/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* tanh_gemm.c -- the built-in example: L = sum_ij dO_ij tanh((W X)_ij),
   parameters W [M,K] and X [K,N], fixed cotangent dO [M,N].  Small, smooth,
   BLAS-heavy (sgemm forward, two sgemm in the backward): the example the
   manual's tutorial and the foundation tests use.  */

#include "models.h"
#include "gradcheck-mp.h"

#include <cblas.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { KEY_M, KEY_K, KEY_N };

static const gcm_key keys[] = {
  { "M", 8, 1, 4096, "rows of W" },
  { "K", 16, 1, 4096, "inner dimension" },
  { "N", 8, 1, 4096, "columns of X" },
};

enum { MUT_NONE, MUT_NO_TANH_DERIV, MUT_DW_TWICE, MUT_DX_ZERO, MUT_DW_SIGN,
       MUT_DW_SCALE_1E6, MUT_DX_BF16_SUM,
       /* of the tangent and the HVP (tanh_gemm_tangent.h) */
       MUT_JVP_NO_DX, MUT_HVP_NO_SECOND_ORDER, MUT_HVP_TRANSPOSED,
       MUT_HVP_SCALE_1E6 };

static const gcm_mutant mutants[] = {
  { "no-tanh-derivative", "the factor 1 - tanh^2 is left out of dZ" },
  { "dw-twice", "dW is doubled" },
  { "dx-zero", "dX is left at zero" },
  { "dw-sign", "dW is negated" },
  { "dw-scale-1e-6", "dW is scaled by 1 + 1e-6 (seen at a finer resolution"
    " than f32's: the twin's algorithm check)" },
  { "dx-bf16-sum", "dX's inner products keep their partial sums in bf16 in"
    " the f32 path only (a precision loss: PRECISION with the twin)" , 1 },
  /* tanh_gemm_tangent.h: gradcheck jvp / hvp see them, run does not */
  { "jvp-no-dx", "the tangent forgets W dX (gradcheck jvp)", 0, "jvp" },
  { "hvp-no-second-order", "the HVP leaves out dG, the derivative of"
    " 1 - tanh^2 (gradcheck hvp)", 0, "hvp" },
  { "hvp-transposed", "the HVP's G dX^T reads dX's storage as its"
    " transpose (gradcheck hvp)", 0, "hvp" },
  { "hvp-scale-1e-6", "the HVP's dG X^T is scaled by 1 + 1e-6 in both"
    " instantiations (gradcheck hvp: seen only with the HVP's twin)", 0,
    "hvp" },
};

typedef struct tg
{
  gcm_instance inst;
  size_t m, k, n;
  int mutant;
  float *dout;        /* [M,N] */
  gc_block blocks[2];
  gc_constant constants[3];
} tg;

/* The forward; with MAGNITUDE, the sum of |terms| of the final reduction
   (manual: "Reference rounding") instead of the loss.  */
static int
forward (tg *t, const float *x, float *loss, bool magnitude)
{
  size_t m = t->m, k = t->k, n = t->n;
  float *z = malloc (m * n * sizeof *z);
  if (!z)
    return -1;
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) m, (int) n,
               (int) k, 1.0f, x, (int) k, x + m * k, (int) n, 0.0f, z, (int) n);
  for (size_t i = 0; i < m * n; i++)
    z[i] = magnitude ? fabsf (tanhf (z[i]) * t->dout[i]) : tanhf (z[i]);
  if (magnitude)
    {
      double sum = 0;
      for (size_t i = 0; i < m * n; i++)
        sum += z[i];
      *loss = (float) sum;
    }
  else
    *loss = cblas_sdot ((int) (m * n), z, 1, t->dout, 1);
  free (z);
  return 0;
}

static int
loss_f32 (void *ctx, const float *x, float *loss)
{
  return forward (ctx, x, loss, false);
}

static int
loss_mag_f32 (void *ctx, const float *x, float *mag)
{
  return forward (ctx, x, mag, true);
}

/* The backward, once over the element type: backward_f32 and its f64
   twin backward_f64 (manual: "Writing a twin").  */
#define GCM_REAL 32
#include "tanh_gemm_backward.h"
#undef GCM_REAL
#define GCM_REAL 64
#include "tanh_gemm_backward.h"

static int
grad_f32 (void *ctx, const float *x, float *g)
{
  return backward_f32 (ctx, x, g, false);
}

static int
grad_f64 (void *ctx, const double *x, double *g)
{
  return backward_f64 (ctx, x, g, false);
}

/* The tangent and the HVP (manual: "Beyond the gradient").  */
#undef GCM_REAL
#define GCM_REAL 32
#include "tanh_gemm_tangent.h"
#undef GCM_REAL
#define GCM_REAL 64
#include "tanh_gemm_tangent.h"

static int
jvp_cb (void *ctx, const float *x, const float *v, float *out)
{
  return jvp_f32 (ctx, x, v, out);
}

static int
hvp_cb (void *ctx, const float *x, const float *v, float *hv)
{
  return hvp_f32 (ctx, x, v, hv);
}

static int
hvp64_cb (void *ctx, const double *x, const double *v, double *hv)
{
  return hvp_f64 (ctx, x, v, hv);
}

static int
grad_mag_f32 (void *ctx, const float *x, float *g)
{
  return backward_f32 (ctx, x, g, true);
}

static int
loss_f64 (void *ctx, const double *x, double *loss)
{
  tg *t = ctx;
  size_t m = t->m, k = t->k, n = t->n;
  double s = 0;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++)
      {
        double z = 0;
        for (size_t l = 0; l < k; l++)
          z += x[i * k + l] * x[m * k + l * n + j];
        s += t->dout[i * n + j] * tanh (z);
      }
  *loss = s;
  return 0;
}

/* On the reference kit: Z = W X, tanh, the dot with dO, each at the
   precision of LOSS.  */
static int
loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  tg *t = ctx;
  size_t m = t->m, k = t->k, n = t->n;
  mpfr_ptr z = gc_mp_array_new (m * n, mpfr_get_prec (loss));
  if (!z)
    return 1;
  gc_mp_gemm (z, 0, 0, m, n, k, x, k, x + m * k, n);
  gc_mp_tanh (z, z, m * n);
  gc_mp_dot_f32 (loss, z, t->dout, m * n);
  gc_mp_array_free (z, m * n);
  return 0;
}

static void
destroy (gcm_instance *inst)
{
  tg *t = (tg *) inst;
  free (t->dout);
  free (inst->x);
  free (t);
}

static gc_status
create (const long *v, uint64_t seed, int mutant, gcm_instance **out)
{
  tg *t = calloc (1, sizeof *t);
  if (!t)
    return GC_ENOMEM;
  t->m = (size_t) v[KEY_M];
  t->k = (size_t) v[KEY_K];
  t->n = (size_t) v[KEY_N];
  t->mutant = mutant;
  size_t m = t->m, k = t->k, n = t->n, np = m * k + k * n;
  t->inst.x = malloc (np * sizeof (float));
  t->dout = malloc (m * n * sizeof (float));
  if (!t->inst.x || !t->dout)
    {
      destroy (&t->inst);
      return GC_ENOMEM;
    }
  gcm_rng r;
  gcm_rng_seed (&r, seed, 1);
  for (size_t i = 0; i < m * k; i++)
    t->inst.x[i] = (float) (gcm_normal (&r) / sqrt ((double) k));
  gcm_rng_seed (&r, seed, 2);
  for (size_t i = 0; i < k * n; i++)
    t->inst.x[m * k + i] = (float) gcm_normal (&r);
  gcm_rng_seed (&r, seed, 3);
  for (size_t i = 0; i < m * n; i++)
    t->dout[i] = (float) gcm_normal (&r);

  t->blocks[0] = (gc_block) { "W", 0, m * k, 2, { m, k } };
  t->blocks[1] = (gc_block) { "X", m * k, k * n, 2, { k, n } };
  t->constants[0] = (gc_constant) { "M", (double) m };
  t->constants[1] = (gc_constant) { "K", (double) k };
  t->constants[2] = (gc_constant) { "N", (double) n };
  gc_model *md = &t->inst.model;
  md->abi = GC_MODEL_ABI;
  md->name = "tanh-gemm";
  md->n = np;
  md->loss_f32 = loss_f32;
  md->grad_f32 = grad_f32;
  md->grad_f64 = grad_f64;
  md->grad_magnitude_f32 = grad_mag_f32;
  md->loss_magnitude_f32 = loss_mag_f32;
  md->loss_f64 = loss_f64;
  md->loss_mpfr = loss_mpfr;
  md->ctx = t;
  /* Depths ("The accumulation factor"): the forward's longest chain is the
     K-term inner product, tanh, the product with dO and the M*N-term sum;
     the backward's is the forward's K + 1 to reach tanh, 1 - t^2 and the
     product with dO (3), then an N- or M-term inner product.  */
  md->forward_depth = k + 2 + m * n;
  md->backward_depth = k + 4 + (n > m ? n : m);
  /* The tangent: dZ = dW X + W dX, one K-term sum accumulated onto the
     other (2 K: longer than G's K + 4, tanh and 1 - T^2 after W X), the
     product G dZ, the M*N-term sum: 2 K + 2 + M N.  The HVP: dZ (2 K),
     dG's four products (4), then dG X^T + G dX^T, one N-term sum
     accumulated onto the other (2 N; dX's part 2 M), and the sum's own
     rounding: 2 K + 2 max(M, N) + 6.  */
  md->jvp_f32 = jvp_cb;
  md->hvp_f32 = hvp_cb;
  md->hvp_f64 = hvp64_cb;
  md->tangent_depth = 2 * k + 2 + m * n;
  md->hvp_depth = 2 * k + 2 * (n > m ? n : m) + 6;
  md->n_blocks = 2;
  md->blocks = t->blocks;
  md->n_constants = 3;
  md->constants = t->constants;
  t->inst.destroy = destroy;
  t->inst.n_extra = 1;
  t->inst.extra[0].name = "dO";
  t->inst.extra[0].data = t->dout;
  t->inst.extra[0].ndim = 2;
  t->inst.extra[0].shape[0] = m;
  t->inst.extra[0].shape[1] = n;
  *out = &t->inst;
  return GC_OK;
}

const gcm_spec gcm_tanh_gemm_spec = {
  "tanh-gemm",
  "L = sum dO * tanh(W X): sgemm forward and backward (the built-in example)",
  sizeof keys / sizeof keys[0], keys,
  sizeof mutants / sizeof mutants[0], mutants,
  create,
};
