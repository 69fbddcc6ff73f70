/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* declared.c -- issue 24's declaration cases (declared.h).  */

#include "declared.h"
#include "models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NT 1024               /* the low-precision model's T */

static float
largest (const float *g, size_t n)
{
  float m = 0;
  for (size_t i = 0; i < n; i++)
    m = fmaxf (m, fabsf (g[i]));
  return m;
}

/* The running sum cut to 16 bits by Veltkamp's split: each of its three
   roundings follows the current mode, so the cut does.  */
static float
cut16 (float s)
{
  volatile float c = s * 257.0f;
  volatile float d = c - s;
  return c - d;
}

static int
loss_f32 (void *ctx, const float *x, float *loss)
{
  declared_model *d = ctx;
  if (d->kind == DECLARED_WRAP)
    return d->inner->loss_f32 (d->inner->ctx, x, loss);
  float s = 0;
  for (size_t i = 0; i < d->n; i++)
    if (d->kind == DECLARED_MIXED_SCALE)
      s += d->a[i] * sinf (x[i]);
    else
      {
        float z = 0;
        for (size_t t = 0; t < NT; t++)
          z += d->z[t * d->n + i];
        s += x[i] * z;
      }
  *loss = s;
  return 0;
}

static int
grad_f32 (void *ctx, const float *x, float *g)
{
  declared_model *d = ctx;
  if (d->kind == DECLARED_WRAP)
    {
      int rc = d->inner->grad_f32 (d->inner->ctx, x, g);
      for (size_t i = d->bug_off; i < d->bug_off + d->bug_cnt; i++)
        g[i] *= d->bug_scale;
      return rc;
    }
  for (size_t i = 0; i < d->n; i++)
    if (d->kind == DECLARED_MIXED_SCALE)
      g[i] = d->a[i] * cosf (x[i]) * (d->twin && i == d->n - 1 ? 2 : 1);
    else
      {
        float z = 0;
        for (size_t t = 0; t < NT; t++)
          {
            z += d->z[t * d->n + i];
            if (d->twin)
              z = cut16 (z);
          }
        g[i] = z;
      }
  return 0;
}

static int
grad_magnitude_f32 (void *ctx, const float *x, float *m)
{
  declared_model *d = ctx;
  if (d->kind == DECLARED_WRAP)
    {
      int rc = d->inner->grad_f32 (d->inner->ctx, x, m);
      float big = largest (m, d->n) * (float) d->mag_factor;
      for (size_t i = 0; i < d->n; i++)
        m[i] = big;
      return rc;
    }
  /* the honest magnitude: element i's own computation, |a_i cos x_i| and
     its rounding; the sums of positive terms are their own magnitude */
  for (size_t i = 0; i < d->n; i++)
    if (d->kind == DECLARED_MIXED_SCALE)
      m[i] = fabsf (d->a[i]);
    else
      {
        float z = 0;
        for (size_t t = 0; t < NT; t++)
          z += d->z[t * d->n + i];
        m[i] = z;
      }
  return 0;
}

/* M_L: 0 when re-declared so, else the inner model's.  */
static int
loss_magnitude_f32 (void *ctx, const float *x, float *ml)
{
  declared_model *d = ctx;
  if (d->loss_magnitude_zero)
    {
      *ml = 0;
      return 0;
    }
  return d->inner->loss_magnitude_f32 (d->inner->ctx, x, ml);
}

/* The inner model's own magnitudes.  */
static int
inner_magnitude_f32 (void *ctx, const float *x, float *m)
{
  declared_model *d = ctx;
  return d->inner->grad_magnitude_f32 (d->inner->ctx, x, m);
}

static int
loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  declared_model *d = ctx;
  if (d->kind == DECLARED_WRAP)
    return d->inner->loss_mpfr (d->inner->ctx, x, loss);
  mpfr_t t, z;
  mpfr_init2 (t, mpfr_get_prec (loss));
  mpfr_init2 (z, mpfr_get_prec (loss));
  mpfr_set_zero (loss, 1);
  for (size_t i = 0; i < d->n; i++)
    {
      if (d->kind == DECLARED_MIXED_SCALE)
        {
          mpfr_sin (t, x + i, MPFR_RNDN);
          mpfr_mul_d (t, t, d->a[i], MPFR_RNDN);
        }
      else
        {
          mpfr_set_zero (z, 1);
          for (size_t k = 0; k < NT; k++)
            mpfr_add_d (z, z, d->z[k * d->n + i], MPFR_RNDN);
          mpfr_mul (t, z, x + i, MPFR_RNDN);
        }
      mpfr_add (loss, loss, t, MPFR_RNDN);
    }
  mpfr_clear (t);
  mpfr_clear (z);
  return 0;
}

declared_model *
declared_wrap (const gc_model *inner, const float *x, size_t depth,
               double mag_factor, bool ml_zero, size_t off, size_t cnt,
               float bug_scale)
{
  declared_model *d = calloc (1, sizeof *d);
  if (!d)
    return NULL;
  d->x = malloc (inner->n * sizeof *d->x);
  if (!d->x)
    {
      free (d);
      return NULL;
    }
  memcpy (d->x, x, inner->n * sizeof *x);
  d->kind = DECLARED_WRAP;
  d->inner = inner;
  d->n = inner->n;
  d->bug_off = off;
  d->bug_cnt = cnt;
  d->bug_scale = bug_scale;
  d->mag_factor = mag_factor;
  d->loss_magnitude_zero = ml_zero;
  d->model = *inner;
  d->model.ctx = d;
  d->model.loss_f32 = loss_f32;
  d->model.grad_f32 = grad_f32;
  d->model.loss_mpfr = inner->loss_mpfr ? loss_mpfr : NULL;
  /* judged without a twin or an f64 forward (the case issue 24 asks to
     be honest), and without the forward oracle */
  d->model.loss_f64 = NULL;
  d->model.grad_f64 = NULL;
  d->model.n_outputs = 0;
  d->model.outputs_f32 = d->model.outputs_magnitude_f32 = NULL;
  d->model.outputs_mpfr = NULL;
  if (depth)
    d->model.backward_depth = depth;
  d->model.grad_magnitude_f32 = mag_factor > 0 ? grad_magnitude_f32
                                : inner->grad_magnitude_f32
                                ? inner_magnitude_f32 : NULL;
  d->model.loss_magnitude_f32 = ml_zero || inner->loss_magnitude_f32
                                ? loss_magnitude_f32 : NULL;
  return d;
}

declared_model *
declared_new (declared_kind kind, size_t n, uint64_t seed, bool twin,
              bool magnitudes)
{
  declared_model *d = calloc (1, sizeof *d);
  if (!d)
    return NULL;
  d->kind = kind;
  d->twin = twin;
  d->n = n;
  d->x = malloc (n * sizeof *d->x);
  d->a = malloc (n * sizeof *d->a);
  d->z = kind == DECLARED_LOW_PRECISION ? malloc (NT * n * sizeof *d->z)
                                        : NULL;
  if (!d->x || !d->a || (kind == DECLARED_LOW_PRECISION && !d->z))
    {
      declared_free (d);
      return NULL;
    }
  gcm_rng r;
  gcm_rng_seed (&r, seed, 43);
  for (size_t i = 0; i < n; i++)
    {
      d->x[i] = (float) (gcm_uniform (&r) * 2 - 1);
      d->a[i] = ldexpf ((float) (1 + gcm_uniform (&r) / 2), -8 * (int) i);
    }
  for (size_t k = 0; d->z && k < NT * n; k++)
    d->z[k] = (float) (0.5 + gcm_uniform (&r) / 2);
  gc_model *m = &d->model;
  m->abi = GC_MODEL_ABI;
  m->name = kind == DECLARED_MIXED_SCALE ? "mixed-scale" : "low-precision";
  m->n = n;
  m->loss_f32 = loss_f32;
  m->grad_f32 = grad_f32;
  m->loss_mpfr = loss_mpfr;
  m->ctx = d;
  /* Depths ("The accumulation factor"): mixed-scale, the sine and two
     products, then the n-term sum; low-precision, the T-term sums, the
     product and the n-term sum forward, the T-term sum backward.  */
  m->forward_depth = kind == DECLARED_MIXED_SCALE ? 3 + n : NT + 1 + n;
  m->backward_depth = kind == DECLARED_MIXED_SCALE ? 3 : NT;
  if (magnitudes)
    m->grad_magnitude_f32 = grad_magnitude_f32;
  d->block = (gc_block) { "x", 0, n, 1, { n } };
  m->n_blocks = 1;
  m->blocks = &d->block;
  return d;
}

void
declared_free (declared_model *d)
{
  if (!d)
    return;
  free (d->x);
  free (d->a);
  free (d->z);
  free (d);
}
