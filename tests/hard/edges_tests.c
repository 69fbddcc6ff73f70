/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* edges_tests.c -- check_hard's cases of issue 24 round 3 (edges.h): the
   tiered reference against MPFR, rounding the IEEE modes do not reach,
   f32 mode's verdicts, domain edges, M_L.  Every correct model: no FAIL,
   NON-SMOOTH or PRECISION, no error status; every twin: no PASS; in
   --ref auto and --ref mpfr (and --ref f32 where the kind is f32 mode's).  */

#include "gctest.h"
#include "edges.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void edges_add_tests (Suite *s);

static const gc_reference both_refs[2] = { GC_REF_AUTO, GC_REF_MPFR };

/* gc_check of KIND's model (its twin when TWIN) at SEED under REF; the
   SQRT kind's small element at STEPS default steps from 0.  */
static gc_result *
edge_check (edge_model *e, gc_reference ref, double steps)
{
  gc_options o;
  gc_options_init (&o);
  o.reference = ref;
  if (e->kind == EDGE_SQRT)
    {
      /* the step exponent of this reference, from a check at a safe
         point (the exponent depends on the reference and precision only) */
      edge_set_steps (e, 100, 0);
      gc_result *r0 = gct_check_ok (&e->model, e->x, &o);
      long ex = r0->step_exponent;
      gc_result_free (r0);
      edge_set_steps (e, steps, ex);
    }
  gc_result *r = NULL;
  gc_status st = gc_check (&e->model, e->x, &o, &r);
  char *t = r ? gc_report (r, GC_FMT_TEXT) : NULL;
  ck_assert_msg (st == GC_OK, "%s%s under %s: status %s (%s)\n%s",
                 edge_name (e->kind), e->twin ? " twin" : "",
                 gc_reference_name (ref), gc_strerror (st),
                 r ? r->detail : "", t ? t : "");
  free (t);
  /* a report read back and merged judges as the check did */
  char *json = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (json);
  gc_result *back = NULL, *mg = NULL;
  ck_assert_int_eq (gc_result_parse_json (json, strlen (json), &back), GC_OK);
  ck_assert_int_eq (gc_result_merge (&back, 1, &mg), GC_OK);
  for (size_t k = 0; k < r->n_directions; k++)
    ck_assert_msg (mg->dirs[k].verdict == r->dirs[k].verdict,
                   "%s%s under %s, direction %zu: merged %s, checked %s",
                   edge_name (e->kind), e->twin ? " twin" : "",
                   gc_reference_name (ref), k,
                   gc_verdict_name (mg->dirs[k].verdict),
                   gc_verdict_name (r->dirs[k].verdict));
  ck_assert_int_eq (mg->verdict, r->verdict);
  ck_assert_uint_eq (mg->n_unreached, r->n_unreached);
  gc_result_free (mg);
  gc_result_free (back);
  free (json);
  return r;
}

/* The honest-verdict property: a correct model is not FAIL, NON-SMOOTH
   or PRECISION; a twin whose bug changes the gradient at x is not
   PASS.  */
static void
assert_honest (edge_model *e, const gc_result *r, uint64_t seed)
{
  bool ok = e->twin ? r->verdict != GC_PASS || !edge_bug_has_effect (e)
                    : r->verdict == GC_PASS || r->verdict == GC_INCONCLUSIVE;
  if (!ok)
    {
      char *t = gc_report (r, GC_FMT_TEXT);
      ck_abort_msg ("%s%s under %s, seed %llu: %s\n%s", edge_name (e->kind),
                    e->twin ? " twin" : "", gc_reference_name (r->reference),
                    (unsigned long long) seed, gc_verdict_name (r->verdict),
                    t);
    }
}

/* Manual: "A kink only f64 sees".  The tiered reference gives MPFR's
   verdict in every direction: over many seeds of the relu whose branch
   is an f32 rounding (and its twin), and a few of every other kind that
   both references judge.  */
START_TEST (test_tier_is_mpfr)
{
  for (int k = 0; k < EDGE_N_KINDS; k++)
    {
      if (k == EDGE_SQRT)
        continue;   /* its point depends on the reference's step */
      uint64_t n_seeds = gct_seeds (k == EDGE_RELU_ROUNDED ? 40 : 3);
      for (uint64_t s = 0; s < n_seeds; s++)
        for (int twin = 0; twin < 2; twin++)
          {
            uint64_t seed = gct_seed () + s;
            edge_model *e = edge_new (k, 8, seed, twin);
            ck_assert_ptr_nonnull (e);
            gc_result *ra = edge_check (e, GC_REF_AUTO, 0);
            gc_result *rm = edge_check (e, GC_REF_MPFR, 0);
            ck_assert_uint_eq (ra->n_directions, rm->n_directions);
            for (size_t j = 0; j < ra->n_directions; j++)
              ck_assert_msg (ra->dirs[j].verdict == rm->dirs[j].verdict,
                             "%s%s seed %llu direction %zu: auto %s "
                             "(decided by %s), mpfr %s", edge_name (k),
                             twin ? " twin" : "", (unsigned long long) seed,
                             j, gc_verdict_name (ra->dirs[j].verdict),
                             gc_reference_name (ra->dirs[j].decided_by),
                             gc_verdict_name (rm->dirs[j].verdict));
            ck_assert_int_eq (ra->verdict, rm->verdict);
            assert_honest (e, ra, seed);
            gc_result_free (ra);
            gc_result_free (rm);
            edge_free (e);
          }
    }
}
END_TEST

/* Manual: "Rounding the modes do not reach".  The stagnating sum on a
   pool thread, no twin: every spread 0, a failure within gamma_d is
   inconclusive and the report says why; the twin (one element doubled,
   far beyond gamma_d) fails.  */
START_TEST (test_pool_unreached)
{
  for (int q = 0; q < 2; q++)
    for (int twin = 0; twin < 2; twin++)
      {
        edge_model *e = edge_new (EDGE_POOL, 8, gct_seed (), twin);
        ck_assert_ptr_nonnull (e);
        gc_result *r = edge_check (e, both_refs[q], 0);
        ck_assert (r->rounding_modes > 0 && r->depth_implied_at == SIZE_MAX);
        char *t = gc_report (r, GC_FMT_TEXT);
        if (twin)
          ck_assert_msg (r->verdict == GC_FAIL, "%s", t);
        else
          {
            /* the stagnation is real: C rounds to 1 */
            ck_assert (r->dirs[0].analytic == 1.0);
            ck_assert_msg (r->verdict == GC_INCONCLUSIVE
                           && r->n_unreached == r->n_directions, "%s", t);
            ck_assert_ptr_nonnull (strstr (t, "failure(s) within the "
                                           "worst-case bar gamma_d are "
                                           "INCONCLUSIVE"));
            ck_assert_ptr_null (strstr (t, "UNSUPPORTED"));
          }
        free (t);
        gc_result_free (r);
        edge_free (e);
      }
}
END_TEST

/* Manual: "What f32 mode cannot judge".  Under --ref f32 no correct
   model of the f32-mode kinds fails or is non-smooth, no twin passes; the
   withdrawn verdicts are unconfirmed (level -1) and say so.  */
START_TEST (test_f32_mode)
{
  static const edge_kind kinds[] = { EDGE_RELU_ROUNDED, EDGE_SOFTMAX_CE,
                                     EDGE_WIDE, EDGE_SINC, EDGE_POLY,
                                     EDGE_EXPEXP, EDGE_KNEE };
  size_t unconfirmed = 0;
  for (size_t q = 0; q < sizeof kinds / sizeof *kinds; q++)
    for (uint64_t s = 0; s < gct_seeds (4); s++)
      for (int twin = 0; twin < 2; twin++)
        {
          uint64_t seed = gct_seed () + s;
          edge_model *e = edge_new (kinds[q], 8, seed, twin);
          ck_assert_ptr_nonnull (e);
          gc_result *r = edge_check (e, GC_REF_F32, 0);
          assert_honest (e, r, seed);
          for (size_t k = 0; k < r->n_directions; k++)
            if (r->dirs[k].level < 0)
              {
                ck_assert_int_eq (r->dirs[k].verdict, GC_INCONCLUSIVE);
                unconfirmed++;
              }
          if (kinds[q] == EDGE_SOFTMAX_CE && s == 0)
            {
              char *t = gc_report (r, GC_FMT_TEXT);
              ck_assert_msg (strstr (t, "unconfirmed  f32 mode has no finer "
                                     "step"), "%s", t);
              free (t);
            }
          gc_result_free (r);
          /* the same model under --ref mpfr is judged at finer steps */
          if (kinds[q] != EDGE_RELU_ROUNDED)
            {
              r = edge_check (e, GC_REF_MPFR, 0);
              assert_honest (e, r, seed);
              gc_result_free (r);
            }
          edge_free (e);
        }
  ck_assert_uint_gt (unconfirmed, 0);
}
END_TEST

/* Manual: "What f64 mode cannot judge".  Under --ref f64 (the reference
   from Python and Rust) a tensor whose values span 1e-8 to 1e8 took a
   step of 2^7 from its rms at its 1e-8 element, the difference quotient
   aliased to 1e-12, and the correct model failed as a logic error (a new
   user's trial): its failures in doubt of aliasing are evaluated at h /
   2^8, and where the two quotients disagree withdrawn to INCONCLUSIVE,
   unconfirmed.  No correct model of these kinds fails, no bug that
   changes the gradient passes; a max-pool's bug whose reference is
   exactly 0 (which no finer step changes) still fails.  */
START_TEST (test_f64_mode)
{
  static const edge_kind kinds[] = { EDGE_WIDE, EDGE_SOFTMAX_CE, EDGE_SINC,
                                     EDGE_POLY, EDGE_EXPEXP, EDGE_MAXPOOL };
  size_t unconfirmed = 0;
  for (size_t q = 0; q < sizeof kinds / sizeof *kinds; q++)
    for (uint64_t s = 0; s < gct_seeds (4); s++)
      for (int twin = 0; twin < 2; twin++)
        {
          uint64_t seed = gct_seed () + s;
          edge_model *e = edge_new (kinds[q], kinds[q] == EDGE_MAXPOOL ? 32
                                              : 8, seed, twin);
          ck_assert_ptr_nonnull (e);
          if (kinds[q] == EDGE_MAXPOOL)
            edge_add_twin (e);
          gc_result *r = edge_check (e, GC_REF_F64, 0);
          printf ("# f64 mode: %s%s seed %llu: %s\n", edge_name (kinds[q]),
                  twin ? " twin" : "", (unsigned long long) seed,
                  gc_verdict_name (r->verdict));
          /* no correct model fails (a structure finer than the step may
             still read non-smooth: its one-sided derivatives do differ
             at that step), no bug that changes the gradient passes */
          bool ok = twin ? r->verdict != GC_PASS || !edge_bug_has_effect (e)
                         : r->verdict != GC_FAIL
                           && r->verdict != GC_PRECISION;
          if (!ok)
            {
              char *t = gc_report (r, GC_FMT_TEXT);
              ck_abort_msg ("%s%s under f64, seed %llu: %s\n%s",
                            edge_name (kinds[q]), twin ? " twin" : "",
                            (unsigned long long) seed,
                            gc_verdict_name (r->verdict), t);
            }
          for (size_t k = 0; k < r->n_directions; k++)
            if (r->dirs[k].level < 0)
              {
                ck_assert_int_eq (r->dirs[k].verdict, GC_INCONCLUSIVE);
                unconfirmed++;
              }
          if (kinds[q] == EDGE_WIDE && s == 0 && !twin)
            {
              char *t = gc_report (r, GC_FMT_TEXT);
              ck_assert_msg (strstr (t, "unconfirmed  f64's step does not "
                                     "resolve this direction: h / 2^8 "),
                             "%s", t);
              free (t);
            }
          if (kinds[q] == EDGE_MAXPOOL && twin)
            ck_assert_int_eq (r->verdict, GC_FAIL);
          gc_result_free (r);
          edge_free (e);
        }
  ck_assert_uint_gt (unconfirmed, 0);
}
END_TEST

/* Manual: "Domain edges".  sqrt with one element 1.5, 0.6 and 0.2 first
   steps from 0: the check's step leaves the domain, a finer one does not;
   no error status, no failure of the correct model, no pass of the twin,
   in every reference.  */
START_TEST (test_domain_edge)
{
  static const double steps[] = { 1.5, 0.6, 0.2 };
  static const gc_reference refs[] = { GC_REF_AUTO, GC_REF_MPFR,
                                       GC_REF_F32 };
  for (size_t q = 0; q < 3; q++)
    for (size_t k = 0; k < 3; k++)
      for (int twin = 0; twin < 2; twin++)
        {
          uint64_t seed = gct_seed () + q;
          edge_model *e = edge_new (EDGE_SQRT, 8, seed, twin);
          ck_assert_ptr_nonnull (e);
          gc_result *r = edge_check (e, refs[k], steps[q]);
          /* the small element's stencil is inside the domain */
          const gc_direction *d = &r->dirs[e->n - 1];
          ck_assert (2 * d->step < e->x[e->n - 1]);
          assert_honest (e, r, seed);
          gc_result_free (r);
          edge_free (e);
        }
}
END_TEST

/* Manual: "The loss magnitude".  M_L declared 1000 times the honest
   magnitude: the f32 reference forward's spread contradicts it, the
   report says so and what it supports, and no twin passes on it; a
   defaulted M_L on a small difference of large terms is raised to what
   the spread shows, and the correct model is not failed.  */
START_TEST (test_loss_magnitude)
{
  static const gc_reference refs[] = { GC_REF_F32, GC_REF_AUTO,
                                       GC_REF_MPFR };
  for (uint64_t s = 0; s < gct_seeds (3); s++)
    for (size_t q = 0; q < 3; q++)
      for (int twin = 0; twin < 2; twin++)
        {
          uint64_t seed = gct_seed () + s;
          edge_model *e = edge_new (EDGE_POLY, 8, seed, twin);
          ck_assert_ptr_nonnull (e);
          edge_declare_ml (e, 1000);
          gc_result *r = edge_check (e, refs[q], 0);
          assert_honest (e, r, seed);
          if (refs[q] == GC_REF_F32)
            {
              /* fewer than one rounding of the declared M_L */
              ck_assert (r->forward_depth_implied < 1);
              ck_assert (r->loss_magnitude_supported > 0
                         && r->loss_magnitude_supported
                            < r->loss_magnitude / 10);
              char *t = gc_report (r, GC_FMT_TEXT);
              ck_assert_msg (strstr (t, "UNSUPPORTED: the declared M_L"),
                             "%s", t);
              free (t);
            }
          gc_result_free (r);
          edge_free (e);
          e = edge_new (EDGE_CANCEL, 8, seed, twin);
          ck_assert_ptr_nonnull (e);
          r = edge_check (e, refs[q], 0);
          assert_honest (e, r, seed);
          if (refs[q] == GC_REF_F32)
            {
              /* S_L / (2 d_f u) is far above |L|: the terms are 2^14 */
              ck_assert (r->loss_magnitude_raised);
              ck_assert (r->loss_magnitude > 100 * fabs (r->loss_f32));
            }
          gc_result_free (r);
          edge_free (e);
        }
}
END_TEST

/* A max-pool with its twin, correct and with the selection bug: no
   report format prints a NaN ratio (the unselected inputs' reference is
   0), in every reference.  */
START_TEST (test_maxpool_no_nan)
{
  static const gc_reference refs[] = { GC_REF_AUTO, GC_REF_MPFR,
                                       GC_REF_F32 };
  static const gc_format fmts[] = { GC_FMT_TEXT, GC_FMT_MARKDOWN,
                                    GC_FMT_TAP };
  for (size_t q = 0; q < 3; q++)
    for (int twin = 0; twin < 2; twin++)
      {
        uint64_t seed = gct_seed () + q;
        edge_model *e = edge_new (EDGE_MAXPOOL, 32, seed, twin);
        ck_assert_ptr_nonnull (e);
        edge_add_twin (e);
        gc_result *r = edge_check (e, refs[q], 0);
        assert_honest (e, r, seed);
        for (size_t f = 0; f < 3; f++)
          {
            char *t = gc_report (r, fmts[f]);
            ck_assert_ptr_nonnull (t);
            ck_assert_msg (!strstr (t, "nan") && !strstr (t, "NaN"), "%s",
                           t);
            free (t);
          }
        gc_result_free (r);
        edge_free (e);
      }
}
END_TEST

void
edges_add_tests (Suite *s)
{
  TCase *tc = tcase_create ("edges");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, test_tier_is_mpfr);
  tcase_add_test (tc, test_pool_unreached);
  tcase_add_test (tc, test_f32_mode);
  tcase_add_test (tc, test_f64_mode);
  tcase_add_test (tc, test_domain_edge);
  tcase_add_test (tc, test_loss_magnitude);
  tcase_add_test (tc, test_maxpool_no_nan);
  suite_add_tcase (s, tc);
}
