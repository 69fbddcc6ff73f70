/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* hard.c -- the hard correct models and their buggy twins (hard.h).  Each
   backward is the exact analytic derivative, evaluated in f32; each depth
   is counted by the manual's rules ("The accumulation factor").  */

#include "hard.h"
#include "models.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 2^-130: y_j * TAU is subnormal in f32 for |y_j| < 2^4.  */
#define TAU 0x1p-130f

static size_t
tensor (const hard_model *h)
{
  return h->kind == HARD_SUBNORMAL ? h->n / 2 : h->n;
}

#define AMP 1000.0f          /* the amplified-argument model's w */
#define NFREQ 11              /* the positional model's k = 0..10 */

static int
loss_f32 (void *ctx, const float *x, float *loss)
{
  hard_model *h = ctx;
  size_t m = tensor (h);
  float s = 0;
  if (h->kind == HARD_MEAN_REDUCTION)
    {
      for (size_t p = 0; p < m; p++)
        {
          float acc = 0;
          for (size_t t = 0; t < HARD_NPOS; t++)
            acc += x[p] + h->z[t];
          s += acc / (float) HARD_NPOS + x[p] * x[p] * 0.5f;
        }
      *loss = s;
      return 0;
    }
  for (size_t i = 0; i < m; i++)
    switch (h->kind)
      {
      case HARD_SUBNORMAL:
        s += h->c[i] * sinf (x[i]) + TAU * (x[m + i] * x[m + i]) * 0.5f;
        break;
      case HARD_LARGE_PARAM:
        s += h->c[i] * sinf (x[i]);
        break;
      case HARD_TINY_PARAM:
        s += h->c[i] * x[i] * (1.0f + 1e24f * x[i]);
        break;
      case HARD_KNEE:
        s += h->c[i] * fmaxf (0.0f, (float) ((double) x[i] - h->knee[i]))
             + x[i] * x[i] * 0.5f;
        break;
      case HARD_AMPLIFIED_ARGUMENT:
        s += h->c[i] * sinf (AMP * x[i]);
        break;
      case HARD_POSITIONAL:
        for (int k = 0; k < NFREQ; k++)
          {
            float a = ldexpf (x[i], k);
            s += h->c[i] * (sinf (a) + cosf (a)) / (float) (k + 1);
          }
        break;
      case HARD_EXP_ARGUMENT:
        s += h->c[i] * expf (3.0f * x[i]);
        break;
      case HARD_QUARTIC_ZERO:
        s += h->c[i] * (x[i] * x[i]) * (x[i] * x[i]) * 0.25f;
        break;
      default:
        s += h->c[i] * (x[i] * x[i] * x[i]) / 3.0f;
        break;
      }
  *loss = h->kind == HARD_TINY_PARAM ? 1.0f + s : s;
  return 0;
}

static int
grad_f32 (void *ctx, const float *x, float *g)
{
  hard_model *h = ctx;
  size_t m = tensor (h);
  switch (h->kind)
    {
    case HARD_SUBNORMAL:
      for (size_t i = 0; i < m; i++)
        {
          g[i] = h->c[i] * cosf (x[i]);
          g[m + i] = (h->twin ? 2 * TAU : TAU) * x[m + i];
        }
      break;
    case HARD_LARGE_PARAM:
      for (size_t i = 0; i < m; i++)
        g[i] = h->c[i] * cosf (x[i]) * (h->twin ? 1.01f : 1.0f);
      break;
    case HARD_TINY_PARAM:
      for (size_t i = 0; i < m; i++)
        g[i] = h->c[i] * (1.0f + 2e24f * x[i]) * (h->twin ? 1.86f : 1.0f);
      break;
    case HARD_KNEE:
      for (size_t i = 0; i < m; i++)
        g[i] = ((double) x[i] > h->knee[i] ? h->c[i] : 0.0f)
               * (h->twin ? 0.8f : 1.0f) + x[i];
      break;
    case HARD_MEAN_REDUCTION:
      /* the mean's gradient 1/N at every position, reduced into b_p */
      for (size_t p = 0; p < m; p++)
        {
          float dy = 1.0f / (float) HARD_NPOS, acc = 0;
          for (size_t t = 0; t < HARD_NPOS; t++)
            acc += dy;
          g[p] = h->twin ? acc : acc + x[p];
        }
      break;
    case HARD_AMPLIFIED_ARGUMENT:
      for (size_t i = 0; i < m; i++)
        g[i] = h->c[i] * (AMP * (h->twin ? 1.00390625f : 1.0f))
               * cosf (AMP * x[i]);
      break;
    case HARD_POSITIONAL:
      for (size_t i = 0; i < m; i++)
        {
          float acc = 0;
          for (int k = 0; k < NFREQ; k++)
            {
              float a = ldexpf (x[i], k);
              float chain = ldexpf (1.0f, h->twin && k == NFREQ - 1 ? k - 1
                                                                     : k);
              acc += h->c[i] * chain * (cosf (a) - sinf (a)) / (float) (k + 1);
            }
          g[i] = acc;
        }
      break;
    case HARD_EXP_ARGUMENT:
      for (size_t i = 0; i < m; i++)
        g[i] = 3.0f * h->c[i]
               * expf (3.0f * x[h->twin ? (i + 1) % m : i]);
      break;
    case HARD_QUARTIC_ZERO:
      for (size_t i = 0; i < m; i++)
        g[i] = h->c[i] * (x[i] * x[i] * x[i])
               + (h->twin ? ldexpf (h->c[i], -10) : 0.0f);
      break;
    case HARD_STALE_BUFFER:
      /* The reduction buffer: zeroed on every call, except in the twin,
         which zeroes it once, when the model is made.  */
      if (!h->twin)
        memset (h->acc, 0, m * sizeof *h->acc);
      for (size_t i = 0; i < m; i++)
        h->acc[i] += h->c[i] * (x[i] * x[i]);
      memcpy (g, h->acc, m * sizeof *g);
      break;
    default:
      for (size_t i = 0; i < m; i++)
        g[i] = h->c[i] * (x[i] * x[i]);
      break;
    }
  return 0;
}

/* The magnitudes of the amplified-argument models (manual: "What the
   measurement does not support"): the rounding of the argument a = w x
   (u |a|) reaches the gradient through the derivative of f', so element
   i's computation has magnitude |w c_i| (1 + |a|) for sin and
   3 |c_i| e^a (1 + |a|) for exp.  With it declared, the measured spread is
   within the worst case of the declared depth 4; a declared magnitude
   without the argument's part (|w c_i| alone) would leave the spread
   beyond it, a finding (GC_PRECISION), not a wider bar.  */
static int
grad_magnitude_f32 (void *ctx, const float *x, float *m)
{
  hard_model *h = ctx;
  for (size_t i = 0; i < h->n; i++)
    if (h->kind == HARD_AMPLIFIED_ARGUMENT)
      m[i] = fabsf (h->c[i] * AMP) * (1.0f + fabsf (AMP * x[i]));
    else
      m[i] = 3.0f * fabsf (h->c[i]) * expf (3.0f * x[i])
             * (1.0f + fabsf (3.0f * x[i]));
  return 0;
}

/* The MPFR forward of the shared-scratch model: x is copied into one
   scratch array of the model, then read back after a pause of 2 ms (which
   makes two unlocked calls overlap whenever both threads run).  */
static int
loss_mpfr_scratch (hard_model *h, mpfr_srcptr x, mpfr_ptr loss)
{
  mpfr_ptr sc = h->scratch;
  size_t m = tensor (h);
  if (!h->twin)
    pthread_mutex_lock (h->lock);
  for (size_t i = 0; i < m; i++)
    mpfr_set (sc + i, x + i, MPFR_RNDN);
  struct timespec ts = { 0, 2000000 };
  nanosleep (&ts, NULL);
  mpfr_t t;
  mpfr_init2 (t, mpfr_get_prec (loss));
  mpfr_set_zero (loss, 1);
  for (size_t i = 0; i < m; i++)
    {
      mpfr_pow_ui (t, sc + i, 3, MPFR_RNDN);
      mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
      mpfr_div_ui (t, t, 3, MPFR_RNDN);
      mpfr_add (loss, loss, t, MPFR_RNDN);
    }
  mpfr_clear (t);
  if (!h->twin)
    pthread_mutex_unlock (h->lock);
  return 0;
}

/* The mean-reduction model's MPFR forward: mean_t (b_p + z_t) = b_p +
   sum_t z_t / N, the sum exact at any precision >= 64 (N < 2^17 terms of
   24 bits in [2, 3]).  */
static int
loss_mpfr_mean (hard_model *h, mpfr_srcptr x, mpfr_ptr loss)
{
  mpfr_t t, zs;
  mpfr_init2 (t, mpfr_get_prec (loss));
  mpfr_init2 (zs, mpfr_get_prec (loss) > 64 ? mpfr_get_prec (loss) : 64);
  mpfr_set_zero (zs, 1);
  for (size_t k = 0; k < HARD_NPOS; k++)
    mpfr_add_d (zs, zs, h->z[k], MPFR_RNDN);
  mpfr_div_ui (zs, zs, HARD_NPOS, MPFR_RNDN);
  mpfr_set_zero (loss, 1);
  for (size_t p = 0; p < tensor (h); p++)
    {
      mpfr_sqr (t, x + p, MPFR_RNDN);
      mpfr_div_2ui (t, t, 1, MPFR_RNDN);
      mpfr_add (t, t, x + p, MPFR_RNDN);
      mpfr_add (t, t, zs, MPFR_RNDN);
      mpfr_add (loss, loss, t, MPFR_RNDN);
    }
  mpfr_clear (t);
  mpfr_clear (zs);
  return 0;
}

static int
loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  hard_model *h = ctx;
  if (h->kind == HARD_SHARED_SCRATCH)
    return loss_mpfr_scratch (h, x, loss);
  if (h->kind == HARD_MEAN_REDUCTION)
    return loss_mpfr_mean (h, x, loss);
  size_t m = tensor (h);
  mpfr_t t, a, b;
  mpfr_init2 (t, mpfr_get_prec (loss));
  mpfr_init2 (a, mpfr_get_prec (loss));
  mpfr_init2 (b, mpfr_get_prec (loss));
  mpfr_set_zero (loss, 1);
  for (size_t i = 0; i < m; i++)
    {
      switch (h->kind)
        {
        case HARD_SUBNORMAL:
          mpfr_sin (t, x + i, MPFR_RNDN);
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          mpfr_add (loss, loss, t, MPFR_RNDN);
          mpfr_sqr (t, x + m + i, MPFR_RNDN);
          mpfr_mul_d (t, t, (double) TAU / 2, MPFR_RNDN);
          break;
        case HARD_LARGE_PARAM:
          mpfr_sin (t, x + i, MPFR_RNDN);
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          break;
        case HARD_KNEE:
          mpfr_sub_d (t, x + i, h->knee[i], MPFR_RNDN);
          if (mpfr_sgn (t) < 0)
            mpfr_set_zero (t, 1);
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          mpfr_add (loss, loss, t, MPFR_RNDN);
          mpfr_sqr (t, x + i, MPFR_RNDN);
          mpfr_div_2ui (t, t, 1, MPFR_RNDN);
          break;
        case HARD_AMPLIFIED_ARGUMENT:
          mpfr_mul_d (t, x + i, (double) AMP, MPFR_RNDN);
          mpfr_sin (t, t, MPFR_RNDN);
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          break;
        case HARD_POSITIONAL:
          mpfr_set_zero (t, 1);
          for (int k = 0; k < NFREQ; k++)
            {
              mpfr_mul_2ui (a, x + i, (unsigned long) k, MPFR_RNDN);
              mpfr_sin_cos (a, b, a, MPFR_RNDN);
              mpfr_add (a, a, b, MPFR_RNDN);
              mpfr_div_ui (a, a, (unsigned long) k + 1, MPFR_RNDN);
              mpfr_add (t, t, a, MPFR_RNDN);
            }
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          break;
        case HARD_EXP_ARGUMENT:
          mpfr_mul_ui (t, x + i, 3, MPFR_RNDN);
          mpfr_exp (t, t, MPFR_RNDN);
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          break;
        case HARD_QUARTIC_ZERO:
          mpfr_pow_ui (t, x + i, 4, MPFR_RNDN);
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          mpfr_div_2ui (t, t, 2, MPFR_RNDN);
          break;
        case HARD_TINY_PARAM:
          /* c_i x_i (1 + 1e24 x_i), 1e24 as the f32 forward rounds it */
          mpfr_mul_d (t, x + i, (double) 1e24f, MPFR_RNDN);
          mpfr_add_ui (t, t, 1, MPFR_RNDN);
          mpfr_mul (t, t, x + i, MPFR_RNDN);
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          break;
        default:
          mpfr_pow_ui (t, x + i, 3, MPFR_RNDN);
          mpfr_mul_d (t, t, h->c[i], MPFR_RNDN);
          mpfr_div_ui (t, t, 3, MPFR_RNDN);
          break;
        }
      mpfr_add (loss, loss, t, MPFR_RNDN);
    }
  if (h->kind == HARD_TINY_PARAM)
    mpfr_add_ui (loss, loss, 1, MPFR_RNDN);
  mpfr_clear (t);
  mpfr_clear (a);
  mpfr_clear (b);
  return 0;
}

const char *
hard_name (hard_kind kind)
{
  static const char *const names[] = { "subnormal-gradient", "stale-buffer",
                                        "shared-scratch", "large-parameter",
                                        "tiny-parameter", "knee",
                                        "mean-reduction",
                                        "amplified-argument", "positional",
                                        "exp-argument", "quartic-zero" };
  return kind < HARD_N_KINDS ? names[kind] : "unknown";
}

void
hard_free (hard_model *h)
{
  if (!h)
    return;
  if (h->scratch)
    {
      for (size_t i = 0; i < h->n; i++)
        mpfr_clear ((mpfr_ptr) h->scratch + i);
      free (h->scratch);
    }
  if (h->lock)
    {
      pthread_mutex_destroy (h->lock);
      free (h->lock);
    }
  free (h->x);
  free (h->c);
  free (h->acc);
  free (h->knee);
  free (h->z);
  free (h);
}

hard_model *
hard_new (hard_kind kind, size_t n, uint64_t seed, bool twin)
{
  hard_model *h = calloc (1, sizeof *h);
  if (!h)
    return NULL;
  h->kind = kind;
  h->twin = twin;
  h->n = kind == HARD_SUBNORMAL ? 2 * n : n;
  h->x = malloc (h->n * sizeof *h->x);
  h->c = malloc (n * sizeof *h->c);
  h->acc = calloc (n, sizeof *h->acc);
  if (!h->x || !h->c || !h->acc)
    {
      hard_free (h);
      return NULL;
    }
  if (kind == HARD_SHARED_SCRATCH)
    {
      h->scratch = malloc (n * sizeof (__mpfr_struct));
      h->lock = malloc (sizeof (pthread_mutex_t));
      if (!h->scratch || !h->lock)
        {
          free (h->scratch);
          h->scratch = NULL;
          hard_free (h);
          return NULL;
        }
      pthread_mutex_init (h->lock, NULL);
      /* 256 bits hold every stencil point of an f32 x exactly.  */
      for (size_t i = 0; i < n; i++)
        mpfr_init2 ((mpfr_ptr) h->scratch + i, 256);
    }
  gcm_rng r;
  gcm_rng_seed (&r, seed, 41);
  for (size_t i = 0; i < n; i++)
    {
      h->c[i] = (float) (0.5 + gcm_uniform (&r));
      double z = gcm_normal (&r);
      h->x[i] = kind == HARD_LARGE_PARAM ? (float) (1e20 * (1.5 + z / 4))
                : kind == HARD_TINY_PARAM ? (float) (1e-25 * (1.5 + z / 4))
                : kind == HARD_EXP_ARGUMENT ? (float) (25 + z / 100)
                : kind == HARD_QUARTIC_ZERO ? 0.0f
                : (float) z;
    }
  if (kind == HARD_MEAN_REDUCTION)
    {
      h->z = malloc (HARD_NPOS * sizeof *h->z);
      if (!h->z)
        {
          hard_free (h);
          return NULL;
        }
      for (size_t t = 0; t < HARD_NPOS; t++)
        h->z[t] = (float) (2 + gcm_uniform (&r));
    }
  if (kind == HARD_SUBNORMAL)
    for (size_t i = 0; i < n; i++)
      h->x[n + i] = (float) (0.5 + gcm_uniform (&r));
  if (kind == HARD_KNEE)
    {
      /* The default MPFR step at 128 bits ("Default precision and step"):
         h_i = 2^(floor(log2 s_i) - 42), s_i = max(|x_i|, rms x); the knee
         sits 0.6 h_i below x_i, inside the first stencil x +- 2h.  */
      h->knee = malloc (n * sizeof *h->knee);
      if (!h->knee)
        {
          hard_free (h);
          return NULL;
        }
      double sq = 0;
      for (size_t i = 0; i < n; i++)
        sq += (double) h->x[i] * h->x[i];
      double rms = sqrt (sq / (double) n);
      for (size_t i = 0; i < n; i++)
        {
          int e;
          frexp (fmax (fabs ((double) h->x[i]), rms), &e);
          h->knee[i] = (double) h->x[i] - 0.6 * ldexp (1.0, e - 1 - 42);
        }
    }
  gc_model *m = &h->model;
  m->abi = GC_MODEL_ABI;
  m->name = hard_name (kind);
  m->n = h->n;
  m->loss_f32 = loss_f32;
  m->grad_f32 = grad_f32;
  m->loss_mpfr = loss_mpfr;
  m->ctx = h;
  /* Depths: the forward's longest chain is one element's computation (at
     most 4 roundings: sin or the cube, the products) and the n-term sum;
     the backward's is one element's (at most 3).  */
  m->forward_depth = 4 + h->n;
  m->backward_depth = 3;
  switch (kind)
    {
    case HARD_MEAN_REDUCTION:
      /* each b_p: the N-term sum, the division, the regulariser */
      m->forward_depth = HARD_NPOS + 4 + h->n;
      m->backward_depth = HARD_NPOS + 2;
      break;
    case HARD_POSITIONAL:
      /* per term: the scaling (exact), sin or cos, the difference, the
         products and the division; then the eleven-term sum */
      m->forward_depth = 6 + NFREQ + h->n;
      m->backward_depth = 6 + NFREQ;
      break;
    case HARD_AMPLIFIED_ARGUMENT:
    case HARD_EXP_ARGUMENT:
      /* the argument's product, the function, two products; the
         argument's rounding is amplified, which the magnitude says */
      m->backward_depth = 4;
      m->grad_magnitude_f32 = grad_magnitude_f32;
      break;
    default:
      break;
    }
  if (kind == HARD_SUBNORMAL)
    {
      h->blocks[0] = (gc_block) { "x", 0, n, 1, { n } };
      h->blocks[1] = (gc_block) { "y", n, n, 1, { n } };
      m->n_blocks = 2;
      m->blocks = h->blocks;
    }
  return h;
}
