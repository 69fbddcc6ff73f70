/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* merge.c -- read JSON reports back, and merge the shards of one check.  */

#include "internal.h"
#include <jansson.h>

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

/* Typed access (manual: "JSON report").  A double is a JSON number or one
   of the strings "nan", "inf", "-inf"; a count is a JSON integer >= 0, or
   beyond 2^53 a string of decimal digits; a digest is a string of 16 hex
   digits.  Each returns false when the value is absent or of another
   form.  */
static bool
num_value (const json_t *j, double *v)
{
  if (json_is_number (j))
    {
      *v = json_number_value (j);
      return true;
    }
  const char *s = json_string_value (j);
  if (!s)
    return false;
  if (strcmp (s, "nan") == 0)
    *v = NAN;
  else if (strcmp (s, "inf") == 0)
    *v = INFINITY;
  else if (strcmp (s, "-inf") == 0)
    *v = -INFINITY;
  else
    return false;
  return true;
}

static bool
num (const json_t *o, const char *key, double *v)
{
  return num_value (json_object_get (o, key), v);
}

static bool
u64_value (const json_t *j, uint64_t *v)
{
  if (json_is_integer (j))
    {
      json_int_t i = json_integer_value (j);
      if (i < 0)
        return false;
      *v = (uint64_t) i;
      return true;
    }
  const char *s = json_string_value (j);
  if (!s || !*s || (s[0] == '0' && s[1]) || strlen (s) > 20)
    return false;
  uint64_t x = 0;
  for (const char *p = s; *p; p++)
    {
      if (*p < '0' || *p > '9' || x > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
        return false;
      x = 10 * x + (uint64_t) (*p - '0');
    }
  *v = x;
  return true;
}

static bool
size (const json_t *o, const char *key, size_t *v)
{
  uint64_t x;
  if (!u64_value (json_object_get (o, key), &x) || x > SIZE_MAX)
    return false;
  *v = (size_t) x;
  return true;
}

static bool
hex (const json_t *o, const char *key, uint64_t *v)
{
  const char *s = json_string_value (json_object_get (o, key));
  if (!s || strlen (s) != 16)
    return false;
  uint64_t x = 0;
  for (const char *p = s; *p; p++)
    {
      int d = *p >= '0' && *p <= '9' ? *p - '0'
              : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
      if (d < 0)
        return false;
      x = x << 4 | (uint64_t) d;
    }
  *v = x;
  return true;
}

static const char *
str (const json_t *o, const char *key)
{
  return json_string_value (json_object_get (o, key));
}

static int
lookup (const char *s, const char *const *names, int n)
{
  for (int k = 0; s && k < n; k++)
    if (strcmp (s, names[k]) == 0)
      return k;
  return -1;
}

/* Read one full term object into TM: GC_OK, GC_EFORMAT or GC_ENOMEM.  */
static gc_status
term_read (gc_result *r, const json_t *e, gc_term *tm)
{
  double v;
  const char *nm = str (e, "name"), *fm = str (e, "formula");
  const char *sc = str (e, "section");
  const json_t *in = json_object_get (e, "inputs");
  if (!nm || !fm || !sc || !num (e, "value", &v) || !json_is_object (in)
      || json_object_size (in) > GC_TERM_MAX_INPUTS)
    return GC_EFORMAT;
  tm->name = known (r, nm);
  tm->formula = known (r, fm);
  tm->section = known (r, sc);
  tm->value = v;
  tm->n_inputs = 0;
  const char *key;
  const json_t *iv;
  json_object_foreach ((json_t *) in, key, iv)
    {
      gc_input *ip = &tm->inputs[tm->n_inputs++];
      if (!num_value (iv, &ip->value))
        return GC_EFORMAT;
      if (!(ip->name = known (r, key)))
        return GC_ENOMEM;
    }
  if (!tm->name || !tm->formula || !tm->section)
    return GC_ENOMEM;
  return GC_OK;
}

/* The twin's part of a direction (manual: "Two verdicts, one report"):
   absent in a check without a twin; in one with a twin, required.  Its
   verdicts are judged again by the caller.  */
static gc_status
twin_read (gc_result *r, const json_t *o, gc_direction *d, bool full)
{
  d->analytic_f64 = d->bar_f64 = d->nu_f64 = d->resolution_f64 = NAN;
  d->arith_diff = d->arith_bar = d->nu_arith = NAN;
  d->verdict_algorithm = GC_ERROR;
  d->arith = GC_ARITH_NONE;
  bool has = json_object_get (o, "analytic_f64") != NULL;
  if (!has)
    return r->twin && d->verdict != GC_ERROR ? GC_EFORMAT : GC_OK;
  if (!r->twin || !num (o, "analytic_f64", &d->analytic_f64)
      || isnan (d->analytic_f64) || !num (o, "arith_bar", &d->arith_bar)
      || !(d->arith_bar >= 0) || !num (o, "arith_diff", &d->arith_diff)
      || !(d->arith_diff >= 0))
    return GC_EFORMAT;
  /* the stored judgement of both questions (a merge judges them again;
     a report read back keeps them, as it keeps its verdicts) */
  const char *va = str (o, "verdict_algorithm"), *ac = str (o, "arith");
  int vai = va ? gc__verdict_from_name (va) : -1;
  int aci = ac ? gc__arith_from_name (ac) : -1;
  const json_t *ru = json_object_get (o, "richardson_used");
  if (vai < 0 || aci < 0 || !num (o, "bar_f64", &d->bar_f64)
      || !num (o, "nu_f64", &d->nu_f64)
      || !num (o, "resolution_f64", &d->resolution_f64)
      || !num (o, "nu_arith", &d->nu_arith)
      || (ru && !json_is_boolean (ru)))
    return GC_EFORMAT;
  d->verdict_algorithm = (gc_verdict) vai;
  d->arith = (gc_arith) aci;
  d->richardson_used = ru && json_is_true (ru);
  /* manual: "Richardson's stencil" */
  d->richardson = NAN;
  if (json_object_get (o, "richardson"))
    {
      const json_t *ra = json_object_get (o, full ? "richardson_terms"
                                                  : "richardson_term_values");
      if (!num (o, "richardson", &d->richardson) || isnan (d->richardson)
          || !json_is_array (ra) || json_array_size (ra) != 2)
        return GC_EFORMAT;
      double tv = NAN, ev = NAN;   /* truncation and rounding values */
      for (int t = 0; t < 2; t++)
        {
          const json_t *e_t = json_array_get (ra, (size_t) t);
          if (full)
            {
              gc_status st = term_read (r, e_t, &d->richardson_terms[t]);
              if (st != GC_OK)
                return st;
            }
          else if (!num_value (e_t, t ? &ev : &tv))
            return GC_EFORMAT;
        }
      if (!full)
        {
          /* the values are what the judge reads; the inputs are not kept */
          gc_term et = { .value = ev / 1.5 };
          gc__terms_richardson (d->richardson_terms, NAN, d->richardson,
                                d->richardson + tv, &et);
          d->richardson_terms[0].value = tv;
          d->richardson_terms[1].value = ev;
          d->richardson_terms[0].n_inputs = d->richardson_terms[1].n_inputs = 0;
        }
    }
  if (full)
    {
      const json_t *e = json_object_get (o, "adjoint_f64");
      gc_status st = e ? term_read (r, e, &d->adjoint_f64) : GC_EFORMAT;
      if (st != GC_OK)
        return st;
      /* only the twin's own term */
      if (strcmp (d->adjoint_f64.section, "The f64 twin") != 0)
        return GC_EFORMAT;
      return GC_OK;
    }
  double spread, defaulted;
  gc_term *tm = &d->adjoint_f64;
  if (!num (o, "adjoint_f64_value", &tm->value)
      || !num (o, "spread_f64", &spread) || !num (o, "m_defaulted", &defaulted))
    return GC_EFORMAT;
  /* the term rebuilt with the two inputs the judge reads, its value the
     stored one */
  double value = tm->value;
  gc__term_adjoint_f64 (tm, r->backward_depth, 0, 0, spread, defaulted != 0);
  tm->value = value;
  return GC_OK;
}

/* Read one direction object: GC_OK, GC_EFORMAT or GC_ENOMEM.  */
static gc_status
direction (gc_result *r, const json_t *o, gc_direction *d, bool full)
{
  double v;
  size_t id;
  if (!json_is_object (o) || !size (o, "id", &id))
    return GC_EFORMAT;
  d->id = id;
  if (json_is_null (json_object_get (o, "index")))
    d->index = SIZE_MAX;
  else if (!size (o, "index", &d->index) || d->index == SIZE_MAX)
    return GC_EFORMAT;
  const char *vname = str (o, "verdict");
  int vd = vname ? gc__verdict_from_name (vname) : -1;
  if (vd < 0)
    return GC_EFORMAT;
  d->verdict = (gc_verdict) vd;
  /* the confirmation level (absent in older reports: 0) */
  const json_t *lj = json_object_get (o, "level");
  if (!lj)
    d->level = 0;
  else if (!json_is_integer (lj) || json_integer_value (lj) < -1
           || json_integer_value (lj) > 64)
    return GC_EFORMAT;
  else
    d->level = (int) json_integer_value (lj);
  /* The reference that decided it (absent in older reports: the check's):
     f64 or MPFR in a tiered check, the check's own otherwise (manual:
     "The tiered reference").  */
  const json_t *dj = json_object_get (o, "decided_by");
  if (!dj)
    d->decided_by = r->reference;
  else
    {
      const char *dn = json_string_value (dj);
      d->decided_by = !dn ? GC_REF_AUTO
                      : strcmp (dn, "mpfr") == 0 ? GC_REF_MPFR
                      : strcmp (dn, "f64") == 0 ? GC_REF_F64
                      : strcmp (dn, "f32") == 0 ? GC_REF_F32 : GC_REF_AUTO;
    }
  if (r->reference == GC_REF_AUTO
      ? d->decided_by != GC_REF_F64 && d->decided_by != GC_REF_MPFR
      : d->decided_by != r->reference)
    return GC_EFORMAT;
  struct { const char *key; double *dst; } f[] = {
    { "analytic", &d->analytic }, { "reference", &d->reference },
    { "d2h", &d->d2h }, { "diff", &d->diff }, { "bar", &d->bar },
    { "nu", &d->nu }, { "resolution", &d->resolution }, { "step", &d->step },
    { "jump", &d->jump }, { "forward_error_ulps", &d->forward_error_ulps } };
  for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
    if (!num (o, f[k].key, f[k].dst))
      return GC_EFORMAT;
  /* absent in older reports: not measured (manual: "Non-smooth points",
     "The worst case") */
  static const char *const opt[] = { "jump_next", "bar_worst_case" };
  double *optv[] = { &d->jump_next, &d->bar_worst_case };
  for (size_t k = 0; k < 2; k++)
    {
      *optv[k] = NAN;
      if (json_object_get (o, opt[k]) && !num (o, opt[k], optv[k]))
        return GC_EFORMAT;
    }
  /* from the direction's own numbers, as gc__judge forms it */
  d->nu_worst_case = d->diff == 0 ? 0 : d->diff / d->bar_worst_case;
  int kind = (int) r->kind;
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      d->terms[t].name = gc__term_texts[kind][t][0];
      d->terms[t].formula = gc__term_texts[kind][t][1];
      d->terms[t].section = gc__term_texts[kind][t][2];
    }
  /* an MPFR stencil without its +-2h pair (manual: "Skipping the 2h
     pair"): no D(2h), a predicted truncation term */
  if ((kind == GC_CHECK_GRADIENT || kind == GC_CHECK_JVP)
      && r->reference == GC_REF_AUTO && d->decided_by == GC_REF_MPFR
      && isnan (d->d2h))
    gc__term_mark_predicted (&d->terms[GC_TERM_TRUNCATION]);
  /* the adjoint term's inputs the judge reads (absent in older reports
     and in full directions, whose terms carry them; manual: "What the
     measurement does not support") */
  const json_t *ai = full ? NULL : json_object_get (o, "adjoint_inputs");
  if (ai)
    {
      gc_term *at = &d->terms[GC_TERM_ADJOINT];
      const char *key;
      const json_t *iv;
      if (!json_is_object (ai)
          || json_object_size (ai) > GC_TERM_MAX_INPUTS)
        return GC_EFORMAT;
      at->n_inputs = 0;
      json_object_foreach ((json_t *) ai, key, iv)
        {
          gc_input *ip = &at->inputs[at->n_inputs++];
          if (!num_value (iv, &ip->value))
            return GC_EFORMAT;
          if (!(ip->name = known (r, key)))
            return GC_ENOMEM;
        }
    }
  const json_t *tv = json_object_get (o, full ? "terms" : "term_values");
  if (!json_is_array (tv) || json_array_size (tv) != GC_N_TERMS)
    return GC_EFORMAT;
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      const json_t *e = json_array_get (tv, (size_t) t);
      if (!full)
        {
          if (!num_value (e, &d->terms[t].value))
            return GC_EFORMAT;
          continue;
        }
      gc_status st = term_read (r, e, &d->terms[t]);
      if (st != GC_OK)
        return st;
    }
  return twin_read (r, o, d, full);
  return GC_OK;
}

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
  static const char *const dirkinds[] = { "all", "random", "list" };
  int k;
  if (!json_is_object (j) || (k = lookup (str (j, "kind"), kinds, 4)) < 0)
    return GC_EFORMAT;
  r->kind = (gc_check_kind) k;
  const char *model = str (j, "model");
  const char *detail = str (j, "detail");
  if (!model || !detail)
    return GC_EFORMAT;
  gc__utf8_copy (r->model_name, sizeof r->model_name, model);
  gc__utf8_copy (r->detail, sizeof r->detail, detail);
  if ((k = lookup (str (j, "reference"), refs, 4)) < 0)
    return GC_EFORMAT;
  r->reference = (gc_reference) k;
  if ((k = lookup (str (j, "truncation_source"), refs, 3)) < 0)
    return GC_EFORMAT;
  r->truncation_source = (gc_reference) k;
  if ((k = lookup (str (j, "directions"), dirkinds, 3)) < 0)
    return GC_EFORMAT;
  r->direction_kind = (gc_direction_kind) k;
  const char *vname = str (j, "verdict");
  if (!vname || (k = gc__verdict_from_name (vname)) < 0)
    return GC_EFORMAT;
  r->verdict = (gc_verdict) k;
  const char *sname = str (j, "status");
  if (!sname || (k = gc__status_from_name (sname)) < 0)
    return GC_EFORMAT;
  r->status = (gc_status) k;
  size_t prec;
  uint64_t seed;
  if (!size (j, "n", &r->n) || !size (j, "precision", &prec)
      || prec > (size_t) MPFR_PREC_MAX
      || !u64_value (json_object_get (j, "seed"), &seed)
      || !size (j, "forward_depth", &r->forward_depth)
      || !size (j, "backward_depth", &r->backward_depth)
      || !size (j, "n_directions", &r->n_directions)
      || !size (j, "n_total", &r->n_total)
      || !size (j, "shard_index", &r->shard_index)
      || !size (j, "shard_count", &r->shard_count)
      || !size (j, "n_failed", &r->n_failed)
      || !size (j, "n_nonsmooth", &r->n_nonsmooth)
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
      const char *nd = str (j, "nd_detail");
      if (!size (j, "nondeterministic", &flags) || flags > 0xffff || !nd
          || !num (j, "nd_first", &r->nd_first)
          || !num (j, "nd_second", &r->nd_second))
        return GC_EFORMAT;
      r->nondeterministic = (unsigned) flags;
      snprintf (r->nd_detail, sizeof r->nd_detail, "%s", nd);
      if (json_is_null (json_object_get (j, "nd_index")))
        r->nd_index = SIZE_MAX;
      else if (!size (j, "nd_index", &r->nd_index))
        return GC_EFORMAT;
    }
  else
    r->nd_index = SIZE_MAX;
  /* judged with a twin (manual: "The f64 twin"): its own counts are
     summarised again from the directions */
  const json_t *tw = json_object_get (j, "twin");
  if (tw)
    {
      size_t modes;
      if (!json_is_object (tw) || !size (tw, "rounding_modes", &modes)
          || modes > 3)
        return GC_EFORMAT;
      r->twin = 1;
      r->twin_rounding_modes = (unsigned) modes;
    }
  if (json_object_get (j, "defaulted"))
    {
      if (!size (j, "defaulted", &flags) || flags > 0xffff
          || !size (j, "n_magnitude_low", &r->n_magnitude_low))
        return GC_EFORMAT;
      r->defaulted = (unsigned) flags;
    }
  /* the rounding-mode measurement (absent: a report without it, e.g. of
     an older version; manual: "Measured rounding sensitivity")  */
  r->depth_implied_at = SIZE_MAX;
  if (json_object_get (j, "rounding_modes"))
    {
      size_t modes, dropped;
      const char *note = str (j, "rounding_note");
      if (!size (j, "rounding_modes", &modes) || modes > 3
          || !size (j, "rounding_dropped", &dropped) || dropped > 3 || !note
          || !num (j, "spread_loss", &r->spread_loss)
          || !num (j, "depth_implied", &r->depth_implied)
          || !num (j, "forward_depth_implied", &r->forward_depth_implied))
        return GC_EFORMAT;
      r->rounding_modes = (unsigned) modes;
      r->rounding_dropped = (unsigned) dropped;
      snprintf (r->rounding_note, sizeof r->rounding_note, "%s", note);
      if (!json_is_null (json_object_get (j, "depth_implied_at"))
          && (!size (j, "depth_implied_at", &r->depth_implied_at)
              || r->depth_implied_at >= r->n))
        return GC_EFORMAT;
    }
  /* Manual: "What the measurement does not support": the declared M_L
     below |L| / 2 (absent: a report of an older version); the counts
     are the summary's own, recomputed from the directions.  */
  if (json_object_get (j, "loss_magnitude_low"))
    {
      size_t low;
      if (!size (j, "loss_magnitude_low", &low) || low > 1
          || !num (j, "loss_magnitude_declared",
                   &r->loss_magnitude_declared))
        return GC_EFORMAT;
      r->loss_magnitude_low = (int) low;
    }
  /* random directions per block (absent: over the whole vector)  */
  if (json_object_get (j, "random_per_block")
      && !size (j, "random_per_block", &r->random_per_block))
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
    if (!num (j, f[q].key, f[q].dst))
      return GC_EFORMAT;
  /* null: not measured  */
  if (json_is_null (json_object_get (j, "forward_error_ulps")))
    r->forward_error_ulps = -1;
  else if (!num (j, "forward_error_ulps", &r->forward_error_ulps))
    return GC_EFORMAT;
  return GC_OK;
}

/* The identity of the check, and the version that wrote it.  */
static gc_status
read_identity (gc_result *r, const json_t *j)
{
  /* the identity of the check (manual: "Merging shards")  */
  const json_t *id = json_object_get (j, "identity");
  const char *version = str (id, "version");
  if (!json_is_object (id) || !version
      || strlen (version) >= sizeof r->identity.version
      || !num (id, "step", &r->identity.step)
      || !hex (id, "x_digest", &r->identity.x_digest)
      || !hex (id, "directions_digest", &r->identity.directions_digest)
      || !hex (id, "model_digest", &r->identity.model_digest)
      || !hex (id, "digest", &r->identity.digest))
    return GC_EFORMAT;
  snprintf (r->identity.version, sizeof r->identity.version, "%s", version);
  /* the version that wrote the report is the one that ran the check (a
     check refused before it started has no identity: an empty one) */
  const char *writer = str (j, "gradcheck");
  if (!writer)
    return GC_EFORMAT;
  if (version[0] && strcmp (writer, version) != 0)
    return GC_EMISMATCH;
  return GC_OK;
}

/* The model's constants and blocks.  */
static gc_status
read_tensors (gc_result *r, const json_t *j)
{
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
          if (!num_value (cv, &c[q++].value))
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
          b[q].name = str (o, "name");
          ok = b[q].name && size (o, "offset", &b[q].offset)
               && size (o, "count", &b[q].count) && json_is_array (sh)
               && json_array_size (sh) <= GC_MAX_DIMS;
          for (size_t a = 0; ok && a < json_array_size (sh); a++)
            {
              /* a whole dimension, at most the block's count:
                 gc__blocks_valid checks the product  */
              uint64_t dim;
              ok = u64_value (json_array_get (sh, a), &dim) && dim >= 1
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
      st = direction (r, json_array_get (rs, q), &r->dirs[q], false);
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
      st = direction (r, w, &d, true);
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
      || (st = read_tensors (r, j)) != GC_OK
      || (st = read_directions (r, j)) != GC_OK)
    return fail (r, j, st);
  json_decref (j);
  gc__summarise (r);
  if (r->status == GC_OK)
    {
      gc__diagnose (r);
      gc__twin_findings (r);   /* manual: "Two verdicts, one report" */
    }
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
         && a->loss_f32 == b->loss_f32 && a->n_blocks == b->n_blocks
         && a->identity.digest == b->identity.digest;
}

static int
format_bits (gc_reference ref, mpfr_prec_t p)
{
  return ref == GC_REF_F32 ? 24 : ref == GC_REF_F64 ? 53 : (int) p;
}

/* The noise of direction D's kink estimate J, recovered from its stored
   reference-rounding term (manual: "Non-smooth points"): gc_check judges
   J against 10 eps_b / h, eps_b the evaluation error of the forward behind
   J (the truncation source), and its reference term is eps_r / h +
   u_53 |D(h)|, eps_r the same bound in the reference's format: both are
   lambda sqrt(d_f) ulp(M_L) at the same M_L, so eps_b = eps_r
   2^(bits_r - bits_b).  The subtraction may differ from gc_check's value
   by an ulp of the term.  */
static double
stored_jump_noise (const gc_result *r, const gc_direction *d)
{
  if (r->kind == GC_CHECK_FORWARD || r->kind == GC_CHECK_HVP)
    return 0;
  double eps_h = d->terms[GC_TERM_REFERENCE].value
                 - GC_U64 * fabs (d->reference);
  if (!(eps_h > 0))
    return 0;
  /* a tiered check: each direction's reference is its own truncation
     source (manual: "The tiered reference") */
  gc_reference ref = r->reference == GC_REF_AUTO ? d->decided_by
                     : r->reference;
  gc_reference src = r->reference == GC_REF_AUTO ? d->decided_by
                     : r->truncation_source;
  return 10 * ldexp (eps_h, format_bits (ref, r->precision)
                            - format_bits (src, r->precision));
}

/* The directions of shard I of SC in a check of TOTAL: ids I, I + SC, ...  */
static size_t
shard_size (size_t total, size_t i, size_t sc)
{
  return total / sc + (i < total % sc ? 1 : 0);
}

/* Whether shard SH is sound on its own: its identity is the digest of its
   own fields (an edited n_total, step or seed shows), and its directions
   are exactly the ids of its shard index, in order.  */
static bool
shard_sound (const gc_result *sh)
{
  if (sh->status == GC_OK && sh->identity.digest != gc__identity_digest (sh))
    return false;
  if (sh->n_directions != shard_size (sh->n_total, sh->shard_index,
                                      sh->shard_count))
    return false;
  for (size_t q = 0; q < sh->n_directions; q++)
    {
      const gc_direction *d = &sh->dirs[q];
      if (d->id >= sh->n_total || d->id % sh->shard_count != sh->shard_index
          || (q > 0 && d->id <= sh->dirs[q - 1].id))
        return false;
      /* the coordinate a direction of its kind must have  */
      if (sh->status == GC_OK
          && ((sh->direction_kind == GC_DIR_ALL && d->index != d->id)
              || (sh->direction_kind == GC_DIR_RANDOM
                  && d->index != SIZE_MAX)
              || (sh->direction_kind == GC_DIR_LIST
                  && d->index == SIZE_MAX)))
        return false;
    }
  return true;
}

static gc_status
merge_fail (gc_result *r, bool *filled, gc_status st)
{
  free (filled);
  gc_result_free (r);
  return st;
}

/* The terms of D point at static strings or at its shard's kept ones:
   keep copies of the latter with R (the twin's and Richardson's terms too:
   manual "The f64 twin").  False when memory runs out.  */
static bool
keep_strings (gc_result *r, gc_direction *d)
{
  gc_term *all[GC_N_TERMS + 3] = {
    &d->terms[0], &d->terms[1], &d->terms[2], &d->adjoint_f64,
    &d->richardson_terms[0], &d->richardson_terms[1] };
  for (int t = 0; t < GC_N_TERMS + 3; t++)
    {
      gc_term *tm = all[t];
      const char **str_of[GC_TERM_MAX_INPUTS + 3];
      size_t ns = 0;
      str_of[ns++] = &tm->name;
      str_of[ns++] = &tm->formula;
      str_of[ns++] = &tm->section;
      for (size_t i = 0; i < tm->n_inputs && i < GC_TERM_MAX_INPUTS; i++)
        str_of[ns++] = &tm->inputs[i].name;
      for (size_t i = 0; i < ns; i++)
        if (*str_of[i] && !(*str_of[i] = known (r, *str_of[i])))
          return false;
    }
  return true;
}

/* Every direction of R judged again from its own numbers, as gc_check
   judges it.  */
static void
judge_again (gc_result *r)
{
  for (size_t q = 0; q < r->n_directions; q++)
    {
      gc_direction *d = &r->dirs[q];
      gc__judge (d, stored_jump_noise (r, d));
      /* no two confirmation levels agreed: the reference could not be
         trusted (manual: "Confirming a direction") */
      if (d->level < 0)
        d->verdict = GC_INCONCLUSIVE;
      else
        gc__judge_resolution (d);
      gc__judge_twin (d);   /* manual: "Two verdicts, one report" */
    }
}

static gc_status
merge (gc_result *const *shards, size_t n, gc_result **out)
{
  if (!shards || !out || n == 0)
    return GC_EINVAL;
  *out = NULL;
  for (size_t s = 0; s < n; s++)
    if (!shards[s] || (shards[s]->n_directions && !shards[s]->dirs))
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
          || seen[sh->shard_index] || !shard_sound (sh))
        {
          free (seen);
          return GC_EMISMATCH;
        }
      seen[sh->shard_index] = true;
      total += sh->n_directions;
    }
  free (seen);
  /* every shard holds exactly its ids, so together they hold all  */
  if (total != first->n_total)
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
    return merge_fail (r, NULL, st);
  r->dirs = calloc (total ? total : 1, sizeof *r->dirs);
  bool *filled = calloc (total ? total : 1, sizeof *filled);
  if (!r->dirs || !filled)
    return merge_fail (r, filled, GC_ENOMEM);
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
      /* a model seen non-deterministic in any shard is so in the whole
         check (manual: "Determinism and reentrancy") */
      if (sh->nondeterministic && !r->nondeterministic)
        {
          r->nd_index = sh->nd_index;
          r->nd_first = sh->nd_first;
          r->nd_second = sh->nd_second;
          snprintf (r->nd_detail, sizeof r->nd_detail, "%s", sh->nd_detail);
        }
      r->nondeterministic |= sh->nondeterministic;
      for (size_t q = 0; q < sh->n_directions; q++)
        {
          size_t id = sh->dirs[q].id;
          if (id >= total || filled[id])
            return merge_fail (r, filled, GC_EMISMATCH);
          filled[id] = true;
          r->dirs[id] = sh->dirs[q];
          if (!keep_strings (r, &r->dirs[id]))
            return merge_fail (r, filled, GC_ENOMEM);
        }
    }
  for (size_t id = 0; id < total; id++)
    if (!filled[id])
      return merge_fail (r, filled, GC_EMISMATCH);
  free (filled);
  if (r->status == GC_OK)
    {
      /* The listed coordinates, in id order, are the list the identity
         names.  */
      if (r->direction_kind == GC_DIR_LIST)
        {
          size_t *ix = malloc ((total ? total : 1) * sizeof *ix);
          if (!ix)
            return merge_fail (r, NULL, GC_ENOMEM);
          for (size_t q = 0; q < total; q++)
            ix[q] = r->dirs[q].index;
          uint64_t dd = gc__indices_digest (ix, total);
          free (ix);
          if (dd != r->identity.directions_digest)
            return merge_fail (r, NULL, GC_EMISMATCH);
        }
      /* Every verdict from the direction's own numbers, by the judge of
         gc_check: a stored verdict is not trusted.  */
      judge_again (r);
      r->detail[0] = 0;
    }
  /* the merged result is the unsharded check  */
  r->identity.digest = gc__identity_digest (r);
  gc__summarise (r);
  if (r->status == GC_OK)
    {
      gc__diagnose (r);
      gc__twin_findings (r);   /* manual: "Two verdicts, one report" */
    }
  *out = r;
  return r->status == GC_OK ? GC_OK : r->status;
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

/* The default floating-point environment (to nearest, no trap) while the shards are
   judged, the caller's
   set back whole on return (manual: "Floating-point environment").  */
gc_status
gc_result_merge (gc_result *const *shards, size_t n, gc_result **out)
{
  fenv_t caller;
  fegetenv (&caller);
  fesetenv (FE_DFL_ENV);
  gc_status st = merge (shards, n, out);
  fesetenv (&caller);
  return st;
}
