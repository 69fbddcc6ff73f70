/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* mpseq.c -- see mpseq.h.  */

#include "mpseq.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct gcm_mpseq_cache
{
  mpfr_prec_t prec;
  mpfr_t *states;        /* [n_seq][steps + 1][state_size] */
  mpfr_t *prefix;        /* [n_seq][steps + 1] */
  mpfr_t *total;         /* [n_seq]: prefix at the end + final term */
  mpfr_t *inputs;        /* [n_seq][steps][input_size] */
  size_t n_states, n_prefix, n_total, n_inputs;  /* how many are set up */
  struct gcm_mpseq_cache *next;
} cache;

void
gcm_mpseq_init (gcm_mpseq *c)
{
  pthread_mutex_init (&c->lock, NULL);
  atomic_init (&c->caches, NULL);
}

static void
cache_free (cache *k)
{
  for (size_t i = 0; i < k->n_states; i++)
    mpfr_clear (k->states[i]);
  for (size_t i = 0; i < k->n_prefix; i++)
    mpfr_clear (k->prefix[i]);
  for (size_t i = 0; i < k->n_total; i++)
    mpfr_clear (k->total[i]);
  for (size_t i = 0; i < k->n_inputs; i++)
    mpfr_clear (k->inputs[i]);
  free (k->inputs);
  free (k->states);
  free (k->prefix);
  free (k->total);
  free (k);
}

void
gcm_mpseq_clear (gcm_mpseq *c)
{
  for (cache *k = atomic_load (&c->caches); k;)
    {
      cache *next = k->next;
      cache_free (k);
      k = next;
    }
  atomic_store (&c->caches, NULL);
  pthread_mutex_destroy (&c->lock);
}

/* Build the base trajectory at precision P; NULL when memory runs out.  */
static cache *
build (const gcm_mpseq_ops *ops, const void *ctx, const float *x0, size_t n,
       mpfr_prec_t p)
{
  size_t S = ops->n_seq, T = ops->steps, Z = ops->state_size;
  size_t I = ops->input_size;
  cache *k = calloc (1, sizeof *k);
  __mpfr_struct *xb = malloc (n * sizeof *xb);
  void *w = NULL;
  if (!k || !xb)
    goto fail;
  k->prec = p;
  k->states = malloc (S * (T + 1) * Z * sizeof *k->states);
  k->prefix = malloc (S * (T + 1) * sizeof *k->prefix);
  k->total = malloc (S * sizeof *k->total);
  k->inputs = malloc ((S * T * I + 1) * sizeof *k->inputs);
  if (!k->states || !k->prefix || !k->total || !k->inputs
      || !(w = ops->work_new (ctx, p)))
    goto fail;
  for (; k->n_states < S * (T + 1) * Z; k->n_states++)
    mpfr_init2 (k->states[k->n_states], p);
  for (; k->n_prefix < S * (T + 1); k->n_prefix++)
    mpfr_init2 (k->prefix[k->n_prefix], p);
  for (; k->n_total < S; k->n_total++)
    mpfr_init2 (k->total[k->n_total], p);
  for (; k->n_inputs < S * T * I; k->n_inputs++)
    mpfr_init2 (k->inputs[k->n_inputs], p);
  for (size_t i = 0; i < n; i++)
    {
      mpfr_init2 (xb + i, 24);
      mpfr_set_flt (xb + i, x0[i], MPFR_RNDN);
    }
  mpfr_t *st = ops->state (w);
  for (size_t s = 0; s < S; s++)
    {
      ops->init_state (ctx, xb, s, w);
      mpfr_ptr acc = k->total[s];
      mpfr_set_zero (acc, 1);
      for (size_t t = 0; t <= T; t++)
        {
          for (size_t z = 0; z < Z; z++)
            mpfr_set (k->states[(s * (T + 1) + t) * Z + z], st[z], MPFR_RNDN);
          mpfr_set (k->prefix[s * (T + 1) + t], acc, MPFR_RNDN);
          if (t < T)
            {
              mpfr_t *in = k->inputs + (s * T + t) * I;
              ops->prepare (ctx, xb, s, t, w, in);
              ops->step (ctx, s, t, in, w, acc);
            }
        }
      ops->final (ctx, s, w, acc);
    }
  for (size_t i = 0; i < n; i++)
    mpfr_clear (xb + i);
  free (xb);
  ops->work_free (ctx, w);
  return k;

fail:
  if (w)
    ops->work_free (ctx, w);
  free (xb);
  if (k)
    cache_free (k);
  return NULL;
}

static const cache *
find (gcm_mpseq *c, mpfr_prec_t p)
{
  for (cache *k = atomic_load (&c->caches); k; k = k->next)
    if (k->prec == p)
      return k;
  return NULL;
}

/* Every evaluation looks its cache up; only a missing one takes the lock,
   so that concurrent callbacks do not queue on it.  A cache, once in the
   list, never changes until gcm_mpseq_clear.  */
static const cache *
lookup (gcm_mpseq *c, const gcm_mpseq_ops *ops, const void *ctx,
        const float *x0, size_t n, mpfr_prec_t p)
{
  const cache *found = find (c, p);
  if (found)
    return found;
  pthread_mutex_lock (&c->lock);
  found = find (c, p);
  if (!found)
    {
      cache *k = build (ops, ctx, x0, n, p);
      if (k)
        {
          k->next = atomic_load (&c->caches);
          atomic_store (&c->caches, k);
        }
      found = k;
    }
  pthread_mutex_unlock (&c->lock);
  return found;
}

/* One step's prepared inputs: I numbers at precision P; NULL when memory
   runs out.  */
static mpfr_t *
inputs_new (size_t I, mpfr_prec_t p)
{
  mpfr_t *in = malloc ((I + 1) * sizeof *in);
  for (size_t i = 0; in && i < I; i++)
    mpfr_init2 (in[i], p);
  return in;
}

static void
inputs_free (mpfr_t *in, size_t I)
{
  for (size_t i = 0; in && i < I; i++)
    mpfr_clear (in[i]);
  free (in);
}

/* The scratch of one evaluation at precision P and a step's inputs: 0, or
   -1 holding nothing when memory runs out.  */
static int
eval_new (const gcm_mpseq_ops *ops, const void *ctx, mpfr_prec_t p,
          void **w, mpfr_t **in)
{
  *w = ops->work_new (ctx, p);
  *in = inputs_new (ops->input_size, p);
  if (*w && *in)
    return 0;
  if (*w)
    ops->work_free (ctx, *w);
  inputs_free (*in, ops->input_size);
  return -1;
}

static void
eval_free (const gcm_mpseq_ops *ops, const void *ctx, void *w, mpfr_t *in)
{
  inputs_free (in, ops->input_size);
  ops->work_free (ctx, w);
}

int
gcm_mpseq_loss (gcm_mpseq *c, const gcm_mpseq_ops *ops, const void *ctx,
                const float *x0, size_t n, mpfr_srcptr x, mpfr_ptr loss)
{
  size_t S = ops->n_seq, T = ops->steps, Z = ops->state_size;
  mpfr_prec_t p = mpfr_get_prec (loss);
  /* Without a cache (memory ran out) every sequence runs in full.  */
  const cache *k = lookup (c, ops, ctx, x0, n, p);
  size_t I = ops->input_size;
  void *w;
  mpfr_t *in;
  if (eval_new (ops, ctx, p, &w, &in))
    return -1;
  mpfr_t *st = ops->state (w);
  mpfr_t L, acc;
  mpfr_inits2 (p, L, acc, (mpfr_ptr) 0);
  mpfr_set_zero (L, 1);
  for (size_t s = 0; s < S; s++)
    {
      /* The first step whose inputs differ from the base point's: 0 when
         the initial state (or a shared parameter) does, T when none.  */
      size_t t0 = 0;
      if (k && !ops->initial_differs (ctx, x, s))
        while (t0 < T && !ops->inputs_differ (ctx, x, s, t0))
          t0++;
      if (k && t0 == T)
        {
          mpfr_add (L, L, k->total[s], MPFR_RNDN);
          continue;
        }
      if (k && t0 > 0)
        {
          for (size_t z = 0; z < Z; z++)
            mpfr_set (st[z], k->states[(s * (T + 1) + t0) * Z + z], MPFR_RNDN);
          mpfr_set (acc, k->prefix[s * (T + 1) + t0], MPFR_RNDN);
        }
      else
        {
          ops->init_state (ctx, x, s, w);
          mpfr_set_zero (acc, 1);
          t0 = 0;
        }
      for (size_t t = t0; t < T; t++)
        if (!k || ops->inputs_differ (ctx, x, s, t))
          {
            ops->prepare (ctx, x, s, t, w, in);
            ops->step (ctx, s, t, in, w, acc);
          }
        else
          ops->step (ctx, s, t, k->inputs + (s * T + t) * I, w, acc);
      ops->final (ctx, s, w, acc);
      mpfr_add (L, L, acc, MPFR_RNDN);
    }
  mpfr_set (loss, L, MPFR_RNDN);
  mpfr_clears (L, acc, (mpfr_ptr) 0);
  eval_free (ops, ctx, w, in);
  return 0;
}

int
gcm_mpseq_outputs (const gcm_mpseq_ops *ops, const void *ctx,
                   mpfr_srcptr x, mpfr_ptr out)
{
  size_t S = ops->n_seq, T = ops->steps, Z = ops->state_size;
  void *w;
  mpfr_t *in;
  if (eval_new (ops, ctx, mpfr_get_prec (out), &w, &in))
    return -1;
  mpfr_t *st = ops->state (w);
  mpfr_ptr final = out + S * T * ops->step_outputs;
  for (size_t s = 0; s < S; s++)
    {
      ops->init_state (ctx, x, s, w);
      for (size_t t = 0; t < T; t++)
        {
          ops->prepare (ctx, x, s, t, w, in);
          ops->step_out (ctx, s, t, in, w, out);
        }
      for (size_t z = 0; z < Z; z++)
        mpfr_set (final + s * Z + z, st[z], MPFR_RNDN);
    }
  eval_free (ops, ctx, w, in);
  return 0;
}
