/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_report.c -- reports (text, JSON, Markdown, TAP), derivations,
   parameter names, the diagnosis, and the Check helper header.  */

#include "gctest.h"
#include "gradcheck-check.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Names come from plugins and shard files: a result whose model, block,
   diagnosis and detail strings carry new lines, TAP test points, a TAP
   directive and terminal escapes renders without any of them.  */
START_TEST (test_hostile_names)
{
  gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed (),
                                 gct_tanh_mutant ("dw-twice"));
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  ck_assert_int_eq (r->verdict, GC_FAIL);
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
        ck_assert_int_eq (count_lines (s, "#"), 4);
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
  tcase_add_test (tc, test_hostile_names);
  tcase_add_test (tc, test_tap_error);
  suite_add_tcase (s, tc);
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
      "diagnosis constant-factor", "adjoint rounding" },
    { "expected verdict fail with diagnosis constant-factor; got fail with "
      "diagnosis zero-region", "zero" },
    { "expected verdict fail with diagnosis constant-factor; got pass with "
      "diagnosis none", "verdict: PASS" } };
  for (int k = 0; ok && tr && k < 4; k++)
    {
      const char *m = tr_msg (tr[k]);
      /* at the caller's line (Check's public ck_abort_msg expands there),
         with the report, in valid TAP  */
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
