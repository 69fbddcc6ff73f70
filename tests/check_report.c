/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_report.c -- reports (text, JSON, Markdown, TAP), derivations,
   parameter names, the diagnosis, and the Check helper header.  */

#include "gctest.h"
#include "gradcheck-check.h"

#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int
count_lines (const char *s, const char *prefix)
{
  int n = 0;
  size_t l = strlen (prefix);
  for (const char *p = s; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1
                                                        : NULL)
    if (strncmp (p, prefix, l) == 0)
      n++;
  return n;
}

START_TEST (test_text_report)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  char *s = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (s);
  const char *needles[] = { "verdict: PASS", "worst direction:", "analytic",
                            "reference", "resolution", "truncation",
                            "reference rounding", "adjoint rounding",
                            "[manual: Truncation]", "lambda", "MPFR" };
  for (size_t k = 0; k < sizeof needles / sizeof *needles; k++)
    ck_assert_msg (strstr (s, needles[k]), "text report lacks '%s'",
                   needles[k]);
  /* the worst element is named by its tensor */
  char name[64];
  gc_param_name (r, r->dirs[r->worst].index, name, sizeof name);
  ck_assert_ptr_nonnull (strstr (s, name));
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

START_TEST (test_json_report)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (),
                                 gct_tanh_mutant ("dw-twice"));
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  char *s = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (s);
  ck_assert_msg (gct_json_valid (s), "invalid JSON: %.200s", s);
  const char *fields[] = { "\"verdict\":\"fail\"", "\"worst_index\":",
                           "\"worst_nu\":", "\"n_directions\":64",
                           "\"n_failed\":32", "\"terms\":[",
                           "\"name\":\"truncation\"",
                           "\"name\":\"adjoint rounding\"",
                           "\"diagnosis\":{\"kind\":\"constant-factor\"" };
  for (size_t k = 0; k < sizeof fields / sizeof *fields; k++)
    ck_assert_msg (strstr (s, fields[k]), "JSON lacks %s", fields[k]);
  free (s);
  for (size_t k = 0; k < r->n_directions; k += 7)
    {
      char *d = gc_derivation (r, k, GC_FMT_JSON);
      ck_assert (gct_json_valid (d));
      free (d);
    }
  ck_assert_ptr_null (gc_derivation (r, r->n_directions, GC_FMT_JSON));
  gc_result_free (r);
  gct_free (t);
}
END_TEST

START_TEST (test_markdown_derivation)
{
  gct_model *t = gct_poly (5, gct_seed ());
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  char *s = gc_derivation (r, 2, GC_FMT_MARKDOWN);
  ck_assert_ptr_nonnull (s);
  ck_assert_ptr_nonnull (strstr (s, "# Derivation of the pass bar: x[2]"));
  ck_assert_int_eq (count_lines (s, "## "), 3);
  ck_assert_ptr_nonnull (strstr (s, "| `lambda` |"));
  ck_assert_ptr_nonnull (strstr (s, "Manual: *Adjoint rounding*"));
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

START_TEST (test_tap_report)
{
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (),
                                 gct_tanh_mutant ("dx-zero"));
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  char *s = gc_report (r, GC_FMT_TAP);
  ck_assert (strncmp (s, "1..12\n", 6) == 0);
  ck_assert_int_eq (count_lines (s, "ok "), 6);
  ck_assert_int_eq (count_lines (s, "not ok "), 6);
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

START_TEST (test_param_names)
{
  gct_model *t = gct_tanh_gemm (3, 4, 5, 1, 0);
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  char b[64];
  ck_assert_str_eq (gc_param_name (r, 0, b, sizeof b), "W[0,0]");
  ck_assert_str_eq (gc_param_name (r, 7, b, sizeof b), "W[1,3]");
  ck_assert_str_eq (gc_param_name (r, 12, b, sizeof b), "X[0,0]");
  ck_assert_str_eq (gc_param_name (r, 12 + 19, b, sizeof b), "X[3,4]");
  ck_assert_str_eq (gc_param_name (r, 999, b, sizeof b), "x[999]");
  /* truncation to a short buffer stays terminated */
  ck_assert_str_eq (gc_param_name (r, 7, b, 4), "W[1");
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The diagnosis names what is wrong.  */
START_TEST (test_diagnosis_kinds)
{
  static const struct
  {
    const char *mutant;
    gc_diagnosis_kind kind;
    const char *form;
  } cases[] = {
    { "dw-twice", GC_DIAG_CONSTANT_FACTOR, "2" },
    { "dw-sign", GC_DIAG_SIGN_FLIP, "-1" },
    { "dx-zero", GC_DIAG_ZERO_REGION, "" },
    { "no-tanh-derivative", GC_DIAG_LOGIC, "" },
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    {
      gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (),
                                     gct_tanh_mutant (cases[k].mutant));
      gc_result *r = gct_check_ok (&t->model, t->x, NULL);
      ck_assert_int_eq (r->verdict, GC_FAIL);
      ck_assert_msg (r->diagnosis.kind == cases[k].kind,
                     "mutant %s: diagnosis '%s'", cases[k].mutant,
                     r->diagnosis.text);
      if (cases[k].form[0])
        ck_assert_str_eq (r->diagnosis.closed_form, cases[k].form);
      gc_result_free (r);
      gct_free (t);
    }
}
END_TEST

/* A missing read scale at K = 8 reads as K^0.5 (the incident's 2.8284).  */
START_TEST (test_diagnosis_sqrt_k)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gct_wrap w;
  gct_wrap_init (&w, t);
  w.lo = 0;
  w.hi = 32;                 /* all of W */
  w.factor = sqrt (8.0);
  gc_result *r = gct_check_ok (&w.model, t->x, NULL);
  ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_CONSTANT_FACTOR);
  ck_assert_str_eq (r->diagnosis.closed_form, "K^0.5");
  ck_assert_ptr_nonnull (strstr (r->diagnosis.text, "2.8284"));
  gc_result_free (r);
  w.factor = 1 / sqrt (8.0);
  r = gct_check_ok (&w.model, t->x, NULL);
  ck_assert_str_eq (r->diagnosis.closed_form, "K^-0.5");
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* A window shifted by one row (the stride of W's last axis, 8) or by one
   element reads as a shifted window with that shift.  */
START_TEST (test_diagnosis_shift)
{
  static const long shifts[] = { 8, -8, 1 };
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  for (size_t k = 0; k < 3; k++)
    {
      gct_wrap w;
      gct_wrap_init (&w, t);
      w.lo = 0;
      w.hi = 32;
      w.shift = shifts[k];
      gc_result *r = gct_check_ok (&w.model, t->x, NULL);
      ck_assert_int_eq (r->verdict, GC_FAIL);
      ck_assert_msg (r->diagnosis.kind == GC_DIAG_SHIFTED,
                     "shift %ld: %s", shifts[k], r->diagnosis.text);
      ck_assert_int_eq (r->diagnosis.shift, shifts[k]);
      gc_result_free (r);
    }
  gct_free (t);
}
END_TEST

/* The Check helper: passes on a correct backward, and its failing form
   passes on a mutant.  */
START_TEST (test_check_helper)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_ck_assert_gradient (&t->model, t->x, NULL);
  gct_free (t);
  t = gct_tanh_gemm (4, 8, 4, gct_seed (), gct_tanh_mutant ("dw-twice"));
  gc_ck_assert_gradient_fails (&t->model, t->x, NULL);
  gc_ck_assert_gradient_fails_as (&t->model, t->x, NULL,
                                  GC_DIAG_CONSTANT_FACTOR);
  gct_free (t);
  t = gct_tanh_gemm (4, 8, 4, gct_seed (), gct_tanh_mutant ("dx-zero"));
  gc_ck_assert_gradient_fails_as (&t->model, t->x, NULL, GC_DIAG_ZERO_REGION);
  gct_free (t);
}
END_TEST

/* A check that would outlast the test case's timeout stops at 80% of it,
   and the assertion says why and how to raise it (Check would kill the
   test without a word): a model whose forward takes 2 ms a call against
   a declared timeout of 0.2 s.  Without a declared timeout no limit is
   set; a check's own limit is kept.  */
static void
slow_down (void)
{
  struct timespec ts = { 0, 2000000 };
  nanosleep (&ts, NULL);
}

static int
slow_loss (void *ctx, const float *x, float *l)
{
  gct_wrap *w = ctx;
  slow_down ();
  return w->base->model.loss_f32 (w->base->model.ctx, x, l);
}

static int
slow_f64 (void *ctx, const double *x, double *l)
{
  gct_wrap *w = ctx;
  slow_down ();
  return w->base->model.loss_f64 (w->base->model.ctx, x, l);
}

static int
slow_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  gct_wrap *w = ctx;
  slow_down ();
  return w->base->model.loss_mpfr (w->base->model.ctx, x, l);
}

START_TEST (test_check_helper_timeout)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (),
                                gct_tanh_mutant ("dw-twice"));
  gct_wrap w;
  gct_wrap_init (&w, t);
  w.model.loss_f32 = slow_loss;
  w.model.loss_f64 = slow_f64;
  w.model.loss_mpfr = slow_mpfr;
  char msg[GC_CK_MESSAGE_SIZE];
  unsetenv ("CK_TIMEOUT_MULTIPLIER");
  double t0 = gc_ck__now ();
  int ok = gc_ck__check (&w.model, t->x, NULL, GC_FAIL, 1,
                         GC_DIAG_CONSTANT_FACTOR, 0.2, msg, sizeof msg);
  double took = gc_ck__now () - t0;
  ck_assert_int_eq (ok, 0);
  ck_assert_msg (strstr (msg, "the check stopped after")
                 && strstr (msg, "test's timeout of 0.2 s")
                 && strstr (msg, "tcase_set_timeout")
                 && strstr (msg, "CK_DEFAULT_TIMEOUT"), "%s", msg);
  /* it stopped near 0.16 s, well before the whole check */
  ck_assert_msg (took < 2, "took %g s", took);
  /* the caller's own limit is kept: none reached in 100 s */
  gc_options o;
  gc_options_init (&o);
  o.timeout = 100;
  ok = gc_ck__check (&w.model, t->x, &o, GC_FAIL, 1,
                     GC_DIAG_CONSTANT_FACTOR, 0.2, msg, sizeof msg);
  ck_assert_msg (ok, "%s", msg);
  /* no declared timeout: no limit */
  ok = gc_ck__check (&w.model, t->x, NULL, GC_FAIL, 1,
                     GC_DIAG_CONSTANT_FACTOR, 0, msg, sizeof msg);
  ck_assert_msg (ok, "%s", msg);
  gct_free (t);
}
END_TEST

/* And its failure message carries the report (run in a child: the failing
   assertion must fail this test, which is what we check).  */
START_TEST (test_check_helper_message)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (),
                                 gct_tanh_mutant ("dw-twice"));
  gc_ck_assert_gradient (&t->model, t->x, NULL);
}
END_TEST

/* gc_ck_assert_gradient_fails_as is not satisfied by a failure of another
   diagnosis (a factor asserted as a sign flip; a zero region asserted as a
   factor), nor by a pass.  Each of these must fail.  */
START_TEST (test_fails_as_other_kind)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (),
                                 gct_tanh_mutant ("dw-twice"));
  gc_ck_assert_gradient_fails_as (&t->model, t->x, NULL, GC_DIAG_SIGN_FLIP);
}
END_TEST

START_TEST (test_fails_as_zero_region)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (),
                                 gct_tanh_mutant ("dx-zero"));
  gc_ck_assert_gradient_fails_as (&t->model, t->x, NULL,
                                  GC_DIAG_CONSTANT_FACTOR);
}
END_TEST

START_TEST (test_fails_as_on_a_pass)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_ck_assert_gradient_fails_as (&t->model, t->x, NULL,
                                  GC_DIAG_CONSTANT_FACTOR);
}
END_TEST

/* Whether every line of S after the first starts with "# ".  */
static bool
tap_continued (const char *s)
{
  for (const char *p = strchr (s, '\n'); p; p = strchr (p + 1, '\n'))
    if (strncmp (p + 1, "# ", 2) != 0)
      return false;
  return true;
}

/* A copy of S with the first occurrence of FROM replaced by TO.  */
static char *
replaced (const char *s, const char *from, const char *to)
{
  const char *at = strstr (s, from);
  ck_assert_msg (at, "'%s' is not in the report", from);
  size_t a = (size_t) (at - s), lf = strlen (from), lt = strlen (to);
  char *o = malloc (strlen (s) - lf + lt + 1);
  ck_assert_ptr_nonnull (o);
  memcpy (o, s, a);
  memcpy (o + a, to, lt);
  strcpy (o + a + lt, at + lf);
  return o;
}

static gc_status
parse (const char *s, gc_result **r)
{
  *r = NULL;
  return gc_result_parse_json (s, strlen (s), r);
}

/* Reports are untrusted input: indices beyond n, blocks that do not cover
   [0, n) and shard numbers beyond the shard count are refused (the
   diagnosis and the merge index arrays by them); a term name the library
   does not know survives the shard it was read from.  */
START_TEST (test_untrusted_reports)
{
  gct_model *t = gct_tanh_gemm (2, 2, 2, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  char *s = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (s);
  gc_result *back;
  ck_assert_int_eq (parse (s, &back), GC_OK);
  gc_result_free (back);

  char *bad = replaced (s, "\"index\":0,", "\"index\":8,");
  ck_assert_int_eq (parse (bad, &back), GC_EFORMAT);
  ck_assert_ptr_null (back);
  free (bad);
  /* blocks W [0,4), X [4,8) against n = 9  */
  bad = replaced (s, "\"n\":8,", "\"n\":9,");
  ck_assert_int_eq (parse (bad, &back), GC_EFORMAT);
  free (bad);

  gc_result *one;
  ck_assert_int_eq (parse (s, &one), GC_OK);
  one->shard_index = 40;
  gc_result *merged = NULL;
  ck_assert_int_eq (gc_result_merge (&one, 1, &merged), GC_EMISMATCH);
  ck_assert_ptr_null (merged);
  gc_result_free (one);

  char *odd = replaced (s, "\"name\":\"adjoint rounding\"",
                        "\"name\":\"adjoint rounding, renamed\"");
  ck_assert_int_eq (parse (odd, &one), GC_OK);
  ck_assert_int_eq (gc_result_merge (&one, 1, &merged), GC_OK);
  gc_result_free (one);
  ck_assert_str_eq (merged->dirs[merged->worst].terms[GC_TERM_ADJOINT].name,
                    "adjoint rounding, renamed");
  gc_result_free (merged);
  free (odd);
  free (s);
  gc_result_free (r);
  gct_free (t);

  /* A failing report read back is diagnosed as the original was (the
     diagnosis reads lambda from the result: a report carries the terms'
     inputs of its worst direction only).  */
  t = gct_tanh_gemm (4, 8, 4, gct_seed (),
                     gct_tanh_mutant ("no-tanh-derivative"));
  r = gct_check_ok (&t->model, t->x, NULL);
  ck_assert_int_eq (r->verdict, GC_FAIL);
  s = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (s);
  ck_assert_int_eq (parse (s, &back), GC_OK);
  ck_assert_int_eq (back->diagnosis.kind, r->diagnosis.kind);
  ck_assert_str_eq (back->diagnosis.text, r->diagnosis.text);
  gc_result_free (back);
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The line of TEXT that starts with PREFIX, as a new string ("" when
   none).  */
static char *
line_of (const char *text, const char *prefix)
{
  const char *p = strstr (text, prefix);
  if (p && p != text && p[-1] != '\n')
    p = NULL;
  size_t n = p ? strcspn (p, "\n") : 0;
  char *l = malloc (n + 1);
  ck_assert_ptr_nonnull (l);
  memcpy (l, p ? p : "", n);
  l[n] = 0;
  return l;
}

/* Reports of other kinds than the gradient check's read back too.  The
   forward oracle's did not: its directions carried a twin's values (all
   0) though the oracle has no twin, and the reader refuses a twin's
   fields in a report without one (its text and TAP reports showed them
   too).  Nor did a JVP check's along random
   directions whose tangent spread is not 0: its measured depth's element
   is n, "random directions only, no depth implied" (manual: "JSON
   report"), which the reader refused as an element beyond n.  */
START_TEST (test_oracle_and_jvp_read_back)
{
  const gcm_spec *spec = gcm_find ("kda");
  long v[GCM_MAX_KEYS];
  char err[64];
  ck_assert_int_eq (gcm_parse_shape (spec, "T=3,H=1,HV=1,K=2,V=2,BT=2", v,
                                     err, sizeof err), GC_OK);
  gcm_instance *inst = NULL;
  ck_assert_int_eq (gcm_create (spec, v, gct_seed (), 0, &inst), GC_OK);
  gc_result *r = NULL, *back = NULL;
  ck_assert_int_eq (gc_forward_check (&inst->model, inst->x, NULL, &r),
                    GC_OK);
  char *s = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_null (strstr (s, "analytic_f64"));
  ck_assert_int_eq (parse (s, &back), GC_OK);
  /* nor do its other reports show a twin (they derived a bar_64 of 0,
     and TAP gave the twin's nu, 0, for every output: here the worst
     output's nu is not 0) */
  char *tap = gc_report (r, GC_FMT_TAP), *txt = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_null (strstr (txt, "bar_64"));
  ck_assert (r->worst_nu > 0);
  size_t zeros = 0;
  for (const char *p = tap; (p = strstr (p, " nu=0\n")); p++)
    zeros++;
  ck_assert_uint_lt (zeros, r->n_directions);
  free (tap);
  free (txt);
  ck_assert_int_eq (back->verdict, r->verdict);
  ck_assert_uint_eq (back->n_directions, r->n_directions);
  char *want = gc_report (r, GC_FMT_TEXT), *got = gc_report (back,
                                                            GC_FMT_TEXT);
  ck_assert_str_eq (got, want);
  free (want);
  free (got);
  free (s);
  gc_result_free (back);
  gc_result_free (r);
  gcm_destroy (inst);

  /* seed 1: a tangent that moves under the other rounding modes along a
     random direction (asserted: the case the reader refused) */
  gct_model *t = gct_tanh_gemm (2, 2, 2, 1, 0);
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 2;
  ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &o, &r), GC_OK);
  ck_assert_uint_eq (r->depth_implied_at, r->n);
  s = gc_report (r, GC_FMT_JSON);
  ck_assert_int_eq (parse (s, &back), GC_OK);
  ck_assert_int_eq (back->verdict, r->verdict);
  ck_assert_uint_eq (back->depth_implied_at, r->n);
  want = gc_report (r, GC_FMT_TEXT);
  got = gc_report (back, GC_FMT_TEXT);
  char *lw = line_of (want, "rounding: "), *lg = line_of (got, "rounding: ");
  ck_assert_ptr_nonnull (strstr (lw, "random directions only"));
  ck_assert_str_eq (lg, lw);
  free (lw);
  free (lg);
  free (want);
  free (got);
  free (s);
  gc_result_free (back);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Names come from plugins and shard files: a result whose model, block,
   diagnosis and detail strings carry new lines, TAP test points, a TAP
   directive and terminal escapes renders without any of them.  */
START_TEST (test_hostile_names)
{
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (),
                                 gct_tanh_mutant ("dw-twice"));
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  ck_assert_int_eq (r->verdict, GC_FAIL);
  /* The Markdown report's headings, with honest names: a forged name must
     add none.  */
  char *honest = gc_report (r, GC_FMT_MARKDOWN);
  ck_assert_ptr_nonnull (honest);
  int headings = count_lines (honest, "#");
  free (honest);
  static const char forged[] = "x\nok 99 - forged # TODO\033[2J\r\302\233";
  snprintf (r->model_name, sizeof r->model_name, "%s", forged);
  snprintf (r->diagnosis.text, sizeof r->diagnosis.text, "%s", forged);
  r->blocks[0].name = forged;
  r->dirs[r->worst].terms[0].name = forged;
  for (int f = 0; f < 3; f++)
    {
      gc_format fmt = f == 0 ? GC_FMT_TEXT : f == 1 ? GC_FMT_TAP
                      : GC_FMT_MARKDOWN;
      char *s = gc_report (r, fmt);
      ck_assert_ptr_nonnull (s);
      ck_assert_msg (!strchr (s, '\033') && !strchr (s, '\r')
                     && !strstr (s, "\302\233"),
                     "format %d: a control character got through", f);
      ck_assert_int_eq (count_lines (s, "ok 99"), 0);
      if (fmt == GC_FMT_TAP)
        {
          ck_assert_msg (!strstr (s, " # TODO"), "a directive: %s", s);
          /* the plan, 12 test points and comments, nothing else */
          int lines = count_lines (s, "");
          ck_assert_int_eq (count_lines (s, "1..12\n"), 1);
          ck_assert_int_eq (count_lines (s, "ok ") + count_lines (s, "not ok "),
                            12);
          ck_assert_int_eq (lines, 1 + 12 + count_lines (s, "#"));
        }
      if (fmt == GC_FMT_MARKDOWN)
        ck_assert_int_eq (count_lines (s, "#"), headings);
      free (s);
    }
  char *s = gc_derivation (r, r->worst, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (s);
  ck_assert_int_eq (count_lines (s, "ok 99"), 0);
  ck_assert_ptr_null (strchr (s, '\033'));
  free (s);
  /* Well-formed UTF-8 passes as it is; a surrogate, an overlong form and
     a truncated sequence are not UTF-8 (RFC 3629) and are shown byte by
     byte.  */
  snprintf (r->model_name, sizeof r->model_name,
            "mod\303\250le \342\237\250x\342\237\251 \355\240\200 \300\257 \342\237");
  s = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (s);
  ck_assert_msg (strstr (s, "model mod\303\250le \342\237\250x\342\237\251 "
                         "\\xED\\xA0\\x80 \\xC0\\xAF \\xE2\\x9F, "),
                 "text report: %.80s", s);
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* JSON through Jansson (issue 12) and merge integrity (issue 16).  */

/* S with every occurrence of FROM replaced by TO; the count in *N.  */
static char *
replaced_all (const char *s, const char *from, const char *to, size_t *n)
{
  size_t lf = strlen (from), lt = strlen (to), cnt = 0;
  for (const char *p = strstr (s, from); p; p = strstr (p + lf, from))
    cnt++;
  char *o = malloc (strlen (s) + cnt * (lt > lf ? lt - lf : 0) + 1);
  ck_assert_ptr_nonnull (o);
  char *q = o;
  for (const char *p = s;;)
    {
      const char *at = strstr (p, from);
      if (!at)
        {
          strcpy (q, p);
          break;
        }
      memcpy (q, p, (size_t) (at - p));
      q += at - p;
      memcpy (q, to, lt);
      q += lt;
      p = at + lf;
    }
  if (n)
    *n = cnt;
  return o;
}

/* RFC 3629, written here independently of the library's own check.  */
static bool
utf8_valid (const unsigned char *p)
{
  while (*p)
    {
      unsigned c = *p;
      size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2
                 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      if (!n)
        return false;
      unsigned long cp = n == 1 ? c : c & (0xff >> (n + 1));
      for (size_t k = 1; k < n; k++)
        {
          if ((p[k] & 0xc0) != 0x80)
            return false;
          cp = cp << 6 | (p[k] & 0x3f);
        }
      static const unsigned long min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
      if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return false;
      p += n;
    }
  return true;
}

/* Every field of every direction, bit for bit (NaN equal to NaN).  */
static bool
same_double (double a, double b)
{
  return memcmp (&a, &b, sizeof a) == 0 || (isnan (a) && isnan (b));
}

/* The numbers of A's directions a report read back keeps as written
   (its bar, nu, resolution and verdict are judged again from them) are
   B's, bit for bit.  */
static void
assert_same_numbers (const gc_result *a, const gc_result *b)
{
  ck_assert_uint_eq (a->n_directions, b->n_directions);
  for (size_t k = 0; k < a->n_directions; k++)
    {
      const gc_direction *x = &a->dirs[k], *y = &b->dirs[k];
      const double xs[] = { x->analytic, x->reference, x->d2h, x->diff,
                            x->step, x->jump, x->forward_error_ulps,
                            x->terms[0].value, x->terms[1].value,
                            x->terms[2].value };
      const double ys[] = { y->analytic, y->reference, y->d2h, y->diff,
                            y->step, y->jump, y->forward_error_ulps,
                            y->terms[0].value, y->terms[1].value,
                            y->terms[2].value };
      for (size_t f = 0; f < sizeof xs / sizeof *xs; f++)
        ck_assert_msg (same_double (xs[f], ys[f]),
                       "direction %zu number %zu: %.17g read back as %.17g",
                       k, f, xs[f], ys[f]);
      ck_assert_uint_eq (x->id, y->id);
      ck_assert_uint_eq (x->index, y->index);
    }
}

static void
assert_same_directions (const gc_result *a, const gc_result *b)
{
  ck_assert_uint_eq (a->n_directions, b->n_directions);
  for (size_t k = 0; k < a->n_directions; k++)
    {
      const gc_direction *x = &a->dirs[k], *y = &b->dirs[k];
      const double xs[] = { x->analytic, x->reference, x->d2h, x->diff, x->bar,
                            x->nu, x->resolution, x->step, x->jump,
                            x->forward_error_ulps, x->terms[0].value,
                            x->terms[1].value, x->terms[2].value };
      const double ys[] = { y->analytic, y->reference, y->d2h, y->diff, y->bar,
                            y->nu, y->resolution, y->step, y->jump,
                            y->forward_error_ulps, y->terms[0].value,
                            y->terms[1].value, y->terms[2].value };
      for (size_t f = 0; f < sizeof xs / sizeof *xs; f++)
        ck_assert_msg (same_double (xs[f], ys[f]),
                       "direction %zu field %zu: %.17g read back as %.17g",
                       k, f, xs[f], ys[f]);
      ck_assert_int_eq (x->verdict, y->verdict);
      ck_assert_uint_eq (x->id, y->id);
      ck_assert_uint_eq (x->index, y->index);
    }
}

/* A comma-decimal locale for this process: de_DE.UTF-8 installed, or built
   with localedef into a temporary LOCPATH.  False when neither works.  */
static bool
comma_locale (char *dir, size_t size)
{
  dir[0] = 0;
  if (!setlocale (LC_ALL, "de_DE.UTF-8"))
    {
      snprintf (dir, size, "/tmp/gc-locale-XXXXXX");
      if (!mkdtemp (dir))
        return false;
      char cmd[256];
      snprintf (cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 "
                ">/dev/null 2>&1", dir);
      if (system (cmd) == -1)
        return false;
      setenv ("LOCPATH", dir, 1);
      if (!setlocale (LC_ALL, "de_DE.UTF-8"))
        return false;
    }
  char t[16];
  snprintf (t, sizeof t, "%.1f", 0.5);
  return strcmp (t, "0,5") == 0;
}

static void
drop_locale (const char *dir)
{
  setlocale (LC_ALL, "C");
  if (dir[0])
    {
      char cmd[256];
      snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
      ck_assert_int_ne (system (cmd), -1);
      unsetenv ("LOCPATH");
    }
}

/* A host program that called setlocale (LC_ALL, "") under de_DE: reports
   are still written and read in JSON's notation, and every value reads
   back bit for bit.  */
START_TEST (test_json_locale)
{
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  char dir[64];
  if (!comma_locale (dir, sizeof dir))
    {
      drop_locale (dir);
      printf ("# SKIP comma-decimal locale: de_DE.UTF-8 is not installed "
              "and localedef could not build it\n");
      gc_result_free (r);
      gct_free (t);
      return;
    }
  char *s = gc_report (r, GC_FMT_JSON);
  gc_result *back = NULL;
  gc_status st = s ? parse (s, &back) : GC_ENOMEM;
  drop_locale (dir);      /* before any assertion: no directory left */
  ck_assert_ptr_nonnull (s);
  ck_assert_msg (strstr (s, "\"false_alarm\":1e-6")
                 || strstr (s, "\"false_alarm\":1e-06")
                 || strstr (s, "\"false_alarm\":9.9999999999999995e-"),
                 "false_alarm not in JSON notation: %.300s",
                 strstr (s, "false_alarm"));
  ck_assert_int_eq (st, GC_OK);
  ck_assert (same_double (back->false_alarm, r->false_alarm));
  ck_assert (same_double (back->loss_f32, r->loss_f32));
  assert_same_directions (r, back);
  gc_result_free (back);
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Text out is valid UTF-8 whatever the model's names hold; text in must
   be valid UTF-8, escapes decoded to valid UTF-8.  */
START_TEST (test_json_utf8)
{
  gct_model *t = gct_tanh_gemm (2, 2, 2, gct_seed (), 0);
  gc_model m = t->model;
  /* a raw 0xFF, a cut three-byte sequence, a lone continuation byte */
  m.name = "m\xff\xe2\x82";
  gc_block b[2];
  memcpy (b, m.blocks, sizeof b);
  b[0].name = "W\x80";
  b[1].name = "X\xed\xa0\x80";   /* an encoded surrogate */
  m.blocks = b;
  gc_result *r = gct_check_ok (&m, t->x, NULL);
  for (int f = GC_FMT_TEXT; f <= GC_FMT_JSON; f++)
    {
      char *s = gc_report (r, (gc_format) f);
      ck_assert_ptr_nonnull (s);
      if (f == GC_FMT_JSON)
        ck_assert_msg (utf8_valid ((const unsigned char *) s),
                       "JSON report is not UTF-8: %.120s", s);
      if (f == GC_FMT_JSON)
        {
          gc_result *back;
          ck_assert_int_eq (parse (s, &back), GC_OK);
          ck_assert (utf8_valid ((const unsigned char *) back->model_name));
          /* the same check: it merges as its own one shard */
          gc_result *mg = NULL;
          ck_assert_int_eq (gc_result_merge (&back, 1, &mg), GC_OK);
          gc_result_free (mg);
          gc_result_free (back);
        }
      free (s);
    }
  char *s = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (s);
  const char *model = strstr (s, "\"model\":\"");
  ck_assert_ptr_nonnull (model);
  char *end = strchr (model + 9, '"');
  ck_assert_ptr_nonnull (end);
  size_t at = (size_t) (model + 9 - s), len = (size_t) (end - model - 9);
  static const struct { const char *name; gc_status st; const char *want; }
  cases[] = {
    { "\\ud83d\\ude00", GC_OK, "\xf0\x9f\x98\x80" },
    { "caf\\u00e9", GC_OK, "caf\xc3\xa9" },
    { "\\ud83d", GC_EFORMAT, NULL },          /* a lone surrogate */
    { "\\ude00\\ud83d", GC_EFORMAT, NULL },   /* a reversed pair */
    { "a\xff", GC_EFORMAT, NULL },            /* a raw 0xFF */
    { "\xc0\xaf", GC_EFORMAT, NULL },         /* an overlong '/' */
    { "\xed\xa0\x80", GC_EFORMAT, NULL },     /* an encoded surrogate */
    { "a\\u0000b", GC_EFORMAT, NULL },        /* NUL inside a name */
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    {
      size_t ln = strlen (cases[k].name);
      char *e = malloc (strlen (s) - len + ln + 1);
      memcpy (e, s, at);
      memcpy (e + at, cases[k].name, ln);
      strcpy (e + at + ln, s + at + len);
      gc_result *back;
      ck_assert_msg (parse (e, &back) == cases[k].st, "name %s",
                     cases[k].name);
      if (back)
        ck_assert_str_eq (back->model_name, cases[k].want);
      gc_result_free (back);
      free (e);
    }
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* A duplicate key is refused, not first-wins (nor last-wins); so are
   numbers with leading zeros and counts that are not whole JSON
   integers.  */
START_TEST (test_json_strict)
{
  gct_model *t = gct_tanh_gemm (2, 2, 2, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  char *s = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (s);
  static const struct { const char *from, *to; } cases[] = {
    { "\"n\":8,", "\"n\":8,\"n\":8," },
    { "\"n\":8,", "\"n\":8,\"n\":9," },
    { "\"verdict\":\"pass\",\"n_directions\"",
      "\"verdict\":\"fail\",\"verdict\":\"pass\",\"n_directions\"" },
    { "\"constants\":{", "\"constants\":{\"M\":1,\"M\":2," },
    { "\"n\":8,", "\"n\":08," },
    { "\"n\":8,", "\"n\":0256," },
    { "\"n\":8,", "\"n\":8.0," },
    { "\"n\":8,", "\"n\":-8," },
    { "\"n\":8,", "\"n\":\"08\"," },
    { "\"n_total\":8,", "\"n_total\":18446744073709551616," },
    { "\"seed\":1,", "\"seed\":\"18446744073709551616\"," },
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    {
      char *bad = replaced (s, cases[k].from, cases[k].to);
      gc_result *back;
      ck_assert_msg (parse (bad, &back) == GC_EFORMAT, "accepted %s",
                     cases[k].to);
      ck_assert_ptr_null (back);
      free (bad);
    }
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Every value the writer emits reads back: NaN and infinite constants,
   the infinite nu and resolution of a zero bar or reference (read, then
   judged again from the direction's numbers), seeds beyond
   2^53, negative zero, subnormals -- and the command's own JSON for a
   model with such constants merges.  */
START_TEST (test_json_nonfinite)
{
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (), 0);
  gc_model m = t->model;
  const gc_constant cs[] = { { "nan", NAN }, { "inf", INFINITY },
                             { "minf", -INFINITY }, { "mzero", -0.0 },
                             { "tiny", 0x1p-1074 }, { "big", 0x1.fffffffffffffp1023 },
                             { "third", 1.0 / 3 } };
  m.constants = cs;
  m.n_constants = sizeof cs / sizeof *cs;
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 5;
  o.seed = UINT64_MAX - 2;     /* beyond 2^53 and beyond int64 */
  o.shard_count = 2;
  char *js[2];
  gc_result *shards[2];
  for (size_t i = 0; i < 2; i++)
    {
      o.shard_index = i;
      gc_result *r = gct_check_ok (&m, t->x, &o);
      if (i == 0)
        {
          /* a zero bar and a zero reference: nu and resolution infinite */
          r->dirs[0].terms[0].value = r->dirs[0].terms[1].value
            = r->dirs[0].terms[2].value = 0;
          r->dirs[0].bar = 0;
          r->dirs[0].nu = INFINITY;
          r->dirs[0].resolution = INFINITY;
          r->dirs[1].jump = -INFINITY;
        }
      js[i] = gc_report (r, GC_FMT_JSON);
      ck_assert_ptr_nonnull (js[i]);
      ck_assert_msg (gct_json_valid (js[i]), "invalid JSON: %.200s", js[i]);
      ck_assert_int_eq (parse (js[i], &shards[i]), GC_OK);
      ck_assert_uint_eq (shards[i]->seed, o.seed);
      ck_assert_uint_eq (shards[i]->n_constants, m.n_constants);
      for (size_t c = 0; c < m.n_constants; c++)
        {
          ck_assert_str_eq (shards[i]->constants[c].name, cs[c].name);
          ck_assert_msg (same_double (shards[i]->constants[c].value,
                                      cs[c].value),
                         "constant %s read back as %g", cs[c].name,
                         shards[i]->constants[c].value);
        }
      /* a report read back judges its directions again from their
         numbers (manual: "Merging shards", gc_result_parse_json): the
         edited shard's bar, nu and resolution are the judge's, from its
         zero terms -- a zero bar, an infinite nu; the other's are all
         the check's */
      if (i == 0)
        {
          assert_same_numbers (r, shards[i]);
          ck_assert (shards[i]->dirs[0].bar == 0);
          ck_assert (shards[i]->dirs[0].diff > 0);
          ck_assert (isinf (shards[i]->dirs[0].nu));
        }
      else
        assert_same_directions (r, shards[i]);
      gc_result_free (r);
    }
  ck_assert_ptr_nonnull (strstr (js[0], "\"nan\":\"nan\""));
  ck_assert_ptr_nonnull (strstr (js[0], "\"nu\":\"inf\""));
  ck_assert_ptr_nonnull (strstr (js[0], "\"minf\":\"-inf\""));
  gc_result *mg = NULL;
  ck_assert_int_eq (gc_result_merge (shards, 2, &mg), GC_OK);
  ck_assert_uint_eq (mg->n_directions, 5);
  ck_assert (isnan (mg->constants[0].value));
  char *mj = gc_report (mg, GC_FMT_JSON);
  gc_result *again;
  ck_assert_int_eq (parse (mj, &again), GC_OK);
  assert_same_directions (mg, again);
  gc_result_free (again);
  free (mj);
  gc_result_free (mg);
  for (size_t i = 0; i < 2; i++)
    {
      gc_result_free (shards[i]);
      free (js[i]);
    }
  gct_free (t);
}
END_TEST

/* A result whose directions could not be allocated (dirs NULL beside a
   count) renders without reading them.  */
START_TEST (test_json_no_dirs)
{
  gct_model *t = gct_tanh_gemm (2, 2, 2, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  gc_direction *dirs = r->dirs;
  r->dirs = NULL;
  r->worst = 0;
  char *s = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (s);
  ck_assert_ptr_nonnull (strstr (s, "\"results\":[]"));
  ck_assert_ptr_nonnull (strstr (s, "\"worst\":null"));
  free (s);
  ck_assert_ptr_null (gc_derivation (r, 0, GC_FMT_JSON));
  r->dirs = dirs;
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* The JSON reports of shard I of COUNT of model M at X with options O.  */
static char *
shard_json (const gc_model *m, const float *x, const gc_options *base,
            size_t i, size_t count)
{
  gc_options o = *base;
  o.shard_index = i;
  o.shard_count = count;
  gc_result *r = gct_check_ok (m, x, &o);
  char *s = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (s);
  gc_result_free (r);
  return s;
}

static gc_status
merge_texts (char **texts, size_t n, gc_result **out)
{
  gc_result *rs[8] = { 0 };
  ck_assert_uint_le (n, 8);
  *out = NULL;
  for (size_t k = 0; k < n; k++)
    {
      gc_status st = parse (texts[k], &rs[k]);
      ck_assert_msg (st == GC_OK, "report %zu: %s: %.400s", k,
                     gc_strerror (st), texts[k]);
    }
  gc_status st = gc_result_merge (rs, n, out);
  for (size_t k = 0; k < n; k++)
    gc_result_free (rs[k]);
  return st;
}

/* Shards merge into the unsharded check's very report; a shard relabelled
   as another, a shard missing a direction or holding a direction twice is
   refused.  */
START_TEST (test_merge_ids)
{
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (), 0);
  gc_options o;
  gc_options_init (&o);
  gc_result *whole = gct_check_ok (&t->model, t->x, &o);
  char *wj = gc_report (whole, GC_FMT_JSON);
  char *s[3] = { shard_json (&t->model, t->x, &o, 0, 2),
                 shard_json (&t->model, t->x, &o, 1, 2), NULL };
  gc_result *m;
  ck_assert_int_eq (merge_texts (s, 2, &m), GC_OK);
  char *mj = gc_report (m, GC_FMT_JSON);
  ck_assert_str_eq (mj, wj);
  free (mj);
  gc_result_free (m);

  /* shard 0 relabelled as shard 1, beside shard 0: n = 12 is even, so the
     counts add up to n_total */
  s[2] = replaced (s[0], "\"shard_index\":0", "\"shard_index\":1");
  char *pair[2] = { s[0], s[2] };
  ck_assert_int_eq (merge_texts (pair, 2, &m), GC_EMISMATCH);
  ck_assert_ptr_null (m);
  free (s[2]);

  /* in memory: a direction dropped, a direction repeated, an id moved */
  gc_result *a, *b;
  ck_assert_int_eq (parse (s[0], &a), GC_OK);
  ck_assert_int_eq (parse (s[1], &b), GC_OK);
  gc_result *ab[2] = { a, b };
  b->n_directions--;
  ck_assert_int_eq (gc_result_merge (ab, 2, &m), GC_EMISMATCH);
  b->n_directions++;
  size_t id1 = b->dirs[1].id;
  b->dirs[1].id = b->dirs[0].id;
  ck_assert_int_eq (gc_result_merge (ab, 2, &m), GC_EMISMATCH);
  b->dirs[1].id = id1 + 1;      /* shard 0's id, in shard 1 */
  ck_assert_int_eq (gc_result_merge (ab, 2, &m), GC_EMISMATCH);
  b->dirs[1].id = id1;
  b->dirs[1].index = 0;          /* every coordinate: index == id */
  ck_assert_int_eq (gc_result_merge (ab, 2, &m), GC_EMISMATCH);
  b->dirs[1].index = id1;
  ck_assert_int_eq (gc_result_merge (ab, 2, &m), GC_OK);
  gc_result_free (m);
  gc_result_free (a);
  gc_result_free (b);

  /* one shard that claims to be the whole check (n_total and shard_count
     edited to its own size), in JSON as a file would be edited */
  char num[64];
  snprintf (num, sizeof num, "\"n_total\":%zu", whole->n_total / 2);
  char *lie = replaced (s[0], "\"n_total\":12", num);
  char *lie2 = replaced (lie, "\"shard_count\":2", "\"shard_count\":1");
  gc_result *one;
  ck_assert_int_eq (parse (lie2, &one), GC_EFORMAT);   /* ids beyond n_total */
  free (lie);
  free (lie2);
  free (s[0]);
  free (s[1]);
  free (wj);
  gc_result_free (whole);
  gct_free (t);
}
END_TEST

/* Manual: "Where the time goes": a JSON report written with
   GRADCHECK_PROFILE keeps the call counts and seconds (read back bit for
   bit: %.17g), and a merge's are the sums of its shards', in memory and
   through their reports.  The merge adds the seconds in its own order:
   each partial sum of SC non-negative terms rounds by at most u_53 of
   itself, so any order's sum is within (SC - 1) u_53 of the exact sum,
   and two orders within twice that of each other.  Without the profile
   a report has no "calls", and a result read back from it has none.  */
START_TEST (test_merge_sums_calls)
{
  enum { SC = 3 };
  setenv ("GRADCHECK_PROFILE", "1", 1);
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (), 0);
  gc_options o;
  gc_options_init (&o);
  o.shard_count = SC;
  gc_result *sh[SC], *back[SC];
  for (size_t i = 0; i < SC; i++)
    {
      o.shard_index = i;
      sh[i] = gct_check_ok (&t->model, t->x, &o);
      /* the counters ran: every shard calls the f64 forward and the
         backward */
      ck_assert_uint_gt (sh[i]->n_calls[GC_CALL_KIND_F64], 0);
      ck_assert_uint_gt (sh[i]->n_calls[GC_CALL_KIND_BACKWARD], 0);
      char *js = gc_report (sh[i], GC_FMT_JSON);
      ck_assert_ptr_nonnull (strstr (js, "\"calls\":{"));
      ck_assert_int_eq (parse (js, &back[i]), GC_OK);
      for (int k = 0; k < 4; k++)
        {
          ck_assert_uint_eq (back[i]->n_calls[k], sh[i]->n_calls[k]);
          ck_assert (same_double (back[i]->call_seconds[k],
                                  sh[i]->call_seconds[k]));
        }
      ck_assert (same_double (back[i]->work_seconds, sh[i]->work_seconds));
      ck_assert (same_double (back[i]->check_seconds, sh[i]->check_seconds));
      /* a time that cannot be is refused, as any malformed field */
      char *neg = replaced (js, "\"f64_seconds\":", "\"f64_seconds\":-");
      gc_result *bad;
      ck_assert_int_eq (parse (neg, &bad), GC_EFORMAT);
      free (neg);
      free (js);
    }
  for (int via = 0; via < 2; via++)
    {
      gc_result *const *in = via ? back : sh;
      gc_result *m;
      ck_assert_int_eq (gc_result_merge (in, SC, &m), GC_OK);
      double tol = 2 * (SC - 1) * 0x1p-53;
      for (int k = 0; k < 4; k++)
        {
          size_t n = 0;
          double sec = 0;
          for (size_t i = 0; i < SC; i++)
            {
              n += in[i]->n_calls[k];
              sec += in[i]->call_seconds[k];
            }
          ck_assert_uint_eq (m->n_calls[k], n);
          ck_assert_msg (fabs (m->call_seconds[k] - sec) <= tol * sec,
                         "kind %d: merged %.17g s, shards %.17g s", k,
                         m->call_seconds[k], sec);
        }
      double work = 0, whole = 0;
      for (size_t i = 0; i < SC; i++)
        {
          work += in[i]->work_seconds;
          whole += in[i]->check_seconds;
        }
      ck_assert (fabs (m->work_seconds - work) <= tol * work);
      ck_assert (fabs (m->check_seconds - whole) <= tol * whole);
      gc_result_free (m);
    }
  unsetenv ("GRADCHECK_PROFILE");
  char *plain = gc_report (sh[0], GC_FMT_JSON);
  ck_assert_ptr_null (strstr (plain, "\"calls\""));
  gc_result *r;
  ck_assert_int_eq (parse (plain, &r), GC_OK);
  for (int k = 0; k < 4; k++)
    ck_assert_uint_eq (r->n_calls[k], 0);
  gc_result_free (r);
  free (plain);
  for (size_t i = 0; i < SC; i++)
    {
      gc_result_free (sh[i]);
      gc_result_free (back[i]);
    }
  gct_free (t);
}
END_TEST

/* A stored verdict is not trusted: every direction is judged again from
   its analytic value, reference and terms.  */
START_TEST (test_merge_verdict_lie)
{
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (),
                                 gct_tanh_mutant ("dw-twice"));
  gc_options o;
  gc_options_init (&o);
  gc_result *whole = gct_check_ok (&t->model, t->x, &o);
  ck_assert_int_eq (whole->verdict, GC_FAIL);
  ck_assert_uint_gt (whole->n_failed, 0);
  static const char *const lies[] = { "\"verdict\":\"pass\"",
                                      "\"verdict\":\"non-smooth\"",
                                      "\"verdict\":\"error\"" };
  for (size_t k = 0; k < sizeof lies / sizeof *lies; k++)
    {
      char *s[2];
      for (size_t i = 0; i < 2; i++)
        {
          char *h = shard_json (&t->model, t->x, &o, i, 2);
          size_t n;
          s[i] = replaced_all (h, "\"verdict\":\"fail\"", lies[k], &n);
          ck_assert_uint_gt (n, 1);
          free (h);
        }
      gc_result *m;
      ck_assert_int_eq (merge_texts (s, 2, &m), GC_OK);
      ck_assert_int_eq (m->verdict, GC_FAIL);
      ck_assert_uint_eq (m->n_failed, whole->n_failed);
      ck_assert (same_double (m->worst_nu, whole->worst_nu));
      for (size_t q = 0; q < m->n_directions; q++)
        ck_assert_int_eq (m->dirs[q].verdict, whole->dirs[q].verdict);
      gc_result_free (m);
      free (s[0]);
      free (s[1]);
    }
  /* and a stored nu, bar or diff is recomputed too */
  char *h = shard_json (&t->model, t->x, &o, 0, 1);
  gc_result *one;
  ck_assert_int_eq (parse (h, &one), GC_OK);
  for (size_t q = 0; q < one->n_directions; q++)
    {
      one->dirs[q].nu = 0;
      one->dirs[q].diff = 0;
      one->dirs[q].bar = 1e300;
      one->dirs[q].verdict = GC_PASS;
    }
  gc_result *m;
  ck_assert_int_eq (gc_result_merge (&one, 1, &m), GC_OK);
  ck_assert_int_eq (m->verdict, GC_FAIL);
  assert_same_directions (whole, m);
  gc_result_free (m);
  gc_result_free (one);
  free (h);
  gc_result_free (whole);
  gct_free (t);
}
END_TEST

static int
failing_loss (void *ctx, const float *x, float *loss)
{
  (void) ctx;
  (void) x;
  (void) loss;
  return 7;
}

/* A check that could not run renders in TAP as one "Bail out!" line, with
   no plan and no skip before it.  */
START_TEST (test_tap_error)
{
  gct_model *t = gct_poly (3, gct_seed ());
  gc_model m = t->model;
  m.loss_f32 = failing_loss;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&m, t->x, NULL, &r), GC_ECALLBACK);
  ck_assert_ptr_nonnull (r);
  char *s = gc_report (r, GC_FMT_TAP);
  ck_assert_ptr_nonnull (s);
  ck_assert_msg (strncmp (s, "Bail out! ", 10) == 0, "TAP error: %s", s);
  ck_assert_int_eq (count_lines (s, ""), 1);
  ck_assert_ptr_null (strstr (s, "1.."));
  ck_assert_ptr_nonnull (strstr (s, gc_strerror (GC_ECALLBACK)));
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Shards of different checks are refused with GC_EMISMATCH: another step,
   a mutant beside the correct backward, another point x, another list of
   directions, an identity edited by hand.  */
START_TEST (test_merge_identity)
{
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (), 0);
  gct_model *mut = gct_tanh_gemm (2, 3, 2, gct_seed (),
                                   gct_tanh_mutant ("dw-twice"));
  gc_options o;
  gc_options_init (&o);
  char *s0 = shard_json (&t->model, t->x, &o, 0, 2);
  char *s1 = shard_json (&t->model, t->x, &o, 1, 2);
  ck_assert_ptr_nonnull (strstr (s0, "\"identity\":{\"version\":\""
                                 GC_VERSION_STRING "\""));
  gc_options os = o;
  os.step = 0x1p-10;
  char *step1 = shard_json (&t->model, t->x, &os, 1, 2);
  char *mut1 = shard_json (&mut->model, mut->x, &o, 1, 2);
  float *x2 = malloc (t->n * sizeof *x2);
  memcpy (x2, t->x, t->n * sizeof *x2);
  x2[t->n - 1] = nextafterf (x2[t->n - 1], INFINITY);
  char *x1 = shard_json (&t->model, x2, &o, 1, 2);
  char *cases[][2] = { { s0, step1 }, { s0, mut1 }, { s0, x1 } };
  const char *what[] = { "another step", "a mutant", "another x" };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    {
      gc_result *m;
      ck_assert_msg (merge_texts (cases[k], 2, &m) == GC_EMISMATCH,
                     "%s merged", what[k]);
      ck_assert_ptr_null (m);
    }
  /* a digest edited, or a field the digest covers */
  const char *xd = strstr (s1, "\"x_digest\":\"");
  ck_assert_ptr_nonnull (xd);
  char from[40], to[40];
  snprintf (from, sizeof from, "%.28s", xd);   /* "x_digest":" + 16 digits */
  snprintf (to, sizeof to, "%.27s%c", xd, xd[27] == '0' ? '1' : '0');
  char *ed[] = { replaced (s1, from, to),
                 replaced (s1, "\"step\":0.0", "\"step\":0.5"),
                 replaced (s1, "\"false_alarm\":", "\"false_alarm\":2e-6,\"x\":") };
  for (size_t k = 0; k < sizeof ed / sizeof *ed; k++)
    {
      char *pair[2] = { s0, ed[k] };
      gc_result *m;
      ck_assert_msg (merge_texts (pair, 2, &m) == GC_EMISMATCH, "edit %zu", k);
      free (ed[k]);
    }
  /* a lying n_total: shard 0 of 8 random directions (ids 0, 2, 4, 6)
     claims the 7 of a check whose shard 1 holds ids 1, 3, 5 */
  gc_options orand = o;
  orand.directions = GC_DIR_RANDOM;
  orand.n_random = 8;
  char *r8 = shard_json (&t->model, t->x, &orand, 0, 2);
  orand.n_random = 7;
  char *r7 = shard_json (&t->model, t->x, &orand, 1, 2);
  char *r8lie = replaced (r8, "\"n_total\":8,", "\"n_total\":7,");
  char *mix[2] = { r8lie, r7 };
  gc_result *m;
  ck_assert_int_eq (merge_texts (mix, 2, &m), GC_EMISMATCH);
  free (r8lie);
  free (r8);
  free (r7);

  /* another list of directions: ids 0 and 2 agree, 1 and 3 do not */
  gc_options ol = o;
  const size_t la[] = { 0, 1, 2, 3 }, lb[] = { 0, 1, 2, 5 };
  ol.directions = GC_DIR_LIST;
  ol.n_indices = 4;
  ol.indices = la;
  char *l0 = shard_json (&t->model, t->x, &ol, 0, 2);
  char *l1 = shard_json (&t->model, t->x, &ol, 1, 2);
  ol.indices = lb;
  char *l1b = shard_json (&t->model, t->x, &ol, 1, 2);
  char *good[2] = { l0, l1 }, *bad[2] = { l0, l1b };
  ck_assert_int_eq (merge_texts (good, 2, &m), GC_OK);
  gc_result_free (m);
  ck_assert_int_eq (merge_texts (bad, 2, &m), GC_EMISMATCH);
  /* the list edited in a shard file, digest kept */
  char *l1e = replaced (l1, "\"index\":3,", "\"index\":5,");
  char *edl[2] = { l0, l1e };
  ck_assert_int_eq (merge_texts (edl, 2, &m), GC_EMISMATCH);
  free (l1e);
  free (l0);
  free (l1);
  free (l1b);
  free (x2);
  free (x1);
  free (mut1);
  free (step1);
  free (s0);
  free (s1);
  gct_free (mut);
  gct_free (t);
}
END_TEST

static Suite *
report_suite (void)
{
  Suite *s = suite_create ("report");
  TCase *tc = tcase_create ("formats");
  tcase_add_test (tc, test_text_report);
  tcase_add_test (tc, test_json_report);
  tcase_add_test (tc, test_markdown_derivation);
  tcase_add_test (tc, test_tap_report);
  tcase_add_test (tc, test_param_names);
  tcase_add_test (tc, test_diagnosis_kinds);
  tcase_add_test (tc, test_diagnosis_sqrt_k);
  tcase_add_test (tc, test_diagnosis_shift);
  tcase_add_test (tc, test_check_helper);
  tcase_add_test (tc, test_untrusted_reports);
  tcase_add_test (tc, test_oracle_and_jvp_read_back);
  tcase_add_test (tc, test_hostile_names);
  tcase_add_test (tc, test_tap_error);
  tcase_add_test (tc, test_json_utf8);
  tcase_add_test (tc, test_json_strict);
  tcase_add_test (tc, test_json_nonfinite);
  tcase_add_test (tc, test_json_no_dirs);
  tcase_add_test (tc, test_merge_ids);
  tcase_add_test (tc, test_merge_verdict_lie);
  tcase_add_test (tc, test_merge_sums_calls);
  tcase_add_test (tc, test_merge_identity);
  suite_add_tcase (s, tc);
  /* localedef may build the locale first: about 2 s of CPU  */
  TCase *tl = tcase_create ("locale");
  tcase_set_timeout (tl, 60);
  tcase_add_test (tl, test_json_locale);
  suite_add_tcase (s, tl);
  /* the slow model's whole checks take a few seconds: beyond Check's 4 */
  TCase *tt = tcase_create ("timeout");
  tcase_set_timeout (tt, 120);
  tcase_add_test (tt, test_check_helper_timeout);
  suite_add_tcase (s, tt);
  return s;
}

/* The helper's failure path: run the failing test in a runner of its own
   and check that it fails with the report in its message.  */
static int
helper_failure_path (void)
{
  /* Check's TAP output must not mix into this program's: the environment
     variable would override srunner_set_tap.  */
  const char *tap = getenv ("CK_TAP_LOG_FILE_NAME");
  char *saved = tap ? strdup (tap) : NULL;
  unsetenv ("CK_TAP_LOG_FILE_NAME");
  Suite *s = suite_create ("helper");
  TCase *tc = tcase_create ("fails");
  tcase_add_test (tc, test_check_helper_message);
  tcase_add_test (tc, test_fails_as_other_kind);
  tcase_add_test (tc, test_fails_as_zero_region);
  tcase_add_test (tc, test_fails_as_on_a_pass);
  suite_add_tcase (s, tc);
  SRunner *sr = srunner_create (s);
  srunner_set_fork_status (sr, CK_FORK);
  srunner_run_all (sr, CK_SILENT);
  int ok = srunner_ntests_failed (sr) == 4;
  TestResult **tr = srunner_failures (sr);
  static const char *const want[4][2] = {
    { "expected verdict pass; got fail", "constant factor" },
    { "expected verdict fail with diagnosis sign-flip; got fail with "
      "diagnosis constant-factor", "diagnosis: constant factor" },
    { "expected verdict fail with diagnosis constant-factor; got fail with "
      "diagnosis zero-region", "zero" },
    { "expected verdict fail with diagnosis constant-factor; got pass with "
      "diagnosis none", "verdict: PASS" } };
  for (int k = 0; ok && tr && k < 4; k++)
    {
      const char *m = tr_msg (tr[k]);
      /* at the caller's line (Check's public ck_abort_msg expands there),
         with the report, in valid TAP.  The report is asserted by a line
         of its head: Check cuts a message at CK_MAX_MSG_SIZE, and how
         much of the tail survives depends on the host (under valgrind,
         which keeps no directed rounding mode, the rounding note adds
         lines and the derivation is cut).  */
      ok = strstr (m, want[k][0]) == m && strstr (m, want[k][1])
           && strstr (tr_lfile (tr[k]), "check_report.c")
           && tap_continued (m);
      if (!ok)
        fprintf (stderr, "helper failure %d: %s:%d: %.300s\n", k,
                 tr_lfile (tr[k]), tr_lno (tr[k]), m);
    }
  free (tr);
  srunner_free (sr);
  if (saved)
    setenv ("CK_TAP_LOG_FILE_NAME", saved, 1);
  free (saved);
  return ok;
}

int
main (void)
{
  if (!helper_failure_path ())
    {
      printf ("1..1\nnot ok 1 - gc_ck_assert_gradient fails with the report\n");
      return EXIT_FAILURE;
    }
  return gct_run (report_suite ());
}
