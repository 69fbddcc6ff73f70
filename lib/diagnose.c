/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* diagnose.c -- what kind of wrong a failing check is (manual:
   "Diagnosis").  The tests below use only the per-direction bars: a
   pattern "explains" a failure when the analytic value it predicts lies
   within that direction's bar.  */

#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static const gc_block *
block_of (const gc_result *r, size_t index)
{
  for (size_t b = 0; b < r->n_blocks; b++)
    if (index >= r->blocks[b].offset
        && index < r->blocks[b].offset + r->blocks[b].count)
      return &r->blocks[b];
  return NULL;
}

/* Does analytic = c * reference explain direction D?  */
static bool
explained_by_factor (const gc_direction *d, double c)
{
  return fabs (d->analytic - c * d->reference) <= d->bar;
}

/* Name C as a simple closed form: +-k^e for k in {2, 3} and the model's
   constants, e in {1, -1, 1/2, -1/2}; a match must lie within DC, the
   uncertainty of c.  */
static bool
closed_form (double c, double dc, const gc_result *m, char *out, size_t size)
{
  struct { const char *name; double v; } bases[16];
  size_t nb = 0;
  /* Small integers first: on a tie (M = 4 makes M^0.5 = 2) the simpler
     name wins.  */
  bases[nb].name = "2";
  bases[nb++].v = 2;
  bases[nb].name = "3";
  bases[nb++].v = 3;
  for (size_t k = 0; k < m->n_constants && nb < 16; k++)
    if (m->constants[k].value > 0 && m->constants[k].value != 1)
      {
        bases[nb].name = m->constants[k].name;
        bases[nb].v = m->constants[k].value;
        nb++;
      }
  static const struct { double e; const char *fmt; } exps[] = {
    { 1, "%s%s" }, { -1, "%s1/%s" }, { 0.5, "%s%s^0.5" },
    { -0.5, "%s%s^-0.5" } };
  double best = INFINITY;
  for (int sign = 1; sign >= -1; sign -= 2)
    {
      if (fabs (c - sign) <= dc && fabs (c - sign) < best)
        {
          best = fabs (c - sign);
          snprintf (out, size, "%s", sign > 0 ? "1" : "-1");
        }
      for (size_t b = 0; b < nb; b++)
        for (size_t e = 0; e < sizeof exps / sizeof exps[0]; e++)
          {
            double v = sign * pow (bases[b].v, exps[e].e);
            if (fabs (c - v) <= dc && fabs (c - v) < best)
              {
                best = fabs (c - v);
                /* "2" and "1/2" read better without "^1".  */
                snprintf (out, size, exps[e].fmt, sign < 0 ? "-" : "",
                          bases[b].name);
              }
          }
    }
  return isfinite (best);
}

static void
describe_range (const gc_result *r, size_t first, size_t last, char *out,
                size_t size)
{
  char a[96], b[96];
  gc_param_name (r, first, a, sizeof a);
  gc_param_name (r, last, b, sizeof b);
  if (first == last)
    snprintf (out, size, "%s", a);
  else
    snprintf (out, size, "%s .. %s", a, b);
}

void
gc__diagnose (gc_result *r)
{
  gc_diagnosis *dg = &r->diagnosis;
  memset (dg, 0, sizeof *dg);
  dg->kind = GC_DIAG_NONE;
  if (r->n_failed == 0)
    {
      if (r->n_nonsmooth)
        {
          dg->kind = GC_DIAG_NONSMOOTH;
          snprintf (dg->text, sizeof dg->text,
                    "%zu direction(s) straddle a kink of the loss: the "
                    "one-sided derivatives differ by more than the bar",
                    r->n_nonsmooth);
        }
      return;
    }

  /* The failures considered: those in the block of the worst failing
     direction (all of them when the model has no blocks or the directions
     are random).  The worst direction overall may be a non-smooth one.  */
  const gc_direction *worst = NULL;
  for (size_t k = 0; k < r->n_directions; k++)
    if (r->dirs[k].verdict == GC_FAIL
        && (!worst || r->dirs[k].nu > worst->nu))
      worst = &r->dirs[k];
  const gc_block *blk = worst->index != SIZE_MAX
                        ? block_of (r, worst->index) : NULL;
  size_t nf = 0, blocks_failing = 0;
  const gc_block *last_blk = NULL;
  double *ratios = malloc (r->n_failed * sizeof *ratios);
  const gc_direction **fails = malloc (r->n_failed * sizeof *fails);
  if (!ratios || !fails)
    {
      free (ratios);
      free (fails);
      dg->kind = GC_DIAG_LOGIC;
      snprintf (dg->text, sizeof dg->text, "(diagnosis skipped: out of memory)");
      return;
    }
  dg->first = SIZE_MAX;
  dg->last = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_FAIL)
        continue;
      const gc_block *b = d->index != SIZE_MAX ? block_of (r, d->index) : NULL;
      if (b != last_blk || blocks_failing == 0)
        {
          /* counts distinct blocks when failures are grouped by block */
          blocks_failing++;
          last_blk = b;
        }
      if (blk && b != blk)
        continue;
      fails[nf] = d;
      ratios[nf] = d->reference != 0 ? d->analytic / d->reference : NAN;
      nf++;
      if (d->index != SIZE_MAX)
        {
          dg->first = d->index < dg->first ? d->index : dg->first;
          dg->last = d->index > dg->last ? d->index : dg->last;
        }
    }
  if (blk)
    snprintf (dg->block, sizeof dg->block, "%s", blk->name);
  const char *an = r->kind == GC_CHECK_FORWARD ? "f32 output" : "analytic";
  const char *what = r->kind == GC_CHECK_FORWARD ? "f32 outputs"
                     : "analytic gradient";
  char where[200] = "";
  if (dg->first != SIZE_MAX)
    describe_range (r, dg->first, dg->last, where, sizeof where);
  else
    snprintf (where, sizeof where, "%zu random directions", nf);

  /* Zero region: the analytic value is within its bar of zero while the
     reference is not.  */
  size_t zeros = 0;
  for (size_t k = 0; k < nf; k++)
    if (fabs (fails[k]->analytic) <= fails[k]->bar
        && fabs (fails[k]->reference) > fails[k]->bar)
      zeros++;
  if (zeros == nf)
    {
      dg->kind = GC_DIAG_ZERO_REGION;
      dg->factor = 0;
      snprintf (dg->text, sizeof dg->text,
                "zero region: the %s is zero on %zu failing element(s) (%s) "
                "where the reference is not", what, nf, where);
      goto done;
    }

  /* Constant factor: c = median of the ratios; it explains the failures
     when every analytic value lies within its bar of c * reference.  */
  size_t nr = 0;
  double *sorted = malloc (nf * sizeof *sorted);
  if (sorted)
    {
      for (size_t k = 0; k < nf; k++)
        if (isfinite (ratios[k]))
          sorted[nr++] = ratios[k];
      if (nr)
        {
          qsort (sorted, nr, sizeof *sorted, cmp_double);
          double c = sorted[nr / 2];
          bool all = true;
          double dc = 0;   /* uncertainty of c: the largest resolution */
          for (size_t k = 0; k < nf && all; k++)
            {
              all = explained_by_factor (fails[k], c);
              if (fails[k]->reference != 0)
                dc = fmax (dc, fails[k]->bar / fabs (fails[k]->reference));
            }
          if (all)
            {
              dg->factor = c;
              closed_form (c, dc, r, dg->closed_form, sizeof dg->closed_form);
              char num[32];
              snprintf (num, sizeof num, "%.5g", c);
              bool same = strcmp (num, dg->closed_form) == 0;
              if (fabs (c + 1) <= dc)
                {
                  dg->kind = GC_DIAG_SIGN_FLIP;
                  snprintf (dg->text, sizeof dg->text,
                            "sign flip: %s = -reference on all %zu failing "
                            "element(s) (%s)", an, nf, where);
                }
              else
                {
                  dg->kind = GC_DIAG_CONSTANT_FACTOR;
                  snprintf (dg->text, sizeof dg->text,
                            "constant factor: %s / reference = %.5g%s%s on "
                            "all %zu failing element(s) (%s)", an, c,
                            dg->closed_form[0] && !same ? " = " : "",
                            same ? "" : dg->closed_form, nf, where);
                }
              free (sorted);
              goto done;
            }
        }
      free (sorted);
    }

  /* Shifted window: analytic_i matches reference_{i+k} for one k among the
     block's strides (one step along any axis), in both senses.  Needs the
     reference at i+k, i.e. a check of every coordinate.  */
  if (blk && r->direction_kind == GC_DIR_ALL && r->shard_count == 1
      && r->n_directions == r->n)
    {
      size_t stride = 1;
      for (size_t ax = blk->ndim ? blk->ndim : 1; ax-- > 0;)
        {
          for (int sgn = -1; sgn <= 1; sgn += 2)
            {
              long k = sgn * (long) stride;
              bool all = true;
              for (size_t q = 0; q < nf && all; q++)
                {
                  long j = (long) fails[q]->index + k;
                  if (j < (long) blk->offset
                      || j >= (long) (blk->offset + blk->count))
                    {
                      /* outside the block the shifted value is zero */
                      all = fabs (fails[q]->analytic) <= fails[q]->bar;
                      continue;
                    }
                  const gc_direction *o = &r->dirs[j];
                  all = o->index == (size_t) j
                        && fabs (fails[q]->analytic - o->reference)
                        <= fails[q]->bar + o->bar;
                }
              if (all)
                {
                  dg->kind = GC_DIAG_SHIFTED;
                  dg->shift = k;
                  snprintf (dg->text, sizeof dg->text,
                            "shifted window: the %s matches the reference "
                            "%ld place(s) %s (one step along axis %zu of %s) "
                            "on all %zu failing element(s) (%s)", what,
                            labs (k), k > 0 ? "on" : "back", ax,
                            blk->name, nf, where);
                  goto done;
                }
            }
          if (blk->ndim)
            stride *= blk->shape[ax];
        }
    }

  /* Rounding class: every failure lies within the deterministic worst-case
     rounding bound (gamma_d instead of lambda*sqrt(d)*u in the f32 rounding
     term: the adjoint's, or the f32 output's in a forward check): rare but
     possible alignment of rounding errors, or a depth declared too small.
     A forward check keeps d_o and its lambda in the backward fields.  */
  {
    int rt = r->kind == GC_CHECK_FORWARD ? GC_TERM_OUTPUT : GC_TERM_ADJOINT;
    double db = (double) r->backward_depth;
    double gamma = db * GC_U32 / (1 - db * GC_U32);
    double prob = r->lambda_backward * sqrt (db) * GC_U32;
    bool all = db * GC_U32 < 1 && prob > 0;
    for (size_t k = 0; k < nf && all; k++)
      {
        const gc_direction *d = fails[k];
        double f32 = d->terms[rt].value;
        all = d->diff <= d->bar - f32 + f32 / prob * gamma;
      }
    if (all)
      {
        dg->kind = GC_DIAG_ONE_ULP;
        snprintf (dg->text, sizeof dg->text,
                  "rounding class: the %zu failure(s) (%s) lie within the "
                  "worst-case rounding bound gamma_d; not a logic error, "
                  "unless the declared depth is wrong", nf, where);
        goto done;
      }
  }

  dg->kind = GC_DIAG_LOGIC;
  snprintf (dg->text, sizeof dg->text,
            "logic error: no constant factor, sign flip, zero region or "
            "shift explains the %zu failure(s) (%s)", nf, where);

done:
  if (blocks_failing > 1 && dg->block[0])
    {
      size_t l = strlen (dg->text);
      snprintf (dg->text + l, sizeof dg->text - l,
                "; other tensors fail too");
    }
  free (ratios);
  free (fails);
}
