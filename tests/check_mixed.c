/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_mixed.c -- rounding classes (manual: "Rounding classes").

   - gdn-bf16 and gdn-fp16, correct, pass on several seeds and shapes;
   - every mutant of their catalogue is caught (fail or precision) or
     inconclusive; a precision-only mutant that passes differs from the
     correct kernel by no more than two correct kernels may differ (each
     within the arithmetic's bound of the same twin);
   - without its classes the same bf16 kernel is no pass (f32's bar: the
     false alarm the classes remove), and a declaration too small for
     what the kernel does is a finding;
   - without a twin a pass may not rest on a class the rounding modes do
     not reach (bf16 by bit operations): inconclusive;
   - a description of ABI 2 is read as one that declares no class, and
     gives the same report as the ABI-3 description without classes;
   - hostile declarations are refused with GC_EINVAL and a reason; an f32
     reference of a model with forward classes too;
   - the forward oracle of both passes, and the reports name the classes;
   - a spread beyond the arithmetic's bound against defaulted magnitudes,
     |g32 - g64| within it, is inconclusive, and a finding once the
     magnitudes are declared (gdn-fp16's two cells of the wider run, and
     an f32 sum of large opposite terms).
   These programs run under whatever OpenBLAS kernel they get.  */

#include "gctest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gcm_instance *
make (const char *model, const char *shape, uint64_t seed, int mutant)
{
  const gcm_spec *spec = gcm_find (model);
  ck_assert_ptr_nonnull (spec);
  long v[GCM_MAX_KEYS];
  char err[128];
  ck_assert_int_eq (gcm_parse_shape (spec, shape, v, err, sizeof err),
                    GC_OK);
  gcm_instance *inst = NULL;
  ck_assert_int_eq (gcm_create (spec, v, seed, mutant, &inst), GC_OK);
  return inst;
}

static gc_result *
run (const gc_model *m, const float *x, int no_twin)
{
  gc_options o;
  gc_options_init (&o);
  o.no_twin = no_twin;
  return gct_check_ok (m, x, &o);
}

static const char *const models[] = { "gdn-bf16", "gdn-fp16" };
static const char *const shapes[] = { "", "T=16,BT=16", "T=40,BT=8,GATE=1",
                                      "B=2,T=21,H=1,K=4,V=6,BT=4" };

/* Loop index: model (2) x shape (4).  */
START_TEST (test_correct_passes)
{
  const char *model = models[_i % 2], *shape = shapes[_i / 2];
  for (uint64_t s = 0; s < gct_seeds (3); s++)
    {
      uint64_t seed = gct_seed () + s;
      gcm_instance *inst = make (model, shape, seed, 0);
      ck_assert_uint_eq (inst->model.n_precisions, 1);
      gc_result *r = run (&inst->model, inst->x, 0);
      ck_assert_msg (r->verdict == GC_PASS, "%s [%s] seed %llu: %s, worst "
                     "nu %g (arith %g)", model, shape,
                     (unsigned long long) seed, gc_verdict_name (r->verdict),
                     r->worst_nu, r->worst_nu_arith);
      ck_assert_int_eq (r->twin, 1);
      ck_assert_uint_eq (r->n_precisions, 1);
      gc_result_free (r);
      gcm_destroy (inst);
    }
}
END_TEST

/* Loop index: model (2) x mutant (all of the catalogue).  */
START_TEST (test_mutants)
{
  const char *model = models[_i % 2];
  const gcm_spec *spec = gcm_find (model);
  int mu = 1 + _i / 2;
  if ((size_t) mu > spec->n_mutants)
    return;
  uint64_t seed = gct_seed ();
  gcm_instance *inst = make (model, "", seed, mu);
  gc_result *r = run (&inst->model, inst->x, 0);
  if (r->verdict != GC_PASS)
    {
      ck_assert_msg (r->verdict == GC_FAIL || r->verdict == GC_PRECISION
                     || r->verdict == GC_INCONCLUSIVE, "%s/%s: %s", model,
                     spec->mutants[mu - 1].name,
                     gc_verdict_name (r->verdict));
      /* a logic error is the algorithm's, seen by the twin's check */
      if (!spec->mutants[mu - 1].precision)
        ck_assert_msg (r->n_failed_algorithm > 0, "%s/%s: %zu failures, "
                       "none of the algorithm", model,
                       spec->mutants[mu - 1].name, r->n_failed);
    }
  else
    {
      /* Only a precision-only mutant may pass, and only one whose effect
         is within what the declared classes allow: the correct kernel's
         g32 and the mutant's are each within arith_bar of the same g64
         (the twin is the same: the mutant is of the f32 path alone), so
         |g_mut - g_ok| <= 2 arith_bar in every direction.  */
      ck_assert_msg (spec->mutants[mu - 1].precision, "%s/%s passes",
                     model, spec->mutants[mu - 1].name);
      gcm_instance *ok = make (model, "", seed, 0);
      gc_result *c = run (&ok->model, ok->x, 0);
      ck_assert_uint_eq (c->n_directions, r->n_directions);
      for (size_t k = 0; k < r->n_directions; k++)
        {
          const gc_direction *a = &r->dirs[k], *b = &c->dirs[k];
          ck_assert_uint_eq (a->index, b->index);
          ck_assert_double_eq (a->analytic_f64, b->analytic_f64);
          ck_assert_msg (fabs (a->analytic - b->analytic)
                         <= 2 * fmax (a->arith_bar, b->arith_bar),
                         "%s/%s passes at %zu: %g from the correct %g",
                         model, spec->mutants[mu - 1].name, a->index,
                         a->analytic, b->analytic);
        }
      gc_result_free (c);
      gcm_destroy (ok);
    }
  gc_result_free (r);
  gcm_destroy (inst);
}
END_TEST

/* The same bf16 kernel judged as an f32 one (no class declared): the
   false alarm the classes remove -- no pass.  And a class declared far
   too small for it (depth 1 where the kernel stores 2 NT + 4 times on a
   chain, at fp16's unit roundoff for bf16 storage): a finding of the
   arithmetic, no pass.  */
START_TEST (test_undeclared_is_no_pass)
{
  gcm_instance *inst = make ("gdn-bf16", "", gct_seed (), 0);
  gc_model m = inst->model;
  m.n_precisions = 0;
  m.precisions = NULL;
  gc_result *r = run (&m, inst->x, 0);
  ck_assert_msg (r->verdict == GC_PRECISION || r->verdict == GC_FAIL,
                 "undeclared bf16: %s", gc_verdict_name (r->verdict));
  ck_assert_double_gt (r->worst_nu_arith, 1);
  gc_result_free (r);
  gc_precision small = inst->precisions[0];
  small.unit_roundoff = GC_U_FP16;
  small.backward_depth = small.forward_depth = 1;
  m.n_precisions = 1;
  m.precisions = &small;
  r = run (&m, inst->x, 0);
  ck_assert_msg (r->verdict == GC_PRECISION || r->verdict == GC_FAIL,
                 "under-declared bf16: %s", gc_verdict_name (r->verdict));
  gc_result_free (r);
  gcm_destroy (inst);
}
END_TEST

/* Without a twin: bf16 by bit operations is a class the rounding modes do
   not reach; a pass may not rest on it.  */
START_TEST (test_unreached_without_twin)
{
  gcm_instance *inst = make ("gdn-bf16", "", gct_seed (), 0);
  gc_result *r = run (&inst->model, inst->x, 1);
  ck_assert_int_eq (r->twin, 0);
  ck_assert_int_eq (r->verdict, GC_INCONCLUSIVE);
  ck_assert_uint_gt (r->n_unvalidated, 0);
  /* every direction counted so is inconclusive, none passes on it */
  size_t inconclusive = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    inconclusive += r->dirs[k].verdict == GC_INCONCLUSIVE;
  ck_assert_uint_ge (inconclusive, r->n_unvalidated);
  char *text = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (strstr (text, "rounding modes do not reach"));
  free (text);
  gc_result_free (r);
  /* declared far too small (depth 1): nothing measures the class, so a
     failure with no logic error's structure names it (manual: "What the
     rounding modes reach") */
  gc_precision small = inst->precisions[0];
  small.backward_depth = small.forward_depth = 1;
  gc_model m = inst->model;
  m.n_precisions = 1;
  m.precisions = &small;
  r = run (&m, inst->x, 1);
  printf ("# gdn-bf16, class depth 1, no twin: %s (%s)\n",
          gc_verdict_name (r->verdict), r->diagnosis.text);
  ck_assert_int_ne (r->verdict, GC_PASS);
  if (r->verdict == GC_FAIL && (r->diagnosis.kind == GC_DIAG_LOGIC
                                || r->diagnosis.kind == GC_DIAG_ONE_ULP))
    ck_assert_ptr_nonnull (strstr (r->diagnosis.text,
                                   "first: the depths of bf16"));
  gc_result_free (r);
  gcm_destroy (inst);
}
END_TEST

/* An ABI-2 description ends before the classes: read as declaring none,
   its report is the ABI-3 one without classes, byte for byte, and names
   no precision.  The ABI-2 copy is a whole gc_model whose class fields
   hold garbage: the check must not read them.  */
START_TEST (test_abi2_reads_no_class)
{
  gcm_instance *inst = make ("gdn", "T=20,H=1", gct_seed (), 0);
  gc_model m3 = inst->model, m2 = inst->model;
  ck_assert_uint_eq (m3.n_precisions, 0);
  m2.abi = 2;
  m2.n_precisions = 5;
  m2.precisions = (const gc_precision *) (uintptr_t) 1;
  gc_result *r3 = run (&m3, inst->x, 0), *r2 = run (&m2, inst->x, 0);
  char *j3 = gc_report (r3, GC_FMT_JSON), *j2 = gc_report (r2, GC_FMT_JSON);
  ck_assert_str_eq (j2, j3);
  ck_assert_ptr_null (strstr (j3, "\"precisions\""));
  char *t3 = gc_report (r3, GC_FMT_TEXT);
  ck_assert_ptr_null (strstr (t3, "precisions:"));
  free (t3);
  free (j2);
  free (j3);
  gc_result_free (r2);
  gc_result_free (r3);
  gcm_destroy (inst);
}
END_TEST

/* Hostile declarations: each refused with GC_EINVAL and a reason.  */
START_TEST (test_hostile)
{
  gcm_instance *inst = make ("gdn-bf16", "T=8,H=1,BT=4", gct_seed (), 0);
  gc_precision ok = inst->precisions[0], cs[GC_MAX_PRECISIONS + 1];
  struct { const char *what; gc_precision p; size_t n; } cases[] = {
    { "no name", ok, 1 }, { "empty name", ok, 1 }, { "long name", ok, 1 },
    { "u 0", ok, 1 }, { "u > 1/2", ok, 1 }, { "u NaN", ok, 1 },
    { "eta < 0", ok, 1 }, { "eta Inf", ok, 1 },
    { "(1 + u)^d >= 2^64", ok, 1 }, { "forward (1 + u)^d >= 2^64", ok, 1 },
    { "kind", ok, 1 },
    { "too many", ok, GC_MAX_PRECISIONS + 1 }, { "NULL array", ok, 1 },
    { "the same class twice", ok, 2 } };
  cases[0].p.name = NULL;
  cases[1].p.name = "";
  cases[2].p.name = "a name of forty-eight bytes or more, for a class..";
  cases[3].p.unit_roundoff = 0;
  cases[4].p.unit_roundoff = 0.75;
  cases[5].p.unit_roundoff = NAN;
  cases[6].p.underflow = -1;
  cases[7].p.underflow = INFINITY;
  /* (1 + 2^-8)^d >= 2^64 from d = 11379 on (manual: "Chains past
     d u = 1/2") */
  cases[8].p.backward_depth = 11379;
  cases[9].p.forward_depth = 1u << 20;
  cases[10].p.kind = (gc_precision_kind) 7;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    {
      for (size_t k = 0; k < GC_MAX_PRECISIONS + 1; k++)
        cs[k] = cases[c].p;
      gc_model m = inst->model;
      m.n_precisions = cases[c].n;
      m.precisions = c == 12 ? NULL : cs;
      gc_result *r = NULL;
      gc_status st = gc_check (&m, inst->x, NULL, &r);
      ck_assert_msg (st == GC_EINVAL && r && r->detail[0],
                     "%s: %s", cases[c].what, gc_strerror (st));
      /* a depth refused names the class, its depth and the largest one
         its u allows (11378 ln (1 + 2^-8) < 64 ln 2) */
      /* a class listed twice would be counted twice */
      if (c == 13)
        ck_assert_msg (strstr (r->detail, "no earlier class has"), "%s: %s",
                       cases[c].what, r->detail);
      if (c == 8 || c == 9)
        ck_assert_msg (strstr (r->detail, ok.name)
                       && strstr (r->detail, c == 8 ? "depth 11379"
                                                    : "depth 1048576")
                       && strstr (r->detail, "at most 11378"), "%s: %s",
                       cases[c].what, r->detail);
      gc_result_free (r);
      r = NULL;
      m.outputs_f32 = inst->model.outputs_f32;
      st = gc_forward_check (&m, inst->x, NULL, &r);
      ck_assert_msg (st == GC_EINVAL, "oracle, %s: %s", cases[c].what,
                     gc_strerror (st));
      gc_result_free (r);
    }
  /* an f32 reference of a model with forward classes */
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F32;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&inst->model, inst->x, &o, &r), GC_EINVAL);
  ck_assert_ptr_nonnull (strstr (r->detail, "rounding classes"));
  /* refused before it ran: its report claims no reference or count */
  char *t = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (strstr (t, "reference: none"));
  ck_assert_ptr_null (strstr (t, "at 0 bits"));
  ck_assert_ptr_null (strstr (t, "0 checked"));
  free (t);
  gc_result_free (r);
  gcm_destroy (inst);
}
END_TEST

/* The oracle of both passes with the forward classes; the reports name the
   classes (text, JSON).  */
START_TEST (test_oracle_and_reports)
{
  for (int k = 0; k < 2; k++)
    {
      gcm_instance *inst = make (models[k], "", gct_seed (), 0);
      gc_result *r = NULL;
      ck_assert_int_eq (gc_forward_check (&inst->model, inst->x, NULL, &r),
                        GC_OK);
      ck_assert_msg (r->verdict == GC_PASS, "%s oracle: %s, worst nu %g",
                     models[k], gc_verdict_name (r->verdict), r->worst_nu);
      gc_result_free (r);
      r = run (&inst->model, inst->x, 0);
      char *text = gc_report (r, GC_FMT_TEXT);
      char *json = gc_report (r, GC_FMT_JSON);
      ck_assert (gct_json_valid (json));
      ck_assert_ptr_nonnull (strstr (text, "precisions: "));
      ck_assert_ptr_nonnull (strstr (text, inst->precisions[0].name));
      /* the arithmetic's bound is named as the classes' */
      ck_assert_ptr_nonnull (strstr (text, "the declared precisions' "
                                     "derived bound"));
      ck_assert_ptr_null (strstr (text, "derived f32 bound"));
      ck_assert_ptr_nonnull (strstr (json, "\"precisions\""));
      ck_assert_ptr_nonnull (strstr (json, k ? "\"mode_reached\":true"
                                             : "\"mode_reached\":false"));
      free (text);
      free (json);
      gc_result_free (r);
      gcm_destroy (inst);
    }
}
END_TEST

/* Shards of a model with classes merge to the unsharded check (in
   memory and through JSON, with and without the twin: the classes' terms
   travel with each direction), the merged result names the classes, and
   a report whose "precisions" break the rules is refused.  */
START_TEST (test_merge)
{
  gcm_instance *inst = make ("gdn-bf16", "T=20,H=1", gct_seed (), 0);
  for (int nt = 0; nt < 2; nt++)
    {
      gc_options o;
      gc_options_init (&o);
      o.no_twin = nt;
      gc_result *whole = gct_check_ok (&inst->model, inst->x, &o);
      gc_result *sh[2], *back[2];
      o.shard_count = 2;
      for (size_t k = 0; k < 2; k++)
        {
          o.shard_index = k;
          sh[k] = gct_check_ok (&inst->model, inst->x, &o);
          char *j = gc_report (sh[k], GC_FMT_JSON);
          ck_assert_int_eq (gc_result_parse_json (j, strlen (j), &back[k]),
                            GC_OK);
          ck_assert_uint_eq (back[k]->n_precisions, 1);
          free (j);
        }
      for (int via = 0; via < 2; via++)
        {
          gc_result *m = NULL;
          ck_assert_int_eq (gc_result_merge (via ? back : sh, 2, &m), GC_OK);
          ck_assert_int_eq (m->verdict, whole->verdict);
          ck_assert_uint_eq (m->n_unvalidated, whole->n_unvalidated);
          ck_assert_uint_eq (m->n_inconclusive, whole->n_inconclusive);
          ck_assert_uint_eq (m->n_precisions, 1);
          ck_assert_str_eq (m->precisions[0].name,
                            inst->precisions[0].name);
          gc_result_free (m);
        }
      /* hostile "precisions": a unit roundoff beyond 1/2, a kind
         unknown, a flag that is no boolean */
      char *j = gc_report (sh[0], GC_FMT_JSON);
      static const char *const bad[][2] = {
        { "\"unit_roundoff\":", "\"unit_roundoff\":7" },
        { "\"kind\":\"storage\"", "\"kind\":\"magic\"" },
        { "\"mode_reached\":false", "\"mode_reached\":0" } };
      for (size_t b = 0; b < 3; b++)
        {
          const char *at = strstr (j, bad[b][0]);
          ck_assert_ptr_nonnull (at);
          size_t pre = (size_t) (at - j), len = strlen (j);
          char *h = malloc (len + 64);
          memcpy (h, j, pre);
          strcpy (h + pre, bad[b][1]);
          strcat (h, at + strlen (bad[b][0]));
          gc_result *x = NULL;
          ck_assert_int_eq (gc_result_parse_json (h, strlen (h), &x),
                            GC_EFORMAT);
          gc_result_free (x);
          free (h);
        }
      free (j);
      /* a shard whose class differs is of another check: its identity
         digest covers the classes */
      back[1]->precisions[0].backward_depth++;
      gc_result *m = NULL;
      ck_assert_int_eq (gc_result_merge (back, 2, &m), GC_EMISMATCH);
      gc_result_free (m);
      for (size_t k = 0; k < 2; k++)
        {
          gc_result_free (sh[k]);
          gc_result_free (back[k]);
        }
      gc_result_free (whole);
    }
  gcm_destroy (inst);
}
END_TEST

/* Storage helpers: to nearest, fp16's subnormals kept and its overflow
   infinite; each exact on its own values.  */
START_TEST (test_store)
{
  float x = 1.0f + 0x1p-11f + 0x1p-20f;     /* just above fp16's tie */
  ck_assert_float_eq (gcm_store (GCM_STORE_FP16, x), 1.0f + 0x1p-10f);
  ck_assert_float_eq (gcm_store (GCM_STORE_BF16, 1.0f + 0x1p-8f + 0x1p-16f),
                      1.0f + 0x1p-7f);
  ck_assert_float_eq (gcm_store (GCM_STORE_FP16, 0x1p-26f), 0);
  ck_assert_float_eq (gcm_store (GCM_STORE_FP16, 0x1p-24f), 0x1p-24f);
  ck_assert (isinf (gcm_store (GCM_STORE_FP16, 70000.0f)));
  for (int f = GCM_STORE_BF16; f <= GCM_STORE_FP16; f++)
    {
      float y = gcm_store (f, 0.3f);
      ck_assert_float_eq (gcm_store (f, y), y);
    }
}
END_TEST


/* ---------------------------------------------------------------------- */
/* Manual: "Spread against defaulted magnitudes".  Whatever the kernel,
   every direction of R whose arithmetic exceeds its bound by the spread's
   share alone (|g32 - g64| within arith_bar) against defaulted magnitudes
   is inconclusive (arith GC_ARITH_INCONCLUSIVE), counted in
   n_spread_defaulted, and no direction is PRECISION or FAIL by it.
   Returns how many there were.  */
static size_t
spread_alone_is_inconclusive (const gc_result *r, const char *what)
{
  size_t n = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      bool alone = d->arith_diff > d->arith_bar
                   && !(fabs (d->analytic - d->analytic_f64) > d->arith_bar);
      if (!alone)
        continue;
      n++;
      ck_assert_msg (d->arith == GC_ARITH_INCONCLUSIVE
                     && d->verdict == GC_INCONCLUSIVE, "%s at %zu: arith "
                     "%d, verdict %s (nu_arith %g)", what, d->index,
                     (int) d->arith, gc_verdict_name (d->verdict),
                     d->nu_arith);
    }
  ck_assert_uint_eq (r->n_spread_defaulted, n);
  return n;
}

/* The model whose magnitudes the callback below declares (the tensor's
   largest |g64|, what the default would use): test-local.  */
static const gc_model *declared_of;

static int
declared_as_default (void *ctx, const float *x, float *m)
{
  const gc_model *md = declared_of;
  size_t n = md->n;
  double *xd = malloc (n * sizeof *xd), *g = malloc (n * sizeof *g);
  if (!xd || !g)
    {
      free (xd);
      free (g);
      return 1;
    }
  for (size_t i = 0; i < n; i++)
    xd[i] = x[i];
  int rc = md->grad_f64 (ctx, xd, g);
  size_t nb = md->n_blocks ? md->n_blocks : 1;
  for (size_t b = 0; !rc && b < nb; b++)
    {
      size_t lo = md->n_blocks ? md->blocks[b].offset : 0;
      size_t hi = md->n_blocks ? lo + md->blocks[b].count : n;
      double mx = 0;
      for (size_t i = lo; i < hi; i++)
        mx = fmax (mx, fabs (g[i]));
      for (size_t i = lo; i < hi; i++)
        m[i] = (float) mx;
    }
  free (xd);
  free (g);
  return rc;
}

/* The two cells of the wider run (bench/results/mixed-wide-gdn-fp16.tsv)
   where the correct gdn-fp16 kernel was a PRECISION finding under
   Haswell: its fp16 stores spread under the directed modes beyond the
   class's worst case at the defaulted magnitude, |g32 - g64| within it.
   Under any kernel: no false alarm, and such directions inconclusive.
   Declaring the very magnitudes the default uses makes the same spread a
   finding: the rule turns on the declaration, not on the numbers.  */
START_TEST (test_fp16_spread_defaulted)
{
  static const struct { const char *shape; uint64_t seed; } cells[] = {
    { "B=1,T=5,H=1,K=4,V=4,BT=4,GATE=1", 30 },
    { "B=1,T=16,H=1,K=4,V=4,BT=16,GATE=0", 56 } };
  for (size_t c = 0; c < 2; c++)
    {
      gcm_instance *inst = make ("gdn-fp16", cells[c].shape, cells[c].seed, 0);
      gc_result *r = run (&inst->model, inst->x, 0);
      ck_assert_msg (r->verdict == GC_PASS || r->verdict == GC_INCONCLUSIVE,
                     "gdn-fp16 [%s] seed %llu: %s", cells[c].shape,
                     (unsigned long long) cells[c].seed,
                     gc_verdict_name (r->verdict));
      ck_assert_uint_eq (r->n_precision, 0);
      size_t n = spread_alone_is_inconclusive (r, cells[c].shape);
      if (n)
        {
          char *t = gc_report (r, GC_FMT_TEXT);
          ck_assert_ptr_nonnull (strstr (t, "declare grad_magnitude_f32"));
          free (t);
          gc_model m = inst->model;
          declared_of = &inst->model;
          m.grad_magnitude_f32 = declared_as_default;
          gc_result *dm = run (&m, inst->x, 0);
          const gc_direction *d = &r->dirs[r->spread_defaulted_at];
          const gc_direction *e = &dm->dirs[r->spread_defaulted_at];
          ck_assert_uint_eq (e->index, d->index);
          /* the same numbers within f32's rounding of the magnitude */
          ck_assert_double_le (fabs (e->nu_arith - d->nu_arith),
                               1e-6 * d->nu_arith);
          ck_assert_int_eq (e->arith, GC_ARITH_PRECISION);
          ck_assert_int_eq (e->verdict, GC_PRECISION);
          ck_assert_uint_eq (dm->n_spread_defaulted, 0);
          gc_result_free (dm);
        }
      gc_result_free (r);
      gcm_destroy (inst);
    }
}
END_TEST

/* The same kind in f32: L = sum x_i^2 / 2 with the backward g_i = (K +
   x_i) - K, K = 1024, a sum of large opposite terms.  At these points
   K + x_i rounds to nearest with an error of 2^-24 (within f32's bound at
   the tensor's largest |g|, 0.875), while the directed modes round it
   2^-14 or 2^-13 apart: a spread hundreds of times the worst case of the
   defaulted magnitude.  The twin computes the same sum in f64, exactly.
   The true magnitude of g_i's computation is 2K + |x_i|.  */
#define CANCEL_N 4
#define GC_FLOOR_DRAWS_TEST 4   /* GC_FLOOR_DRAWS, lib/internal.h */
static const float cancel_x[CANCEL_N] = {
  0.75f + 0x1p-24f, 0.5f + 0x1p-24f, -0.625f + 0x1p-24f, 0.875f - 0x1p-24f };
static volatile float cancel_k = 1024;

static int
cancel_loss32 (void *ctx, const float *x, float *loss)
{
  (void) ctx;
  float s = 0;
  for (int i = 0; i < CANCEL_N; i++)
    s += x[i] * x[i] / 2;
  *loss = s;
  return 0;
}

static int
cancel_loss64 (void *ctx, const double *x, double *loss)
{
  (void) ctx;
  double s = 0;
  for (int i = 0; i < CANCEL_N; i++)
    s += x[i] * x[i] / 2;
  *loss = s;
  return 0;
}

static int
cancel_lossmp (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  (void) ctx;
  mpfr_t t;
  mpfr_init2 (t, mpfr_get_prec (loss));
  mpfr_set_zero (loss, 1);
  for (int i = 0; i < CANCEL_N; i++)
    {
      mpfr_sqr (t, x + i, MPFR_RNDN);
      mpfr_div_2ui (t, t, 1, MPFR_RNDN);
      mpfr_add (loss, loss, t, MPFR_RNDN);
    }
  mpfr_clear (t);
  return 0;
}

static int
cancel_grad32 (void *ctx, const float *x, float *g)
{
  (void) ctx;
  float k = cancel_k;
  for (int i = 0; i < CANCEL_N; i++)
    {
      volatile float s = k + x[i];
      g[i] = s - k;
    }
  return 0;
}

static int
cancel_grad64 (void *ctx, const double *x, double *g)
{
  (void) ctx;
  double k = cancel_k;
  for (int i = 0; i < CANCEL_N; i++)
    {
      volatile double s = k + x[i];
      g[i] = s - k;
    }
  return 0;
}

static int cancel_declare;   /* 1: 2K + |x_i|; 2: |x_i| (too small) */

static int
cancel_mag (void *ctx, const float *x, float *m)
{
  (void) ctx;
  for (int i = 0; i < CANCEL_N; i++)
    m[i] = cancel_declare == 1 ? 2 * cancel_k + fabsf (x[i]) : fabsf (x[i]);
  return 0;
}

START_TEST (test_f32_spread_defaulted)
{
  gc_model m = { .abi = GC_MODEL_ABI, .name = "cancel", .n = CANCEL_N,
                 .loss_f32 = cancel_loss32, .grad_f32 = cancel_grad32,
                 .grad_f64 = cancel_grad64, .loss_f64 = cancel_loss64,
                 .loss_mpfr = cancel_lossmp,
                 .forward_depth = 2 + CANCEL_N, .backward_depth = 2 };
  /* defaulted magnitudes, the floor measured ("The measured floor"): the
     spread's share S_w / C (2^11 ulps the problem does not lose) is judged
     against kappa F_w, a measured bar, not a defaulted magnitude: a
     precision finding (or, with a logic error's structure, a failure),
     never "declare grad_magnitude_f32".  Before the floor this asserted
     the "Spread against defaulted magnitudes" inconclusive, a property of
     the defaulted bound.  */
  gc_result *r = run (&m, cancel_x, 0);
  ck_assert_msg (r->verdict == GC_PRECISION || r->verdict == GC_FAIL,
                 "cancel, defaulted: %s", gc_verdict_name (r->verdict));
  ck_assert_uint_eq (r->n_spread_defaulted, 0);
  ck_assert_uint_eq (r->floor_draws, GC_FLOOR_DRAWS_TEST);
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      ck_assert_int_eq (d->verdict_algorithm, GC_PASS);
      ck_assert_double_gt (d->nu_arith, 1);
      /* the twin's gradient is exact here, (K + x) - K in f64: the floor
         is the ulp move of x and the output's rounding, a few u |x| */
      ck_assert_double_le (d->arith_floor,
                           4 * 0x1p-24 * fabs (cancel_x[d->index]));
    }
  char *t = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_null (strstr (t, "declare grad_magnitude_f32"));
  ck_assert_ptr_nonnull (strstr (t, "measured floor F_w"));
  free (t);
  /* its JSON read back and merged judges the same */
  char *j = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (strstr (j, "\"arith_floor\":"));
  ck_assert_ptr_nonnull (strstr (j, "\"floor_draws\":"));
  gc_result *back = NULL, *mg = NULL;
  ck_assert_int_eq (gc_result_parse_json (j, strlen (j), &back), GC_OK);
  ck_assert_int_eq (gc_result_merge (&back, 1, &mg), GC_OK);
  ck_assert_int_eq (mg->verdict, r->verdict);
  ck_assert_uint_eq (mg->n_spread_defaulted, 0);
  gc_result_free (mg);
  gc_result_free (back);
  free (j);
  gc_result_free (r);
  /* the true magnitudes declared: the spread is within their worst case */
  m.grad_magnitude_f32 = cancel_mag;
  cancel_declare = 1;
  r = run (&m, cancel_x, 0);
  ck_assert_msg (r->verdict == GC_PASS, "cancel, 2K + |x| declared: %s",
                 gc_verdict_name (r->verdict));
  gc_result_free (r);
  /* magnitudes declared too small: the same spread is a finding (its
     differences g32 - g64, a few 2^-24 of one sign, may show the
     structure of a logic error to the diagnosis, which then makes it a
     failure: "The f64 twin") */
  cancel_declare = 2;
  r = run (&m, cancel_x, 0);
  ck_assert_msg (r->verdict == GC_PRECISION || r->verdict == GC_FAIL,
                 "cancel, |x| declared: %s", gc_verdict_name (r->verdict));
  ck_assert_uint_eq (r->n_spread_defaulted, 0);
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      ck_assert_int_eq (d->verdict_algorithm, GC_PASS);
      ck_assert_msg (d->arith == GC_ARITH_PRECISION
                     || d->arith == GC_ARITH_MISMATCH, "cancel at %zu: "
                     "arith %d", d->index, (int) d->arith);
    }
  gc_result_free (r);
}
END_TEST

static Suite *
suite (void)
{
  Suite *s = suite_create ("mixed");
  TCase *tc = tcase_create ("core");
  tcase_set_timeout (tc, 600);
  tcase_add_loop_test (tc, test_correct_passes, 0, 8);
  tcase_add_loop_test (tc, test_mutants, 0, 24);
  tcase_add_test (tc, test_undeclared_is_no_pass);
  tcase_add_test (tc, test_unreached_without_twin);
  tcase_add_test (tc, test_abi2_reads_no_class);
  tcase_add_test (tc, test_hostile);
  tcase_add_test (tc, test_oracle_and_reports);
  tcase_add_test (tc, test_store);
  tcase_add_test (tc, test_merge);
  tcase_add_test (tc, test_fp16_spread_defaulted);
  tcase_add_test (tc, test_f32_spread_defaulted);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (suite ());
}
