/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* diagnose_shift.c -- the diagnosis patterns that compare an element with
   its neighbours (manual: "Diagnosis"): an exact shift of the reference
   window, an offset constant along an axis, and an approximate shift
   judged on robust spreads.  */

#include "diagnose/diagnose-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Whether the check holds every coordinate of R in order (dirs[j] is
   coordinate j): the shift and offset patterns compare an element with
   its neighbours, passing or failing.  */
static bool
all_coordinates (const gc_result *r)
{
  return r->direction_kind == GC_DIR_ALL && r->shard_count == 1
         && r->n_directions == r->n;
}
/* The fewest usable failures an approximate shift is judged on: it
   compares two robust spreads (median absolute deviations), which a few
   values cannot estimate.  */
#define GC__SHIFT_MIN 8

/* How well reading the reference K places on (K one stride of the lead
   tensor, either way) explains its failures.  EXACT: those it explains
   within the two bars against a resolved partner (outside the block the
   shifted value is zero).  USED: those with a resolved partner inside the
   block whose own difference |a_q - r_q| is at least four times the two
   bars (at a coarse resolution a partner within the bars proves nothing:
   no failure is used).  Over them the ratios to the shifted reference,
   rho_q = a_q / r_{q+K}, and to the own one, a_q / r_q: their medians
   MK, M0 and median absolute deviations SK, S0.  FIT: the used ones with
   |rho_q - MK| <= 4 SK, their range RMIN .. RMAX; the others, and the
   failures with no usable partner, break it: NBREAK of them, the four
   farthest from MK (no usable partner first) in BREAKERS.  */
typedef struct shift_fit
{
  size_t exact, used, fit, inside, nbreak;
  double mk, sk, m0, s0;
  size_t breakers[4];
  double score[4];
  double rmin, rmax;
} shift_fit;

/* Keep INDEX with SCORE among F's four worst breakers.  */
static void
add_breaker (shift_fit *f, size_t index, double score)
{
  f->nbreak++;
  size_t n = f->nbreak < 4 ? f->nbreak : 4, at = n - 1;
  if (f->nbreak > 4 && !(score > f->score[3]))
    return;
  while (at > 0 && score > f->score[at - 1])
    {
      f->breakers[at] = f->breakers[at - 1];
      f->score[at] = f->score[at - 1];
      at--;
    }
  f->breakers[at] = index;
  f->score[at] = score;
}

/* The median of the N values V (sorted in place) and the median of their
   absolute deviations from it (in W, N values of scratch).  */
static void
median_mad (double *v, double *w, size_t n, double *med, double *mad)
{
  qsort (v, n, sizeof *v, gc__cmp_double);
  *med = v[n / 2];
  for (size_t i = 0; i < n; i++)
    w[i] = fabs (v[i] - *med);
  qsort (w, n, sizeof *w, gc__cmp_double);
  *mad = w[n / 2];
}

/* False when memory runs out.  */
static bool
fit_shift (const diag *g, long k, shift_fit *f)
{
  const gc_result *r = g->r;
  const gc_block *blk = g->blk;
  memset (f, 0, sizeof *f);
  f->rmin = INFINITY;
  f->rmax = -INFINITY;
  double *rk = malloc (4 * g->nf * sizeof *rk);
  if (!rk)
    return false;
  double *r0 = rk + g->nf, *tmp = rk + 2 * g->nf, *rho = rk + 3 * g->nf;
  for (size_t q = 0; q < g->nf; q++)
    {
      const gc_direction *d = g->fails[q];
      long j = (long) d->index + k;
      rho[q] = NAN;
      if (j < (long) blk->offset || j >= (long) (blk->offset + blk->count))
        {
          f->exact += fabs (d->analytic) <= d->bar;
          continue;
        }
      const gc_direction *o = &r->dirs[j];
      double tolq = d->bar + o->bar;
      double s = fabs (d->analytic - o->reference);
      bool resolved = o->index == (size_t) j
                      && (o->verdict == GC_PASS || o->verdict == GC_FAIL)
                      && fabs (o->reference) > tolq && d->reference != 0;
      f->inside++;
      f->exact += resolved && s <= tolq;
      if (!resolved || !(d->diff >= 4 * tolq))
        continue;
      rho[q] = d->analytic / o->reference;
      rk[f->used] = rho[q];
      r0[f->used] = d->analytic / d->reference;
      f->used++;
    }
  if (f->used)
    {
      median_mad (rk, tmp, f->used, &f->mk, &f->sk);
      median_mad (r0, tmp, f->used, &f->m0, &f->s0);
    }
  for (size_t q = 0; q < g->nf; q++)
    {
      double dev = fabs (rho[q] - f->mk);
      if (!isnan (rho[q]) && dev <= 4 * f->sk)
        {
          f->fit++;
          f->rmin = fmin (f->rmin, rho[q]);
          f->rmax = fmax (f->rmax, rho[q]);
        }
      else
        add_breaker (f, g->fails[q]->index, isnan (rho[q]) ? INFINITY : dev);
    }
  free (rk);
  return true;
}

/* 5. Shifted window: analytic_i matches reference_{i+k} for one k among
   the block's strides (one step along any axis), in both senses, on every
   failure, where the matched reference is itself resolved (a partner
   within its bars of zero would match any small value).  Needs the
   reference at i+k, i.e. a check of every coordinate.  */
bool
gc__diag_exact_shift (diag *g)
{
  const gc_block *blk = g->blk;
  if (!blk || !all_coordinates (g->r))
    return false;
  size_t stride = 1;
  for (size_t ax = blk->ndim ? blk->ndim : 1; ax-- > 0;)
    {
      for (int sgn = -1; sgn <= 1; sgn += 2)
        {
          long k = sgn * (long) stride;
          shift_fit f;
          if (!fit_shift (g, k, &f))
            return false;
          if (f.exact == g->nf && f.inside >= GC__EVIDENCE_MIN)
            {
              g->dg->kind = GC_DIAG_SHIFTED;
              g->dg->shift = k;
              snprintf (g->dg->text, sizeof g->dg->text,
                        "shifted window: the %s matches the reference %ld "
                        "place(s) %s (one step along axis %zu of %s) on all "
                        "%zu failing %s of %zu checked (%s)", g->what,
                        labs (k), k > 0 ? "on" : "back", ax, blk->name,
                        g->nf, g->elts, g->checked, g->where);
              return true;
            }
        }
      if (blk->ndim)
        stride *= blk->shape[ax];
    }
  return false;
}

/* 6. Offset constant along an axis: analytic - reference is one constant
   per index set of the other axes (per row, for a matrix constant along
   its axis 1), on every checked element of the lead tensor, passing or
   failing, within the two bars of the element and of the median (the
   whole tensor first, then each axis from the last), at least half the
   nonzero offsets beyond four bars (a coarse resolution claims nothing):
   a dropped or extra
   term that does not vary along that axis, such as LayerNorm's mean term.
   At least GC__EVIDENCE_MIN failures (the caller's minimum) carry it.  */
bool
gc__diag_axis_offset (diag *g)
{
  const gc_result *r = g->r;
  const gc_block *blk = g->blk;
  if (!blk || !all_coordinates (r) || blk->count < 2)
    return false;
  size_t nd = blk->ndim ? blk->ndim : 1;
  size_t shape[GC_MAX_DIMS];
  for (size_t a = 0; a < nd; a++)
    shape[a] = blk->ndim ? blk->shape[a] : blk->count;
  double *dl = malloc (blk->count * sizeof *dl);
  double *bars = malloc (blk->count * sizeof *bars);
  if (!dl || !bars)
    {
      free (dl);
      free (bars);
      return false;
    }
  bool found = false;
  /* cand nd: the whole tensor; a < nd: constant along axis a */
  for (size_t cand = nd + 1; cand-- > 0 && !found;)
    {
      size_t dim = blk->count, stride = 1;
      if (cand < nd)
        {
          dim = shape[cand];
          for (size_t a = cand + 1; a < nd; a++)
            stride *= shape[a];
          if (dim < 2 || dim == blk->count)
            continue;   /* one element per set, or the whole tensor */
        }
      size_t ngroups = blk->count / dim, nonzero = 0, sharp = 0;
      double cmin = INFINITY, cmax = -INFINITY;
      bool all = true;
      for (size_t gi = 0; gi < ngroups && all; gi++)
        {
          size_t outer = gi / stride, inner = gi % stride, m = 0;
          for (size_t j = 0; j < dim; j++)
            {
              size_t e = blk->offset + outer * stride * dim + j * stride
                         + inner;
              const gc_direction *d = &r->dirs[e];
              if (d->verdict != GC_PASS && d->verdict != GC_FAIL)
                continue;
              dl[m] = d->analytic - d->reference;
              bars[m] = d->bar;
              m++;
            }
          if (m < 2)
            continue;
          double *sd = malloc (m * sizeof *sd), *sb = malloc (m * sizeof *sb);
          if (!sd || !sb)
            {
              free (sd);
              free (sb);
              all = false;
              break;
            }
          memcpy (sd, dl, m * sizeof *sd);
          memcpy (sb, bars, m * sizeof *sb);
          qsort (sd, m, sizeof *sd, gc__cmp_double);
          qsort (sb, m, sizeof *sb, gc__cmp_double);
          double c = sd[m / 2], bm = sb[m / 2];
          free (sd);
          free (sb);
          for (size_t j = 0; j < m && all; j++)
            all = fabs (dl[j] - c) <= bars[j] + bm;
          if (fabs (c) > bm)
            {
              nonzero++;
              sharp += fabs (c) > 4 * bm;
              cmin = fmin (cmin, c);
              cmax = fmax (cmax, c);
            }
        }
      /* Constancy within a tolerance (two bars) comparable to the offset
         itself says nothing: at least half the offsets must exceed four
         median bars, so that the tolerance is at most half of them.  */
      if (!all || !nonzero || 2 * sharp < nonzero)
        continue;
      found = true;
      gc_diagnosis *dg = g->dg;
      dg->kind = GC_DIAG_AXIS_OFFSET;
      if (cand == nd)
        snprintf (dg->text, sizeof dg->text,
                  "constant offset: %s - reference = %.4g on every checked "
                  "element of %s (within the bars), %zu failing %s of %zu "
                  "checked (%s): a term constant over the tensor is missing "
                  "or extra", g->an, cmin, blk->name, g->nf, g->elts,
                  g->checked, g->where);
      else
        snprintf (dg->text, sizeof dg->text,
                  "per-axis offset: %s - reference is constant along axis "
                  "%zu of %s, one offset per index of the other axes (%zu of "
                  "%zu offsets beyond their bars, %.4g to %.4g), on all %zu "
                  "failing %s of %zu checked (%s): a dropped or extra term "
                  "that does not vary along axis %zu (a mean or sum over "
                  "it, say)", g->an, cand, blk->name, nonzero, ngroups, cmin,
                  cmax, g->nf, g->elts, g->checked, g->where, cand);
    }
  free (dl);
  free (bars);
  return found;
}

/* 7. Approximate shift: the ratios of the analytic values to the
   reference one stride away are far more consistent than to their own
   reference (fit_shift): at least GC__SHIFT_MIN failures, and 3/4 of
   them, are used, and the median absolute deviation of a_q / r_{q+K} is
   at most a quarter of that of a_q / r_q.  An index off by one: most
   elements follow the shifted reference at a nearly constant ratio
   (0.99 to 1.03), and the boundary elements, whose shifted read falls
   outside or misses a term, break it.  The best stride (the smallest
   spread relative to the unshifted one) is named, with the ratios where
   it fits and the elements that break it most.  */
bool
gc__diag_approximate_shift (diag *g)
{
  const gc_block *blk = g->blk;
  const gc_result *r = g->r;
  if (!blk || !all_coordinates (r))
    return false;
  shift_fit best;
  bool have = false;
  long bk = 0;
  size_t bax = 0, stride = 1;
  for (size_t ax = blk->ndim ? blk->ndim : 1; ax-- > 0;)
    {
      for (int sgn = -1; sgn <= 1; sgn += 2)
        {
          long k = sgn * (long) stride;
          shift_fit f;
          if (!fit_shift (g, k, &f))
            return false;
          if (f.used < GC__SHIFT_MIN || 4 * f.used < 3 * g->nf
              || !(4 * f.sk <= f.s0) || f.fit < GC__EVIDENCE_MIN)
            continue;
          if (!have || f.sk * best.s0 < best.sk * f.s0)
            {
              best = f;
              bk = k;
              bax = ax;
              have = true;
            }
        }
      if (blk->ndim)
        stride *= blk->shape[ax];
    }
  if (!have)
    return false;
  gc_diagnosis *dg = g->dg;
  dg->kind = GC_DIAG_APPROX_SHIFT;
  dg->shift = bk;
  char range[96];
  char brk[200] = "";
  size_t len = 0;
  for (size_t q = 0; q < best.nbreak && q < 4; q++)
    {
      char nm[96];
      gc_param_name (r, best.breakers[q], nm, sizeof nm);
      int w = snprintf (brk + len, sizeof brk - len, "%s%s", q ? ", " : "",
                        nm);
      if (w < 0 || (size_t) w >= sizeof brk - len)
        break;
      len += (size_t) w;
    }
  snprintf (dg->text, sizeof dg->text,
            "approximate shift: the %s follows the reference %ld place(s) "
            "%s (one step along axis %zu of %s), an index off by one: %zu "
            "of the %zu failing %s of %zu checked (%s) have %s / shifted "
            "reference %s (spread %.2g, against %.2g unshifted); "
            "%zu break%s it%s%s%s (boundary terms the shifted read misses "
            "or adds)", g->what, labs (bk), bk > 0 ? "on" : "back", bax,
            blk->name, best.fit, g->nf, g->elts, g->checked, g->where, g->an,
            gc__range_text (range, sizeof range, best.rmin, best.rmax),
            best.sk, best.s0, best.nbreak,
            best.nbreak == 1 ? "s" : "", best.nbreak ? ", most: " : "", brk,
            best.nbreak > 4 ? ", ..." : "");
  return true;
}
