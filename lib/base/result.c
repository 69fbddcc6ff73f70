/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* result.c -- a result's lifetime and names: the blocks, constants and
   strings it keeps, a parameter's name, gc_result_free; and the checks
   of a model's blocks and point shared by gc_check, gc_forward_check and
   merge.  */

#include "base/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The point must be finite: a NaN or Inf there is the caller's, not a
   callback's (GC_EPOINT).  */
gc_status
gc__point_finite (const float *x, size_t n, const gc_block *blocks,
                  size_t nb, char *detail, size_t size)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite (x[i]))
      {
        char nm[96];
        gc__element_name (blocks, nb, i, nm, sizeof nm);
        if (nb)
          snprintf (detail, size, "%s = %g (parameter %zu): the point to "
                    "check at must be finite", nm, (double) x[i], i);
        else
          snprintf (detail, size, "%s = %g: the point to check at must be "
                    "finite", nm, (double) x[i]);
        return GC_EPOINT;
      }
  return GC_OK;
}

gc_status
gc__copy_blocks (gc_result *r, const gc_block *blocks, size_t nb)
{
  if (!nb)
    return GC_OK;
  size_t names = 0;
  for (size_t b = 0; b < nb; b++)
    names += strlen (blocks[b].name ? blocks[b].name : "x") + 1;
  r->blocks = malloc (nb * sizeof *r->blocks);
  r->block_names = malloc (names);
  if (!r->blocks || !r->block_names)
    return GC_ENOMEM;
  char *p = r->block_names;
  for (size_t b = 0; b < nb; b++)
    {
      r->blocks[b] = blocks[b];
      const char *nm = blocks[b].name ? blocks[b].name : "x";
      size_t l = strlen (nm) + 1;
      memcpy (p, nm, l);
      r->blocks[b].name = p;
      p += l;
    }
  r->n_blocks = nb;
  return GC_OK;
}

typedef struct kept
{
  struct kept *next;
  char s[];
} kept;

const char *
gc__keep_string (gc_result *r, const char *s)
{
  size_t l = strlen (s) + 1;
  kept *k = malloc (sizeof *k + l);
  if (!k)
    return NULL;
  memcpy (k->s, s, l);
  k->next = r->strings;
  r->strings = k;
  return k->s;
}

gc_status
gc__copy_constants (gc_result *r, const gc_constant *c, size_t n)
{
  if (!n)
    return GC_OK;
  r->constants = calloc (n, sizeof *r->constants);
  if (!r->constants)
    return GC_ENOMEM;
  for (size_t k = 0; k < n; k++)
    {
      r->constants[k].value = c[k].value;
      r->constants[k].name = gc__keep_string (r, c[k].name ? c[k].name : "c");
      if (!r->constants[k].name)
        return GC_ENOMEM;
      r->n_constants = k + 1;
    }
  return GC_OK;
}

/* Manual: "JSON report": a result records O's options within their
   ranges, gc_options_init's value in place of one out of it (a refusal's
   report reads back).  */
size_t
gc__bounds_count (const gc_result *r)
{
  return r->direction_kind == GC_DIR_SCREEN ? r->screen_room : r->n_total;
}

void
gc__result_options (gc_result *r, const gc_options *o)
{
  r->seed = o->seed;
  r->direction_kind = o->directions == GC_DIR_RANDOM
                      || o->directions == GC_DIR_LIST
                      || o->directions == GC_DIR_SCREEN ? o->directions
                      : GC_DIR_ALL;
  r->false_alarm = o->false_alarm;
  bool shard_ok = o->shard_count > 1 ? o->shard_index < o->shard_count
                  : o->shard_index == 0;
  r->shard_index = shard_ok ? o->shard_index : 0;
  r->shard_count = shard_ok && o->shard_count > 1 ? o->shard_count : 1;
  r->depth_implied_at = SIZE_MAX;
  r->spread_loss_f32 = NAN;     /* not measured, until it is */
}

void
gc__direction_no_twin (gc_direction *d)
{
  d->analytic_f64 = d->bar_f64 = d->nu_f64 = d->resolution_f64 = NAN;
  d->richardson = NAN;
  d->arith_diff = d->arith_bar = d->nu_arith = NAN;
  d->arith_floor = d->arith_floor_probe = NAN;
  d->arith_factor = NAN;
  d->arith_factor_points = 0;
  d->arith_drift = NAN;
  d->verdict_algorithm = GC_ERROR;
  d->arith = GC_ARITH_NONE;
}

gc_reference
gc__result_reference (const gc_options *o)
{
  switch (o->reference)
    {
    case GC_REF_MPFR: case GC_REF_F32: case GC_REF_F64: case GC_REF_AUTO:
      return o->reference;
    }
  return GC_REF_AUTO;
}

/* Blocks must partition [0, n) in order, with consistent shapes; where
   they do not, why (naming the block) into WHY of SIZE bytes (WHY may be
   NULL).  */
bool
gc__blocks_why (const gc_block *blocks, size_t nb, size_t n, char *why,
                size_t size)
{
  char dummy[8];
  if (!why)
    {
      why = dummy;
      size = sizeof dummy;
    }
  if (!nb)
    return true;
  if (!blocks)
    {
      snprintf (why, size, "the blocks are NULL with %zu of them declared",
                nb);
      return false;
    }
  size_t next = 0;
  for (size_t b = 0; b < nb; b++)
    {
      const gc_block *bl = &blocks[b];
      const char *nm = bl->name ? bl->name : "x";
      if (bl->offset != next)
        {
          snprintf (why, size, "block %zu (%.40s) starts at %zu, where the "
                    "blocks, in order and without gaps, reach %zu", b, nm,
                    bl->offset, next);
          return false;
        }
      if (bl->count == 0 || bl->count > n - next)
        {
          snprintf (why, size, "block %zu (%.40s) has %zu elements from "
                    "%zu, of n = %zu parameters", b, nm, bl->count,
                    bl->offset, n);
          return false;
        }
      if (bl->ndim > GC_MAX_DIMS)
        {
          snprintf (why, size, "block %zu (%.40s) has %zu dimensions, at "
                    "most %d", b, nm, bl->ndim, GC_MAX_DIMS);
          return false;
        }
      /* the shape's product is the count (checked without overflow)  */
      size_t prod = 1;
      bool over = false;
      for (size_t k = 0; k < bl->ndim && !over; k++)
        {
          if (bl->shape[k] == 0 || prod > bl->count / bl->shape[k])
            over = true;
          else
            prod *= bl->shape[k];
        }
      if (bl->ndim && (over || prod != bl->count))
        {
          snprintf (why, size, "block %zu (%.40s): its shape's product is "
                    "not its count %zu", b, nm, bl->count);
          return false;
        }
      next += bl->count;
    }
  if (next != n)
    {
      snprintf (why, size, "the blocks cover %zu of the n = %zu parameters",
                next, n);
      return false;
    }
  return true;
}

bool
gc__blocks_valid (const gc_block *blocks, size_t nb, size_t n)
{
  return gc__blocks_why (blocks, nb, n, NULL, 0);
}

/* The element INDEX of the concatenated parameter vector named by the
   blocks that hold it ("W[0,4]"), or "x[INDEX]" where none does.  */
char *
gc__element_name (const gc_block *blocks, size_t nb, size_t index,
                  char *buf, size_t size)
{
  if (!buf || size == 0)
    return buf;
  for (size_t b = 0; b < nb; b++)
    {
      const gc_block *bl = &blocks[b];
      if (index < bl->offset || index >= bl->offset + bl->count)
        continue;
      size_t rel = index - bl->offset;
      int len = snprintf (buf, size, "%s", bl->name ? bl->name : "x");
      if (bl->ndim == 0)
        {
          snprintf (buf + (len < (int) size ? len : (int) size - 1),
                    size - (size_t) (len < (int) size ? len : (int) size - 1),
                    "[%zu]", rel);
          return buf;
        }
      size_t coord[GC_MAX_DIMS];
      for (size_t k = bl->ndim; k-- > 0;)
        {
          coord[k] = rel % bl->shape[k];
          rel /= bl->shape[k];
        }
      for (size_t k = 0; k < bl->ndim && (size_t) len < size; k++)
        len += snprintf (buf + len, size - (size_t) len, "%s%zu",
                         k ? "," : "[", coord[k]);
      if ((size_t) len < size)
        snprintf (buf + len, size - (size_t) len, "]");
      return buf;
    }
  snprintf (buf, size, "x[%zu]", index);
  return buf;
}

char *
gc_param_name (const gc_result *r, size_t index, char *buf, size_t size)
{
  if (!buf || size == 0)
    return buf;
  buf[0] = 0;
  if (!r)
    return buf;
  if (index == SIZE_MAX)
    {
      snprintf (buf, size, "random direction");
      return buf;
    }
  return gc__element_name (r->blocks, r->n_blocks, index, buf, size);
}

char *
gc__param_at (const gc_result *r, size_t i, char *buf, size_t size)
{
  char nm[96] = "";
  if (r && r->n_blocks)
    gc_param_name (r, i, nm, sizeof nm);
  if (nm[0])
    snprintf (buf, size, "parameter %zu (%s)", i, nm);
  else
    snprintf (buf, size, "parameter %zu", i);
  return buf;
}

void
gc_result_free (gc_result *r)
{
  if (!r)
    return;
  free (r->dirs);
  free (r->blocks);
  free (r->block_names);
  free (r->constants);
  free (r->precisions);
  free (r->precision_names);
  for (kept *k = r->strings; k;)
    {
      kept *next = k->next;
      free (k);
      k = next;
    }
  free (r);
}
