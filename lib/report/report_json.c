/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report_json.c -- a result as JSON, through Jansson.  The field names are
   documented in the manual, section "JSON report"; keep the two in step.  */

#include "report/report-internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* JSON (through Jansson).  Every value the writer emits reads back to the
   same value (manual: "JSON report"): doubles with 17 significant digits
   in the C locale's notation whatever the host's locale, the non-finite
   ones as the strings "nan", "inf" and "-inf"; integers beyond 2^53 (which
   other JSON readers round) as strings of decimal digits; text as valid
   UTF-8, each invalid byte replaced by U+FFFD.  A constructor given NULL
   (an allocation failed) makes the whole report NULL.  */

static json_t *
jnum (double v)
{
  if (isfinite (v))
    return json_real (v);
  return json_string (isnan (v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static json_t *
juint (uint64_t v)
{
  if (v <= (uint64_t) 1 << 53)
    return json_integer ((json_int_t) v);
  char d[24];
  snprintf (d, sizeof d, "%llu", (unsigned long long) v);
  return json_string (d);
}

static json_t *
jhex (uint64_t v)
{
  char d[24];
  snprintf (d, sizeof d, "%016llx", (unsigned long long) v);
  return json_string (d);
}

static json_t *
jstr (const char *s)
{
  gc__buf b = { 0 };
  gc__buf_utf8 (&b, s ? s : "");
  char *t = gc__buf_take (&b);
  json_t *j = t ? json_string (t) : NULL;
  free (t);
  return j;
}

/* Set KEY of O to V (taking V); false when either is NULL or memory ran
   out.  */
static bool
put (json_t *o, const char *key, json_t *v)
{
  if (!o)
    {
      json_decref (v);
      return false;
    }
  return json_object_set_new (o, key, v) == 0;
}

static bool
push (json_t *a, json_t *v)
{
  if (!a)
    {
      json_decref (v);
      return false;
    }
  return json_array_append_new (a, v) == 0;
}

static json_t *
term_json (const gc_term *tm)
{
  json_t *o = json_object (), *in = json_object ();
  bool ok = put (o, "name", jstr (tm->name))
            && put (o, "formula", jstr (tm->formula))
            && put (o, "section", jstr (tm->section))
            && put (o, "value", jnum (tm->value));
  for (size_t k = 0; ok && in && k < tm->n_inputs; k++)
    {
      json_t *name = jstr (tm->inputs[k].name);
      ok = name && put (in, json_string_value (name),
                        jnum (tm->inputs[k].value));
      json_decref (name);
    }
  ok = ok && put (o, "inputs", json_incref (in));
  json_decref (in);
  if (!ok)
    {
      json_decref (o);
      return NULL;
    }
  return o;
}

static json_t *
direction_json (const gc_result *r, const gc_direction *d, bool terms)
{
  json_t *o = json_object ();
  bool ok = put (o, "id", juint (d->id))
            && put (o, "index", d->index == SIZE_MAX ? json_null ()
                                : juint (d->index));
  char nm[96];
  if (ok && d->index != SIZE_MAX)
    ok = put (o, "name", jstr (gc_param_name (r, d->index, nm, sizeof nm)));
  ok = ok && put (o, "verdict", jstr (gc_verdict_name (d->verdict)));
  static const char *const keys[] = { "analytic", "reference", "d2h", "diff",
                                      "bar", "nu", "resolution", "step",
                                      "jump", "forward_error_ulps",
                                      "jump_next", "bar_worst_case",
                                      "nu_worst_case" };
  const double vals[] = { d->analytic, d->reference, d->d2h, d->diff, d->bar,
                          d->nu, d->resolution, d->step, d->jump,
                          d->forward_error_ulps, d->jump_next,
                          d->bar_worst_case, d->nu_worst_case };
  for (size_t k = 0; ok && k < sizeof vals / sizeof vals[0]; k++)
    ok = put (o, keys[k], jnum (vals[k]));
  json_t *a = json_array ();
  for (int t = 0; ok && a && t < GC_N_TERMS; t++)
    ok = push (a, terms ? term_json (&d->terms[t]) : jnum (d->terms[t].value));
  /* Manual: "What the measurement does not support": the adjoint term's
     inputs that its rules (and "Measured rounding sensitivity"'s) read,
     so that a merge judges as the check did.  */
  if (ok && !terms && d->terms[GC_TERM_ADJOINT].n_inputs)
    {
      static const char *const want[] = { "lambda", "lambda_n", "d_b",
                                          "d_t", "d_H",   /* JVP, HVP */
                                          "gamma_d / u", "sum |w_i| m_i",
                                          "sum |w_i|", "S_w",
                                          /* "Rounding classes" */
                                          "A_classes", "A_unreached" };
      const gc_term *at = &d->terms[GC_TERM_ADJOINT];
      json_t *in = json_object ();
      ok = in != NULL;
      for (size_t k = 0; ok && k < at->n_inputs; k++)
        for (size_t q = 0; ok && q < sizeof want / sizeof *want; q++)
          if (strcmp (at->inputs[k].name, want[q]) == 0)
            ok = put (in, want[q], jnum (at->inputs[k].value));
      ok = ok && put (o, "adjoint_inputs", json_incref (in));
      json_decref (in);
    }
  ok = ok && put (o, terms ? "terms" : "term_values", json_incref (a))
       && put (o, "level", json_integer (d->level))
       /* manual: "The tiered reference" */
       && put (o, "decided_by", jstr (gc_reference_name (d->decided_by)));
  json_decref (a);
  /* manual: "Two verdicts, one report" */
  if (ok && !isnan (d->analytic_f64))
    {
      static const char *const tkeys[] = { "analytic_f64", "bar_f64",
                                           "nu_f64", "resolution_f64",
                                           "arith_diff", "arith_bar",
                                           "nu_arith" };
      const double tvals[] = { d->analytic_f64, d->bar_f64, d->nu_f64,
                               d->resolution_f64, d->arith_diff,
                               d->arith_bar, d->nu_arith };
      for (size_t k = 0; ok && k < sizeof tvals / sizeof tvals[0]; k++)
        ok = put (o, tkeys[k], jnum (tvals[k]));
      /* manual: "The measured floor" (only where measured) */
      if (ok && d->arith_floor >= 0)
        ok = put (o, "arith_floor", jnum (d->arith_floor))
             && put (o, "arith_floor_probe", jnum (d->arith_floor_probe));
      /* manual: "A factor the point does not move" (only where tested;
         the factor NaN where none held) */
      if (ok && d->arith_factor_points > 0)
        ok = put (o, "arith_factor", jnum (d->arith_factor))
             && put (o, "arith_factor_points",
                     juint (d->arith_factor_points));
      if (ok && !isnan (d->arith_drift))   /* "A term the point does not
                                               redraw" (where measured) */
        ok = put (o, "arith_drift", jnum (d->arith_drift));
      /* manual: "Richardson's stencil" */
      if (ok && !isnan (d->richardson))
        {
          json_t *ra = json_array ();
          for (int t = 0; ok && ra && t < 2; t++)
            ok = push (ra, terms ? term_json (&d->richardson_terms[t])
                                 : jnum (d->richardson_terms[t].value));
          ok = ok && put (o, "richardson", jnum (d->richardson))
               && put (o, "richardson_used",
                       json_boolean (d->richardson_used))
               && put (o, terms ? "richardson_terms"
                                : "richardson_term_values",
                       json_incref (ra));
          json_decref (ra);
        }
      ok = ok && put (o, "verdict_algorithm",
                      jstr (gc_verdict_name (d->verdict_algorithm)))
           && put (o, "arith", jstr (gc__arith_name (d->arith)))
           && (terms ? put (o, "adjoint_f64", term_json (&d->adjoint_f64))
               : put (o, "adjoint_f64_value", jnum (d->adjoint_f64.value))
                 && put (o, "spread_f64",
                         jnum (gc__term_input (&d->adjoint_f64, "S_w64", 0)))
                 && put (o, "m_defaulted",
                         jnum (gc__term_input (&d->adjoint_f64,
                                               "m defaulted", 0))));
    }
  if (!ok)
    {
      json_decref (o);
      return NULL;
    }
  return o;
}

static int
dump_to_buf (const char *s, size_t n, void *data)
{
  gc__buf *b = data;
  char *t = malloc (n + 1);
  if (!t)
    {
      b->failed = true;
      return -1;
    }
  memcpy (t, s, n);
  t[n] = 0;
  gc__buf_puts (b, t);
  free (t);
  return b->failed ? -1 : 0;
}

/* Append J (taken) to B as compact JSON; fails B when J is NULL.  */
static void
json_out (gc__buf *b, json_t *j)
{
  if (!j || json_dump_callback (j, dump_to_buf, b,
                                JSON_COMPACT | JSON_ENCODE_ANY
                                | JSON_REAL_PRECISION (17)) != 0)
    b->failed = true;
  json_decref (j);
}

/* The per-tensor summary as a JSON array (a new reference), or NULL when
   memory ran out.  */
static json_t *
tensors_json (const gc_result *r)
{
  size_t nt = 0;
  gc__tensor *t = NULL;
  json_t *a = json_array ();
  if (!a)
    return NULL;
  if (r->status == GC_OK && r->n_directions > 0 && r->dirs
      && gc__tensors (r, &t, &nt) != GC_OK)
    {
      json_decref (a);
      return NULL;
    }
  bool ok = true;
  for (size_t k = 0; ok && t && k < nt; k++)
    {
      json_t *o = json_object ();
      ok = o && put (o, "name", jstr (t[k].name))
           && put (o, "checked", juint (t[k].checked))
           && put (o, "failed", juint (t[k].failed))
           && put (o, "nonsmooth", juint (t[k].nonsmooth))
           && put (o, "precision", juint (t[k].precision))
           && put (o, "inconclusive", juint (t[k].inconclusive))
           && put (o, "worst_nu", jnum (t[k].worst_nu))
           && put (o, "resolution", jnum (t[k].resolution))
           && put (o, "structure", jstr (t[k].structure))
           && put (o, "rules_out", jnum (t[k].rules_out))
           && put (o, "rules_out_rel", jnum (t[k].rules_out_rel))
           && put (o, "rules_out_f32", jnum (t[k].rules_out_f32))
           && put (o, "rules_out_f32_rel", jnum (t[k].rules_out_f32_rel))
           && json_array_append_new (a, o) == 0;
      if (!ok)
        json_decref (o);
    }
  free (t);
  if (!ok)
    {
      json_decref (a);
      return NULL;
    }
  return a;
}

/* The summary fields of R into O; false when memory ran out.  */
static bool
summary_json (json_t *o, const gc_result *r)
{
  return put (o, "gradcheck", jstr (GC_VERSION_STRING))
    && put (o, "kind", jstr (gc__kind_name (r->kind)))
    && put (o, "model", jstr (r->model_name))
    /* manual: "Device arithmetic" (absent: the host) */
    && (!r->device[0] || put (o, "device", jstr (r->device)))
    /* manual: "PyTorch" (absent: none) */
    && (!r->loss_note[0] || put (o, "loss_note", jstr (r->loss_note)))
    && put (o, "n", juint (r->n))
    && put (o, "reference", jstr (gc_reference_name (r->reference)))
    && put (o, "precision", juint (r->precision > 0
                                   ? (uint64_t) r->precision : 0))
    && put (o, "truncation_source",
            jstr (gc_reference_name (r->truncation_source)))
    && put (o, "directions",
            jstr (gc__direction_kind_name (r->direction_kind)))
    && put (o, "seed", juint (r->seed))
    && put (o, "random_per_block", juint (r->random_per_block))
    && (r->direction_kind != GC_DIR_SCREEN
        || (put (o, "screen_first", juint (r->screen_first))
            && put (o, "screen_room", juint (r->screen_room))
            && put (o, "screen_superseded", juint (r->screen_superseded))
            && put (o, "screen_coarse", juint (r->screen_coarse))))
    && put (o, "false_alarm", jnum (r->false_alarm))
    && put (o, "lambda_forward", jnum (r->lambda_forward))
    && put (o, "lambda_backward", jnum (r->lambda_backward))
    && put (o, "forward_depth", juint (r->forward_depth))
    && put (o, "backward_depth", juint (r->backward_depth))
    && put (o, "loss_f32", jnum (r->loss_f32))
    && put (o, "loss_reference", jnum (r->loss_reference))
    && put (o, "loss_magnitude", jnum (r->loss_magnitude))
    && put (o, "forward_error_ulps", r->forward_error_ulps >= 0
            ? jnum (r->forward_error_ulps) : json_null ())
    && put (o, "forward_budget_ulps", jnum (r->forward_budget_ulps))
    && put (o, "status", jstr (gc__status_name (r->status)))
    && put (o, "detail", jstr (r->detail))
    && put (o, "verdict", jstr (gc_verdict_name (r->verdict)))
    && put (o, "n_directions", juint (r->n_directions))
    && put (o, "n_total", juint (r->n_total))
    && put (o, "shard_index", juint (r->shard_index))
    && put (o, "shard_count", juint (r->shard_count))
    && put (o, "n_failed", juint (r->n_failed))
    && put (o, "n_nonsmooth", juint (r->n_nonsmooth))
    && put (o, "n_inconclusive", juint (r->n_inconclusive))
    && put (o, "n_decided_f64", juint (gc__decided_count (r, GC_REF_F64)))
    && put (o, "n_decided_mpfr", juint (gc__decided_count (r, GC_REF_MPFR)))
    /* manual: "Determinism and reentrancy", "What the bar assumes" */
    && put (o, "nondeterministic", juint (r->nondeterministic))
    && put (o, "nd_detail", jstr (r->nd_detail))
    && put (o, "nd_index", r->nd_index == SIZE_MAX ? json_null ()
                           : juint (r->nd_index))
    && put (o, "nd_first", jnum (r->nd_first))
    && put (o, "nd_second", jnum (r->nd_second))
    && put (o, "defaulted", juint (r->defaulted))
    && put (o, "n_magnitude_low", juint (r->n_magnitude_low))
    /* manual: "Measured rounding sensitivity" */
    && put (o, "rounding_modes", juint (r->rounding_modes))
    && put (o, "rounding_dropped", juint (r->rounding_dropped))
    && put (o, "rounding_note", jstr (r->rounding_note))
    && put (o, "spread_loss", jnum (r->spread_loss))
    && put (o, "spread_loss_f32", jnum (r->spread_loss_f32))
    && put (o, "depth_implied", jnum (r->depth_implied))
    && put (o, "depth_implied_at", r->depth_implied_at == SIZE_MAX
                                   ? json_null ()
                                   : juint (r->depth_implied_at))
    && put (o, "forward_depth_implied", jnum (r->forward_depth_implied))
    && put (o, "depth_supported", jnum (r->depth_supported))
    && put (o, "n_unsupported", juint (r->n_unsupported))
    && put (o, "n_blind_defaulted", juint (r->n_blind_defaulted))
    /* absent: the model has no twin, or the check used it */
    && (!r->twin_unused || put (o, "twin_unused", json_true ()))
    && put (o, "n_spread_beyond", juint (r->n_spread_beyond))
    && put (o, "n_unreached", juint (r->n_unreached))
    && put (o, "loss_magnitude_supported",
            jnum (r->loss_magnitude_supported))
    && put (o, "n_loss_unsupported", juint (r->n_loss_unsupported))
    && put (o, "loss_magnitude_raised", juint (r->loss_magnitude_raised))
    && put (o, "loss_magnitude_low", juint (r->loss_magnitude_low))
    && put (o, "loss_magnitude_declared",
            jnum (r->loss_magnitude_declared))
    /* manual: "The worst case" */
    && put (o, "worst_nu_worst_case", jnum (r->worst_nu_worst_case))
    && put (o, "n_failed_certain", juint (r->n_failed_certain));
}

/* Manual: "Rounding classes": R's classes into O, only for a model that
   declares them (a model without keeps its JSON byte for byte).  */
static bool
precisions_json (json_t *o, const gc_result *r)
{
  if (!r->n_precisions)
    return true;
  json_t *a = json_array ();
  bool ok = a != NULL;
  for (size_t k = 0; ok && k < r->n_precisions; k++)
    {
      const gc_precision *p = &r->precisions[k];
      json_t *c = json_object ();
      ok = c && put (c, "name", jstr (p->name))
           && put (c, "kind", jstr (gc__precision_kind_name (p->kind)))
           && put (c, "unit_roundoff", jnum (p->unit_roundoff))
           && put (c, "underflow", jnum (p->underflow))
           && put (c, "forward_depth", juint (p->forward_depth))
           && put (c, "backward_depth", juint (p->backward_depth))
           && put (c, "mode_reached", json_boolean (p->mode_reached))
           && json_array_append (a, c) == 0;
      json_decref (c);
    }
  ok = ok && put (o, "precisions", json_incref (a))
       && put (o, "n_unvalidated", juint (r->n_unvalidated));
  json_decref (a);
  return ok;
}

/* Manual: "Where the time goes": R's call counts and seconds by kind,
   and the forward calls per direction judged (only with
   GRADCHECK_PROFILE: reports are otherwise unchanged).  */
static bool
calls_json (json_t *o, const gc_result *r)
{
  if (!gc__profile_on (r))
    return true;
  static const char *const kind[4] = { "f32", "f64", "mpfr", "backward" };
  json_t *c = json_object ();
  size_t nd = gc__judged_count (r);
  bool ok = c != NULL;
  for (int k = 0; k < 4 && ok; k++)
    {
      char key[32];
      snprintf (key, sizeof key, "%s_seconds", kind[k]);
      ok = put (c, kind[k], juint (r->n_calls[k]))
           && put (c, key, jnum (r->call_seconds[k]));
    }
  size_t fw = r->n_calls[0] + r->n_calls[1] + r->n_calls[2];
  ok = ok && put (c, "directions_judged", juint (nd))
       && put (c, "check_seconds", jnum (r->check_seconds))
       && put (c, "work_seconds", jnum (r->work_seconds))
       && put (c, "forward_per_direction",
               nd ? jnum ((double) fw / (double) nd) : json_null ())
       && put (c, "f64_per_direction",
               nd ? jnum ((double) r->n_calls[1] / (double) nd)
                  : json_null ());
  ok = ok && put (o, "calls", json_incref (c));
  json_decref (c);
  return ok;
}

/* R's twin object (when it has a twin) into O.  */
static bool
twin_json (json_t *o, const gc_result *r)
{
  /* manual: "Two verdicts, one report" */
  if (!r->twin)
    return true;
  json_t *tw = json_object ();
  bool ok = put (tw, "n_failed_algorithm", juint (r->n_failed_algorithm))
            && put (tw, "n_precision", juint (r->n_precision))
            && put (tw, "n_mismatch", juint (r->n_mismatch))
            && put (tw, "worst_nu_arith", jnum (r->worst_nu_arith))
            && put (tw, "worst_nu_f64", jnum (r->worst_nu_f64))
            && put (tw, "resolution_f64_median",
                    jnum (r->resolution_f64_median))
            && put (tw, "resolution_f64_worst", jnum (r->resolution_f64_worst))
            && put (tw, "rounding_modes", juint (r->twin_rounding_modes))
            /* why a mode was left out (only when one was: reports
               without are unchanged) */
            && (!r->twin_rounding_note[0]
                || put (tw, "rounding_note", jstr (r->twin_rounding_note)))
            /* manual: "The measured floor" */
            && put (tw, "floor_draws", juint (r->floor_draws))
            && (!r->floor_note[0]
                || put (tw, "floor_note", jstr (r->floor_note)))
            /* manual: "Spread against defaulted magnitudes" (only when
               there are any: reports without them are unchanged) */
            && (!r->n_spread_defaulted
                || put (tw, "n_spread_defaulted",
                        juint (r->n_spread_defaulted)))
            /* manual: "Structure decides the kind" (only when set: reports
               without it are unchanged; a report read back recomputes
               it) */
            && (!r->classes_unshown
                || put (tw, "classes_unshown", json_true ()))
            && put (o, "twin", json_incref (tw));
  json_decref (tw);
  return ok;
}

/* R's parameter blocks as the array "blocks" of O.  */
static bool
blocks_json (json_t *o, const gc_result *r)
{
  json_t *bs = json_array ();
  bool ok = true;
  for (size_t k = 0; ok && bs && k < r->n_blocks; k++)
    {
      const gc_block *bl = &r->blocks[k];
      json_t *bo = json_object (), *sh = json_array ();
      bool bok = put (bo, "name", jstr (bl->name))
                 && put (bo, "offset", juint (bl->offset))
                 && put (bo, "count", juint (bl->count));
      for (size_t a = 0; bok && sh && a < bl->ndim; a++)
        bok = push (sh, juint (bl->shape[a]));
      bok = bok && put (bo, "shape", json_incref (sh));
      json_decref (sh);
      ok = bok && push (bs, json_incref (bo));
      json_decref (bo);
    }
  ok = ok && put (o, "blocks", json_incref (bs));
  json_decref (bs);
  return ok;
}

static json_t *
report_json (const gc_result *r)
{
  json_t *o = json_object ();
  bool ok = summary_json (o, r);
  ok = ok && precisions_json (o, r) && twin_json (o, r) && calls_json (o, r);
  const gc_identity *id = &r->identity;
  char version[sizeof id->version + 1];
  memcpy (version, id->version, sizeof id->version);
  version[sizeof id->version] = 0;
  json_t *ident = json_object ();
  ok = ok && put (ident, "version", jstr (version))
       && put (ident, "step", jnum (id->step))
       && put (ident, "x_digest", jhex (id->x_digest))
       && put (ident, "directions_digest", jhex (id->directions_digest))
       && put (ident, "model_digest", jhex (id->model_digest))
       && put (ident, "digest", jhex (id->digest))
       && put (o, "identity", json_incref (ident));
  json_decref (ident);
  const gc_direction *w = r->worst < r->n_directions && r->dirs
                          ? &r->dirs[r->worst] : NULL;
  ok = ok && put (o, "worst_index", w && w->index != SIZE_MAX
                                    ? juint (w->index) : json_null ())
       && put (o, "worst_id", w ? juint (w->id) : json_null ())
       && put (o, "worst_nu", jnum (r->worst_nu))
       && put (o, "worst", w ? direction_json (r, w, true) : json_null ());
  const gc_diagnosis *dg = &r->diagnosis;
  json_t *dj = json_object ();
  ok = ok && put (dj, "kind", jstr (gc__diagnosis_name (dg->kind)))
       && put (dj, "factor", jnum (dg->factor))
       && put (dj, "closed_form", jstr (dg->closed_form))
       && put (dj, "shift", json_integer (dg->shift))
       && put (dj, "block", jstr (dg->block))
       && put (dj, "text", jstr (dg->text))
       && put (o, "diagnosis", json_incref (dj))
       && put (o, "tensors", tensors_json (r));
  json_decref (dj);
  /* constants: an object by name; a repeated name keeps its first value  */
  json_t *cs = json_object ();
  for (size_t k = 0; ok && cs && k < r->n_constants; k++)
    {
      json_t *name = jstr (r->constants[k].name);
      ok = name != NULL;
      if (ok && !json_object_get (cs, json_string_value (name)))
        ok = put (cs, json_string_value (name),
                  jnum (r->constants[k].value));
      json_decref (name);
    }
  ok = ok && put (o, "constants", json_incref (cs));
  json_decref (cs);
  ok = ok && blocks_json (o, r);
  json_t *rs = json_array ();
  for (size_t k = 0; ok && rs && k < r->n_directions && r->dirs; k++)
    ok = push (rs, direction_json (r, &r->dirs[k], false));
  ok = ok && put (o, "results", json_incref (rs));
  json_decref (rs);
  if (!ok)
    {
      json_decref (o);
      return NULL;
    }
  return o;
}

/* The derivation of D as one line of JSON (its terms included).  */
void
gc__derivation_json (gc__buf *b, const gc_result *r, const gc_direction *d)
{
  json_out (b, direction_json (r, d, true));
  gc__buf_puts (b, "\n");
}

void
gc__report_json (gc__buf *b, const gc_result *r)
{
  json_out (b, report_json (r));
  gc__buf_puts (b, "\n");
}
