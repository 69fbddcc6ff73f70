/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* scales.c -- the scales of a step and the default magnitudes (manual:
   "Default precision and step", "Adjoint rounding"), for every check.  */

#include "model/scales.h"

#include <math.h>

void
gc__scales (const gc_model *m, const float *x, double *scale)
{
  size_t nb = m->n_blocks ? m->n_blocks : 1;
  for (size_t b = 0; b < nb; b++)
    {
      size_t off = m->n_blocks ? m->blocks[b].offset : 0;
      size_t cnt = m->n_blocks ? m->blocks[b].count : m->n;
      double sq = 0;
      for (size_t i = off; i < off + cnt; i++)
        sq += (double) x[i] * x[i];
      double rms = sqrt (sq / (double) cnt);
      for (size_t i = off; i < off + cnt; i++)
        {
          double s = fmax (fabs ((double) x[i]), rms);
          scale[i] = s > 0 ? s : 1.0;
        }
    }
}

double
gc__support_norm (const float *x, const float *v, size_t lo, size_t hi)
{
  double sq = 0;
  for (size_t i = lo; i < hi; i++)
    if (!v || v[i] != 0)
      sq += (double) x[i] * x[i];
  return sq > 0 ? sqrt (sq) : 1.0;
}

void
gc__block_max (const gc_model *m, const double *g, double *mag)
{
  size_t nb = m->n_blocks ? m->n_blocks : 1;
  for (size_t b = 0; b < nb; b++)
    {
      size_t off = m->n_blocks ? m->blocks[b].offset : 0;
      size_t cnt = m->n_blocks ? m->blocks[b].count : m->n;
      double mx = 0;
      for (size_t i = off; i < off + cnt; i++)
        mx = fmax (mx, fabs (g[i]));
      for (size_t i = off; i < off + cnt; i++)
        mag[i] = mx;
    }
}
