/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* worker.c -- the workers of a check: their state, the loop that takes
   each worker's share of the directions, and the serial recheck after a
   parallel run ("Determinism and reentrancy").  */

#include "model/check-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
gc__worker_free (worker *w)
{
  if (w->xm)
    {
      for (size_t j = 0; j < w->sh->n; j++)
        mpfr_clear (w->xm + j);
      free (w->xm);
      mpfr_clears (w->lv, w->t1, w->t2, w->t3, w->prod, w->f[0], w->f[1],
                   w->f[2], w->f[3], w->f0w, (mpfr_ptr) 0);
      for (int k = 0; k < 3; k++)
        mpfr_clear (w->lout + k);
    }
  free (w->xf);
  free (w->xd);
  free (w->v);
  free (w->dp);
  free (w->dm);
}

bool
gc__worker_init (worker *w, shared *sh, unsigned id, unsigned count)
{
  memset (w, 0, sizeof *w);
  w->sh = sh;
  w->stencil_index = SIZE_MAX;
  w->id = id;
  w->count = count;
  size_t n = sh->n;
  w->xf = malloc (n * sizeof *w->xf);
  w->xd = malloc (n * sizeof *w->xd);
  bool random = sh->o->directions == GC_DIR_RANDOM
                || sh->o->directions == GC_DIR_SCREEN;
  if (random)
    {
      w->v = malloc (n * sizeof *w->v);
      w->dp = malloc (n * sizeof (double));
      w->dm = malloc (n * sizeof (double));
    }
  bool need_mpfr = sh->ref == GC_REF_MPFR || sh->best == GC_REF_MPFR;
  if (need_mpfr)
    w->xm = malloc (n * sizeof *w->xm);
  if (!w->xf || !w->xd || (random && (!w->v || !w->dp || !w->dm))
      || (need_mpfr && !w->xm))
    {
      if (need_mpfr && w->xm)
        {
          free (w->xm);
          w->xm = NULL;
        }
      gc__worker_free (w);
      return false;
    }
  for (size_t j = 0; j < n; j++)
    {
      w->xf[j] = sh->x[j];
      w->xd[j] = sh->x[j];
    }
  if (need_mpfr)
    {
      for (size_t j = 0; j < n; j++)
        {
          mpfr_init2 (w->xm + j, 24);
          mpfr_set_flt (w->xm + j, sh->x[j], MPFR_RNDN);
        }
      mpfr_init2 (w->lv, sh->p);
      mpfr_init2 (w->t1, 128);
      mpfr_init2 (w->t2, 2 * sh->p);
      mpfr_init2 (w->t3, 2 * sh->p);
      /* prod holds v_j * g_j exactly (24 + 24 bits) and the sums of
         D(2h)'s differences (2p); 256 covers the first with room.  */
      mpfr_init2 (w->prod, 2 * sh->p > 256 ? 2 * sh->p : 256);
      for (int k = 0; k < 4; k++)
        mpfr_init2 (w->f[k], sh->p);
      mpfr_init2 (w->lout, sh->p);
      for (int k = 1; k < 3; k++)
        {
          mpfr_init2 (w->lout + k, 2);
          mpfr_set_ui (w->lout + k, 3, MPFR_RNDN);
        }
      mpfr_init2 (w->f0w, sh->p);
      w->wp = sh->p;
    }
  return true;
}

void *
gc__worker_run (void *arg)
{
  worker *w = arg;
  shared *sh = w->sh;
  gc_result *r = sh->r;
  gc__fpenv_reset (sh);   /* the library's, whatever its creator's was */
  for (size_t pos = sh->first + w->id; pos < r->n_directions;
       pos += w->count)
    {
      if (atomic_load (&sh->stop))
        break;
      gc_direction *d = &r->dirs[pos];
      bool ok = gc__direction (w, d);
      ok = ok && gc__inputs_intact (w);
      if (!ok)
        {
          pthread_mutex_lock (&sh->lock);
          if (pos < sh->err_pos)
            {
              sh->err_pos = pos;
              r->status = w->st;
              r->callback_code = w->cb;
              snprintf (r->detail, sizeof r->detail, "%s", w->detail);
            }
          pthread_mutex_unlock (&sh->lock);
          atomic_store (&sh->stop, 1);
          break;
        }
      size_t done = atomic_fetch_add (&sh->done, 1) + 1;
      if (w->id == 0 && sh->o->progress)
        {
          gc__fpenv_model (sh);
          sh->o->progress (sh->o->progress_ctx, done, r->n_directions);
          gc__fpenv_reset (sh);
        }
    }
  /* MPFR's constant caches are per thread: free this thread's.  */
  if (w->id != 0)
    mpfr_free_cache2 (MPFR_FREE_LOCAL_CACHE);
  return NULL;
}

/* After a parallel run: evaluate a few directions again on the calling
   thread and compare the bits ("Determinism and reentrancy"): the worst
   direction and the first, middle and last.  */
bool
gc__recheck_serial (shared *sh, worker *w)
{
  gc_result *r = sh->r;
  size_t mine = r->n_directions, worst = 0;
  if (mine == 0)
    return true;
  for (size_t k = 1; k < mine; k++)
    if (r->dirs[k].nu > r->dirs[worst].nu)
      worst = k;
  size_t pos[4] = { worst, 0, mine / 2, mine - 1 };
  for (int j = 0; j < 4; j++)
    {
      bool seen = false;
      for (int i = 0; i < j; i++)
        seen |= pos[i] == pos[j];
      if (seen)
        continue;
      const gc_direction *d = &r->dirs[pos[j]];
      gc_direction again = *d;
      bool ok = gc__direction (w, &again);
      if (!ok)
        return false;
      if (memcmp (&again.reference, &d->reference, sizeof d->reference)
          || memcmp (&again.d2h, &d->d2h, sizeof d->d2h)
          || memcmp (&again.jump, &d->jump, sizeof d->jump))
        {
          char nm[96];
          if (d->index == SIZE_MAX)
            snprintf (nm, sizeof nm, "random direction %zu", d->id);
          else
            gc_param_name (r, d->index, nm, sizeof nm);
          gc__note_nondeterminism (r, GC_ND_THREADS, pos[j], d->reference,
                                   again.reference,
                                   "%s: D(h) = %.9g in parallel, %.9g "
                                   "serially: a callback is not reentrant",
                                   nm, d->reference, again.reference);
        }
    }
  return true;
}
