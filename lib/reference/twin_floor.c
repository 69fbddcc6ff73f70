/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* twin_floor.c -- the measured floor of the f32 arithmetic (manual: "The
   measured floor"): the f64 twin's gradient at points each parameter moved
   by one f32 ulp, and per direction the floor F_w and the arithmetic's
   bound it gives.  */

#include "model/check-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Manual: "The measured floor": the draws' signs, from the check's seed
   (an odd constant keeps them apart from the random directions').  */
#define FLOOR_SEED_MIX 0x9e3779b97f4a7c15ull

/* Manual: "The measured floor": grad_f64 at GC_FLOOR_DRAWS points x'_k,
   each f32 parameter moved by one ulp toward +-infinity (a sign per
   parameter and draw from the check's seed; zero stays zero), into
   sh->g64f[0 .. n_floor).  A draw whose gradient is not finite, or whose
   call returns an error code, is left out with a note in r->floor_note;
   an overrun, the time limit or memory stop the check as at the centre
   (the returned status).  Needs the worker's point at x on entry, and
   leaves it there.  */
gc_status
gc__twin_floor_centre (shared *sh, worker *w0)
{
  gc_result *r = sh->r;
  r->floor_draws = 0;
  r->floor_note[0] = 0;
  sh->n_floor = 0;
  gc__rng g;
  gc__rng_seed (&g, r->seed ^ FLOOR_SEED_MIX);
  for (int k = 0; k < GC_FLOOR_DRAWS; k++)
    {
      for (size_t j = 0; j < sh->n; j++)
        {
          float x = sh->x[j];
          bool up = gc__rng_next (&g) >> 63;
          if (x == 0 || !isfinite (x))
            continue;
          float t = nextafterf (x, up ? INFINITY : -INFINITY);
          if (!isfinite (t))
            t = nextafterf (x, up ? -INFINITY : INFINITY);
          w0->xd[j] = (double) t;
        }
      bool nomem;
      double *gk = gc__twin_call (w0, -1, " at a point moved by an ulp",
                                  &nomem, 0);
      for (size_t j = 0; j < sh->n; j++)
        w0->xd[j] = (double) sh->x[j];
      if (!gk && nomem)
        return GC_ENOMEM;
      if (!gk && w0->st != GC_ECALLBACK)
        return w0->st;
      size_t bad = SIZE_MAX;
      for (size_t j = 0; gk && j < sh->n && bad == SIZE_MAX; j++)
        if (!isfinite (gk[j]))
          bad = j;
      if (!gk || bad != SIZE_MAX)
        {
          /* left out, and said why (as the modes' twin_rounding_note) */
          if (!r->floor_note[0])
            {
              char nm[64];
              if (gk)
                gc_param_name (r, bad, nm, sizeof nm);
              if (gk)
                snprintf (r->floor_note, sizeof r->floor_note,
                          "grad_f64 gave %g at %s at a point moved by an "
                          "ulp", gk[bad], nm);
              else
                snprintf (r->floor_note, sizeof r->floor_note, "%s",
                          w0->detail);
            }
          if (!gk)
            {
              w0->st = GC_OK;
              w0->cb = 0;
              w0->detail[0] = 0;
            }
          gc__guarded_free (gk);
          continue;
        }
      sh->g64f[sh->n_floor++] = gk;
    }
  r->floor_draws = sh->n_floor;
  return GC_OK;
}

void
gc__twin_floor_free (shared *sh)
{
  for (int k = 0; k < GC_FLOOR_DRAWS; k++)
    {
      gc__guarded_free (sh->g64f[k]);
      sh->g64f[k] = NULL;
    }
  sh->n_floor = 0;
}

/* Neumaier's compensated sum, one term at a time (as twin.c's).  */
typedef struct csum
{
  double s, c;
} csum;

static void
csum_add (csum *a, double t)
{
  double y = a->s + t;
  a->c += fabs (a->s) >= fabs (t) ? (a->s - y) + t : (t - y) + a->s;
  a->s = y;
}

/* Manual: "The measured floor": F_w = P_w + u sum_j |w_j| m_j (m_j the
   twin's magnitudes: declared, or the tensor's largest |g64|), P_w =
   max_k |sum_j w_j (g64(x'_k)_j - g64(x)_j)|, into D (NaN where no draw
   was kept); and the arithmetic's bound *B (classes included, B32 its
   f32 part at the declared depth) replaced by kappa F_w plus the classes'
   part where the backward depth is defaulted; a declared depth's bound
   stands.  */
void
gc__twin_floor_bar (const worker *w, gc_direction *d, double b32, double *b)
{
  const shared *sh = w->sh;
  const gc_result *r = sh->r;
  d->arith_floor = d->arith_floor_probe = NAN;
  if (!sh->n_floor)
    return;
  double p = 0, out = 0;
  if (d->index != SIZE_MAX)
    {
      size_t i = d->index;
      for (unsigned k = 0; k < sh->n_floor; k++)
        p = fmax (p, fabs (sh->g64f[k][i] - sh->g64[i]));
      out = sh->mag[i];
    }
  else
    {
      csum s[GC_FLOOR_DRAWS], o = { 0, 0 };
      memset (s, 0, sizeof s);
      for (size_t j = 0; j < sh->n; j++)
        {
          double wj = gc__twin_weight (w, d, j);
          csum_add (&o, fabs (wj) * sh->mag[j]);
          for (unsigned k = 0; k < sh->n_floor; k++)
            csum_add (&s[k], (sh->g64f[k][j] - sh->g64[j]) * wj);
        }
      for (unsigned k = 0; k < sh->n_floor; k++)
        p = fmax (p, fabs (s[k].s + s[k].c));
      out = o.s + o.c;
    }
  double f = p + GC_U32 * out;
  if (!isfinite (f))
    return;
  d->arith_floor = f;
  d->arith_floor_probe = p;
  /* a declared depth's bound stands: the under-declaration it may hide
     is what "Twin rounding the modes do not reach" reads */
  if (r->defaulted & GC_DEFAULTED_BACKWARD_DEPTH)
    *b = GC_FLOOR_MARGIN * f + (*b - b32);
}
