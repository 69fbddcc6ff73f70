/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* parse_value.c -- the values of a JSON report read back, each checked for its
   form (manual: "JSON report"): numbers, counts, digests, strings, the
   call counters, and a direction with its terms and twin  */

#include "shards/parse-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A term text or input name of a report read back: the library's static
   string when it is one, a copy kept with R otherwise.  */
const char *
gc__read_name (gc_result *r, const char *s)
{
  const char *k = gc__known_name (s);
  return k ? k : gc__keep_string (r, s);
}

/* Typed access (manual: "JSON report").  A double is a JSON number or one
   of the strings "nan", "inf", "-inf"; a count is a JSON integer >= 0, or
   beyond 2^53 a string of decimal digits; a digest is a string of 16 hex
   digits.  Each returns false when the value is absent or of another
   form.  */
bool
gc__get_num_value (const json_t *j, double *v)
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

bool
gc__get_num (const json_t *o, const char *key, double *v)
{
  return gc__get_num_value (json_object_get (o, key), v);
}

bool
gc__get_u64_value (const json_t *j, uint64_t *v)
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

bool
gc__get_size (const json_t *o, const char *key, size_t *v)
{
  uint64_t x;
  if (!gc__get_u64_value (json_object_get (o, key), &x) || x > SIZE_MAX)
    return false;
  *v = (size_t) x;
  return true;
}

bool
gc__get_hex (const json_t *o, const char *key, uint64_t *v)
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

const char *
gc__get_str (const json_t *o, const char *key)
{
  return json_string_value (json_object_get (o, key));
}

int
gc__get_lookup (const char *s, const char *const *names, int n)
{
  for (int k = 0; s && k < n; k++)
    if (strcmp (s, names[k]) == 0)
      return k;
  return -1;
}

/* Manual: "Where the time goes": the report's "calls" object, present
   when the report was written with GRADCHECK_PROFILE, into R's call
   counts and seconds (absent: they stay 0).  Its per-direction ratios
   are not read: the reports compute them again.  GC_OK or GC_EFORMAT
   (a count that is not one, a time negative or NaN; "inf" is read, as a
   merge's sum of huge times may write it).  */
gc_status
gc__read_calls (gc_result *r, const json_t *j)
{
  static const char *const kind[4] = { "f32", "f64", "mpfr", "backward" };
  const json_t *c = json_object_get (j, "calls");
  if (!c)
    return GC_OK;
  if (!json_is_object (c))
    return GC_EFORMAT;
  for (int k = 0; k < 4; k++)
    {
      char key[32];
      snprintf (key, sizeof key, "%s_seconds", kind[k]);
      if (!gc__get_size (c, kind[k], &r->n_calls[k])
          || !gc__get_num (c, key, &r->call_seconds[k])
          || !(r->call_seconds[k] >= 0))
        return GC_EFORMAT;
    }
  if (!gc__get_num (c, "work_seconds", &r->work_seconds)
      || !gc__get_num (c, "check_seconds", &r->check_seconds)
      || !(r->work_seconds >= 0) || !(r->check_seconds >= 0))
    return GC_EFORMAT;
  return GC_OK;
}

/* Read one full term object into TM: GC_OK, GC_EFORMAT or GC_ENOMEM.  */
static gc_status
term_read (gc_result *r, const json_t *e, gc_term *tm)
{
  double v;
  const char *nm = gc__get_str (e, "name"), *fm = gc__get_str (e, "formula");
  const char *sc = gc__get_str (e, "section");
  const json_t *in = json_object_get (e, "inputs");
  if (!nm || !fm || !sc || !gc__get_num (e, "value", &v)
      || !json_is_object (in)
      || json_object_size (in) > GC_TERM_MAX_INPUTS)
    return GC_EFORMAT;
  tm->name = gc__read_name (r, nm);
  tm->formula = gc__read_name (r, fm);
  tm->section = gc__read_name (r, sc);
  tm->value = v;
  tm->n_inputs = 0;
  const char *key;
  const json_t *iv;
  json_object_foreach ((json_t *) in, key, iv)
    {
      gc_input *ip = &tm->inputs[tm->n_inputs++];
      if (!gc__get_num_value (iv, &ip->value))
        return GC_EFORMAT;
      if (!(ip->name = gc__read_name (r, key)))
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
  gc__direction_no_twin (d);
  bool has = json_object_get (o, "analytic_f64") != NULL;
  if (!has)
    return r->twin && d->verdict != GC_ERROR ? GC_EFORMAT : GC_OK;
  if (!r->twin || !gc__get_num (o, "analytic_f64", &d->analytic_f64)
      || isnan (d->analytic_f64)
      || !gc__get_num (o, "arith_bar", &d->arith_bar)
      || !(d->arith_bar >= 0) || !gc__get_num (o, "arith_diff", &d->arith_diff)
      || !(d->arith_diff >= 0))
    return GC_EFORMAT;
  /* Manual: "The measured floor": optional (reports before it lack it) */
  if (json_object_get (o, "arith_floor")
      && (!gc__get_num (o, "arith_floor", &d->arith_floor)
          || !(d->arith_floor >= 0)
          || !gc__get_num (o, "arith_floor_probe", &d->arith_floor_probe)
          || !(d->arith_floor_probe >= 0)))
    return GC_EFORMAT;
  /* Manual: "A factor the point does not move": optional (only where
     tested; the factor NaN where none held) */
  if (json_object_get (o, "arith_factor_points"))
    {
      size_t pts;
      if (!gc__get_size (o, "arith_factor_points", &pts) || pts == 0
          || pts > GC_FACTOR_POINTS_MAX + 1
          || !gc__get_num (o, "arith_factor", &d->arith_factor)
          || isinf (d->arith_factor))
        return GC_EFORMAT;
      d->arith_factor_points = (unsigned) pts;
    }
  /* Manual: "A term the point does not redraw": optional (measured) */
  if (json_object_get (o, "arith_drift")
      && (!gc__get_num (o, "arith_drift", &d->arith_drift)
          || !(d->arith_drift >= 0) || isinf (d->arith_drift)))
    return GC_EFORMAT;
  /* the stored judgement of both questions (read for its form: a report
     read back and a merge judge them again, gc__judge_stored) */
  const char *va = gc__get_str (o, "verdict_algorithm");
  const char *ac = gc__get_str (o, "arith");
  int vai = va ? gc__verdict_from_name (va) : -1;
  int aci = ac ? gc__arith_from_name (ac) : -1;
  const json_t *ru = json_object_get (o, "richardson_used");
  if (vai < 0 || aci < 0 || !gc__get_num (o, "bar_f64", &d->bar_f64)
      || !gc__get_num (o, "nu_f64", &d->nu_f64)
      || !gc__get_num (o, "resolution_f64", &d->resolution_f64)
      || !gc__get_num (o, "nu_arith", &d->nu_arith)
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
      if (!gc__get_num (o, "richardson", &d->richardson)
          || isnan (d->richardson)
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
          else if (!gc__get_num_value (e_t, t ? &ev : &tv))
            return GC_EFORMAT;
        }
      if (!full)
        {
          /* the values are what the judge reads; the inputs are not kept,
             nor the order (the texts are the first extrapolation's) */
          gc__terms_richardson (d->richardson_terms, NAN, 1, d->richardson,
                                d->richardson + tv, ev / 1.5);
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
  if (!gc__get_num (o, "adjoint_f64_value", &tm->value)
      || !gc__get_num (o, "spread_f64", &spread)
      || !gc__get_num (o, "m_defaulted", &defaulted))
    return GC_EFORMAT;
  /* the term rebuilt with the two inputs the judge reads, its value the
     stored one */
  double value = tm->value;
  gc__term_adjoint_f64 (tm, r->backward_depth, 0, 0, spread, defaulted != 0);
  tm->value = value;
  return GC_OK;
}

/* The head of direction object O: its id and index, verdict, confirmation
   level and deciding reference.  GC_OK or GC_EFORMAT.  */
static gc_status
direction_head (gc_result *r, const json_t *o, gc_direction *d)
{
  size_t id;
  if (!json_is_object (o) || !gc__get_size (o, "id", &id))
    return GC_EFORMAT;
  d->id = id;
  if (json_is_null (json_object_get (o, "index")))
    d->index = SIZE_MAX;
  else if (!gc__get_size (o, "index", &d->index) || d->index == SIZE_MAX)
    return GC_EFORMAT;
  const char *vname = gc__get_str (o, "verdict");
  int vd = vname ? gc__verdict_from_name (vname) : -1;
  if (vd < 0)
    return GC_EFORMAT;
  d->verdict = (gc_verdict) vd;
  /* the confirmation level (absent in older reports: 0) */
  const json_t *lj = json_object_get (o, "level");
  if (!lj)
    d->level = 0;
  else if (!json_is_integer (lj) || json_integer_value (lj) < -2
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
  return GC_OK;
}

/* The adjoint term's inputs the judge reads, AI, into D's adjoint term.
   GC_OK, GC_EFORMAT or GC_ENOMEM.  */
static gc_status
adjoint_inputs_read (gc_result *r, const json_t *ai, gc_direction *d)
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
      if (!gc__get_num_value (iv, &ip->value))
        return GC_EFORMAT;
      if (!(ip->name = gc__read_name (r, key)))
        return GC_ENOMEM;
    }
  return GC_OK;
}

/* Read one direction object: GC_OK, GC_EFORMAT or GC_ENOMEM.  */
gc_status
gc__read_direction (gc_result *r, const json_t *o, gc_direction *d, bool full)
{
  double v;
  gc_status hs = direction_head (r, o, d);
  if (hs != GC_OK)
    return hs;
  struct { const char *key; double *dst; } f[] = {
    { "analytic", &d->analytic }, { "reference", &d->reference },
    { "d2h", &d->d2h }, { "diff", &d->diff }, { "bar", &d->bar },
    { "nu", &d->nu }, { "resolution", &d->resolution }, { "step", &d->step },
    { "jump", &d->jump }, { "forward_error_ulps", &d->forward_error_ulps } };
  for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
    if (!gc__get_num (o, f[k].key, f[k].dst))
      return GC_EFORMAT;
  /* absent in older reports: not measured (manual: "Non-smooth points",
     "The worst case") */
  static const char *const opt[] = { "jump_next", "bar_worst_case" };
  double *optv[] = { &d->jump_next, &d->bar_worst_case };
  for (size_t k = 0; k < 2; k++)
    {
      *optv[k] = NAN;
      if (json_object_get (o, opt[k]) && !gc__get_num (o, opt[k], optv[k]))
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
      gc_status as = adjoint_inputs_read (r, ai, d);
      if (as != GC_OK)
        return as;
    }
  const json_t *tv = json_object_get (o, full ? "terms" : "term_values");
  if (!json_is_array (tv) || json_array_size (tv) != GC_N_TERMS)
    return GC_EFORMAT;
  for (int t = 0; t < GC_N_TERMS; t++)
    {
      const json_t *e = json_array_get (tv, (size_t) t);
      if (!full)
        {
          if (!gc__get_num_value (e, &d->terms[t].value))
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

bool
gc__read_screen (const json_t *j, gc_result *r)
{
  return gc__get_size (j, "screen_first", &r->screen_first)
         && gc__get_size (j, "screen_room", &r->screen_room)
         && gc__get_size (j, "screen_superseded", &r->screen_superseded)
         && gc__get_size (j, "screen_coarse", &r->screen_coarse);
}
