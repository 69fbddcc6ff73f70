/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* merge.c -- read JSON reports back, and merge the shards of one check.  */

#include "internal.h"
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A term text or input name of a report read back: the library's static
   string when it is one, a copy kept with R otherwise.  */
static const char *
known (gc_result *r, const char *s)
{
  const char *k = gc__known_name (s);
  return k ? k : gc__keep_string (r, s);
}

/* Typed access: each returns false when the member is absent or of another
   type; a null number reads as NAN.  */
static bool
num (const gc__json *o, const char *key, double *v)
{
  const gc__json *j = gc__json_get (o, key);
  if (j && j->type == GC__JSON_NULL)
    {
      *v = NAN;
      return true;
    }
  if (!j || j->type != GC__JSON_NUMBER)
    return false;
  *v = j->num;
  return true;
}

/* A count or index: a whole number a double holds exactly (below 2^53,
   so the JSON text's digits are the value) that a size_t holds.  */
static bool
size (const gc__json *o, const char *key, size_t *v)
{
  double d;
  if (!num (o, key, &d) || !(d >= 0) || d >= 0x1p53 || d > (double) SIZE_MAX
      || d != floor (d))
    return false;
  *v = (size_t) d;
  return true;
}

static const char *
str (const gc__json *o, const char *key)
{
  const gc__json *j = gc__json_get (o, key);
  return j && j->type == GC__JSON_STRING ? j->str : NULL;
}

static int
lookup (const char *s, const char *const *names, int n)
{
  for (int k = 0; s && k < n; k++)
    if (strcmp (s, names[k]) == 0)
      return k;
  return -1;
}

/* Read one direction object: GC_OK, GC_EFORMAT or GC_ENOMEM.  */
static gc_status
direction (gc_result *r, const gc__json *o, gc_direction *d, bool full)
{
  static const char *const verdicts[] = { "pass", "fail", "non-smooth",
                                          "error" };
  double v;
  size_t id;
  if (!o || o->type != GC__JSON_OBJECT || !size (o, "id", &id))
    return GC_EFORMAT;
  d->id = id;
  const gc__json *ix = gc__json_get (o, "index");
  if (ix && ix->type == GC__JSON_NULL)
    d->index = SIZE_MAX;
  else if (!size (o, "index", &d->index))
    return GC_EFORMAT;
  int vd = lookup (str (o, "verdict"), verdicts, 4);
  if (vd < 0)
    return GC_EFORMAT;
  d->verdict = (gc_verdict) vd;
  struct { const char *key; double *dst; } f[] = {
    { "analytic", &d->analytic }, { "reference", &d->reference },
    { "d2h", &d->d2h }, { "diff", &d->diff }, { "bar", &d->bar },
    { "nu", &d->nu }, { "resolution", &d->resolution }, { "step", &d->step },
    { "jump", &d->jump }, { "forward_error_ulps", &d->forward_error_ulps } };
  for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
    {
      if (!num (o, f[k].key, &v))
        return GC_EFORMAT;
      *f[k].dst = v;
    }
  /* JSON writes the infinite nu and resolution of a zero bar or reference
     as null.  */
  if (isnan (d->nu))
    d->nu = INFINITY;
  if (isnan (d->resolution))
    d->resolution = INFINITY;
  int kind = r->kind == GC_CHECK_FORWARD;
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      d->terms[t].name = gc__term_texts[kind][t][0];
      d->terms[t].formula = gc__term_texts[kind][t][1];
      d->terms[t].section = gc__term_texts[kind][t][2];
    }
  const gc__json *tv = gc__json_get (o, full ? "terms" : "term_values");
  if (!tv || tv->type != GC__JSON_ARRAY || tv->n != GC_N_TERMS)
    return GC_EFORMAT;
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      const gc__json *e = tv->items[t];
      if (!full)
        {
          if (e->type != GC__JSON_NUMBER && e->type != GC__JSON_NULL)
            return GC_EFORMAT;
          d->terms[t].value = e->type == GC__JSON_NUMBER ? e->num : NAN;
          continue;
        }
      const char *nm = str (e, "name"), *fm = str (e, "formula");
      const char *sc = str (e, "section");
      const gc__json *in = gc__json_get (e, "inputs");
      if (!nm || !fm || !sc || !num (e, "value", &v) || !in
          || in->type != GC__JSON_OBJECT || in->n > GC_TERM_MAX_INPUTS)
        return GC_EFORMAT;
      gc_term *tm = &d->terms[t];
      tm->name = known (r, nm);
      tm->formula = known (r, fm);
      tm->section = known (r, sc);
      tm->value = v;
      tm->n_inputs = in->n;
      for (size_t k = 0; k < in->n; k++)
        {
          if (in->items[k]->type != GC__JSON_NUMBER)
            return GC_EFORMAT;
          tm->inputs[k].name = known (r, in->keys[k]);
          tm->inputs[k].value = in->items[k]->num;
          if (!tm->inputs[k].name)
            return GC_ENOMEM;
        }
      if (!tm->name || !tm->formula || !tm->section)
        return GC_ENOMEM;
    }
  return GC_OK;
}

static gc_status
fail (gc_result *r, gc__json *j, gc_status st)
{
  gc__json_free (j);
  gc_result_free (r);
  return st;
}

gc_status
gc_result_parse_json (const char *text, size_t len, gc_result **out)
{
  static const char *const kinds[] = { "gradient", "forward" };
  static const char *const refs[] = { "mpfr", "f32", "f64" };
  static const char *const dirkinds[] = { "all", "random", "list" };
  static const char *const verdicts[] = { "pass", "fail", "non-smooth",
                                          "error" };
  if (!text || !out)
    return GC_EINVAL;
  *out = NULL;
  gc__json *j;
  gc_status st = gc__json_parse (text, len, &j);
  if (st != GC_OK)
    return st;
  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return fail (NULL, j, GC_ENOMEM);
  int k;
  double v;
  if (j->type != GC__JSON_OBJECT
      || (k = lookup (str (j, "kind"), kinds, 2)) < 0)
    return fail (r, j, GC_EFORMAT);
  r->kind = (gc_check_kind) k;
  const char *model = str (j, "model");
  const char *detail = str (j, "detail");
  if (!model || !detail)
    return fail (r, j, GC_EFORMAT);
  snprintf (r->model_name, sizeof r->model_name, "%s", model);
  snprintf (r->detail, sizeof r->detail, "%s", detail);
  if ((k = lookup (str (j, "reference"), refs, 3)) < 0)
    return fail (r, j, GC_EFORMAT);
  r->reference = (gc_reference) k;
  if ((k = lookup (str (j, "truncation_source"), refs, 3)) < 0)
    return fail (r, j, GC_EFORMAT);
  r->truncation_source = (gc_reference) k;
  if ((k = lookup (str (j, "directions"), dirkinds, 3)) < 0)
    return fail (r, j, GC_EFORMAT);
  r->direction_kind = (gc_direction_kind) k;
  if ((k = lookup (str (j, "verdict"), verdicts, 4)) < 0)
    return fail (r, j, GC_EFORMAT);
  r->verdict = (gc_verdict) k;
  const char *sname = str (j, "status");
  if (!sname || (k = gc__status_from_name (sname)) < 0)
    return fail (r, j, GC_EFORMAT);
  r->status = (gc_status) k;
  size_t prec, seed;
  if (!size (j, "n", &r->n) || !size (j, "precision", &prec)
      || !size (j, "seed", &seed) || !size (j, "forward_depth", &r->forward_depth)
      || !size (j, "backward_depth", &r->backward_depth)
      || !size (j, "n_directions", &r->n_directions)
      || !size (j, "n_total", &r->n_total)
      || !size (j, "shard_index", &r->shard_index)
      || !size (j, "shard_count", &r->shard_count)
      || !size (j, "n_failed", &r->n_failed)
      || !size (j, "n_nonsmooth", &r->n_nonsmooth)
      || r->n_directions > r->n_total || r->shard_count == 0
      || r->shard_index >= r->shard_count)
    return fail (r, j, GC_EFORMAT);
  r->precision = (mpfr_prec_t) prec;
  r->seed = seed;
  struct { const char *key; double *dst; } f[] = {
    { "false_alarm", &r->false_alarm },
    { "lambda_forward", &r->lambda_forward },
    { "lambda_backward", &r->lambda_backward },
    { "loss_f32", &r->loss_f32 }, { "loss_reference", &r->loss_reference },
    { "loss_magnitude", &r->loss_magnitude },
    { "forward_error_ulps", &r->forward_error_ulps },
    { "forward_budget_ulps", &r->forward_budget_ulps },
    { "worst_nu", &r->worst_nu } };
  for (size_t q = 0; q < sizeof f / sizeof f[0]; q++)
    {
      if (!num (j, f[q].key, &v))
        return fail (r, j, GC_EFORMAT);
      *f[q].dst = v;
    }
  if (isnan (r->forward_error_ulps))
    r->forward_error_ulps = -1;

  /* constants and blocks  */
  const gc__json *cs = gc__json_get (j, "constants");
  if (!cs || cs->type != GC__JSON_OBJECT)
    return fail (r, j, GC_EFORMAT);
  if (cs->n)
    {
      gc_constant *c = calloc (cs->n, sizeof *c);
      if (!c)
        return fail (r, j, GC_ENOMEM);
      for (size_t q = 0; q < cs->n; q++)
        {
          if (cs->items[q]->type != GC__JSON_NUMBER)
            {
              free (c);
              return fail (r, j, GC_EFORMAT);
            }
          c[q].name = cs->keys[q];
          c[q].value = cs->items[q]->num;
        }
      st = gc__copy_constants (r, c, cs->n);
      free (c);
      if (st != GC_OK)
        return fail (r, j, st);
    }
  const gc__json *bs = gc__json_get (j, "blocks");
  if (!bs || bs->type != GC__JSON_ARRAY)
    return fail (r, j, GC_EFORMAT);
  if (bs->n)
    {
      gc_block *b = calloc (bs->n, sizeof *b);
      if (!b)
        return fail (r, j, GC_ENOMEM);
      bool ok = true;
      for (size_t q = 0; q < bs->n && ok; q++)
        {
          const gc__json *o = bs->items[q], *sh = gc__json_get (o, "shape");
          b[q].name = str (o, "name");
          ok = b[q].name && size (o, "offset", &b[q].offset)
               && size (o, "count", &b[q].count) && sh
               && sh->type == GC__JSON_ARRAY && sh->n <= GC_MAX_DIMS;
          for (size_t a = 0; ok && a < sh->n; a++)
            {
              /* a whole dimension, at most the block's count (below
                 2^53): gc__blocks_valid checks the product  */
              ok = sh->items[a]->type == GC__JSON_NUMBER
                   && sh->items[a]->num >= 1
                   && sh->items[a]->num <= (double) b[q].count
                   && sh->items[a]->num == floor (sh->items[a]->num);
              if (ok)
                b[q].shape[a] = (size_t) sh->items[a]->num;
            }
          if (ok)
            b[q].ndim = sh->n;
        }
      /* the blocks partition [0, n): the diagnosis indexes by them  */
      ok = ok && gc__blocks_valid (b, bs->n, r->n);
      st = ok ? gc__copy_blocks (r, b, bs->n) : GC_EFORMAT;
      free (b);
      if (st != GC_OK)
        return fail (r, j, st);
    }

  /* directions  */
  const gc__json *rs = gc__json_get (j, "results");
  if (!rs || rs->type != GC__JSON_ARRAY || rs->n != r->n_directions)
    return fail (r, j, GC_EFORMAT);
  r->dirs = calloc (rs->n ? rs->n : 1, sizeof *r->dirs);
  if (!r->dirs)
    return fail (r, j, GC_ENOMEM);
  for (size_t q = 0; q < rs->n; q++)
    {
      if ((st = direction (r, rs->items[q], &r->dirs[q], false)) != GC_OK)
        return fail (r, j, st);
      if (r->dirs[q].id >= r->n_total
          || (r->dirs[q].index != SIZE_MAX && r->dirs[q].index >= r->n)
          || (q > 0 && r->dirs[q].id <= r->dirs[q - 1].id))
        return fail (r, j, GC_EFORMAT);
    }
  /* the worst direction, with its terms' inputs  */
  r->worst = SIZE_MAX;
  const gc__json *w = gc__json_get (j, "worst");
  if (w && w->type == GC__JSON_OBJECT)
    {
      gc_direction d;
      memset (&d, 0, sizeof d);
      if ((st = direction (r, w, &d, true)) != GC_OK)
        return fail (r, j, st);
      for (size_t q = 0; q < r->n_directions; q++)
        if (r->dirs[q].id == d.id)
          {
            r->dirs[q] = d;
            r->worst = q;
          }
      if (r->worst == SIZE_MAX)
        return fail (r, j, GC_EFORMAT);
    }
  gc__json_free (j);
  gc__summarise (r);
  if (r->status == GC_OK)
    gc__diagnose (r);
  *out = r;
  return GC_OK;
}

/* The fields every shard of one check shares.  */
static bool
same_check (const gc_result *a, const gc_result *b)
{
  return a->kind == b->kind && strcmp (a->model_name, b->model_name) == 0
         && a->n == b->n && a->reference == b->reference
         && a->precision == b->precision && a->direction_kind == b->direction_kind
         && a->seed == b->seed && a->n_total == b->n_total
         && a->shard_count == b->shard_count && a->false_alarm == b->false_alarm
         && a->forward_depth == b->forward_depth
         && a->backward_depth == b->backward_depth
         && a->loss_f32 == b->loss_f32 && a->n_blocks == b->n_blocks;
}

gc_status
gc_result_merge (gc_result *const *shards, size_t n, gc_result **out)
{
  if (!shards || !out || n == 0)
    return GC_EINVAL;
  *out = NULL;
  for (size_t s = 0; s < n; s++)
    if (!shards[s])
      return GC_EINVAL;
  const gc_result *first = shards[0];
  if (first->shard_count != n)
    return GC_EMISMATCH;
  bool *seen = calloc (n, sizeof *seen);
  if (!seen)
    return GC_ENOMEM;
  size_t total = 0;
  for (size_t s = 0; s < n; s++)
    {
      const gc_result *sh = shards[s];
      if (!same_check (first, sh) || sh->shard_index >= n
          || seen[sh->shard_index])
        {
          free (seen);
          return GC_EMISMATCH;
        }
      seen[sh->shard_index] = true;
      total += sh->n_directions;
    }
  free (seen);
  if (first->status == GC_OK && total != first->n_total)
    return GC_EMISMATCH;

  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return GC_ENOMEM;
  *r = *first;
  r->dirs = NULL;
  r->blocks = NULL;
  r->block_names = NULL;
  r->constants = NULL;
  r->n_constants = 0;
  r->n_blocks = 0;
  r->strings = NULL;
  r->shard_index = 0;
  r->shard_count = 1;
  r->worst = SIZE_MAX;
  memset (&r->diagnosis, 0, sizeof r->diagnosis);
  gc_status st;
  if ((st = gc__copy_blocks (r, first->blocks, first->n_blocks)) != GC_OK
      || (st = gc__copy_constants (r, first->constants, first->n_constants))
         != GC_OK)
    {
      gc_result_free (r);
      return st;
    }
  r->dirs = calloc (total ? total : 1, sizeof *r->dirs);
  if (!r->dirs)
    {
      gc_result_free (r);
      return GC_ENOMEM;
    }
  /* Directions by id: shard s holds ids s, s + n, s + 2n, ...  */
  r->n_directions = total;
  for (size_t s = 0; s < n; s++)
    {
      const gc_result *sh = shards[s];
      if (sh->status != GC_OK && r->status == GC_OK)
        {
          r->status = sh->status;
          r->callback_code = sh->callback_code;
          snprintf (r->detail, sizeof r->detail, "%s", sh->detail);
        }
      if (sh->forward_error_ulps > r->forward_error_ulps)
        r->forward_error_ulps = sh->forward_error_ulps;
      for (size_t q = 0; q < sh->n_directions; q++)
        {
          size_t id = sh->dirs[q].id;
          if (id >= total)
            {
              gc_result_free (r);
              return GC_EMISMATCH;
            }
          r->dirs[id] = sh->dirs[q];
          /* terms point at static or the shard's kept strings: keep copies
             of the latter with the merged result.  */
          for (int t = 0; t < GC_N_TERMS; t++)
            {
              gc_term *tm = &r->dirs[id].terms[t];
              const char **str_of[GC_TERM_MAX_INPUTS + 3];
              size_t ns = 0;
              str_of[ns++] = &tm->name;
              str_of[ns++] = &tm->formula;
              str_of[ns++] = &tm->section;
              for (size_t i = 0; i < tm->n_inputs; i++)
                str_of[ns++] = &tm->inputs[i].name;
              for (size_t i = 0; i < ns; i++)
                if (*str_of[i] && !(*str_of[i] = known (r, *str_of[i])))
                  {
                    gc_result_free (r);
                    return GC_ENOMEM;
                  }
            }
        }
    }
  if (r->status == GC_OK)
    r->detail[0] = 0;
  gc__summarise (r);
  if (r->status == GC_OK)
    gc__diagnose (r);
  *out = r;
  return r->status == GC_OK ? GC_OK : r->status;
}
