/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* edges.c -- issue 24 round 3's models at the check's own edges
   (edges.h).  Each backward is the exact analytic derivative of its f32
   forward evaluated in f32 (the relu's branch is the f32 forward's).  */

#include "edges.h"
#include "models.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define POOL_D 4096
#define POOL_EPS 0x1p-25
#define POOL_C (1 + POOL_D * POOL_EPS)
#define SINC_W 64.0
#define POLY_B 1e6
#define POLY_H 0x1p-8          /* f32 mode's step at |x| in [1, 2) */
#define POLY_A (-5 * POLY_B * POLY_H * POLY_H)
#define CANCEL_B 16384.0f

typedef struct pool
{
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int job, done, quit;
  float result;
} pool;

static void *
pool_main (void *arg)
{
  pool *p = arg;
  pthread_mutex_lock (&p->mu);
  for (;;)
    {
      while (!p->job && !p->quit)
        pthread_cond_wait (&p->cv, &p->mu);
      if (p->quit)
        break;
      volatile float s = 1;
      for (int k = 0; k < POOL_D; k++)
        s += (float) POOL_EPS;
      p->result = s;
      p->job = 0;
      p->done = 1;
      pthread_cond_broadcast (&p->cv);
    }
  pthread_mutex_unlock (&p->mu);
  return NULL;
}

static float
pool_sum (pool *p)
{
  pthread_mutex_lock (&p->mu);
  p->done = 0;
  p->job = 1;
  pthread_cond_broadcast (&p->cv);
  while (!p->done)
    pthread_cond_wait (&p->cv, &p->mu);
  float v = p->result;
  pthread_mutex_unlock (&p->mu);
  return v;
}

#define POOL_W 4              /* the max-pool's window */

/* The max-pool's selected element of window W (the first of equals).  */
static size_t
argmax32 (const float *x, size_t w)
{
  size_t b = w * POOL_W;
  for (size_t k = 1; k < POOL_W; k++)
    if (x[w * POOL_W + k] > x[b])
      b = w * POOL_W + k;
  return b;
}

static size_t
argmax64 (const double *x, size_t w)
{
  size_t b = w * POOL_W;
  for (size_t k = 1; k < POOL_W; k++)
    if (x[w * POOL_W + k] > x[b])
      b = w * POOL_W + k;
  return b;
}

static int
loss_f32 (void *ctx, const float *x, float *loss)
{
  edge_model *e = ctx;
  size_t n = e->n;
  float s = 0;
  if (e->kind == EDGE_SOFTMAX_CE)
    {
      float m = x[0];
      for (size_t i = 1; i < n; i++)
        m = fmaxf (m, x[i]);
      for (size_t i = 0; i < n; i++)
        s += expf (x[i] - m);
      *loss = m + logf (s) - x[0];
      return 0;
    }
  if (e->kind == EDGE_MAXPOOL)
    {
      for (size_t w = 0; w < n / POOL_W; w++)
        s += e->c[w] * x[argmax32 (x, w)];
      *loss = s;
      return 0;
    }
  for (size_t i = 0; i < n; i++)
    switch (e->kind)
      {
      case EDGE_RELU_ROUNDED:
        {
          volatile float p = x[i] * e->a[i];
          volatile float pre = p - e->b[i];
          s += e->c[i] * fmaxf (pre, 0.0f) + e->q[i] * x[i];
        }
        break;
      case EDGE_POOL:
        s += x[i];
        break;
      case EDGE_WIDE:
        s += e->c[i] * e->a[i] * sinf (x[i] / e->a[i]);
        break;
      case EDGE_SINC:
        {
          float wx = (float) SINC_W * x[i];
          s += e->c[i] * sinf (wx) / wx;
        }
        break;
      case EDGE_POLY:
        {
          float t = x[i] - e->a[i];
          float t2 = t * t;
          s += e->c[i] * x[i] + t * t2 * ((float) POLY_A + (float) POLY_B * t2);
        }
        break;
      case EDGE_EXPEXP:
        s += e->c[i] * expf (expf (x[i]));
        break;
      case EDGE_SQRT:
        s += e->c[i] * sqrtf (x[i]);
        break;
      case EDGE_CANCEL:
        s += CANCEL_B + e->c[i] * x[i];
        break;
      case EDGE_KNEE:
        s += e->c[i] * fmaxf (0.0f, (float) ((double) x[i] - e->k[i]))
             + x[i] * x[i] * 0.5f;
        break;
      default:
        break;
      }
  if (e->kind == EDGE_POOL)
    s = (float) (POOL_C * s);
  if (e->kind == EDGE_CANCEL)
    s -= (float) n * CANCEL_B;
  *loss = s;
  return 0;
}

static int
loss_f64 (void *ctx, const double *x, double *loss)
{
  edge_model *e = ctx;
  size_t n = e->n;
  double s = 0;
  if (e->kind == EDGE_SOFTMAX_CE)
    {
      double m = x[0];
      for (size_t i = 1; i < n; i++)
        m = fmax (m, x[i]);
      for (size_t i = 0; i < n; i++)
        s += exp (x[i] - m);
      *loss = m + log (s) - x[0];
      return 0;
    }
  if (e->kind == EDGE_MAXPOOL)
    {
      for (size_t w = 0; w < n / POOL_W; w++)
        s += e->c[w] * x[argmax64 (x, w)];
      *loss = s;
      return 0;
    }
  for (size_t i = 0; i < n; i++)
    switch (e->kind)
      {
      case EDGE_RELU_ROUNDED:
        s += e->c[i] * fmax (x[i] * e->a[i] - e->b[i], 0) + e->q[i] * x[i];
        break;
      case EDGE_POOL:
        s += x[i];
        break;
      case EDGE_WIDE:
        s += e->c[i] * (double) e->a[i] * sin (x[i] / e->a[i]);
        break;
      case EDGE_SINC:
        s += e->c[i] * sin (SINC_W * x[i]) / (SINC_W * x[i]);
        break;
      case EDGE_POLY:
        {
          double t = x[i] - e->a[i], t2 = t * t;
          s += e->c[i] * x[i] + t * t2 * (POLY_A + POLY_B * t2);
        }
        break;
      case EDGE_EXPEXP:
        s += e->c[i] * exp (exp (x[i]));
        break;
      case EDGE_SQRT:
        s += e->c[i] * sqrt (x[i]);
        break;
      case EDGE_CANCEL:
        s += (double) CANCEL_B + e->c[i] * x[i];
        break;
      case EDGE_KNEE:
        s += e->c[i] * fmax (0, x[i] - e->k[i]) + x[i] * x[i] / 2;
        break;
      default:
        break;
      }
  if (e->kind == EDGE_POOL)
    s *= POOL_C;
  if (e->kind == EDGE_CANCEL)
    s -= (double) n * CANCEL_B;
  *loss = s;
  return 0;
}

static int
loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  edge_model *e = ctx;
  size_t n = e->n;
  mpfr_prec_t p = mpfr_get_prec (loss);
  mpfr_t t, u, m;
  mpfr_inits2 (p, t, u, m, (mpfr_ptr) 0);
  mpfr_set_zero (loss, 1);
  if (e->kind == EDGE_MAXPOOL)
    {
      for (size_t w = 0; w < n / POOL_W; w++)
        {
          size_t b = w * POOL_W;
          for (size_t k = 1; k < POOL_W; k++)
            if (mpfr_greater_p (x + w * POOL_W + k, x + b))
              b = w * POOL_W + k;
          mpfr_mul_d (t, x + b, e->c[w], MPFR_RNDN);
          mpfr_add (loss, loss, t, MPFR_RNDN);
        }
      mpfr_clears (t, u, m, (mpfr_ptr) 0);
      return 0;
    }
  if (e->kind == EDGE_SOFTMAX_CE)
    {
      mpfr_set (m, x, MPFR_RNDN);
      for (size_t i = 1; i < n; i++)
        mpfr_max (m, m, x + i, MPFR_RNDN);
      for (size_t i = 0; i < n; i++)
        {
          mpfr_sub (t, x + i, m, MPFR_RNDN);
          mpfr_exp (t, t, MPFR_RNDN);
          mpfr_add (loss, loss, t, MPFR_RNDN);
        }
      mpfr_log (loss, loss, MPFR_RNDN);
      mpfr_add (loss, loss, m, MPFR_RNDN);
      mpfr_sub (loss, loss, x, MPFR_RNDN);
      mpfr_clears (t, u, m, (mpfr_ptr) 0);
      return 0;
    }
  for (size_t i = 0; i < n; i++)
    {
      switch (e->kind)
        {
        case EDGE_RELU_ROUNDED:
          mpfr_mul_d (t, x + i, e->a[i], MPFR_RNDN);
          mpfr_sub_d (t, t, e->b[i], MPFR_RNDN);
          if (mpfr_sgn (t) < 0)
            mpfr_set_zero (t, 1);
          mpfr_mul_d (t, t, e->c[i], MPFR_RNDN);
          mpfr_mul_d (u, x + i, e->q[i], MPFR_RNDN);
          mpfr_add (t, t, u, MPFR_RNDN);
          break;
        case EDGE_POOL:
          mpfr_set (t, x + i, MPFR_RNDN);
          break;
        case EDGE_WIDE:
          mpfr_div_d (t, x + i, e->a[i], MPFR_RNDN);
          mpfr_sin (t, t, MPFR_RNDN);
          mpfr_mul_d (t, t, e->a[i], MPFR_RNDN);
          mpfr_mul_d (t, t, e->c[i], MPFR_RNDN);
          break;
        case EDGE_SINC:
          mpfr_mul_d (u, x + i, SINC_W, MPFR_RNDN);
          mpfr_sin (t, u, MPFR_RNDN);
          mpfr_div (t, t, u, MPFR_RNDN);
          mpfr_mul_d (t, t, e->c[i], MPFR_RNDN);
          break;
        case EDGE_POLY:
          mpfr_sub_d (u, x + i, e->a[i], MPFR_RNDN);
          mpfr_sqr (m, u, MPFR_RNDN);
          mpfr_mul_d (t, m, POLY_B, MPFR_RNDN);
          mpfr_add_d (t, t, POLY_A, MPFR_RNDN);
          mpfr_mul (t, t, m, MPFR_RNDN);
          mpfr_mul (t, t, u, MPFR_RNDN);
          mpfr_mul_d (u, x + i, e->c[i], MPFR_RNDN);
          mpfr_add (t, t, u, MPFR_RNDN);
          break;
        case EDGE_EXPEXP:
          mpfr_exp (t, x + i, MPFR_RNDN);
          mpfr_exp (t, t, MPFR_RNDN);
          mpfr_mul_d (t, t, e->c[i], MPFR_RNDN);
          break;
        case EDGE_SQRT:
          mpfr_sqrt (t, x + i, MPFR_RNDN);
          mpfr_mul_d (t, t, e->c[i], MPFR_RNDN);
          break;
        case EDGE_CANCEL:
          mpfr_mul_d (t, x + i, e->c[i], MPFR_RNDN);
          break;
        case EDGE_KNEE:
          mpfr_sub_d (t, x + i, e->k[i], MPFR_RNDN);
          if (mpfr_sgn (t) < 0)
            mpfr_set_zero (t, 1);
          mpfr_mul_d (t, t, e->c[i], MPFR_RNDN);
          mpfr_sqr (u, x + i, MPFR_RNDN);
          mpfr_div_2ui (u, u, 1, MPFR_RNDN);
          mpfr_add (t, t, u, MPFR_RNDN);
          break;
        default:
          break;
        }
      mpfr_add (loss, loss, t, MPFR_RNDN);
    }
  if (e->kind == EDGE_POOL)
    mpfr_mul_d (loss, loss, POOL_C, MPFR_RNDN);   /* POOL_C is exact */
  mpfr_clears (t, u, m, (mpfr_ptr) 0);
  return 0;
}

static int
grad_f32 (void *ctx, const float *x, float *g)
{
  edge_model *e = ctx;
  size_t n = e->n;
  if (e->kind == EDGE_SOFTMAX_CE)
    {
      float m = x[0], s = 0;
      for (size_t i = 1; i < n; i++)
        m = fmaxf (m, x[i]);
      for (size_t i = 0; i < n; i++)
        s += expf (x[i] - m);
      for (size_t i = 0; i < n; i++)
        g[i] = expf (x[i] - m) / s;
      if (!e->twin)
        g[0] -= 1;
      return 0;
    }
  if (e->kind == EDGE_MAXPOOL)
    {
      memset (g, 0, n * sizeof *g);
      for (size_t w = 0; w < n / POOL_W; w++)
        g[e->twin ? w * POOL_W : argmax32 (x, w)] += e->c[w];
      return 0;
    }
  float pc = e->kind == EDGE_POOL ? pool_sum (e->pool) : 0;
  for (size_t i = 0; i < n; i++)
    {
      float gi = 0;
      switch (e->kind)
        {
        case EDGE_RELU_ROUNDED:
          {
            volatile float p = x[i] * e->a[i];
            volatile float pre = p - e->b[i];
            gi = (pre > 0 ? e->c[i] * e->a[i] * (e->twin ? 2 : 1) : 0) + e->q[i];
          }
          break;
        case EDGE_POOL:
          gi = pc * (e->twin && i == 0 ? 2 : 1);
          break;
        case EDGE_WIDE:
          gi = e->c[i] * cosf (x[i] / e->a[i]) * (e->twin && i == 0 ? 2 : 1);
          break;
        case EDGE_SINC:
          {
            float wx = (float) SINC_W * x[i];
            gi = e->c[i] * (wx * cosf (wx) - sinf (wx)) / (wx * x[i]);
          }
          break;
        case EDGE_POLY:
          {
            float t = x[i] - e->a[i], t2 = t * t;
            gi = e->c[i] + t2 * (3 * (float) POLY_A + 5 * (float) POLY_B * t2);
          }
          break;
        case EDGE_EXPEXP:
          gi = e->c[i] * expf (x[i]) * expf (expf (x[i]));
          break;
        case EDGE_SQRT:
          gi = e->c[i] / (2 * sqrtf (x[i]));
          break;
        case EDGE_CANCEL:
          gi = e->c[i];
          break;
        case EDGE_KNEE:
          gi = e->c[i] * (e->twin ? 0.8f : 1.0f) + x[i];
          break;
        default:
          break;
        }
      if (e->twin && (e->kind == EDGE_SINC || e->kind == EDGE_POLY
                      || e->kind == EDGE_EXPEXP || e->kind == EDGE_CANCEL))
        gi *= 1.01f;
      if (e->twin && e->kind == EDGE_SQRT)
        gi *= 1.1f;
      g[i] = gi;
    }
  return 0;
}

/* EDGE_CANCEL's f64 twin: the same backward in double.  */
static int
grad_f64 (void *ctx, const double *x, double *g)
{
  edge_model *e = ctx;
  if (e->kind == EDGE_MAXPOOL)
    {
      memset (g, 0, e->n * sizeof *g);
      for (size_t w = 0; w < e->n / POOL_W; w++)
        g[e->twin ? w * POOL_W : argmax64 (x, w)] += e->c[w];
      return 0;
    }
  for (size_t i = 0; i < e->n; i++)
    g[i] = e->c[i] * (e->twin ? 1.01 : 1);
  return 0;
}

void
edge_add_twin (edge_model *e)
{
  e->model.grad_f64 = e->kind == EDGE_CANCEL || e->kind == EDGE_MAXPOOL
                      ? grad_f64 : NULL;
}

/* M_L declared: ML_FACTOR times the sum of the absolute values of the
   final reduction's terms ("Reference rounding").  */
static int
loss_magnitude_f32 (void *ctx, const float *x, float *ml)
{
  edge_model *e = ctx;
  float s = 0;
  for (size_t i = 0; i < e->n; i++)
    if (e->kind == EDGE_CANCEL)
      s += CANCEL_B + fabsf (e->c[i] * x[i]);
    else
      {
        /* EDGE_POLY: the terms' absolute values */
        float t = x[i] - e->a[i], t2 = t * t;
        s += fabsf (e->c[i] * x[i])
             + fabsf (t * t2) * ((float) -POLY_A + (float) POLY_B * t2);
      }
  if (e->kind == EDGE_CANCEL)
    s += (float) e->n * CANCEL_B;
  *ml = (float) e->ml_factor * s;
  return 0;
}

edge_model *
edge_new (edge_kind kind, size_t n, uint64_t seed, bool twin)
{
  edge_model *e = calloc (1, sizeof *e);
  if (!e)
    return NULL;
  e->kind = kind;
  e->twin = twin;
  e->n = n;
  e->x = malloc (n * sizeof *e->x);
  e->c = malloc (n * sizeof *e->c);
  e->a = malloc (n * sizeof *e->a);
  e->b = malloc (n * sizeof *e->b);
  e->q = malloc (n * sizeof *e->q);
  e->k = malloc (n * sizeof *e->k);
  if (!e->x || !e->c || !e->a || !e->b || !e->q || !e->k)
    {
      edge_free (e);
      return NULL;
    }
  gcm_rng r;
  gcm_rng_seed (&r, seed, 47);
  for (size_t i = 0; i < n; i++)
    {
      double u = gcm_uniform (&r), v = gcm_uniform (&r);
      e->c[i] = (float) (1 + gcm_uniform (&r));
      switch (kind)
        {
        case EDGE_RELU_ROUNDED:
          e->x[i] = (float) (2 * u - 1);
          e->a[i] = (float) (1 + v);
          e->b[i] = (float) ((double) e->x[i] * e->a[i]);
          e->q[i] = -e->c[i] * e->a[i] * (float) (1.5 + gcm_uniform (&r) / 2);
          break;
        case EDGE_POOL:
          e->x[i] = (float) (4 * u - 2);
          break;
        case EDGE_SOFTMAX_CE:
          e->x[i] = (float) (1000 + 8 * u);
          break;
        case EDGE_WIDE:
          e->a[i] = (float) pow (10, -8 + 16.0 * (double) i
                                       / (double) (n > 1 ? n - 1 : 1));
          e->x[i] = (float) ((2 * u - 1) * e->a[i]);
          break;
        case EDGE_SINC:
          e->x[i] = (float) (0.5 + u);
          break;
        case EDGE_POLY:
          e->x[i] = (float) (1 + u);
          e->a[i] = e->x[i];
          break;
        case EDGE_EXPEXP:
          e->x[i] = (float) (2.5 + u / 2);
          break;
        case EDGE_SQRT:
          e->x[i] = (float) (5 + u);
          break;
        case EDGE_CANCEL:
          e->x[i] = (float) (2 * u - 1);
          break;
        case EDGE_KNEE:
          e->x[i] = (float) (1 + u);
          e->k[i] = e->x[i] - 0.6 * POLY_H;
          break;
        case EDGE_MAXPOOL:
          e->x[i] = (float) (2 * u - 1);
          break;
        default:
          break;
        }
    }
  if (kind == EDGE_POOL)
    {
      pool *p = calloc (1, sizeof *p);
      if (!p)
        {
          edge_free (e);
          return NULL;
        }
      pthread_mutex_init (&p->mu, NULL);
      pthread_cond_init (&p->cv, NULL);
      if (pthread_create (&p->th, NULL, pool_main, p) != 0)
        {
          pthread_mutex_destroy (&p->mu);
          pthread_cond_destroy (&p->cv);
          free (p);
          edge_free (e);
          return NULL;
        }
      e->pool = p;
    }
  gc_model *m = &e->model;
  m->abi = GC_MODEL_ABI;
  m->name = edge_name (kind);
  m->n = n;
  m->loss_f32 = loss_f32;
  m->grad_f32 = grad_f32;
  m->loss_f64 = loss_f64;
  m->loss_mpfr = loss_mpfr;
  m->ctx = e;
  /* Depths ("The accumulation factor"): per kind, the longest chain to
     the loss and to a gradient element.  */
  static const size_t fd[EDGE_N_KINDS] = { 6, 2, 4, 5, 6, 8, 3, 3, 3, 6, 1 };
  static const size_t bd[EDGE_N_KINDS] = { 3, POOL_D, 0, 4, 7, 6, 5, 4, 1, 3,
                                           1 };
  m->forward_depth = fd[kind] + n;
  m->backward_depth = kind == EDGE_SOFTMAX_CE ? n + 4 : bd[kind];
  if (kind == EDGE_CANCEL)
    m->forward_depth = 2 * n + 1;
  e->block = (gc_block) { "x", 0, n, 1, { n } };
  m->n_blocks = 1;
  m->blocks = &e->block;
  return e;
}

bool
edge_bug_has_effect (edge_model *e)
{
  float *g = malloc (e->n * sizeof *g), *gt = malloc (e->n * sizeof *gt);
  bool twin = e->twin, effect = true;
  if (g && gt)
    {
      e->twin = false;
      grad_f32 (e, e->x, g);
      e->twin = true;
      grad_f32 (e, e->x, gt);
      effect = memcmp (g, gt, e->n * sizeof *g) != 0;
    }
  e->twin = twin;
  free (g);
  free (gt);
  return effect;
}

void
edge_set_steps (edge_model *e, double steps, long exponent)
{
  /* the scale of the small element is its tensor's rms, in [4, 8) for n
     >= 8 elements of [5, 6) and one small: h = 2^(2 + EXPONENT) */
  e->x[e->n - 1] = (float) (steps * ldexp (1, 2 + (int) exponent));
}

void
edge_declare_ml (edge_model *e, double factor)
{
  e->ml_factor = factor;
  e->model.loss_magnitude_f32 = factor > 0 ? loss_magnitude_f32 : NULL;
}

void
edge_free (edge_model *e)
{
  if (!e)
    return;
  pool *p = e->pool;
  if (p)
    {
      pthread_mutex_lock (&p->mu);
      p->quit = 1;
      pthread_cond_broadcast (&p->cv);
      pthread_mutex_unlock (&p->mu);
      pthread_join (p->th, NULL);
      pthread_mutex_destroy (&p->mu);
      pthread_cond_destroy (&p->cv);
      free (p);
    }
  free (e->x);
  free (e->c);
  free (e->a);
  free (e->b);
  free (e->q);
  free (e->k);
  free (e);
}

const char *
edge_name (edge_kind kind)
{
  static const char *const names[EDGE_N_KINDS] = {
    "relu-rounded", "pool", "softmax-ce", "wide", "sinc", "poly",
    "exp-exp", "sqrt", "cancel", "knee-f32", "max-pool" };
  return kind < EDGE_N_KINDS ? names[kind] : "?";
}
