/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check.c -- gc_check: options, validation, the gc__centre (the gradient,
   magnitudes, scales and the reference's centre value), and the
   orchestration of the workers (worker.c) over the directions, which
   stencil.c evaluates and judges.  */

#include "model/check-internal.h"

#include <float.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void
gc_options_init (gc_options *o)
{
  if (!o)
    return;
  memset (o, 0, sizeof *o);
  o->reference = GC_REF_AUTO;   /* manual: "The tiered reference" */
  o->directions = GC_DIR_ALL;
  o->seed = 1;
  o->false_alarm = 1e-6;
  o->threads = 1;
}

/* The NT workers WS over the directions, worker 0 on this thread; with
   more than one, a serial recheck (manual: "Determinism and
   reentrancy").  */
static gc_status
run_workers (shared *sh, worker *ws, unsigned nt)
{
  gc_result *r = sh->r;
  gc_status st = GC_OK;
  pthread_t *tids = calloc (nt, sizeof *tids);
  unsigned started = 0;
  if (!tids)
    st = GC_ENOMEM;
  else
    {
      for (unsigned t = 1; t < nt; t++, started++)
        if (pthread_create (&tids[t], NULL, gc__worker_run, &ws[t]) != 0)
          break;
      gc__worker_run (&ws[0]);
      for (unsigned t = 1; t <= started; t++)
        pthread_join (tids[t], NULL);
      if (started + 1 < nt)
        {
          /* Directions of the threads that could not start.  */
          for (unsigned t = started + 1; t < nt; t++)
            gc__worker_run (&ws[t]);
        }
      free (tids);
    }
  if (st == GC_OK)
    st = r->status;
  if (st == GC_OK && nt > 1 && !gc__recheck_serial (sh, &ws[0]))
    {
      st = ws[0].st;
      r->callback_code = ws[0].cb;
      snprintf (r->detail, sizeof r->detail, "%s", ws[0].detail);
    }
  return st;
}

/* Manual: "Screening", "Finely enough": the resolution of random
   direction D in units of its yardstick's GC_SCREEN_RESOLUTION_64 (the
   twin's algorithm) or _32 (the f32 gradient without a twin): at most 1
   where a scale error of its tensor twice that size fails it.  With a
   twin, ARITH: the same for the f32 path alone, the arithmetic's bound
   over |<g64, w>| in units of _32 (NaN where it was not judged).  */
static double
screen_resolution (const gc_direction *d, double *arith)
{
  *arith = d->arith != GC_ARITH_NONE && isfinite (d->arith_bar)
           ? d->arith_bar / fabs (d->analytic_f64) / GC_SCREEN_RESOLUTION_32
           : NAN;
  return !isnan (d->resolution_f64)
         ? d->resolution_f64 / GC_SCREEN_RESOLUTION_64
         : d->resolution / GC_SCREEN_RESOLUTION_32;
}

/* Manual: "Screening": after the first round, every coordinate of each
   block one of whose random directions did not pass, or none of which
   resolved finely (screen_resolution), judged by the same NT workers WS
   as a second round.  */
static gc_status
escalate (shared *sh, worker *ws, unsigned nt)
{
  gc_result *r = sh->r;
  size_t k = r->random_per_block, first = r->n_directions;
  if (r->direction_kind != GC_DIR_SCREEN || !k)
    return GC_OK;
  size_t nb = r->n_blocks ? r->n_blocks : 1, pos = first;
  for (size_t b = 0; b < nb; b++)
    {
      size_t off = r->n_blocks ? r->blocks[b].offset : 0;
      size_t c = r->n_blocks ? r->blocks[b].count : r->n;
      bool again = false, arith = false;
      double finest = INFINITY, finest_arith = INFINITY, a;
      for (size_t q = 0; q < first && c > k; q++)
        if (r->dirs[q].index == SIZE_MAX && r->dirs[q].id / k == b)
          {
            /* a pass whose f32 gradient is beyond its own bar (the twin
               judged) spares nothing either  */
            again |= r->dirs[q].verdict != GC_PASS || r->dirs[q].nu > 1;
            finest = fmin (finest, screen_resolution (&r->dirs[q], &a));
            arith |= !isnan (a);
            finest_arith = fmin (finest_arith, isnan (a) ? INFINITY : a);
          }
      bool coarse = c > k
                    && (!(finest <= 1) || (arith && !(finest_arith <= 1)));
      r->screen_coarse += coarse && !again;
      again |= coarse;
      for (size_t j = 0; again && j < c && pos < r->screen_room; j++)
        {
          gc_direction *d = &r->dirs[pos++];
          gc__direction_fresh (d, sh->ref);
          d->id = k * nb + off + j;   /* as the first round's (setup.c) */
          d->index = off + j;
        }
    }
  if (pos == first)
    return GC_OK;
  r->n_directions = pos;
  sh->first = first;
  gc_status st = run_workers (sh, ws, nt);
  sh->first = 0;
  return st;
}

static int
by_id (const void *a, const void *b)
{
  size_t x = ((const gc_direction *) a)->id, y = ((const gc_direction *) b)->id;
  return (x > y) - (x < y);
}

/* The severity a verdict adds to a screened block's picture: a failure
   over a precision finding over none (a pass, or a direction that could
   not judge where the block's every coordinate judged).  */
static unsigned
severity (gc_verdict v)
{
  return v == GC_FAIL ? 2 : v == GC_PRECISION ? 1 : 0;
}

/* Manual: "Screening": the random directions of a block the second round
   took, where its coordinates hold a finding at least as severe as any of
   theirs (the block's picture is its elements', and the check's verdict
   the same), are dropped from R and counted in screen_superseded
   (nothing is, where memory for the tally is lacking); then R's
   directions in the order of their ids, as every result's.  */
static void
supersede (gc_result *r)
{
  size_t k = r->random_per_block, nb = r->n_blocks ? r->n_blocks : 1;
  if (r->direction_kind != GC_DIR_SCREEN || !k)
    return;
  /* per block: 1 + the worst severity of its random directions, of its
     coordinates (0: none)  */
  unsigned *worst = r->n_directions > r->screen_first
                    ? calloc (2 * nb, sizeof *worst) : NULL;
  if (!worst)
    {
      qsort (r->dirs, r->n_directions, sizeof *r->dirs, by_id);
      return;
    }
  for (size_t q = 0; q < r->n_directions; q++)
    {
      const gc_direction *d = &r->dirs[q];
      size_t b = r->n_blocks ? gc__direction_block (r, d) : 0;
      unsigned *w = b < nb ? &worst[2 * b + (d->index != SIZE_MAX)] : NULL;
      if (w && 1 + severity (d->verdict) > *w)
        *w = 1 + severity (d->verdict);
    }
  size_t kept = 0;
  for (size_t q = 0; q < r->n_directions; q++)
    {
      const gc_direction *d = &r->dirs[q];
      size_t b = r->n_blocks ? gc__direction_block (r, d) : 0;
      bool drop = d->index == SIZE_MAX && b < nb && worst[2 * b + 1]
                  && worst[2 * b + 1] >= worst[2 * b];
      if (drop)
        r->screen_superseded++;
      else
        r->dirs[kept++] = *d;
    }
  r->n_directions = kept;
  free (worst);
  qsort (r->dirs, r->n_directions, sizeof *r->dirs, by_id);
}

/* Start the NT workers, measure the centre on the first, run them all,
   free them.  A worker that fails to start cleans up after itself: only
   the ready ones are freed.  */
static gc_status
work (shared *sh, unsigned nt)
{
  gc_result *r = sh->r;
  worker *ws = calloc (nt, sizeof *ws);
  unsigned ready = 0;
  gc_status st = ws ? GC_OK : GC_ENOMEM;
  while (st == GC_OK && ready < nt)
    if (gc__worker_init (&ws[ready], sh, ready, nt))
      ready++;
    else
      st = GC_ENOMEM;
  if (st == GC_OK)
    st = gc__centre (sh, &ws[0]);
  if (st == GC_OK)
    {
      st = run_workers (sh, ws, nt);
      if (st == GC_OK)
        st = escalate (sh, ws, nt);
      /* Manual: "A factor the point does not move" */
      if (st == GC_OK && (st = gc__twin_factor (sh, &ws[0])) != GC_OK
          && ws[0].st != GC_OK)
        {
          r->callback_code = ws[0].cb;
          snprintf (r->detail, sizeof r->detail, "%s", ws[0].detail);
        }
      if (st == GC_OK)
        supersede (r);
    }
  else if (ws && ready > 0 && ws[0].st != GC_OK)
    {
      r->callback_code = ws[0].cb;
      snprintf (r->detail, sizeof r->detail, "%s", ws[0].detail);
    }
  if (ws)
    {
      /* Manual: "Where the time goes" */
      for (unsigned t = 0; t < ready; t++)
        for (int k = 0; k < 4; k++)
          {
            r->n_calls[k] += ws[t].n_calls[k];
            r->call_seconds[k] += ws[t].call_seconds[k];
          }
      for (unsigned t = 0; t < ready; t++)
        gc__worker_free (&ws[t]);
      free (ws);
    }
  return st;
}

static gc_status
check (const gc_model *m, const float *x, const gc_options *opts,
       gc_result **out, const fenv_t *model_env, int model_round)
{
  if (!out)
    return GC_EINVAL;
  *out = NULL;
  gc_options defaults;
  gc_options_init (&defaults);
  const gc_options *o = opts ? opts : &defaults;
  if (!m || !x)
    return GC_EINVAL;
  /* A model of ABI version 1 ends before grad_f64: read as one without a
     twin; one of version 2 before the rounding classes and the tangents
     (abi.c).  */
  gc_model v2;
  m = gc__model_by_abi (m, &v2);

  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return GC_ENOMEM;
  *out = r;
  shared sh;
  size_t mine;
  if (gc__setup (m, x, o, r, &sh, model_env, model_round, &mine) != GC_OK)
    return r->status;

  unsigned nt = o->threads > 1 ? o->threads : 1;
  if (nt > mine && mine > 0)
    nt = (unsigned) mine;
  /* The MPFR numbers of the check, estimated and tried before any is made:
     GMP aborts when an allocation fails (manual: "Memory").  Per worker:
     the point (n numbers of up to 128 bits once a step is added), the
     model's copy of it at p (an estimate of the reference forward's own
     work, which only the model knows), nine of the stencil at 2p.  */
  gc_status st = gc__mpfr_room (&sh, nt);
  double t0 = gc__now ();
  if (st == GC_OK)
    st = work (&sh, nt);
  r->work_seconds = gc__now () - t0;   /* manual: "Where the time goes" */
  gc__shared_free (&sh);

  r->status = st;
  if (st != GC_OK && !r->detail[0])
    snprintf (r->detail, sizeof r->detail, "%s", gc_strerror (st));
  gc__summarise (r);
  /* A model that is not a function gets no failure diagnosis
     ("Determinism and reentrancy").  */
  if (st == GC_OK && !r->nondeterministic)
    {
      gc__diagnose (r);
      gc__twin_findings (r);   /* manual: "Two verdicts, one report" */
      gc__predict_f64 (r, m->loss_f64 != NULL, sh.user_step);
    }
  r->check_seconds = gc__now () - t0;
  return st;
}

/* The floating-point environment (manual: "Floating-point environment"):
   the model runs in the caller's without its traps (feholdexcept: flags
   cleared, the rounding mode and flush-to-zero kept), the check's own
   arithmetic in the default one, whatever the caller or a callback
   enabled; the caller's is set back whole on return.  */
gc_status
gc_check (const gc_model *m, const float *x, const gc_options *opts,
          gc_result **out)
{
  fenv_t caller, model;
  feholdexcept (&caller);
  fegetenv (&model);
  int round = fegetround ();
  fesetenv (FE_DFL_ENV);
  gc_status st = check (m, x, opts, out, &model, round);
  fesetenv (&caller);
  return st;
}
