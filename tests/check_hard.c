/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_hard.c -- the catalogue of hard correct models and their buggy
   twins (tests/hard/): every correct model passes over 20 seeds, every
   twin fails or is inconclusive, never passes.  Also the verdict
   machinery those cases rest on (inconclusive directions, the resolution
   summary).  */

#include "gctest.h"
#include "hard/hard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEEDS 20

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The twin of the subnormal-gradient model doubles a gradient that the
   128-bit reference cannot see (its difference is 0): that passed; it must
   never pass now (manual: "Inconclusive directions").  */
START_TEST (test_subnormal_twin_never_passes)
{
  for (uint64_t s = 0; s < gct_seeds (SEEDS); s++)
    {
      hard_model *h = hard_new (HARD_SUBNORMAL, 8, gct_seed () + s, true);
      ck_assert_ptr_nonnull (h);
      gc_result *r = gct_check_ok (&h->model, h->x, NULL);
      ck_assert_msg (r->verdict == GC_FAIL || r->verdict == GC_INCONCLUSIVE,
                     "seed %llu: the twin's verdict is %s",
                     (unsigned long long) (gct_seed () + s),
                     gc_verdict_name (r->verdict));
      gc_result_free (r);
      hard_free (h);
    }
}
END_TEST

/* The summary's counts and resolution distribution agree with the
   directions themselves (median from a sorted copy), and the text and TAP
   reports name an inconclusive check as such.  */
START_TEST (test_resolution_summary)
{
  hard_model *h = hard_new (HARD_SUBNORMAL, 8, gct_seed (), true);
  ck_assert_ptr_nonnull (h);
  gc_result *r = gct_check_ok (&h->model, h->x, NULL);
  size_t n = r->n_directions, inc = 0, coarse = 0, blind = 0;
  double *res = malloc (n * sizeof *res);
  ck_assert_ptr_nonnull (res);
  for (size_t k = 0; k < n; k++)
    {
      const gc_direction *d = &r->dirs[k];
      res[k] = d->resolution;
      inc += d->verdict == GC_INCONCLUSIVE;
      coarse += d->resolution > 1e-3;
      blind += d->resolution >= 1;
      /* inconclusive exactly where a pass could not see a 100% error */
      ck_assert_int_eq (d->verdict == GC_INCONCLUSIVE,
                        d->nu <= 1 && !(d->resolution < 1));
    }
  qsort (res, n, sizeof *res, cmp_double);
  double median = n % 2 ? res[n / 2] : (res[n / 2 - 1] + res[n / 2]) / 2;
  ck_assert_uint_eq (r->n_inconclusive, inc);
  ck_assert_uint_eq (r->n_resolution_coarse, coarse);
  ck_assert_uint_eq (r->n_resolution_blind, blind);
  ck_assert (r->resolution_median == median);
  ck_assert (r->resolution_worst == res[n - 1]);
  ck_assert (r->dirs[r->blindest].resolution == res[n - 1]);
  if (inc && r->n_failed == 0)
    {
      ck_assert_int_eq (r->verdict, GC_INCONCLUSIVE);
      char *t = gc_report (r, GC_FMT_TEXT);
      char *tap = gc_report (r, GC_FMT_TAP);
      ck_assert_ptr_nonnull (t);
      ck_assert_ptr_nonnull (tap);
      ck_assert_ptr_nonnull (strstr (t, "verdict: INCONCLUSIVE"));
      ck_assert_ptr_nonnull (strstr (t, "\nresolution: median "));
      ck_assert_ptr_nonnull (strstr (tap, "# TODO inconclusive"));
      ck_assert_ptr_nonnull (strstr (tap, "\n# verdict: inconclusive\n"));
      free (t);
      free (tap);
    }
  free (res);
  gc_result_free (r);
  hard_free (h);
}
END_TEST

static Suite *
hard_suite (void)
{
  Suite *s = suite_create ("hard");
  TCase *tc = tcase_create ("catalogue");
  tcase_set_timeout (tc, 600);
  tcase_add_test (tc, test_subnormal_twin_never_passes);
  tcase_add_test (tc, test_resolution_summary);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (hard_suite ());
}
