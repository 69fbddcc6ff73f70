/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* directions.c -- which directions a check takes and their steps: the
   default step of a coordinate or a random direction ("Default precision
   and step"), and the random directions themselves.  */

#include "model/check-internal.h"

#include <math.h>

/* The block a random direction ID is drawn in (random_per_block), or
   NULL for one over the whole vector.  */
static const gc_block *
random_block (const shared *sh, size_t id)
{
  size_t k = sh->r->random_per_block;
  return k && sh->m->n_blocks ? &sh->m->blocks[id / k] : NULL;
}

/* The step of direction INDEX as HM * 2^HE ("Default precision and
   step"): the user's step, or 2^(floor(log2 s) + step exponent), never
   formed as a double in MPFR mode (at p = 3300 it is below 2^-1074).  */
void
gc__step_scaled (const shared *sh, size_t index, size_t id, double *hm,
                 long *he)
{
  if (sh->user_step)
    {
      *hm = sh->h_user;
      *he = 0;
      return;
    }
  double s = index == SIZE_MAX ? sh->scale_random : sh->scale[index];
  const gc_block *b = index == SIZE_MAX ? random_block (sh, id) : NULL;
  if (b)
    /* the norm of x over the block, as scale_random is over x */
    s = gc__support_norm (sh->x, NULL, b->offset, b->offset + b->count);
  int e;
  frexp (s, &e);     /* s in [2^(e-1), 2^e) */
  *hm = 1;
  *he = e - 1 + (long) sh->r->step_exponent;
}

void
gc__make_random (const shared *sh, size_t id, float *v, double *norm_out)
{
  /* Within one block (zero elsewhere) when drawn per block.  */
  const gc_block *b = random_block (sh, id);
  size_t lo = b ? b->offset : 0, hi = b ? b->offset + b->count : sh->n;
  gc__draw_direction (sh->o->seed, sh->n, lo, hi, id, v, norm_out);
}

void
gc__draw_direction (uint64_t seed, size_t n, size_t lo, size_t hi, size_t id,
                    float *v, double *norm_out)
{
  gc__rng rng;
  gc__rng_seed (&rng, seed ^ (0xd1b54a32d192ed03u * (uint64_t) (id + 1)));
  double norm = 0;
  for (size_t i = 0; i < n; i++)
    {
      double z = i >= lo && i < hi ? gc__rng_gaussian (&rng) : 0;
      v[i] = (float) z;
      norm += (double) v[i] * v[i];
    }
  norm = sqrt (norm);
  for (size_t i = lo; i < hi; i++)
    v[i] = (float) (v[i] / norm);
  /* N = ||zeta||_2, the norm the draws were divided by (manual:
     "Directional checks") */
  if (norm_out)
    *norm_out = norm;
}
