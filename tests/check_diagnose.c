/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_diagnose.c -- the diagnosis is never wrong: no pattern on one or
   two failures, the rounding class before a factor, closed forms only
   within the ratios' own spread, no shift matched against unresolved
   references; and the per-tensor, per-axis summary.  Each case is of the
   kind of a misdiagnosis seen in practice (issue 14), not that case's
   numbers.  */

#include "gctest.h"
#include "gradcheck-mp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kinds that claim a pattern.  */
static bool
is_pattern (gc_diagnosis_kind k)
{
  return k == GC_DIAG_CONSTANT_FACTOR || k == GC_DIAG_SIGN_FLIP
         || k == GC_DIAG_ZERO_REGION || k == GC_DIAG_SHIFTED;
}

/* Re-diagnose R after its directions were edited: merging one shard
   recomputes counts, worst direction and diagnosis.  */
static gc_result *
rediagnose (gc_result *r)
{
  gc_result *m = NULL;
  ck_assert_int_eq (gc_result_merge (&r, 1, &m), GC_OK);
  return m;
}

/* Give direction D the bar BAR (all of it adjoint rounding) and the values
   A, REF; judge it as gc_check does (pass iff nu <= 1).  */
static void
set_direction (gc_direction *d, double a, double ref, double bar)
{
  d->analytic = a;
  d->reference = ref;
  for (int t = 0; t < GC_N_TERMS; t++)
    d->terms[t].value = 0;
  d->terms[GC_TERM_ADJOINT].value = bar;
  d->bar = bar;
  d->diff = fabs (a - ref);
  d->nu = d->diff / bar;
  d->resolution = bar / fabs (ref);
  d->jump = 0;
  d->verdict = d->nu <= 1 ? GC_PASS : GC_FAIL;
}

/* One or two failing elements never make a pattern, whatever their ratio:
   a single element scaled by 0.9999 (just beyond the resolution), by 2, or
   set to zero; and two elements scaled by 2.  */
/* The diagnosis is of the f32 gradient against its reference: these tests
   edit and judge that, so their checks leave a model's twin unused (with a
   twin the direction's verdict is the two questions': manual "Two
   verdicts, one report").  */
static const gc_options *
notwin (void)
{
  static gc_options o;
  gc_options_init (&o);
  o.no_twin = 1;
  return &o;
}

START_TEST (test_few_failures_no_pattern)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  static const struct { size_t lo, hi; double f; } cases[] = {
    { 5, 6, 0.9999 }, { 5, 6, 2 }, { 5, 6, 0 }, { 3, 5, 2 }, { 40, 41, -1 } };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    {
      gct_wrap w;
      gct_wrap_init (&w, t);
      w.lo = cases[c].lo;
      w.hi = cases[c].hi;
      w.factor = cases[c].f;
      gc_result *r = gct_check_ok (&w.model, t->x, notwin ());
      ck_assert_int_eq (r->verdict, GC_FAIL);
      ck_assert_uint_le (r->n_failed, 2);
      ck_assert_msg (!is_pattern (r->diagnosis.kind),
                     "%zu failure(s) diagnosed as a pattern: %s",
                     r->n_failed, r->diagnosis.text);
      /* the evidence is stated */
      ck_assert_ptr_nonnull (strstr (r->diagnosis.text, "too few"));
      gc_result_free (r);
    }
  gct_free (t);
}
END_TEST

/* Failures within the worst-case rounding bound are the rounding class
   even when their ratios agree (a correct backward whose errors align):
   tested before the factor.  The edited result has d_b = 10^4, so that the
   deterministic bound gamma_d exceeds the probabilistic one
   lambda sqrt(d_b) u by sqrt(d_b) / lambda > 10 (lambda < 10 here).  */
START_TEST (test_rounding_before_factor)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  /* The depth is declared by the model (a result edited after the check
     no longer matches its identity, and merge refuses it).  */
  gct_wrap w;
  gct_wrap_init (&w, t);
  w.model.backward_depth = 10000;
  gc_result *r = gct_check_ok (&w.model, t->x, notwin ());
  ck_assert_uint_eq (r->backward_depth, 10000);
  ck_assert (r->lambda_backward < 10);
  for (size_t k = 0; k < 32; k++)
    {
      gc_direction *d = &r->dirs[k];
      double ref = d->reference != 0 ? d->reference : 1;
      double bar = 1e-6 * fabs (ref);
      /* ratio 1 + 1.5e-6 on every element of W: nu = 1.5 */
      set_direction (d, ref * (1 + 1.5e-6), ref, bar);
    }
  gc_result *m = rediagnose (r);
  ck_assert_uint_eq (m->n_failed, 32);
  fprintf (stderr, "# undecided: %s\n", m->diagnosis.text);
  ck_assert_msg (m->diagnosis.kind == GC_DIAG_ONE_ULP, "%s",
                 m->diagnosis.text);
  gc_result_free (m);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Factors that are no simple closed form, at the coarse resolution of an
   f32 reference, are reported as measured, never named: the names once
   given were "1.1348 = 1", "-9.4207 = -T^0.5" (T^0.5 = 4.9), "4.1773 = 3",
   "1.2308 = 2^0.5".  Factors that are closed forms are named right, or
   reported as measured; the measured factor lies within the derived
   tolerance of the true one either way.  */
START_TEST (test_closed_forms_within_spread)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  static const gc_constant consts[] = { { "M", 4 }, { "K", 8 }, { "N", 4 },
                                        { "T", 24 } };
  static const struct { double f; const char *form; } cases[] = {
    { 1.1348, "" }, { -9.4207, "" }, { 4.1773, "" }, { 1.2308, "" },
    { 1.4, "" }, { 2, "2" }, { -1, "-1" }, { 0.35355339059327373, "K^-0.5" },
    { -4.898979485566356, "-T^0.5" } };
  for (int ref = 0; ref < 2; ref++)
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
      {
        gct_wrap w;
        gct_wrap_init (&w, t);
        w.model.constants = consts;
        w.model.n_constants = 4;
        w.lo = 0;
        w.hi = 32;
        w.factor = cases[c].f;
        gc_options o;
        gc_options_init (&o);
  o.no_twin = 1;
        o.reference = ref ? GC_REF_F32 : GC_REF_MPFR;
        gc_result *r = gct_check_ok (&w.model, t->x, &o);
        const gc_diagnosis *dg = &r->diagnosis;
        ck_assert_int_eq (r->verdict, GC_FAIL);
        if (dg->kind == GC_DIAG_CONSTANT_FACTOR
            || dg->kind == GC_DIAG_SIGN_FLIP)
          {
            ck_assert_msg (dg->closed_form[0] == 0
                           || strcmp (dg->closed_form, cases[c].form) == 0,
                           "factor %g (ref %s) named '%s': %s", cases[c].f,
                           ref ? "f32" : "mpfr", dg->closed_form, dg->text);
            ck_assert_msg (fabs (dg->factor - cases[c].f)
                           <= gct_factor_tolerance (r, cases[c].f),
                           "factor %g measured as %g", cases[c].f,
                           dg->factor);
            /* with the MPFR reference the closed forms are named */
            if (!ref && cases[c].form[0])
              ck_assert_msg (strcmp (dg->closed_form, cases[c].form) == 0,
                             "factor %g unnamed: %s", cases[c].f, dg->text);
            if (!dg->closed_form[0])
              ck_assert_ptr_nonnull (strstr (dg->text, "+-"));
          }
        else
          ck_assert_msg (!is_pattern (dg->kind), "factor %g: %s",
                         cases[c].f, dg->text);
        gc_result_free (r);
      }
  gct_free (t);
}
END_TEST

/* At a resolution near 1 a shifted partner within two bars of the
   analytic value proves nothing (the issue's "shifted window, 16 places"
   at resolution ~ 1): W's failures below are a factor of 2.3 to 2.6 at resolution
   0.9, and every partner one step away matches within the bars.  */
START_TEST (test_no_shift_at_coarse_resolution)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, notwin ());
  for (size_t k = 0; k < 32; k++)
    {
      double ref = 1 + 0.02 * (double) (k % 5);
      set_direction (&r->dirs[k], 2.3 * ref + 0.15 * (double) (k % 3), ref,
                     0.9 * ref);
    }
  gc_result *m = rediagnose (r);
  ck_assert_uint_gt (m->n_failed, 3);
  fprintf (stderr, "# coarse passes: %s\n", m->diagnosis.text);
  ck_assert_msg (m->diagnosis.kind != GC_DIAG_SHIFTED
                 && m->diagnosis.kind != GC_DIAG_APPROX_SHIFT, "%s",
                 m->diagnosis.text);
  /* and a factor measured at that resolution carries its uncertainty */
  if (m->diagnosis.kind == GC_DIAG_CONSTANT_FACTOR)
    ck_assert_str_eq (m->diagnosis.closed_form, "");
  gc_result_free (m);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The per-axis structure is exact: W (4 x 8) scaled by 2 on rows 0-2 only
   reads "axis 0: 0-2 fail, 3 passes"; on column 5 only, "axis 1: 5 fails";
   and the other tensor is named as passing.  */
START_TEST (test_axis_structure)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gct_wrap w;
  gct_wrap_init (&w, t);
  w.lo = 0;
  w.hi = 24;
  w.factor = 2;
  gc_result *r = gct_check_ok (&w.model, t->x, notwin ());
  ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_CONSTANT_FACTOR);
  ck_assert_msg (strstr (r->diagnosis.text, "axis 0: 0-2 fail, 3 passes"),
                 "%s", r->diagnosis.text);
  ck_assert_msg (strstr (r->diagnosis.text, "every other tensor passes"),
                 "%s", r->diagnosis.text);
  char *s = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (s);
  ck_assert_msg (strstr (s, "24/32") && strstr (s, "0/32"), "%s", s);
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The catalogue's gdn bugs with a positional structure read as it
   (T = 37, BT = 16): the padding rows leaking into the last real row fail
   g at position 36 only; the skipped reverse cumulative sum of dg leaves
   each full chunk's last position (15, 31) right, where the sum has one
   term.  */
START_TEST (test_gdn_structure)
{
  const gcm_spec *spec = gcm_find ("gdn");
  static const struct { const char *mutant, *want; } cases[] = {
    { "pad-leak", "axis 1: 36 fails, 0-35 pass" },
    { "no-dg-cumsum", "15, 31 pass" } };
  for (size_t c = 0; c < 2; c++)
    {
      long v[GCM_MAX_KEYS];
      char err[128];
      ck_assert_int_eq (gcm_parse_shape (spec, "T=37,BT=16", v, err,
                                         sizeof err), GC_OK);
      gcm_instance *inst = NULL;
      ck_assert_int_eq (gcm_create (spec, v, gct_seed (),
                                    gcm_mutant_index (spec, cases[c].mutant),
                                    &inst), GC_OK);
      gc_options o;
      gc_options_init (&o);
  o.no_twin = 1;
      o.threads = 2;
      gc_result *r = gct_check_ok (&inst->model, inst->x, &o);
      ck_assert_str_eq (r->diagnosis.block, "g");
      ck_assert_msg (strstr (r->diagnosis.text, cases[c].want), "%s: %s",
                     cases[c].mutant, r->diagnosis.text);
      ck_assert_msg (strstr (r->diagnosis.text, "every other tensor passes"),
                     "%s: %s", cases[c].mutant, r->diagnosis.text);
      gc_result_free (r);
      gcm_destroy (inst);
    }
}
END_TEST

/* Two failing tensors: both named, with their counts.  */
START_TEST (test_other_tensors_named)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (),
                                gct_tanh_mutant ("no-tanh-derivative"));
  gc_result *r = gct_check_ok (&t->model, t->x, notwin ());
  ck_assert_int_eq (r->verdict, GC_FAIL);
  const char *other = strcmp (r->diagnosis.block, "W") == 0 ? "X (" : "W (";
  ck_assert_msg (strstr (r->diagnosis.text, other), "%s", r->diagnosis.text);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Forward disagreement first.  */

/* A reference forward that computes another function: the base's loss
   plus 0.25 sum x_i^2 (OFFSET_ONLY: plus the constant 3 instead).  */
static bool offset_only;

static int
other_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  gct_wrap *w = ctx;
  int rc = w->base->model.loss_mpfr (w->base->model.ctx, x, l);
  mpfr_t t;
  mpfr_init2 (t, mpfr_get_prec (l));
  if (offset_only)
    mpfr_add_ui (l, l, 3, MPFR_RNDN);
  else
    for (size_t i = 0; i < w->model.n; i++)
      {
        mpfr_sqr (t, x + i, MPFR_RNDN);
        mpfr_div_2ui (t, t, 2, MPFR_RNDN);
        mpfr_add (l, l, t, MPFR_RNDN);
      }
  mpfr_clear (t);
  return rc;
}

START_TEST (test_forward_mismatch_first)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gct_wrap w;
  gct_wrap_init (&w, t);
  w.model.loss_mpfr = other_mpfr;
  offset_only = false;
  gc_result *r = gct_check_ok (&w.model, t->x, notwin ());
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_msg (r->diagnosis.kind == GC_DIAG_FORWARD_MISMATCH, "%s",
                 r->diagnosis.text);
  char *s = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (s);
  /* the depth is not blamed, and the finding comes right after the
     verdict */
  ck_assert_msg (!strstr (s, "depth is too small")
                 && !strstr (s, "may be too small"), "%s", s);
  const char *v = strstr (s, "\nverdict: ");
  ck_assert_ptr_nonnull (v);
  const char *next = strchr (v + 1, '\n');
  ck_assert_msg (next && strncmp (next + 1, "diagnosis: the f32 forward and "
                                  "the mpfr reference forward compute "
                                  "different functions", 80) == 0, "%s", s);
  free (s);
  gc_result_free (r);

  /* without a declared loss magnitude the worst case is not known to
     hold: the disagreement is still said first, hedged with the
     cancellation it may be, and the gradient diagnosed as if they agreed */
  w.model.loss_magnitude_f32 = NULL;
  r = gct_check_ok (&w.model, t->x, notwin ());
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_msg (r->diagnosis.kind != GC_DIAG_FORWARD_MISMATCH
                 && strncmp (r->diagnosis.text, "first: the f32 and "
                             "reference losses differ", 40) == 0
                 && strstr (r->diagnosis.text, "cancelling loss"), "%s",
                 r->diagnosis.text);
  gc_result_free (r);
  gct_wrap_init (&w, t);
  w.model.loss_mpfr = other_mpfr;

  /* a constant offset: the gradients agree, the report still says so;
     the forwards differ beyond the worst case, and nothing at x tells a
     constant offset from another function (a constant f32 loss agrees
     with no gradient but the reference's): inconclusive, never a pass
     (issue 32; manual: "Forward disagreement") */
  offset_only = true;
  r = gct_check_ok (&w.model, t->x, notwin ());
  ck_assert_int_eq (r->verdict, GC_INCONCLUSIVE);
  ck_assert_int_eq (r->n_failed, 0);
  ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_FORWARD_MISMATCH);
  s = gc_report (r, GC_FMT_TEXT);
  ck_assert_msg (strstr (s, "compute different functions at x"), "%s", s);
  free (s);

  /* between the budget and the worst case, a depth too small can explain
     the error, and only then is it named */
  /* gamma_{d_f} M_L in ulps of M_L (manual: "Forward disagreement") */
  double df = (double) r->forward_depth, u = 0x1p-24;
  int e;
  frexp (r->loss_magnitude, &e);
  double worst = df * u / (1 - df * u) * r->loss_magnitude / ldexp (1, e - 24);
  r->forward_error_ulps = 1.01 * r->forward_budget_ulps;
  s = gc_report (r, GC_FMT_TEXT);
  if (r->forward_error_ulps <= worst)
    ck_assert_msg (strstr (s, "may be too small")
                   && !strstr (s, "disagree"), "%s", s);
  else
    ck_assert_msg (!strstr (s, "too small") && strstr (s, "disagree"), "%s",
                   s);
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The built-in kda's chunked-path mutants change the f32 forward and its
   backward alike: under the MPFR reference the report's first finding is
   the forwards' disagreement, never the depth (kind of `gradcheck run kda
   --mutant chunk-no-read-scale`).  */
START_TEST (test_kda_forward_mutants)
{
  const gcm_spec *spec = gcm_find ("kda");
  static const char *const mutants[] = { "chunk-no-read-scale",
                                         "double-scale", "softplus-outside" };
  for (size_t k = 0; k < 3; k++)
    {
      long v[GCM_MAX_KEYS];
      char err[128];
      ck_assert_int_eq (gcm_parse_shape (spec, "T=9,BT=4,H=1,HV=2,K=4,V=4",
                                         v, err, sizeof err), GC_OK);
      gcm_instance *inst = NULL;
      ck_assert_int_eq (gcm_create (spec, v, gct_seed (),
                                    gcm_mutant_index (spec, mutants[k]),
                                    &inst), GC_OK);
      gc_result *r = gct_check_ok (&inst->model, inst->x, notwin ());
      ck_assert_int_eq (r->verdict, GC_FAIL);
      ck_assert_msg (r->diagnosis.kind == GC_DIAG_FORWARD_MISMATCH,
                     "%s: %s", mutants[k], r->diagnosis.text);
      char *s = gc_report (r, GC_FMT_TEXT);
      ck_assert_msg (!strstr (s, "too small"), "%s", s);
      free (s);
      gc_result_free (r);
      gcm_destroy (inst);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* Messages.  */

/* A missing reference names the ones the model has and the option that
   selects them; no "0 bits"; no truncation source that does not exist.  */
START_TEST (test_missing_reference_message)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  static const struct { bool mpfr, f64; gc_reference ref;
                        const char *want, *absent; } cases[] = {
    { false, true, GC_REF_MPFR, "--ref f64", "0 bits" },
    { false, false, GC_REF_MPFR, "--ref f32", "0 bits" },
    { true, false, GC_REF_F64, "--ref mpfr", "truncation from" },
    { false, false, GC_REF_F64, "--ref f32", "truncation from" } };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    {
      gct_wrap w;
      gct_wrap_init (&w, t);
      if (!cases[c].mpfr)
        w.model.loss_mpfr = NULL;
      if (!cases[c].f64)
        w.model.loss_f64 = NULL;
      gc_options o;
      gc_options_init (&o);
  o.no_twin = 1;
      o.reference = cases[c].ref;
      gc_result *r = NULL;
      ck_assert_int_eq (gc_check (&w.model, t->x, &o, &r), GC_ENOREF);
      char *s = gc_report (r, GC_FMT_TEXT);
      ck_assert_ptr_nonnull (s);
      ck_assert_msg (strstr (s, cases[c].want), "case %zu: %s", c, s);
      ck_assert_msg (!strstr (s, cases[c].absent), "case %zu: %s", c, s);
      ck_assert_msg (!strstr (s, "at 0 bits"), "case %zu: %s", c, s);
      free (s);
      gc_result_free (r);
    }
  gct_free (t);
}
END_TEST

/* "f64 would have given the same verdict" is a prediction the f64 check
   can falsify: wherever it is made, every direction's f64 verdict is the
   MPFR one.  */
START_TEST (test_f64_prediction)
{
  static const char *const mutants[] = { NULL, "dw-twice", "dx-zero",
                                         "no-tanh-derivative" };
  for (size_t k = 0; k < 4; k++)
    {
      gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed () + k,
                                    mutants[k] ? gct_tanh_mutant (mutants[k])
                                               : 0);
      gc_options om;   /* the prediction is an MPFR check's */
      gc_options_init (&om);
  om.no_twin = 1;
      om.reference = GC_REF_MPFR;
      gc_result *r = gct_check_ok (&t->model, t->x, &om);
      ck_assert_int_ne (r->f64_same_verdict, 0);
      char *s = gc_report (r, GC_FMT_TEXT);
      ck_assert_ptr_nonnull (strstr (s, "f64 reference: "));
      free (s);
      gc_options o;
      gc_options_init (&o);
  o.no_twin = 1;
      o.reference = GC_REF_F64;
      gc_result *r64 = gct_check_ok (&t->model, t->x, &o);
      ck_assert_int_eq (r64->f64_same_verdict, 0);
      if (r->f64_same_verdict > 0)
        for (size_t d = 0; d < r->n_directions; d++)
          ck_assert_msg (r->dirs[d].verdict == r64->dirs[d].verdict,
                         "%s: direction %zu: predicted the same, f64 %s",
                         mutants[k] ? mutants[k] : "correct", d,
                         gc_verdict_name (r64->dirs[d].verdict));
      gc_result_free (r64);
      gc_result_free (r);
      /* no prediction for a model without an f64 forward */
      gct_wrap w;
      gct_wrap_init (&w, t);
      w.model.loss_f64 = NULL;
      r = gct_check_ok (&w.model, t->x, notwin ());
      ck_assert_int_eq (r->f64_same_verdict, 0);
      gc_result_free (r);
      gct_free (t);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* Random directions within blocks.  */

/* K random directions per block keep the tensor's name: a bug in W fails
   W's directions only, X's pass (they are zero on W), the diagnosis names
   W, the report labels the directions by tensor; shards merge to the
   unsharded result; a count that overflows is refused.  */
START_TEST (test_random_per_block)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gct_wrap w;
  gct_wrap_init (&w, t);
  w.lo = 0;
  w.hi = 32;
  w.factor = 2;
  gc_options o;
  gc_options_init (&o);
  o.no_twin = 1;
  o.directions = GC_DIR_RANDOM;
  o.n_random = 3;
  o.random_per_block = 1;
  gc_result *r = gct_check_ok (&w.model, t->x, &o);
  ck_assert_uint_eq (r->n_directions, 6);
  ck_assert_uint_eq (r->random_per_block, 3);
  for (size_t k = 0; k < 6; k++)
    ck_assert_int_eq (r->dirs[k].verdict, k < 3 ? GC_FAIL : GC_PASS);
  ck_assert_str_eq (r->diagnosis.block, "W");
  ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_CONSTANT_FACTOR);
  ck_assert_str_eq (r->diagnosis.closed_form, "2");
  char *s = gc_report (r, GC_FMT_TEXT);
  ck_assert_msg (strstr (s, "within W") && strstr (s, "3 per block"), "%s",
                 s);
  free (s);
  s = gc_report (r, GC_FMT_TAP);
  ck_assert_msg (strstr (s, "random direction 4 within X"), "%s", s);
  free (s);

  gc_result *sh[2];
  for (size_t k = 0; k < 2; k++)
    {
      o.shard_index = k;
      o.shard_count = 2;
      sh[k] = gct_check_ok (&w.model, t->x, &o);
    }
  gc_result *m = NULL;
  ck_assert_int_eq (gc_result_merge (sh, 2, &m), GC_OK);
  for (size_t k = 0; k < 6; k++)
    {
      ck_assert (m->dirs[k].analytic == r->dirs[k].analytic);
      ck_assert (m->dirs[k].reference == r->dirs[k].reference);
    }
  ck_assert_str_eq (m->diagnosis.text, r->diagnosis.text);
  gc_result_free (m);
  gc_result_free (sh[0]);
  gc_result_free (sh[1]);
  gc_result_free (r);

  o.shard_index = 0;
  o.shard_count = 0;
  o.n_random = SIZE_MAX / 2 + 1;
  r = NULL;
  ck_assert_int_eq (gc_check (&w.model, t->x, &o, &r), GC_EINVAL);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The figure "KEY E (R" on tensor NAME's line of the text report, into
   *E and *REL; false where the line has none.  */
static bool
tensor_figure (const gc_result *r, const char *name, const char *key,
               double *e, double *rel)
{
  char *s = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (s);
  char head[64];
  snprintf (head, sizeof head, "\n  %s ", name);
  const char *p = strstr (s, head);
  const char *q = p ? strstr (p, key) : NULL;
  const char *nl = p ? strchr (p + 1, '\n') : NULL;
  bool ok = q && (!nl || q < nl)
            && sscanf (q + strlen (key), "%lg (%lg", e, rel) == 2;
  free (s);
  return ok;
}

/* "a pass rules out |e|_2 >= E (R of |g|_2)" of tensor NAME.  */
static bool
rules_out_of (const gc_result *r, const char *name, double *e, double *rel)
{
  return tensor_figure (r, name, "a pass rules out |e|_2 >= ", e, rel);
}

/* Manual: "Directional checks", "What a pass rules out": one element of
   W moved by 1.05 E*, E* what the correct check at the same seed says its
   8 passing random directions within W rule out, is caught (a FAIL within
   W), with and without the twin (whose bar_64 makes E* some 1e8 times
   smaller), at every seed: the derivation bounds a miss by 1e-6 (the
   check's alpha) per seed.  E* is no empty bound: its part of |g|_2 is
   at most 1e-2 (about 9 times the worst resolution, 1e-4 and below for
   tanh-gemm without the twin; 1e-11 and below with it).  A tensor that
   fails, and coordinates, say nothing of the kind.  */
START_TEST (test_random_rules_out)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  uint64_t ns = gct_seeds (6);
  for (int twin = 0; twin < 2; twin++)
    for (uint64_t s = 0; s < ns; s++)
      {
        gc_options o;
        gc_options_init (&o);
        o.no_twin = !twin;
        o.directions = GC_DIR_RANDOM;
        o.n_random = 8;
        o.random_per_block = 1;
        o.seed = 1 + s;
        gc_result *r = gct_check_ok (&t->model, t->x, &o);
        ck_assert_int_eq (r->verdict, GC_PASS);
        double e, rel;
        ck_assert (rules_out_of (r, "W", &e, &rel));
        ck_assert_msg (e > 0 && rel > 0 && rel < (twin ? 1e-9 : 1e-2),
                       "twin %d seed %d: E* %g, %g of |g|_2", twin,
                       (int) o.seed, e, rel);
        gc_result_free (r);

        gct_wrap w;
        gct_wrap_init (&w, t);
        w.add_at = (size_t) (5 * s + 3) % 32;
        w.add = 1.05 * e;
        r = gct_check_ok (&w.model, t->x, &o);
        size_t fails_w = 0;
        for (size_t k = 0; k < r->n_directions; k++)
          fails_w += k < 8 && r->dirs[k].verdict == GC_FAIL;
        ck_assert_msg (fails_w > 0, "twin %d seed %d: W[%zu] + %g passed",
                       twin, (int) o.seed, w.add_at, w.add);
        ck_assert (!rules_out_of (r, "W", &e, &rel));
        gc_result_free (r);
      }
  gc_options o;
  gc_options_init (&o);
  gc_result *r = gct_check_ok (&t->model, t->x, &o);
  double e, rel;
  ck_assert (!rules_out_of (r, "W", &e, &rel));
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The f32 path's figure, "in the f32 path alone >= E32 (REL)", of
   tensor NAME's line; false where the line has none.  */
static bool
rules_out_f32_of (const gc_result *r, const char *name, double *e,
                  double *rel)
{
  return tensor_figure (r, name, "in the f32 path alone >= ", e, rel);
}

/* The base's twin, without the wrapper's bug: a bug of the f32 path
   alone.  */
static int
base_grad64 (void *ctx, const double *x, double *g)
{
  gct_wrap *w = ctx;
  return w->base->model.grad_f64 (w->base->model.ctx, x, g);
}

/* Manual: "What a pass rules out": with a twin, the algorithm's E* bounds
   an error both backwards share; an error of the f32 path alone is the
   arithmetic's, and its figure E*_32 = a_k A* alpha^(-1/K) is the one
   printed beside it.  One element of W moved by 1.05 E*_32 in the f32
   backward only (the twin right) is caught, a W direction's arithmetic
   beyond its bound, at every seed (a miss has probability below the
   check's alpha, 1e-6).  E*_32 is coarser than E* (f32's worst-case
   adjoint bound against bar_64) and no empty bound: below 10% of |g|_2
   (f32's bound at tanh-gemm's depths is some 1e-4 of an element, times
   a_8 beta^(-1/8) ~ 10).  A tensor with an arithmetic finding claims
   nothing for the f32 path.  */
START_TEST (test_random_rules_out_f32_path)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  uint64_t ns = gct_seeds (6);
  for (uint64_t s = 0; s < ns; s++)
    {
      gc_options o;
      gc_options_init (&o);
      o.directions = GC_DIR_RANDOM;
      o.n_random = 8;
      o.random_per_block = 1;
      o.seed = 1 + s;
      gc_result *r = gct_check_ok (&t->model, t->x, &o);
      ck_assert_int_eq (r->verdict, GC_PASS);
      double e, rel, e32, rel32;
      ck_assert (rules_out_of (r, "W", &e, &rel));
      ck_assert (rules_out_f32_of (r, "W", &e32, &rel32));
      ck_assert_msg (e32 > e && rel32 > 0 && rel32 < 0.1,
                     "seed %d: E*_32 %g (%g of |g|_2), E* %g", (int) o.seed,
                     e32, rel32, e);
      gc_result_free (r);

      gct_wrap w;
      gct_wrap_init (&w, t);
      w.model.grad_f64 = base_grad64;
      w.add_at = (size_t) (5 * s + 3) % 32;
      w.add = 1.05 * e32;
      r = gct_check_ok (&w.model, t->x, &o);
      size_t caught = 0;
      for (size_t k = 0; k < r->n_directions; k++)
        caught += k < 8 && r->dirs[k].arith != GC_ARITH_OK
                  && r->dirs[k].verdict != GC_PASS;
      ck_assert_msg (caught > 0, "seed %d: W[%zu] + %g in the f32 path "
                     "passed", (int) o.seed, w.add_at, w.add);
      ck_assert (r->verdict != GC_PASS);
      ck_assert (!rules_out_f32_of (r, "W", &e32, &rel32));
      gc_result_free (r);
    }
  gct_free (t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bugs of the kinds a model author meets (issue 25), injected into a
   correct backward: each is named as what it is, or not named; never as
   another kind.  */

/* A wrapper whose backward is the base's, then edited by EDIT with the
   correct gradient G0 at hand.  */
typedef struct edit_wrap edit_wrap;
struct edit_wrap
{
  gct_wrap w;                   /* first: the model's ctx points here */
  void (*edit) (const edit_wrap *e, const float *g0, float *g);
};

static int
edit_grad (void *ctx, const float *x, float *g)
{
  edit_wrap *e = ctx;
  const gc_model *b = &e->w.base->model;
  int rc = b->grad_f32 (b->ctx, x, g);
  float *g0 = malloc (b->n * sizeof *g0);
  ck_assert_ptr_nonnull (g0);
  memcpy (g0, g, b->n * sizeof *g0);
  e->edit (e, g0, g);
  free (g0);
  return rc;
}

static void
edit_init (edit_wrap *e, const gct_model *t,
           void (*edit) (const edit_wrap *, const float *, float *))
{
  gct_wrap_init (&e->w, t);
  e->w.model.grad_f32 = edit_grad;
  e->edit = edit;
}

/* tanh-gemm (4, 8, 4): W is 4 x 8 at [0, 32), X 8 x 4 at [32, 64).  */
enum { W0 = 0, WR = 4, WC = 8, X0 = 32, XR = 8, XC = 4 };

/* A convolution's taps read one place off (x[t - k + 1]): along each row
   of W, element j holds the correct value of j - 1 up to a term of 1% (the
   boundary of the sum that the shifted read moves), and element 0, whose
   shifted read falls outside the row, holds another sum.  */
static void
edit_off_by_one (const edit_wrap *e, const float *g0, float *g)
{
  (void) e;
  for (size_t r = 0; r < WR; r++)
    {
      const float *s = g0 + W0 + r * WC;
      float *d = g + W0 + r * WC;
      for (size_t j = 1; j < WC; j++)
        d[j] = s[j - 1] * (float) (1 + 0.01 * (double) ((int) (j % 3) - 1));
      d[0] = 0.5f * s[0] + 0.3f * s[1];
    }
}

START_TEST (test_off_by_one_named)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  edit_wrap e;
  edit_init (&e, t, edit_off_by_one);
  gc_result *r = gct_check_ok (&e.w.model, t->x, notwin ());
  const gc_diagnosis *dg = &r->diagnosis;
  fprintf (stderr, "# off by one: %s (%zu/%zu) | %s\n",
           gc_verdict_name (r->verdict), r->n_failed, r->n_directions,
           dg->text);
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_str_eq (dg->block, "W");
  ck_assert_msg (dg->kind == GC_DIAG_APPROX_SHIFT, "%s", dg->text);
  /* analytic_i follows reference_{i-1}: one place back along axis 1 */
  ck_assert_int_eq (dg->shift, -1);
  ck_assert_msg (strstr (dg->text, "1 place(s) back (one step along axis 1 "
                         "of W)"), "%s", dg->text);
  /* the elements that break it are named, and they are the boundary
     column (a failure of column j > 0 fits the shift within 1%) */
  const char *b = strstr (dg->text, "it, most: ");
  ck_assert_msg (b, "%s", dg->text);
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_FAIL || d->index >= W0 + WR * WC)
        continue;
      char nm[64];
      gc_param_name (r, d->index, nm, sizeof nm);
      if (strstr (b, nm))
        ck_assert_msg ((d->index - W0) % WC == 0, "%s named as breaking: %s",
                       nm, dg->text);
    }
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* A dropped term constant along an axis (LayerNorm's mean term): X's
   gradient off by one constant per row, of either sign; and by one
   constant over the whole tensor.  */
static double offset_scale;
static bool offset_whole;

static void
edit_offset (const edit_wrap *e, const float *g0, float *g)
{
  (void) e;
  double m = 0;
  for (size_t i = 0; i < XR * XC; i++)
    m += fabs (g0[X0 + i]);
  m /= XR * XC;
  for (size_t i = 0; i < XR; i++)
    for (size_t j = 0; j < XC; j++)
      {
        double c = offset_whole ? offset_scale * m
                   : (i % 2 ? -1 : 1) * offset_scale * m * (double) (1 + i);
        g[X0 + i * XC + j] = (float) (g0[X0 + i * XC + j] + c);
      }
}

START_TEST (test_axis_offset_named)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  for (int whole = 0; whole < 2; whole++)
    for (int ref = 0; ref < 2; ref++)
      {
        edit_wrap e;
        edit_init (&e, t, edit_offset);
        offset_whole = whole;
        offset_scale = 0.05;
        gc_options o;
        gc_options_init (&o);
  o.no_twin = 1;
        o.reference = ref ? GC_REF_F32 : GC_REF_MPFR;
        gc_result *r = gct_check_ok (&e.w.model, t->x, &o);
        const gc_diagnosis *dg = &r->diagnosis;
        fprintf (stderr, "# %s offset, ref %s: %s (%zu/%zu) | %s\n",
                 whole ? "whole-tensor" : "per-row", ref ? "f32" : "mpfr",
                 gc_verdict_name (r->verdict), r->n_failed, r->n_directions,
                 dg->text);
        ck_assert_int_eq (r->verdict, GC_FAIL);
        ck_assert_str_eq (dg->block, "X");
        const char *want = whole ? "constant offset: analytic - reference"
                                 : "constant along axis 1 of X";
        if (!ref)
          ck_assert_msg (dg->kind == GC_DIAG_AXIS_OFFSET
                         && strstr (dg->text, want), "%s", dg->text);
        else   /* at the f32 reference's resolution: this, or no pattern */
          ck_assert_msg ((dg->kind == GC_DIAG_AXIS_OFFSET
                          && strstr (dg->text, want))
                         || !is_pattern (dg->kind), "f32: %s", dg->text);
        gc_result_free (r);
      }
  gct_free (t);
}
END_TEST

/* An elementwise model with a nonlinearity: L = sum_i c_i gelu(x_i)
   (tanh form), its MPFR reference on the kit's gc_mp_gelu_tanh; the
   backward's derivative with a wrong constant (sqrt(1/pi) for
   sqrt(2/pi)), or a sign flipped in its small term (1 - 3a x^2 for
   1 + 3a x^2).  */
enum { GN = 24 };
typedef struct gelu_model
{
  gc_model model;
  gc_block block;
  float x[GN], c[GN];
  int bug;   /* 0 none, 1 wrong constant, 2 sign of the small term */
} gelu_model;

static const double gelu_a = 0.044715;

static int
gelu_loss (void *ctx, const float *x, float *l)
{
  const gelu_model *m = ctx;
  float s = 0, k = 0.7978845608f;
  for (size_t i = 0; i < GN; i++)
    {
      float v = x[i];
      float u = k * (v + 0.044715f * v * v * v);
      s += m->c[i] * (0.5f * v * (1 + tanhf (u)));
    }
  *l = s;
  return 0;
}

static int
gelu_grad (void *ctx, const float *x, float *g)
{
  const gelu_model *m = ctx;
  float k = m->bug == 1 ? 0.5641895835f : 0.7978845608f;
  for (size_t i = 0; i < GN; i++)
    {
      float v = x[i];
      float u = 0.7978845608f * (v + 0.044715f * v * v * v);
      float th = tanhf (u);
      float small = (float) (3 * gelu_a) * v * v;
      float du = k * (m->bug == 2 ? 1 - small : 1 + small);
      g[i] = m->c[i] * (0.5f * (1 + th) + 0.5f * v * (1 - th * th) * du);
    }
  return 0;
}

static int
gelu_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  const gelu_model *m = ctx;
  mpfr_ptr y = gc_mp_array_new (GN, mpfr_get_prec (l));
  ck_assert_ptr_nonnull (y);
  gc_mp_gelu_tanh (y, x, GN);
  gc_mp_dot_f32 (l, y, m->c, GN);
  gc_mp_array_free (y, GN);
  return 0;
}

static void
gelu_init (gelu_model *m, uint64_t seed, int bug)
{
  memset (m, 0, sizeof *m);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (size_t i = 0; i < GN; i++)
    {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      m->x[i] = (float) ((double) (s >> 11) * 0x1p-53 * 4 - 2);
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      m->c[i] = (float) ((double) (s >> 11) * 0x1p-53 + 0.5);
    }
  m->bug = bug;
  m->block = (gc_block) { "h", 0, GN, 2, { 4, 6 } };
  m->model.abi = GC_MODEL_ABI;
  m->model.name = "gelu";
  m->model.n = GN;
  m->model.loss_f32 = gelu_loss;
  m->model.grad_f32 = gelu_grad;
  m->model.loss_mpfr = gelu_mpfr;
  m->model.ctx = m;
  /* forward: ~10 roundings per element and the sum of GN terms; backward:
     ~15 per element */
  m->model.forward_depth = 10 + GN;
  m->model.backward_depth = 15;
  m->model.n_blocks = 1;
  m->model.blocks = &m->block;
}

START_TEST (test_nonlinearity_bugs_not_misnamed)
{
  for (int bug = 0; bug < 3; bug++)
    for (int ref = 0; ref < 2; ref++)
      {
        gelu_model m;
        gelu_init (&m, gct_seed (), bug);
        gc_options o;
        gc_options_init (&o);
  o.no_twin = 1;
        o.reference = ref ? GC_REF_F32 : GC_REF_MPFR;
        gc_result *r = gct_check_ok (&m.model, m.x, &o);
        const gc_diagnosis *dg = &r->diagnosis;
        if (bug == 0)
          {
            char *txt = gc_report (r, GC_FMT_TEXT);
            /* at the f32 reference's resolution some directions may be
               inconclusive (blind where the gradient is small) */
            ck_assert_msg (ref ? r->verdict != GC_FAIL
                               : r->verdict == GC_PASS,
                           "correct gelu (ref %s): %s", ref ? "f32" : "mpfr",
                           txt);
            free (txt);
            gc_result_free (r);
            continue;
          }
        if (!ref)
          ck_assert_int_eq (r->verdict, GC_FAIL);
        fprintf (stderr, "# gelu bug %d, ref %s: %s (%zu/%zu) | %s\n", bug,
                 ref ? "f32" : "mpfr", gc_verdict_name (r->verdict),
                 r->n_failed, r->n_directions, dg->text);
        /* the error varies with x: no factor, offset, shift or zero region
           names it, at either resolution */
        ck_assert_msg (!is_pattern (dg->kind)
                       && dg->kind != GC_DIAG_AXIS_OFFSET
                       && dg->kind != GC_DIAG_APPROX_SHIFT,
                       "bug %d (ref %s): %s", bug, ref ? "f32" : "mpfr",
                       dg->text);
        gc_result_free (r);
      }
}
END_TEST

/* A uniform scale on one tensor, as small as 1e-3 and 1e-4: named as a
   factor where the directions are per tensor; no axis structure claimed
   from passes that are only below the resolution; over whole-vector
   random directions no "logic error" (a factor on one tensor mixes with
   the others there).  */
START_TEST (test_scale_on_one_tensor)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  static const double scales[] = { 1e-3, 1e-4 };
  for (size_t c = 0; c < 2; c++)
    for (int mode = 0; mode < 4; mode++)
      {
        gct_wrap w;
        gct_wrap_init (&w, t);
        w.lo = 0;
        w.hi = 32;
        w.factor = 1 + scales[c];
        gc_options o;
        gc_options_init (&o);
  o.no_twin = 1;
        if (mode == 1)
          o.reference = GC_REF_F32;
        else if (mode >= 2)
          {
            o.directions = GC_DIR_RANDOM;
            o.n_random = mode == 2 ? 32 : 8;
            o.random_per_block = mode == 3;
          }
        gc_result *r = gct_check_ok (&w.model, t->x, &o);
        const gc_diagnosis *dg = &r->diagnosis;
        const char *m = mode == 0 ? "mpfr" : mode == 1 ? "f32"
                        : mode == 2 ? "random:32" : "random-per-block:8";
        fprintf (stderr, "# scale 1 + %g on W, %s: %s (%zu/%zu) | %s\n",
                 scales[c], m, gc_verdict_name (r->verdict), r->n_failed,
                 r->n_directions, dg->text);
        if (r->verdict != GC_FAIL)
          {
            gc_result_free (r);
            continue;
          }
        /* never a wrong kind: a factor (the right one) or no pattern */
        ck_assert_msg (dg->kind == GC_DIAG_CONSTANT_FACTOR
                       || dg->kind == GC_DIAG_ONE_ULP
                       || dg->kind == GC_DIAG_LOGIC, "%g %s: %s",
                       scales[c], m, dg->text);
        if (dg->kind == GC_DIAG_CONSTANT_FACTOR)
          ck_assert_msg (fabs (dg->factor - w.factor)
                         <= gct_factor_tolerance (r, w.factor),
                         "%g %s: factor %.9g: %s", scales[c], m, dg->factor,
                         dg->text);
        /* W fails as a whole: no index of it is singled out */
        ck_assert_msg (!strstr (dg->text, "axis "), "%g %s: %s", scales[c],
                       m, dg->text);
        if (mode == 2)
          ck_assert_msg (!strstr (dg->text, "logic error")
                         && strstr (dg->text, "random-per-block"),
                         "%g %s: %s", scales[c], m, dg->text);
        if (mode == 0 && c == 0)
          ck_assert_msg (dg->kind == GC_DIAG_CONSTANT_FACTOR
                         && strcmp (dg->block, "W") == 0, "%s", dg->text);
        gc_result_free (r);
      }
  gct_free (t);
}
END_TEST

/* The first tensor named is the best lead: W scaled by 2 throughout
   (every element fails) before X, four of whose elements are scaled by
   100 (a larger nu, a smaller share); X is named after it, with its
   count.  */
START_TEST (test_lead_tensor_first)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, notwin ());
  for (size_t k = 0; k < 64; k++)
    {
      gc_direction *d = &r->dirs[k];
      double ref = d->reference != 0 ? d->reference : 1;
      double bar = 1e-5 * fabs (ref);
      double f = k < 32 ? 2 : k < 36 ? 100 : 1;
      set_direction (d, f * ref, ref, bar);
    }
  gc_result *m = rediagnose (r);
  ck_assert_uint_eq (m->n_failed, 36);
  fprintf (stderr, "# lead tensor: %s\n", m->diagnosis.text);
  /* the old rule (the worst nu) would name X */
  ck_assert_uint_ge (m->worst, 32);
  ck_assert_msg (strcmp (m->diagnosis.block, "W") == 0
                 && m->diagnosis.kind == GC_DIAG_CONSTANT_FACTOR
                 && strstr (m->diagnosis.text, "X (4/32)"),
                 "%s", m->diagnosis.text);
  gc_result_free (m);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Never a nan ratio: failures where the reference is 0 (a max-pool's
   unselected input) read "reference 0", in the diagnosis and in the
   report's worst direction.  */
START_TEST (test_reference_zero_no_nan)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  for (size_t nfail = 2; nfail <= 6; nfail += 4)
    {
      gc_result *r = gct_check_ok (&t->model, t->x, notwin ());
      for (size_t k = 0; k < nfail; k++)
        set_direction (&r->dirs[k], 0.5 + 0.1 * (double) k, 0, 1e-6);
      gc_result *m = rediagnose (r);
      ck_assert_uint_eq (m->n_failed, nfail);
      fprintf (stderr, "# reference 0, %zu failures: %s\n", nfail,
               m->diagnosis.text);
      ck_assert_msg (!strstr (m->diagnosis.text, "nan")
                     && strstr (m->diagnosis.text, "reference 0"), "%s",
                     m->diagnosis.text);
      char *s = gc_report (m, GC_FMT_TEXT);
      ck_assert_ptr_nonnull (s);
      ck_assert_msg (!strstr (s, "= nan") && strstr (s, "reference 0"), "%s",
                     s);
      free (s);
      gc_result_free (m);
      gc_result_free (r);
    }
  gct_free (t);
}
END_TEST

/* One cause, one message: a non-deterministic model's report does not
   also blame the declared depth for the spread its reruns measured.  */
START_TEST (test_nondeterministic_one_message)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, notwin ());
  r->depth_implied = 100.0 * (double) r->backward_depth;
  r->depth_implied_at = 0;
  r->forward_depth_implied = 100.0 * (double) r->forward_depth;
  if (r->rounding_modes == 0)
    r->rounding_modes = 3;
  char *s = gc_report (r, GC_FMT_TEXT);
  ck_assert_msg (strstr (s, "WARNING"), "the depth is blamed when the "
                 "model is deterministic: %s", s);
  free (s);
  r->nondeterministic = 1;
  snprintf (r->nd_detail, sizeof r->nd_detail, "two calls differ");
  r->verdict = GC_NONDETERMINISTIC;
  s = gc_report (r, GC_FMT_TEXT);
  ck_assert_msg (!strstr (s, "WARNING") && strstr (s, "non-deterministic"),
                 "%s", s);
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* At a coarse resolution a closed form is named only from tight ratios:
   ratios spread from -0.35 to 0.10 (mean -0.125 = -1/K, every failure's
   bar allowing it) name no closed form.  */
START_TEST (test_no_closed_form_from_wide_ratios)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  static const gc_constant consts[] = { { "K", 8 } };
  gct_wrap w;
  gct_wrap_init (&w, t);
  w.model.constants = consts;
  w.model.n_constants = 1;
  gc_result *r = gct_check_ok (&w.model, t->x, notwin ());
  for (size_t k = 0; k < 32; k++)
    {
      double ref = 1 + 0.02 * (double) (k % 5);
      double ratio = -0.35 + 0.45 * (double) k / 31;
      /* bars of 0.3: every failure's interval holds -1/K, and the ratio
         -0.35 is beyond its bar of zero (no zero region) */
      set_direction (&r->dirs[k], ratio * ref, ref, 0.3 * ref);
    }
  gc_result *m = rediagnose (r);
  ck_assert_uint_eq (m->n_failed, 32);
  /* a factor, measured, not named (before: "-0.125 = -1/K") */
  fprintf (stderr, "# wide ratios: %s\n", m->diagnosis.text);
  ck_assert_msg (m->diagnosis.kind == GC_DIAG_CONSTANT_FACTOR
                 && m->diagnosis.closed_form[0] == 0
                 && !strstr (m->diagnosis.text, "1/K"), "%s",
                 m->diagnosis.text);
  gc_result_free (m);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Passes coarser than the failures' error are no evidence of a right
   element: a uniform relative error of 1e-4 on W that fails where the
   resolution is 5e-5 and passes where it is 2e-4 (three columns) claims
   no axis.  */
START_TEST (test_no_structure_from_coarse_passes)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, notwin ());
  for (size_t k = 0; k < 32; k++)
    {
      double ref = r->dirs[k].reference != 0 ? r->dirs[k].reference : 1;
      /* the coarse ones: columns 1, 4 and 6 (before: "axis 1: only 1,
         4, 6 pass (of 0-7)", a column structure the bug does not have) */
      bool fine = k % 8 != 1 && k % 8 != 4 && k % 8 != 6;
      set_direction (&r->dirs[k], ref * (1 + 1e-4), ref,
                     (fine ? 5e-5 : 2e-4) * fabs (ref));
    }
  gc_result *m = rediagnose (r);
  ck_assert_uint_gt (m->n_failed, 3);
  ck_assert_msg (!strstr (m->diagnosis.text, "axis ")
                 && strstr (m->diagnosis.text, "resolves an error of this "
                            "size fails"), "%s", m->diagnosis.text);
  gc_result_free (m);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* At a coarse resolution constancy proves nothing: X's differences are
   one constant per row up to +-30%, but the bars are 0.6 of the offsets
   (the tolerance of two bars exceeds them): no offset is named.  With
   bars of 0.05 of the offsets the same rows are not constant (30% is
   beyond them): no offset either.  */
START_TEST (test_no_offset_at_coarse_resolution)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  for (int fine = 0; fine < 2; fine++)
    {
      gc_result *r = gct_check_ok (&t->model, t->x, notwin ());
      for (size_t k = 0; k < 64; k++)
        {
          double ref = 1 + 0.02 * (double) (k % 5);
          if (k < X0)
            {
              set_direction (&r->dirs[k], ref, ref, 1e-6);
              continue;
            }
          size_t i = (k - X0) / XC, j = (k - X0) % XC;
          double c = (i % 2 ? -0.1 : 0.1) * (double) (1 + i);
          set_direction (&r->dirs[k],
                         ref + c * (1 + 0.3 * ((double) (j % 3) - 1)), ref,
                         (fine ? 0.05 : 0.6) * fabs (c));
        }
      gc_result *m = rediagnose (r);
      ck_assert_uint_gt (m->n_failed, 3);
      fprintf (stderr, "# rows offset +-30%%, bars %s: %s\n",
               fine ? "0.05 c" : "0.6 c", m->diagnosis.text);
      /* nor another pattern: the next row's references lie within the
         coarse bars too, which once read as an approximate shift */
      ck_assert_msg (m->diagnosis.kind != GC_DIAG_AXIS_OFFSET
                     && m->diagnosis.kind != GC_DIAG_APPROX_SHIFT
                     && !is_pattern (m->diagnosis.kind), "%s",
                     m->diagnosis.text);
      gc_result_free (m);
      gc_result_free (r);
    }
  gct_free (t);
}
END_TEST

/* Within the worst case only through the reference's own rounding: the
   check is undecided, and the backward's roundings are not blamed.  */
START_TEST (test_undecided_at_low_resolution)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, notwin ());
  for (size_t k = 0; k < 32; k++)
    {
      gc_direction *d = &r->dirs[k];
      double ref = d->reference != 0 ? d->reference : 1;
      set_direction (d, ref * (1 + 3e-5), ref, 1e-5 * fabs (ref));
      /* all of the bar is the adjoint's: its worst case is at most
         gamma_d / (lambda sqrt(d_b) u) times it, below 3 here */
      d->bar_worst_case = 2 * d->diff;
    }
  double db = (double) r->backward_depth;
  ck_assert (db / (r->lambda_backward * sqrt (db)) < 3);
  gc_result *m = rediagnose (r);
  ck_assert_uint_eq (m->n_failed, 32);
  fprintf (stderr, "# undecided: %s\n", m->diagnosis.text);
  ck_assert_msg (m->diagnosis.kind == GC_DIAG_ONE_ULP
                 && strstr (m->diagnosis.text, "undecided at this "
                            "resolution")
                 && !strstr (m->diagnosis.text, "correct backward"), "%s",
                 m->diagnosis.text);
  gc_result_free (m);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* A causal depthwise convolution with its taps as parameters:
   y[c,t] = sum_k w[c,k] x[c,t-k] (zero before t = 0), L = sum cot[c,t]
   tanh(y[c,t]).  Its backward dw[c,k] = sum_{t>=k} d[c,t] x[c,t-k], with
   d = cot (1 - tanh^2 y).  The bug (issue 25's): the taps read
   x[c,t-k+1] under the same bound t >= k, so that dw[c,k] is the right
   dw[c,k-1] less its first term d[c,k-1] x[c,0], and dw[c,0] another
   sum.  With T = 256 gated (mostly positive) inputs the missing term is
   a few parts in a thousand: analytic[k] / reference[k-1] is 0.99 to 1
   for the taps k > 0, as in the issue, while the unshifted ratios spread
   ten times wider; the taps 0 break the shift.  */
enum { CC = 3, CK = 6, CT = 256 };
typedef struct conv_model
{
  gc_model model;
  gc_block block;
  float w[CC * CK], x[CC * CT], cot[CC * CT];
  int bug;
} conv_model;

static void
conv_y (const conv_model *m, const float *w, float *y)
{
  for (size_t c = 0; c < CC; c++)
    for (size_t t = 0; t < CT; t++)
      {
        float s = 0;
        for (size_t k = 0; k <= t && k < CK; k++)
          s += w[c * CK + k] * m->x[c * CT + t - k];
        y[c * CT + t] = s;
      }
}

static int
conv_loss (void *ctx, const float *w, float *l)
{
  const conv_model *m = ctx;
  float y[CC * CT], s = 0;
  conv_y (m, w, y);
  for (size_t i = 0; i < CC * CT; i++)
    s += m->cot[i] * tanhf (y[i]);
  *l = s;
  return 0;
}

static int
conv_grad (void *ctx, const float *w, float *g)
{
  const conv_model *m = ctx;
  float y[CC * CT];
  conv_y (m, w, y);
  for (size_t c = 0; c < CC; c++)
    for (size_t k = 0; k < CK; k++)
      {
        float s = 0;
        for (size_t t = k; t < CT; t++)
          {
            size_t j = m->bug ? t - k + 1 : t - k;
            if (j >= CT)
              continue;
            float th = tanhf (y[c * CT + t]);
            s += m->cot[c * CT + t] * (1 - th * th) * m->x[c * CT + j];
          }
        g[c * CK + k] = s;
      }
  return 0;
}

static int
conv_mpfr (void *ctx, mpfr_srcptr w, mpfr_ptr l)
{
  const conv_model *m = ctx;
  mpfr_prec_t p = mpfr_get_prec (l);
  mpfr_ptr y = gc_mp_array_new (CC * CT, p);
  ck_assert_ptr_nonnull (y);
  mpfr_t xv;
  mpfr_init2 (xv, 24);
  for (size_t c = 0; c < CC; c++)
    for (size_t t = 0; t < CT; t++)
      for (size_t k = 0; k <= t && k < CK; k++)
        {
          mpfr_set_flt (xv, m->x[c * CT + t - k], MPFR_RNDN);
          mpfr_fma (y + c * CT + t, w + c * CK + k, xv, y + c * CT + t,
                    MPFR_RNDN);
        }
  gc_mp_tanh (y, y, CC * CT);
  gc_mp_dot_f32 (l, y, m->cot, CC * CT);
  mpfr_clear (xv);
  gc_mp_array_free (y, CC * CT);
  return 0;
}

static void
conv_init (conv_model *m, uint64_t seed, int bug)
{
  memset (m, 0, sizeof *m);
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 7;
  for (size_t i = 0; i < CC * CT; i++)
    {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      /* gated activations, mostly positive (as after a SiLU gate) */
      m->x[i] = (float) ((double) (s >> 11) * 0x1p-53 * 1.2 - 0.2);
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      m->cot[i] = (float) ((double) (s >> 11) * 0x1p-53 + 0.5);
    }
  for (size_t i = 0; i < CC * CK; i++)
    {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      m->w[i] = (float) (((double) (s >> 11) * 0x1p-53 * 2 - 1) * 0.5);
    }
  m->bug = bug;
  m->block = (gc_block) { "w", 0, CC * CK, 2, { CC, CK } };
  m->model.abi = GC_MODEL_ABI;
  m->model.name = "causal-conv";
  m->model.n = CC * CK;
  m->model.loss_f32 = conv_loss;
  m->model.grad_f32 = conv_grad;
  m->model.loss_mpfr = conv_mpfr;
  m->model.ctx = m;
  /* forward: CK fmas, tanh (~4), the product and the sum of CC CT terms;
     backward: the forward's y, tanh, 1 - t^2 (3) and CT terms */
  m->model.forward_depth = CK + 6 + CC * CT;
  m->model.backward_depth = CK + 10 + CT;
  m->model.n_blocks = 1;
  m->model.blocks = &m->block;
}

START_TEST (test_conv_off_by_one)
{
  for (int bug = 0; bug < 2; bug++)
    {
      conv_model m;
      conv_init (&m, gct_seed (), bug);
      gc_result *r = gct_check_ok (&m.model, m.w, notwin ());
      const gc_diagnosis *dg = &r->diagnosis;
      fprintf (stderr, "# causal conv%s: %s (%zu/%zu) | %s\n",
               bug ? ", taps read x[t-k+1]" : "",
               gc_verdict_name (r->verdict), r->n_failed, r->n_directions,
               dg->text);
      if (!bug)
        {
          ck_assert_msg (r->verdict == GC_PASS, "%s", dg->text);
          gc_result_free (r);
          continue;
        }
      ck_assert_int_eq (r->verdict, GC_FAIL);
      /* one tap back along axis 1, broken at tap 0 of each channel */
      ck_assert_msg (dg->kind == GC_DIAG_APPROX_SHIFT && dg->shift == -1,
                     "%s", dg->text);
      const char *b = strstr (dg->text, "it, most: ");
      ck_assert_msg (b && strstr (b, "w[0,0]") && strstr (b, "w[1,0]")
                     && strstr (b, "w[2,0]"), "%s", dg->text);
      gc_result_free (r);
    }
}
END_TEST

/* An MLP as a model author writes one (issue 25): LayerNorm with gain and
   bias, a linear layer, GELU (tanh form), a linear head, L = sum cot * a2;
   the parameters gamma, beta, W1, b1, W2, b2, the input fixed.  The bug:
   GELU's derivative with a wrong constant (sqrt(1/pi) for sqrt(2/pi)).
   It corrupts b1 and W1 directly and gamma and beta through W1; W2 and
   b2 pass.  */
enum { MB = 4, MD = 6, MH = 8, MO = 3 };
enum { P_G = 0, P_BE = MD, P_W1 = 2 * MD, P_B1 = P_W1 + MD * MH,
       P_W2 = P_B1 + MH, P_B2 = P_W2 + MH * MO, P_N = P_B2 + MO };
typedef struct mlp_model
{
  gc_model model;
  gc_block blocks[6];
  float p[P_N], x[MB * MD], cot[MB * MO];
  int bug;
} mlp_model;

static const float MLP_EPS = 1e-5f;

/* The forward in f32: xhat, the LayerNorm output, a1, h, a2.  */
static void
mlp_forward (const mlp_model *m, const float *p, float *xhat, float *rs,
             float *ln, float *a1, float *h, float *a2)
{
  for (size_t b = 0; b < MB; b++)
    {
      const float *xb = m->x + b * MD;
      float mu = 0, var = 0;
      for (size_t i = 0; i < MD; i++)
        mu += xb[i];
      mu /= MD;
      for (size_t i = 0; i < MD; i++)
        var += (xb[i] - mu) * (xb[i] - mu);
      var /= MD;
      rs[b] = 1 / sqrtf (var + MLP_EPS);
      for (size_t i = 0; i < MD; i++)
        {
          xhat[b * MD + i] = (xb[i] - mu) * rs[b];
          ln[b * MD + i] = xhat[b * MD + i] * p[P_G + i] + p[P_BE + i];
        }
      for (size_t j = 0; j < MH; j++)
        {
          float s = p[P_B1 + j];
          for (size_t i = 0; i < MD; i++)
            s += ln[b * MD + i] * p[P_W1 + i * MH + j];
          a1[b * MH + j] = s;
          float u = 0.7978845608f * (s + 0.044715f * s * s * s);
          h[b * MH + j] = 0.5f * s * (1 + tanhf (u));
        }
      for (size_t o = 0; o < MO; o++)
        {
          float s = p[P_B2 + o];
          for (size_t j = 0; j < MH; j++)
            s += h[b * MH + j] * p[P_W2 + j * MO + o];
          a2[b * MO + o] = s;
        }
    }
}

static int
mlp_loss (void *ctx, const float *p, float *l)
{
  const mlp_model *m = ctx;
  float xhat[MB * MD], rs[MB], ln[MB * MD], a1[MB * MH], h[MB * MH],
        a2[MB * MO], s = 0;
  mlp_forward (m, p, xhat, rs, ln, a1, h, a2);
  for (size_t i = 0; i < MB * MO; i++)
    s += m->cot[i] * a2[i];
  *l = s;
  return 0;
}

static int
mlp_grad (void *ctx, const float *p, float *g)
{
  const mlp_model *m = ctx;
  float xhat[MB * MD], rs[MB], ln[MB * MD], a1[MB * MH], h[MB * MH],
        a2[MB * MO];
  mlp_forward (m, p, xhat, rs, ln, a1, h, a2);
  memset (g, 0, P_N * sizeof *g);
  float k = m->bug ? 0.5641895835f : 0.7978845608f;
  for (size_t b = 0; b < MB; b++)
    {
      float dh[MH], da1[MH];
      for (size_t o = 0; o < MO; o++)
        {
          float d = m->cot[b * MO + o];
          g[P_B2 + o] += d;
          for (size_t j = 0; j < MH; j++)
            g[P_W2 + j * MO + o] += h[b * MH + j] * d;
        }
      for (size_t j = 0; j < MH; j++)
        {
          float s = 0;
          for (size_t o = 0; o < MO; o++)
            s += m->cot[b * MO + o] * p[P_W2 + j * MO + o];
          dh[j] = s;
          float v = a1[b * MH + j];
          float t = tanhf (0.7978845608f * (v + 0.044715f * v * v * v));
          float dg = 0.5f * (1 + t) + 0.5f * v * (1 - t * t) * k
                     * (1 + 3 * 0.044715f * v * v);
          da1[j] = dh[j] * dg;
          g[P_B1 + j] += da1[j];
        }
      for (size_t i = 0; i < MD; i++)
        {
          float dln = 0;
          for (size_t j = 0; j < MH; j++)
            {
              g[P_W1 + i * MH + j] += ln[b * MD + i] * da1[j];
              dln += da1[j] * p[P_W1 + i * MH + j];
            }
          g[P_G + i] += dln * xhat[b * MD + i];
          g[P_BE + i] += dln;
        }
    }
  return 0;
}

static int
mlp_mpfr (void *ctx, mpfr_srcptr p, mpfr_ptr l)
{
  const mlp_model *m = ctx;
  mpfr_prec_t pr = mpfr_get_prec (l);
  mpfr_ptr x = gc_mp_array_new (MB * MD, pr), a1 = gc_mp_array_new (MB * MH, pr);
  mpfr_ptr a2 = gc_mp_array_new (MB * MO, pr);
  ck_assert (x && a1 && a2);
  gc_mp_set_f32 (x, m->x, MB * MD);
  for (size_t b = 0; b < MB; b++)
    gc_mp_layernorm (x + b * MD, x + b * MD, MD, (double) MLP_EPS, p + P_G,
                     p + P_BE);
  gc_mp_gemm (a1, 0, 0, MB, MH, MD, x, MD, p + P_W1, MH);
  gc_mp_add_bias (a1, a1, MB, MH, p + P_B1);
  gc_mp_gelu_tanh (a1, a1, MB * MH);
  gc_mp_gemm (a2, 0, 0, MB, MO, MH, a1, MH, p + P_W2, MO);
  gc_mp_add_bias (a2, a2, MB, MO, p + P_B2);
  gc_mp_dot_f32 (l, a2, m->cot, MB * MO);
  gc_mp_array_free (x, MB * MD);
  gc_mp_array_free (a1, MB * MH);
  gc_mp_array_free (a2, MB * MO);
  return 0;
}

static void
mlp_init (mlp_model *m, uint64_t seed, int bug)
{
  memset (m, 0, sizeof *m);
  uint64_t s = seed * 0x2545f4914f6cdd1dULL + 3;
#define MLP_U(r) (s = s * 6364136223846793005ULL + 1442695040888963407ULL, \
                  (float) (((double) (s >> 11) * 0x1p-53 * 2 - 1) * (r)))
  for (size_t i = 0; i < MB * MD; i++)
    m->x[i] = MLP_U (2);
  for (size_t i = 0; i < MB * MO; i++)
    m->cot[i] = MLP_U (1);
  for (size_t i = 0; i < MD; i++)
    {
      m->p[P_G + i] = 1 + MLP_U (0.2);
      m->p[P_BE + i] = MLP_U (0.2);
    }
  for (size_t i = P_W1; i < P_N; i++)
    m->p[i] = MLP_U (0.6);
#undef MLP_U
  m->bug = bug;
  m->blocks[0] = (gc_block) { "gamma", P_G, MD, 1, { MD } };
  m->blocks[1] = (gc_block) { "beta", P_BE, MD, 1, { MD } };
  m->blocks[2] = (gc_block) { "W1", P_W1, MD * MH, 2, { MD, MH } };
  m->blocks[3] = (gc_block) { "b1", P_B1, MH, 1, { MH } };
  m->blocks[4] = (gc_block) { "W2", P_W2, MH * MO, 2, { MH, MO } };
  m->blocks[5] = (gc_block) { "b2", P_B2, MO, 1, { MO } };
  m->model.abi = GC_MODEL_ABI;
  m->model.name = "mlp";
  m->model.n = P_N;
  m->model.loss_f32 = mlp_loss;
  m->model.grad_f32 = mlp_grad;
  m->model.loss_mpfr = mlp_mpfr;
  m->model.ctx = m;
  /* forward: LayerNorm (~2 MD + 6), MD + 1 for a1, GELU (~10), MH + 1
     for a2, the sum of MB MO; backward: that chain and its mirror */
  m->model.forward_depth = 2 * MD + 6 + MD + 1 + 10 + MH + 1 + MB * MO;
  m->model.backward_depth = 2 * (2 * MD + 6 + MD + 10 + MH) + MB + 8;
  m->model.n_blocks = 6;
  m->model.blocks = m->blocks;
}

/* The lead: the tensor whose failures the patterns read is b1 (the last
   declared of the tensors that fail wholly; blocks are declared in
   forward order); gamma, beta and W1, which fail wholly too, are listed
   with it as one group failing alike, said first, not as weaker leads
   (issue 36: block order does not tell which is nearest the error); W2
   and b2 are named as passing.  */
START_TEST (test_mlp_gelu_lead)
{
  for (int bug = 0; bug < 2; bug++)
    {
      mlp_model m;
      mlp_init (&m, gct_seed (), bug);
      gc_result *r = gct_check_ok (&m.model, m.p, notwin ());
      const gc_diagnosis *dg = &r->diagnosis;
      fprintf (stderr, "# mlp%s: %s (%zu/%zu) | %s\n",
               bug ? ", GELU derivative with sqrt(1/pi)" : "",
               gc_verdict_name (r->verdict), r->n_failed, r->n_directions,
               dg->text);
      if (!bug)
        {
          ck_assert_msg (r->verdict == GC_PASS, "%s", dg->text);
          gc_result_free (r);
          continue;
        }
      ck_assert_int_eq (r->verdict, GC_FAIL);
      ck_assert_msg (strcmp (dg->block, "b1") == 0, "lead %s: %s",
                     dg->block, dg->text);
      const char *pass = strstr (dg->text, "pass: ");
      ck_assert_msg (pass && strstr (pass, "W2") && strstr (pass, "b2"),
                     "%s", dg->text);
      const char *alike = strstr (dg->text, "4 tensors fail alike, wholly: ");
      ck_assert_msg (alike && strstr (alike, "W1 (") && strstr (alike, "beta (")
                     && strstr (alike, "gamma (")
                     && !strstr (dg->text, "weaker lead"), "%s", dg->text);
      gc_result_free (r);
    }
}
END_TEST

static Suite *
diagnose_suite (void)
{
  Suite *s = suite_create ("diagnose");
  TCase *tc = tcase_create ("never wrong");
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_few_failures_no_pattern);
  tcase_add_test (tc, test_rounding_before_factor);
  tcase_add_test (tc, test_closed_forms_within_spread);
  tcase_add_test (tc, test_no_shift_at_coarse_resolution);
  suite_add_tcase (s, tc);
  TCase *ts = tcase_create ("structure");
  tcase_add_test (ts, test_axis_structure);
  tcase_add_test (ts, test_other_tensors_named);
  tcase_add_test (ts, test_gdn_structure);
  tcase_set_timeout (ts, 120);
  suite_add_tcase (s, ts);
  TCase *tf = tcase_create ("forward disagreement");
  tcase_set_timeout (tf, 120);
  tcase_add_test (tf, test_forward_mismatch_first);
  tcase_add_test (tf, test_kda_forward_mutants);
  suite_add_tcase (s, tf);
  TCase *tm = tcase_create ("messages");
  tcase_set_timeout (tm, 120);
  tcase_add_test (tm, test_missing_reference_message);
  tcase_add_test (tm, test_f64_prediction);
  suite_add_tcase (s, tm);
  TCase *tb = tcase_create ("author's bugs");
  tcase_set_timeout (tb, 300);
  tcase_add_test (tb, test_off_by_one_named);
  tcase_add_test (tb, test_conv_off_by_one);
  tcase_add_test (tb, test_mlp_gelu_lead);
  tcase_add_test (tb, test_axis_offset_named);
  tcase_add_test (tb, test_nonlinearity_bugs_not_misnamed);
  tcase_add_test (tb, test_scale_on_one_tensor);
  tcase_add_test (tb, test_lead_tensor_first);
  tcase_add_test (tb, test_reference_zero_no_nan);
  tcase_add_test (tb, test_nondeterministic_one_message);
  tcase_add_test (tb, test_no_closed_form_from_wide_ratios);
  tcase_add_test (tb, test_no_structure_from_coarse_passes);
  tcase_add_test (tb, test_undecided_at_low_resolution);
  tcase_add_test (tb, test_no_offset_at_coarse_resolution);
  suite_add_tcase (s, tb);
  TCase *tr = tcase_create ("random per block");
  tcase_set_timeout (tr, 120);
  tcase_add_test (tr, test_random_per_block);
  tcase_add_test (tr, test_random_rules_out);
  tcase_add_test (tr, test_random_rules_out_f32_path);
  suite_add_tcase (s, tr);
  return s;
}

int
main (void)
{
  return gct_run (diagnose_suite ());
}
