/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_alloc.c -- every allocation failure path: a small check is run
   with the Nth allocation failing, for every N until the check runs
   through; each run must end with a clear status (GC_ENOMEM, or
   GC_ECALLBACK when a model's own allocation failed), never a crash, and
   (under valgrind in CI) never a leak.  The same for reports, derivations,
   the forward oracle, reading reports back and merging shards.  */

#include "gctest.h"
#include "failalloc.h"

#include <stdlib.h>
#include <string.h>

/* The loops below run a call with the Nth allocation failing, for N = 1,
   2, ... until the call completes without reaching the failure.  The hook
   is disarmed before any assertion (Check allocates too).  */
static bool
disarm (size_t n)
{
  size_t used = gct_failalloc_count ();
  gct_failalloc_arm (0);
  return used < n;     /* the call completed before the Nth allocation */
}

static gct_model *model;

static void
setup (void)
{
  if (!gct_failalloc_active ())
    return;
  model = gct_tanh_gemm (2, 3, 2, 1, 0);
}

static void
teardown (void)
{
  gct_free (model);
  model = NULL;
}

/* A run that met a failed allocation ends with GC_ENOMEM, GC_ECALLBACK (a
   model's own allocation failed), or GC_OK where a fallback absorbed it
   (the models' MPFR cache) -- and then with the very result of a run with
   no failure.  */
static void
check_outcome (gc_status st, const gc_result *r, const gc_result *want)
{
  ck_assert_msg (st == GC_OK || st == GC_ENOMEM || st == GC_ECALLBACK,
                 "status %s after a failed allocation", gc_strerror (st));
  if (r)
    ck_assert_int_eq (r->status, st);
  if (st != GC_OK)
    return;
  ck_assert_ptr_nonnull (r);
  ck_assert_uint_eq (r->n_directions, want->n_directions);
  for (size_t k = 0; k < r->n_directions; k++)
    {
      ck_assert (r->dirs[k].analytic == want->dirs[k].analytic);
      ck_assert (r->dirs[k].reference == want->dirs[k].reference);
      ck_assert (r->dirs[k].bar == want->dirs[k].bar);
    }
}

START_TEST (test_gc_check)
{
  if (!model)
    return;   /* the hook is absent (AddressSanitizer owns malloc) */
  static const gc_reference refs[] = { GC_REF_MPFR, GC_REF_F32, GC_REF_F64 };
  gc_options o;
  gc_options_init (&o);
  o.reference = refs[_i % 3];
  if (_i >= 3)
    {
      o.directions = GC_DIR_RANDOM;
      o.n_random = 2;
    }
  gc_result *want = NULL;
  ck_assert_int_eq (gc_check (&model->model, model->x, &o, &want), GC_OK);
  size_t n;
  for (n = 1;; n++)
    {
      gc_result *r = NULL;
      gct_failalloc_arm (n);
      gc_status st = gc_check (&model->model, model->x, &o, &r);
      bool complete = disarm (n);
      if (complete)
        ck_assert_int_eq (st, GC_OK);
      else
        check_outcome (st, r, want);
      gc_result_free (r);
      if (complete)
        break;
    }
  ck_assert_uint_gt (n, 10);
  fprintf (stderr, "# gc_check (%d): %zu allocation failures provoked\n", _i, n - 1);
  gc_result_free (want);
}
END_TEST

START_TEST (test_reports)
{
  if (!model)
    return;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&model->model, model->x, NULL, &r), GC_OK);
  for (int f = GC_FMT_TEXT; f <= GC_FMT_TAP; f++)
    for (size_t n = 1;; n++)
      {
        gct_failalloc_arm (n);
        char *s = gc_report (r, (gc_format) f);
        bool complete = disarm (n);
        ck_assert (complete ? s != NULL : s == NULL);
        free (s);
        if (complete)
          break;
      }
  for (size_t n = 1;; n++)
    {
      gct_failalloc_arm (n);
      char *s = gc_derivation (r, 1, GC_FMT_MARKDOWN);
      bool complete = disarm (n);
      ck_assert (complete ? s != NULL : s == NULL);
      free (s);
      if (complete)
        break;
    }
  /* reading a report back, and merging */
  char *json = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (json);
  for (size_t n = 1;; n++)
    {
      gc_result *back = NULL;
      gct_failalloc_arm (n);
      gc_status st = gc_result_parse_json (json, strlen (json), &back);
      bool complete = disarm (n);
      /* a failed allocation inside Jansson is absorbed by a second parse
         (GC_OK, and then the very result), or reported as GC_ENOMEM  */
      if (complete)
        ck_assert_int_eq (st, GC_OK);
      else
        ck_assert_msg (st == GC_ENOMEM || st == GC_OK, "status %s",
                       gc_strerror (st));
      ck_assert (st == GC_OK ? back != NULL : back == NULL);
      if (back)
        check_outcome (st, back, r);
      gc_result_free (back);
      if (complete)
        break;
    }
  gc_result *shards[1] = { r };
  for (size_t n = 1;; n++)
    {
      gc_result *m = NULL;
      gct_failalloc_arm (n);
      gc_status st = gc_result_merge (shards, 1, &m);
      bool complete = disarm (n);
      ck_assert_int_eq (st, complete ? GC_OK : GC_ENOMEM);
      gc_result_free (m);
      if (complete)
        break;
    }
  free (json);
  gc_result_free (r);
}
END_TEST

START_TEST (test_forward_oracle)
{
  if (!gct_failalloc_active ())
    return;
  const gcm_spec *spec = gcm_find ("kda");
  long v[GCM_MAX_KEYS];
  char err[64];
  ck_assert_int_eq (gcm_parse_shape (spec, "T=3,H=1,HV=1,K=2,V=2,BT=2", v,
                                     err, sizeof err), GC_OK);
  gcm_instance *inst = NULL;
  ck_assert_int_eq (gcm_create (spec, v, 1, 0, &inst), GC_OK);
  gc_result *want = NULL;
  ck_assert_int_eq (gc_forward_check (&inst->model, inst->x, NULL, &want),
                    GC_OK);
  for (size_t n = 1;; n++)
    {
      gc_result *r = NULL;
      gct_failalloc_arm (n);
      gc_status st = gc_forward_check (&inst->model, inst->x, NULL, &r);
      bool complete = disarm (n);
      if (!complete)
        check_outcome (st, r, want);
      else
        ck_assert_int_eq (st, GC_OK);
      gc_result_free (r);
      if (complete)
        break;
    }
  gc_result_free (want);
  /* the gradient check of a model with the incremental MPFR reference,
     whose cache is built at the first call: a failure there falls back to
     full recurrences  */
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 1;
  ck_assert_int_eq (gc_check (&inst->model, inst->x, &o, &want), GC_OK);
  gcm_destroy (inst);
  for (size_t n = 1;; n++)
    {
      ck_assert_int_eq (gcm_create (spec, v, 1, 0, &inst), GC_OK);
      gc_result *r = NULL;
      gct_failalloc_arm (n);
      gc_status st = gc_check (&inst->model, inst->x, &o, &r);
      bool complete = disarm (n);
      if (!complete)
        check_outcome (st, r, want);
      else
        ck_assert_int_eq (st, GC_OK);
      gc_result_free (r);
      gcm_destroy (inst);
      if (complete)
        break;
    }
  gc_result_free (want);
}
END_TEST

/* The hook itself: when active, it fails exactly the Nth allocation.  */
START_TEST (test_hook)
{
  if (!gct_failalloc_active ())
    {
      printf ("# the failing-allocation hook is absent in this build "
              "(AddressSanitizer owns malloc)\n");
      return;
    }
  gct_failalloc_arm (3);
  void *a = malloc (8), *b = malloc (8), *c = malloc (8), *d = malloc (8);
  gct_failalloc_arm (0);
  ck_assert_ptr_nonnull (a);
  ck_assert_ptr_nonnull (b);
  ck_assert_ptr_null (c);
  ck_assert_ptr_nonnull (d);
  free (a);
  free (b);
  free (d);
}
END_TEST

static Suite *
alloc_suite (void)
{
  Suite *s = suite_create ("alloc");
  TCase *tc = tcase_create ("every allocation");
  tcase_set_timeout (tc, 600);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_hook);
  tcase_add_loop_test (tc, test_gc_check, 0, 6);
  tcase_add_test (tc, test_reports);
  tcase_add_test (tc, test_forward_oracle);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (alloc_suite ());
}
