/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* parse.c -- read a JSON report back into a result (gc_result_parse_json):
   its header, findings, identity, tensors and directions  */

#include "shards/parse-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static gc_status
fail (gc_result *r, json_t *j, gc_status st)
{
  json_decref (j);
  gc_result_free (r);
  return st;
}

/* Reading through Jansson 2.14, whose lexer drops a character of a token
   when growing its token buffer fails (the report then reads back with a
   digit or letter missing, and no error; upstream issue akheron/jansson
   #362): the text is given to Jansson as the second element of an array
   whose first is a string PAD long enough for any token of the text, so
   that the buffer grows while lexing PAD and never after.  A PAD read back
   short says that a growth failed: the parse is then one more time, and
   GC_ENOMEM when that fails too.  PAD's closing quote never falls where
   the buffer grows (at 16 * 2^k - 1 characters), even with a character
   dropped before it.  */
typedef struct
{
  const char *text;
  size_t len, pad, at;         /* at: bytes of the wrapped text given */
} feed;

static size_t
feed_more (void *buffer, size_t size, void *data)
{
  feed *f = data;
  size_t total = f->pad + 4 + f->len + 1;   /* [ " PAD " , TEXT ] */
  char *o = buffer;
  size_t n = 0;
  while (n < size && f->at < total)
    {
      size_t at = f->at;
      if (at == 0)
        o[n++] = '[';
      else if (at == 1 || at == f->pad + 2)
        o[n++] = '"';
      else if (at < f->pad + 2)
        o[n++] = 'p';
      else if (at == f->pad + 3)
        o[n++] = ',';
      else if (at < total - 1)
        {
          size_t from = at - (f->pad + 4);
          size_t k = f->len - from < size - n ? f->len - from : size - n;
          memcpy (o + n, f->text + from, k);
          n += k;
          f->at += k;
          continue;
        }
      else
        o[n++] = ']';
      f->at++;
    }
  return n;
}

/* The longest token of TEXT, bounded from above: the longest string
   (between quotes not escaped) or run of number and keyword
   characters.  */
static size_t
longest_token (const char *text, size_t len)
{
  size_t best = 0, run = 0, last_quote = SIZE_MAX, slashes = 0;
  for (size_t k = 0; k < len; k++)
    {
      char c = text[k];
      if (c == '"' && slashes % 2 == 0)
        {
          if (last_quote != SIZE_MAX && k - last_quote + 1 > best)
            best = k - last_quote + 1;
          last_quote = k;
        }
      slashes = c == '\\' ? slashes + 1 : 0;
      bool word = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')
                  || (c >= 'A' && c <= 'Z') || c == '.' || c == '+' || c == '-';
      run = word ? run + 1 : 0;
      if (run > best)
        best = run;
    }
  if (last_quote != SIZE_MAX && len - last_quote + 1 > best)
    best = len - last_quote + 1;
  return best;
}

static gc_status
load (const char *text, size_t len, json_t **out)
{
  /* PAD + 2 saved characters, 16 * 2^m + 4 of them, at least a token's  */
  size_t need = longest_token (text, len) + 2, cap = 16;
  while (cap + 4 < need)
    {
      if (cap > SIZE_MAX / 4)
        return GC_ENOMEM;
      cap *= 2;
    }
  size_t pad = cap + 4 - 2;
  for (int attempt = 0; attempt < 2; attempt++)
    {
      feed f = { text, len, pad, 0 };
      /* zeroed: Jansson may fail (out of memory) before it sets the code,
         which lives in the last byte of text (json_error_code) */
      json_error_t e;
      memset (&e, 0, sizeof e);
      json_t *j = json_load_callback (feed_more, &f, JSON_REJECT_DUPLICATES,
                                      &e);
      if (!j)
        {
          /* a failed allocation that Jansson reported as a syntax error
             does not repeat: only one that repeats is malformed input  */
          if (json_error_code (&e) == json_error_out_of_memory)
            return GC_ENOMEM;
          feed g = { text, len, pad, 0 };
          json_error_t e2;
          memset (&e2, 0, sizeof e2);
          json_t *again = json_load_callback (feed_more, &g,
                                              JSON_REJECT_DUPLICATES, &e2);
          if (!again)
            return json_error_code (&e) == json_error_code (&e2)
                   && e.position == e2.position && strcmp (e.text, e2.text) == 0
                   && json_error_code (&e) != json_error_unknown
                   ? GC_EFORMAT : GC_ENOMEM;
          j = again;
        }
      const json_t *p = json_array_get (j, 0);
      if (json_string_length (p) != pad)
        {
          json_decref (j);
          continue;      /* the token buffer failed to grow */
        }
      if (json_array_size (j) != 2)
        {
          json_decref (j);
          return GC_EFORMAT;
        }
      *out = json_incref (json_array_get (j, 1));
      json_decref (j);
      return *out ? GC_OK : GC_ENOMEM;
    }
  return GC_ENOMEM;
}

/* The report's header: what was checked, how, and its counts.  */
static gc_status
read_header (gc_result *r, const json_t *j)
{
  static const char *const kinds[] = { "gradient", "forward", "jvp",
                                       "hvp" };
  static const char *const refs[] = { "mpfr", "f32", "f64", "auto" };
  static const char *const dirkinds[] = { "all", "random", "list", "screen" };
  int k;
  if (!json_is_object (j)
      || (k = gc__get_lookup (gc__get_str (j, "kind"), kinds, 4)) < 0)
    return GC_EFORMAT;
  r->kind = (gc_check_kind) k;
  const char *model = gc__get_str (j, "model");
  const char *detail = gc__get_str (j, "detail");
  if (!model || !detail)
    return GC_EFORMAT;
  gc__utf8_copy (r->model_name, sizeof r->model_name, model);
  gc__utf8_copy (r->detail, sizeof r->detail, detail);
  /* manual: "Device arithmetic" (absent: the host) */
  if (json_object_get (j, "device"))
    {
      const char *dev = gc__get_str (j, "device");
      if (!dev)
        return GC_EFORMAT;
      gc__utf8_copy (r->device, sizeof r->device, dev);
    }
  /* manual: "PyTorch" (absent: none) */
  if (json_object_get (j, "loss_note"))
    {
      const char *note = gc__get_str (j, "loss_note");
      if (!note)
        return GC_EFORMAT;
      gc__utf8_copy (r->loss_note, sizeof r->loss_note, note);
    }
  if ((k = gc__get_lookup (gc__get_str (j, "reference"), refs, 4)) < 0)
    return GC_EFORMAT;
  r->reference = (gc_reference) k;
  if ((k = gc__get_lookup (gc__get_str (j, "truncation_source"), refs, 3)) < 0)
    return GC_EFORMAT;
  r->truncation_source = (gc_reference) k;
  if ((k = gc__get_lookup (gc__get_str (j, "directions"), dirkinds, 4)) < 0)
    return GC_EFORMAT;
  r->direction_kind = (gc_direction_kind) k;
  const char *vname = gc__get_str (j, "verdict");
  if (!vname || (k = gc__verdict_from_name (vname)) < 0)
    return GC_EFORMAT;
  r->verdict = (gc_verdict) k;
  const char *sname = gc__get_str (j, "status");
  if (!sname || (k = gc__status_from_name (sname)) < 0)
    return GC_EFORMAT;
  r->status = (gc_status) k;
  size_t prec;
  uint64_t seed;
  if (!gc__get_size (j, "n", &r->n) || !gc__get_size (j, "precision", &prec)
      || prec > (size_t) MPFR_PREC_MAX
      || !gc__get_u64_value (json_object_get (j, "seed"), &seed)
      || !gc__get_size (j, "forward_depth", &r->forward_depth)
      || !gc__get_size (j, "backward_depth", &r->backward_depth)
      || !gc__get_size (j, "n_directions", &r->n_directions)
      || !gc__get_size (j, "n_total", &r->n_total)
      || !gc__get_size (j, "shard_index", &r->shard_index)
      || !gc__get_size (j, "shard_count", &r->shard_count)
      || !gc__get_size (j, "n_failed", &r->n_failed)
      || !gc__get_size (j, "n_nonsmooth", &r->n_nonsmooth)
      || r->n_directions > r->n_total || r->shard_count == 0
      || r->shard_index >= r->shard_count)
    return GC_EFORMAT;
  r->precision = (mpfr_prec_t) prec;
  r->seed = seed;
  return GC_OK;
}

/* What the check found of the model and its measurement, and its
   numbers.  */
static gc_status
read_findings (gc_result *r, const json_t *j)
{
  /* What the check found of the model itself (absent in older reports:
     nothing): manual "Determinism and reentrancy", "What the bar
     assumes".  */
  size_t flags;
  if (json_object_get (j, "nondeterministic"))
    {
      const char *nd = gc__get_str (j, "nd_detail");
      if (!gc__get_size (j, "nondeterministic", &flags) || flags > 0xffff
          || !nd
          || !gc__get_num (j, "nd_first", &r->nd_first)
          || !gc__get_num (j, "nd_second", &r->nd_second))
        return GC_EFORMAT;
      r->nondeterministic = (unsigned) flags;
      snprintf (r->nd_detail, sizeof r->nd_detail, "%s", nd);
      if (json_is_null (json_object_get (j, "nd_index")))
        r->nd_index = SIZE_MAX;
      else if (!gc__get_size (j, "nd_index", &r->nd_index))
        return GC_EFORMAT;
    }
  else
    r->nd_index = SIZE_MAX;
  /* judged with a twin (manual: "The f64 twin"): its own counts are
     summarised again from the directions */
  const json_t *tu = json_object_get (j, "twin_unused");
  if (tu && !json_is_boolean (tu))
    return GC_EFORMAT;
  r->twin_unused = json_is_true (tu);     /* absent: no twin left unused */
  const json_t *tw = json_object_get (j, "twin");
  if (tw)
    {
      size_t modes;
      if (!json_is_object (tw) || !gc__get_size (tw, "rounding_modes", &modes)
          || modes > 3)
        return GC_EFORMAT;
      r->twin = 1;
      r->twin_rounding_modes = (unsigned) modes;
      const json_t *tn = json_object_get (tw, "rounding_note");
      if (tn)
        {
          const char *note = gc__get_str (tw, "rounding_note");
          if (!note)
            return GC_EFORMAT;
          snprintf (r->twin_rounding_note, sizeof r->twin_rounding_note,
                    "%s", note);
        }
      /* manual: "The measured floor" (optional: reports before it) */
      size_t fd = 0;
      if (json_object_get (tw, "floor_draws")
          && (!gc__get_size (tw, "floor_draws", &fd) || fd > GC_FLOOR_DRAWS))
        return GC_EFORMAT;
      r->floor_draws = (unsigned) fd;
      const char *fn = gc__get_str (tw, "floor_note");
      if (fn)
        snprintf (r->floor_note, sizeof r->floor_note, "%s", fn);
    }
  if (json_object_get (j, "defaulted"))
    {
      if (!gc__get_size (j, "defaulted", &flags) || flags > 0xffff
          || !gc__get_size (j, "n_magnitude_low", &r->n_magnitude_low))
        return GC_EFORMAT;
      r->defaulted = (unsigned) flags;
    }
  /* the rounding-mode measurement (absent: a report without it, e.g. of
     an older version; manual: "Measured rounding sensitivity")  */
  r->depth_implied_at = SIZE_MAX;
  if (json_object_get (j, "rounding_modes"))
    {
      size_t modes, dropped;
      const char *note = gc__get_str (j, "rounding_note");
      if (!gc__get_size (j, "rounding_modes", &modes) || modes > 3
          || !gc__get_size (j, "rounding_dropped", &dropped) || dropped > 3
          || !note
          || !gc__get_num (j, "spread_loss", &r->spread_loss)
          || !gc__get_num (j, "depth_implied", &r->depth_implied)
          || !gc__get_num (j, "forward_depth_implied",
                           &r->forward_depth_implied))
        return GC_EFORMAT;
      /* absent from the reports of versions before it was measured */
      r->spread_loss_f32 = NAN;
      if (json_object_get (j, "spread_loss_f32")
          && !gc__get_num (j, "spread_loss_f32", &r->spread_loss_f32))
        return GC_EFORMAT;
      r->rounding_modes = (unsigned) modes;
      r->rounding_dropped = (unsigned) dropped;
      snprintf (r->rounding_note, sizeof r->rounding_note, "%s", note);
      /* n: measured along random directions only, no element (a JVP
         check's: manual "JSON report")  */
      if (!json_is_null (json_object_get (j, "depth_implied_at"))
          && (!gc__get_size (j, "depth_implied_at", &r->depth_implied_at)
              || r->depth_implied_at > r->n))
        return GC_EFORMAT;
    }
  /* Manual: "What the measurement does not support": the declared M_L
     below |L| / 2 (absent: a report of an older version); the counts
     are the summary's own, recomputed from the directions.  */
  if (json_object_get (j, "loss_magnitude_low"))
    {
      size_t low;
      if (!gc__get_size (j, "loss_magnitude_low", &low) || low > 1
          || !gc__get_num (j, "loss_magnitude_declared",
                   &r->loss_magnitude_declared))
        return GC_EFORMAT;
      r->loss_magnitude_low = (int) low;
    }
  /* random directions per block (absent: over the whole vector)  */
  if (json_object_get (j, "random_per_block")
      && !gc__get_size (j, "random_per_block", &r->random_per_block))
    return GC_EFORMAT;
  if (r->direction_kind == GC_DIR_SCREEN && !gc__read_screen (j, r))
    return GC_EFORMAT;
  struct { const char *key; double *dst; } f[] = {
    { "false_alarm", &r->false_alarm },
    { "lambda_forward", &r->lambda_forward },
    { "lambda_backward", &r->lambda_backward },
    { "loss_f32", &r->loss_f32 }, { "loss_reference", &r->loss_reference },
    { "loss_magnitude", &r->loss_magnitude },
    { "forward_budget_ulps", &r->forward_budget_ulps },
    { "worst_nu", &r->worst_nu } };
  for (size_t q = 0; q < sizeof f / sizeof f[0]; q++)
    if (!gc__get_num (j, f[q].key, f[q].dst))
      return GC_EFORMAT;
  /* null: not measured  */
  if (json_is_null (json_object_get (j, "forward_error_ulps")))
    r->forward_error_ulps = -1;
  else if (!gc__get_num (j, "forward_error_ulps", &r->forward_error_ulps))
    return GC_EFORMAT;
  return GC_OK;
}

/* The identity of the check, and the version that wrote it.  */
static gc_status
read_identity (gc_result *r, const json_t *j)
{
  /* the identity of the check (manual: "Merging shards")  */
  const json_t *id = json_object_get (j, "identity");
  const char *version = gc__get_str (id, "version");
  if (!json_is_object (id) || !version
      || strlen (version) >= sizeof r->identity.version
      || !gc__get_num (id, "step", &r->identity.step)
      || !gc__get_hex (id, "x_digest", &r->identity.x_digest)
      || !gc__get_hex (id, "directions_digest", &r->identity.directions_digest)
      || !gc__get_hex (id, "model_digest", &r->identity.model_digest)
      || !gc__get_hex (id, "digest", &r->identity.digest))
    return GC_EFORMAT;
  snprintf (r->identity.version, sizeof r->identity.version, "%s", version);
  /* the version that wrote the report is the one that ran the check (a
     check refused before it started has no identity: an empty one) */
  const char *writer = gc__get_str (j, "gradcheck");
  if (!writer)
    return GC_EFORMAT;
  if (version[0] && strcmp (writer, version) != 0)
    return GC_EMISMATCH;
  return GC_OK;
}

/* The model's constants and blocks.  */
/* Manual: "Rounding classes": the model's classes, where it declared
   any (a report of a model without them has no "precisions"), held to
   the rules gc_check holds a model's to.  */
static gc_status
read_precisions (gc_result *r, const json_t *j)
{
  static const char *const kinds[] = { "storage", "arithmetic",
                                       "approximation" };
  const json_t *a = json_object_get (j, "precisions");
  if (!a)
    return GC_OK;
  size_t n = json_array_size (a);
  gc_precision p[GC_MAX_PRECISIONS];
  if (!json_is_array (a) || n == 0 || n > GC_MAX_PRECISIONS
      || !gc__get_size (j, "n_unvalidated", &r->n_unvalidated))
    return GC_EFORMAT;
  for (size_t k = 0; k < n; k++)
    {
      const json_t *o = json_array_get (a, k);
      const json_t *mr = json_object_get (o, "mode_reached");
      int kind = gc__get_lookup (gc__get_str (o, "kind"), kinds, 3);
      p[k].name = gc__get_str (o, "name");
      if (kind < 0 || !json_is_boolean (mr)
          || !gc__get_num (o, "unit_roundoff", &p[k].unit_roundoff)
          || !gc__get_num (o, "underflow", &p[k].underflow)
          || !gc__get_size (o, "forward_depth", &p[k].forward_depth)
          || !gc__get_size (o, "backward_depth", &p[k].backward_depth))
        return GC_EFORMAT;
      p[k].kind = (gc_precision_kind) kind;
      p[k].mode_reached = json_is_true (mr);
    }
  char why[160];
  if (gc__precision_validate_list (p, n, why, sizeof why) != GC_OK)
    return GC_EFORMAT;
  return gc__precision_copy_list (r, p, n) ? GC_OK : GC_ENOMEM;
}

static gc_status
read_tensors (gc_result *r, const json_t *j)
{
  gc_status pst = read_precisions (r, j);
  if (pst != GC_OK)
    return pst;
  gc_status st;
  /* constants and blocks  */
  const json_t *cs = json_object_get (j, "constants");
  if (!json_is_object (cs))
    return GC_EFORMAT;
  size_t nc = json_object_size (cs);
  if (nc)
    {
      gc_constant *c = calloc (nc, sizeof *c);
      if (!c)
        return GC_ENOMEM;
      size_t q = 0;
      const char *key;
      json_t *cv;
      json_object_foreach ((json_t *) cs, key, cv)
        {
          c[q].name = key;
          if (!gc__get_num_value (cv, &c[q++].value))
            {
              free (c);
              return GC_EFORMAT;
            }
        }
      st = gc__copy_constants (r, c, nc);
      free (c);
      if (st != GC_OK)
        return st;
    }
  const json_t *bs = json_object_get (j, "blocks");
  if (!json_is_array (bs))
    return GC_EFORMAT;
  size_t nb = json_array_size (bs);
  if (nb)
    {
      gc_block *b = calloc (nb, sizeof *b);
      if (!b)
        return GC_ENOMEM;
      bool ok = true;
      for (size_t q = 0; q < nb && ok; q++)
        {
          const json_t *o = json_array_get (bs, q);
          const json_t *sh = json_object_get (o, "shape");
          b[q].name = gc__get_str (o, "name");
          ok = b[q].name && gc__get_size (o, "offset", &b[q].offset)
               && gc__get_size (o, "count", &b[q].count) && json_is_array (sh)
               && json_array_size (sh) <= GC_MAX_DIMS;
          for (size_t a = 0; ok && a < json_array_size (sh); a++)
            {
              /* a whole dimension, at most the block's count:
                 gc__blocks_valid checks the product  */
              uint64_t dim;
              ok = gc__get_u64_value (json_array_get (sh, a), &dim) && dim >= 1
                   && dim <= b[q].count;
              if (ok)
                b[q].shape[a] = (size_t) dim;
            }
          if (ok)
            b[q].ndim = json_array_size (sh);
        }
      /* the blocks partition [0, n): the diagnosis indexes by them  */
      ok = ok && gc__blocks_valid (b, nb, r->n);
      st = ok ? gc__copy_blocks (r, b, nb) : GC_EFORMAT;
      free (b);
      if (st != GC_OK)
        return st;
    }
  return GC_OK;
}

/* The directions and the worst one with its terms' inputs; each object
   of J is released once read.  */
static gc_status
read_directions (gc_result *r, json_t *j)
{
  gc_status st;
  /* directions: each object is released once read, so that the tree and
     the directions do not both stay whole  */
  json_t *rs = json_object_get (j, "results");
  if (!json_is_array (rs) || json_array_size (rs) != r->n_directions)
    return GC_EFORMAT;
  r->dirs = calloc (r->n_directions ? r->n_directions : 1, sizeof *r->dirs);
  if (!r->dirs)
    return GC_ENOMEM;
  for (size_t q = 0; q < r->n_directions; q++)
    {
      st = gc__read_direction (r, json_array_get (rs, q), &r->dirs[q], false);
      if (st != GC_OK)
        return st;
      json_array_set_new (rs, q, json_null ());
      if (r->dirs[q].id >= r->n_total
          || (r->dirs[q].index != SIZE_MAX && r->dirs[q].index >= r->n)
          || (q > 0 && r->dirs[q].id <= r->dirs[q - 1].id))
        return GC_EFORMAT;
    }
  /* the worst direction, with its terms' inputs  */
  r->worst = SIZE_MAX;
  const json_t *w = json_object_get (j, "worst");
  if (json_is_object (w))
    {
      gc_direction d;
      memset (&d, 0, sizeof d);
      st = gc__read_direction (r, w, &d, true);
      if (st != GC_OK)
        return st;
      for (size_t q = 0; q < r->n_directions; q++)
        if (r->dirs[q].id == d.id)
          {
            r->dirs[q] = d;
            r->worst = q;
          }
      if (r->worst == SIZE_MAX)
        return GC_EFORMAT;
    }
  else if (!json_is_null (w))
    return GC_EFORMAT;
  return GC_OK;
}

static gc_status
parse_json (const char *text, size_t len, gc_result **out)
{
  if (!text || !out)
    return GC_EINVAL;
  *out = NULL;
  json_t *j;
  gc_status st = load (text, len, &j);
  if (st != GC_OK)
    return st;
  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return fail (NULL, j, GC_ENOMEM);
  if ((st = read_header (r, j)) != GC_OK
      || (st = read_findings (r, j)) != GC_OK
      || (st = read_identity (r, j)) != GC_OK
      || (st = gc__read_calls (r, j)) != GC_OK
      || (st = read_tensors (r, j)) != GC_OK
      || (st = read_directions (r, j)) != GC_OK)
    return fail (r, j, st);
  json_decref (j);
  /* judged again, as a merge judges: the counts of what the measurement
     does not support are recomputed (manual: "JSON report") */
  if (r->status == GC_OK)
    gc__judge_stored (r);
  gc__summarise (r);
  if (r->status == GC_OK)
    {
      gc__diagnose (r);
      gc__twin_findings (r);   /* manual: "Two verdicts, one report" */
    }
  *out = r;
  return GC_OK;
}

/* The default floating-point environment (to nearest, no trap) while the report is
   read, the caller's
   set back whole on return (manual: "Floating-point environment").  */
gc_status
gc_result_parse_json (const char *text, size_t len, gc_result **out)
{
  fenv_t caller;
  fegetenv (&caller);
  fesetenv (FE_DFL_ENV);
  gc_status st = parse_json (text, len, out);
  fesetenv (&caller);
  return st;
}
