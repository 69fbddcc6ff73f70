/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* tensors.c -- where the directions of a check lie, and the per-tensor,
   per-axis summary of its failures (manual: "Diagnosis", "Tensors"),
   which the diagnosis (diagnose.c) and every report read.  */

#include "base/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Where a direction lies.  */

/* The block holding coordinate INDEX (blocks partition [0, n) in order), or
   SIZE_MAX.  */
static size_t
block_index_of (const gc_result *r, size_t index)
{
  size_t lo = 0, hi = r->n_blocks;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      const gc_block *b = &r->blocks[mid];
      if (index < b->offset)
        hi = mid;
      else if (index >= b->offset + b->count)
        lo = mid + 1;
      else
        return mid;
    }
  return SIZE_MAX;
}

size_t
gc__direction_block (const gc_result *r, const gc_direction *d)
{
  if (d->index != SIZE_MAX)
    return block_index_of (r, d->index);
  if (r->random_per_block && r->n_blocks)
    {
      size_t b = d->id / r->random_per_block;
      return b < r->n_blocks ? b : SIZE_MAX;
    }
  return SIZE_MAX;
}

/* ---------------------------------------------------------------------- */
/* Per-tensor, per-axis summary (manual: "Diagnosis", "Tensors").  */

/* Append to OUT the index set {j : in[j]} of an axis of length N as at most
   MAXR ranges "0-22, 24"; false when it needs more.  */
static bool
ranges (const unsigned char *in, size_t n, size_t maxr, char *out,
        size_t size)
{
  size_t nr = 0, len = 0;
  out[0] = 0;
  for (size_t j = 0; j < n;)
    {
      if (!in[j])
        {
          j++;
          continue;
        }
      size_t e = j;
      while (e + 1 < n && in[e + 1])
        e++;
      if (++nr > maxr)
        return false;
      int w = e == j ? snprintf (out + len, size - len, "%s%zu",
                                 len ? ", " : "", j)
                     : snprintf (out + len, size - len, "%s%zu-%zu",
                                 len ? ", " : "", j, e);
      if (w < 0 || (size_t) w >= size - len)
        return false;
      len += (size_t) w;
      j = e + 1;
    }
  return true;
}

/* The exact structure of the failures of block B along each axis, from the
   per-element STATE (0 unchecked or non-smooth, 1 pass, 2 fail):
   "axis 0: 0-22 fail, 23 passes".  An axis is reported when some of its
   indices hold failures and others hold checked elements that all pass.
   False when memory runs out.  */
static bool
axis_structure (const gc_block *b, const unsigned char *state, char *out,
                size_t size)
{
  out[0] = 0;
  size_t nd = b->ndim ? b->ndim : 1;
  size_t len = 0, stride = 1;
  size_t shape[GC_MAX_DIMS];
  for (size_t a = 0; a < nd; a++)
    shape[a] = b->ndim ? b->shape[a] : b->count;
  for (size_t a = nd; a-- > 0;)
    {
      size_t dim = shape[a];
      if (dim < 2)
        {
          stride *= dim ? dim : 1;
          continue;
        }
      size_t *chk = calloc (dim, sizeof *chk), *fl = calloc (dim, sizeof *fl);
      unsigned char *fs = calloc (dim, 1), *ps = calloc (dim, 1);
      if (!chk || !fl || !fs || !ps)
        {
          free (chk);
          free (fl);
          free (fs);
          free (ps);
          return false;
        }
        {
          for (size_t e = 0; e < b->count; e++)
            {
              size_t j = (e / stride) % dim;
              chk[j] += state[e] != 0;
              fl[j] += state[e] == 2;
            }
          size_t nfail = 0, npass = 0;
          bool whole = true;   /* every checked element of a failing index */
          for (size_t j = 0; j < dim; j++)
            {
              fs[j] = fl[j] > 0;
              ps[j] = chk[j] > 0 && fl[j] == 0;
              nfail += fs[j];
              npass += ps[j];
              if (fl[j] && fl[j] != chk[j])
                whole = false;
            }
          char f[80], p[80];
          if (nfail && npass)
            {
              bool okf = ranges (fs, dim, 3, f, sizeof f);
              bool okp = ranges (ps, dim, 3, p, sizeof p);
              int w = -1;
              if (okf && okp)
                w = snprintf (out + len, size - len, "%saxis %zu: %s %s, %s "
                              "%s", len ? "; " : "", a, f,
                              whole ? (nfail == 1 ? "fails" : "fail")
                              : nfail == 1 ? "holds the failures"
                                           : "hold the failures", p,
                              npass == 1 ? "passes" : "pass");
              else if (okf)
                w = snprintf (out + len, size - len, "%saxis %zu: failures "
                              "only in %s (of 0-%zu)", len ? "; " : "", a, f,
                              dim - 1);
              else if (okp)
                w = snprintf (out + len, size - len, "%saxis %zu: only %s "
                              "%s (of 0-%zu)", len ? "; " : "", a, p,
                              npass == 1 ? "passes" : "pass", dim - 1);
              if (w >= 0 && (size_t) w < size - len)
                len += (size_t) w;
              else
                out[len] = 0;
            }
        }
      free (chk);
      free (fl);
      free (fs);
      free (ps);
      stride *= dim;
    }
  return true;
}

int
gc__cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The medians of tensor T (directions K with BIDX[K] == B): its
   resolution over the directions that resolve, its relative error over
   the failures.  RES: scratch for every direction of R.  */
static void
medians (const gc_result *r, const size_t *bidx, size_t b, double *res,
         gc__tensor *t)
{
  size_t nr = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    if (bidx[k] == b && r->dirs[k].verdict != GC_ERROR
        && isfinite (r->dirs[k].resolution))
      res[nr++] = r->dirs[k].resolution;
  if (nr)
    {
      qsort (res, nr, sizeof *res, gc__cmp_double);
      t->resolution = res[nr / 2];
    }
  else
    t->resolution = NAN;
  nr = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    if (bidx[k] == b && r->dirs[k].verdict == GC_FAIL)
      res[nr++] = r->dirs[k].reference != 0
                  ? r->dirs[k].diff / fabs (r->dirs[k].reference)
                  : INFINITY;
  if (nr)
    {
      qsort (res, nr, sizeof *res, gc__cmp_double);
      t->rel_error = res[nr / 2];
    }
}

/* Manual: "Directional checks", "What a pass rules out": a_k, the bound
   of P(|<v, e>| / ||e||_2 <= eps) / eps for v uniform on the unit sphere
   of R^k (k >= 2): 2 c_k, c_k = Gamma(k/2) / (sqrt(pi) Gamma((k - 1)/2))
   the density's largest value (k >= 3), and 1 for k = 2.  */
static double
sphere_a (size_t k)
{
  if (k == 2)
    return 1;
  double kd = (double) k;
  return 2 * exp (lgamma (kd / 2) - lgamma ((kd - 1) / 2))
         / 1.7724538509055160273;     /* sqrt (pi) */
}

/* Manual: "Directional checks", "What a pass rules out": T's rules_out
   E* = 2 a_k B* alpha^(-1/K) over its K directions that can fail (the
   algorithm's: the twin's bar and g64 where there is one), B* their
   largest bar, and rules_out_rel E* / (sqrt(k) rms_j <v_j, g>), for a
   tensor of random directions (K of them within K elements of
   K_ELEMENTS) with no failure.  Gradient checks only: the bound is
   derived for <v, g> with v uniform on the sphere, not for a tangent or
   a Hessian-vector product.  */
static void
rules_out (const gc_result *r, const size_t *bidx, size_t b,
           size_t k_elements, gc__tensor *t)
{
  t->rules_out = t->rules_out_rel = NAN;
  t->rules_out_f32 = t->rules_out_f32_rel = NAN;
  if (r->kind != GC_CHECK_GRADIENT || t->failed || k_elements < 2)
    return;
  size_t kk = 0, ka = 0;
  double bmax = 0, amax = 0, ss = 0;
  for (size_t q = 0; q < r->n_directions; q++)
    {
      const gc_direction *d = &r->dirs[q];
      if (bidx[q] != b)
        continue;
      bool twin = r->twin && !isnan (d->analytic_f64);
      gc_verdict v = twin ? d->verdict_algorithm : d->verdict;
      double bar = twin ? d->bar_f64 : d->bar;
      double g = twin ? d->analytic_f64 : d->analytic;
      /* the f32 path's arithmetic, judged by its bound alone (an
         excess is never a pass)  */
      if (twin && d->arith != GC_ARITH_NONE && isfinite (d->arith_bar))
        {
          ka++;
          amax = fmax (amax, d->arith_bar);
        }
      if ((v != GC_PASS && v != GC_FAIL && v != GC_PRECISION)
          || !isfinite (bar) || !isfinite (g))
        continue;
      kk++;
      bmax = fmax (bmax, bar);
      ss += g * g;
    }
  if (!kk || !(r->false_alarm > 0 && r->false_alarm < 1))
    return;
  double e = 2 * sphere_a (k_elements) * bmax
             * pow (r->false_alarm, -1 / (double) kk);
  if (!isfinite (e))
    return;
  t->rules_out = e;
  double norm = sqrt ((double) k_elements * ss / (double) kk);
  if (norm > 0 && isfinite (norm))
    t->rules_out_rel = e / norm;
  /* the f32 path alone: |<v, g32 - g64>| > A_j fails the arithmetic, no
     reference between them, so no factor 2 (manual: "What a pass rules
     out")  */
  if (!ka || t->precision || t->inconclusive)
    return;
  double e32 = sphere_a (k_elements) * amax
               * pow (r->false_alarm, -1 / (double) ka);
  if (!isfinite (e32))
    return;
  t->rules_out_f32 = e32;
  if (norm > 0 && isfinite (norm))
    t->rules_out_f32_rel = e32 / norm;
}

/* The structure of the failures of tensor T (block BL; directions K with
   BIDX[K] == B), some of which fail, in T->structure.  False when memory
   runs out.  */
static bool
structure (const gc_result *r, const size_t *bidx, size_t b,
           const gc_block *bl, gc__tensor *t)
{
  if (t->failed == t->checked)
    {
      snprintf (t->structure, sizeof t->structure,
                "every checked element fails");
      return true;
    }
  unsigned char *state = calloc (bl->count ? bl->count : 1, 1);
  if (!state)
    return false;
  /* A pass is evidence of a right element only where an error of the
     failures' size would show: its resolution at most half their
     median relative error (manual: "Diagnosis").  A coarser pass (a
     uniform 1e-4 error where the resolution is 1e-4) says nothing,
     and no axis structure is built on it.  */
  size_t ninformative = 0, coarse = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (bidx[k] != b || d->index == SIZE_MAX)
        continue;
      size_t e = d->index - bl->offset;
      if (d->verdict == GC_FAIL)
        state[e] = 2;
      else if (d->verdict == GC_PASS && state[e] != 2
               && fabs (d->resolution) <= t->rel_error / 2)
        {
          state[e] = 1;
          ninformative++;
        }
      else if (d->verdict == GC_PASS)
        coarse++;
    }
  if (!ninformative)
    {
      snprintf (t->structure, sizeof t->structure,
                "every element that resolves an error of this size "
                "fails (%zu %s coarser)", coarse,
                coarse == 1 ? "pass is" : "passes are");
      free (state);
      return true;
    }
  bool ok = axis_structure (bl, state, t->structure, sizeof t->structure);
  free (state);
  return ok;
}

gc_status
gc__tensors (const gc_result *r, gc__tensor **out, size_t *count)
{
  *out = NULL;
  *count = 0;
  bool coords = r->direction_kind != GC_DIR_RANDOM;
  /* Manual: "Screening": a block of a screened check is one of random
     directions where it has no coordinate  */
  bool screen = r->direction_kind == GC_DIR_SCREEN;
  bool per_block = r->n_blocks && (coords || r->random_per_block);
  size_t nt = per_block ? r->n_blocks : 1;
  gc__tensor *t = calloc (nt, sizeof *t);
  double *res = malloc ((r->n_directions ? r->n_directions : 1) * sizeof *res);
  size_t *bidx = malloc ((r->n_directions ? r->n_directions : 1)
                         * sizeof *bidx);
  if (!t || !res || !bidx)
    goto oom;
  for (size_t k = 0; k < nt; k++)
    {
      t[k].name = per_block ? r->blocks[k].name
                  : coords ? "x" : "random directions";
      t[k].block = per_block ? k : SIZE_MAX;
    }
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      bidx[k] = per_block ? gc__direction_block (r, d) : 0;
      if (bidx[k] == SIZE_MAX || d->verdict == GC_ERROR)
        continue;
      gc__tensor *e = &t[bidx[k]];
      e->coordinates += d->index != SIZE_MAX;
      e->checked++;
      e->failed += d->verdict == GC_FAIL;
      e->nonsmooth += d->verdict == GC_NONSMOOTH;
      e->precision += d->verdict == GC_PRECISION;
      e->inconclusive += d->verdict == GC_INCONCLUSIVE;
      if (e->checked == 1 || d->nu > e->worst_nu)
        e->worst_nu = d->nu;
    }
  for (size_t b = 0; b < nt; b++)
    {
      medians (r, bidx, b, res, &t[b]);
      if (screen)
        coords = t[b].coordinates > 0;
      if (!coords)
        rules_out (r, bidx, b, per_block ? r->blocks[b].count : r->n, &t[b]);
      else
        t[b].rules_out = t[b].rules_out_rel = t[b].rules_out_f32
          = t[b].rules_out_f32_rel = NAN;
      if (!t[b].failed || !coords)
        continue;
      gc_block whole = { "x", 0, r->n, 1, { r->n } };
      if (!structure (r, bidx, b, per_block ? &r->blocks[b] : &whole, &t[b]))
        goto oom;
    }
  free (res);
  free (bidx);
  *out = t;
  *count = nt;
  return GC_OK;
oom:
  free (t);
  free (res);
  free (bidx);
  return GC_ENOMEM;
}
