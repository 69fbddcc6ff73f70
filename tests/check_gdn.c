/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_gdn.c -- the padded-scratch gated-delta op.

   The correct backward passes for T in {1, BT-1, BT, BT+1, 37, 69}, BT in
   {4, 16}, mild and strong gates, 20 seeds, MPFR and f32 references; every
   mutant fails; the chunked f32 forward agrees with the MPFR recurrence
   within its derived budget.  This program runs under whatever OpenBLAS
   kernel it gets; tests/kernels.sh runs it under every kernel the CPU
   runs.  */

#include "gctest.h"
#include "gradcheck-check.h"

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KB, KT, KH, KK, KV, KBT, KNORM, KSIG, KGATE, KLOSS, NKEYS };

static gcm_instance *
make (long T, long BT, long gate, long norm, long sig, uint64_t seed,
      int mutant)
{
  const gcm_spec *spec = gcm_find ("gdn");
  long v[GCM_MAX_KEYS];
  char err[128];
  ck_assert_int_eq (gcm_parse_shape (spec, "", v, err, sizeof err), GC_OK);
  v[KB] = 1;
  v[KT] = T;
  v[KH] = 1;
  v[KK] = 4;
  v[KV] = 4;
  v[KBT] = BT;
  v[KNORM] = norm;
  v[KSIG] = sig;
  v[KGATE] = gate;
  gcm_instance *inst = NULL;
  ck_assert_int_eq (gcm_create (spec, v, seed, mutant, &inst), GC_OK);
  return inst;
}

static const long Ts[] = { 1, -1, 0, 1, 37, 69 };   /* -1, 0, +1: BT-1, BT, BT+1 */

static long
t_of (int k, long BT)
{
  return k == 0 ? 1 : k <= 3 ? BT + Ts[k] : Ts[k];
}

/* Loop index: T (6) x BT (2) x gate (2).  */
START_TEST (test_correct_passes)
{
  int ti = _i % 6, bi = (_i / 6) % 2, gate = _i / 12;
  long BT = bi ? 16 : 4, T = t_of (ti, BT);
  for (uint64_t s = 0; s < gct_seeds (20); s++)
    for (int ref = 0; ref < 2; ref++)
      {
        uint64_t seed = gct_seed () + s;
        gcm_instance *inst = make (T, BT, gate, 1, 1, seed, 0);
        gc_options o;
        gc_options_init (&o);
        o.reference = ref ? GC_REF_F32 : GC_REF_MPFR;
        o.directions = GC_DIR_RANDOM;
        o.n_random = 6;
        o.seed = seed;
        gc_result *r = NULL;
        gc_status st = gc_check (&inst->model, inst->x, &o, &r);
        /* No false alarm.  An f32 reference may be blind on some
           directions (resolution >= 1): inconclusive, never a failure
           (manual: "Inconclusive directions").  */
        ck_assert_msg (st == GC_OK && (r->verdict == GC_PASS
                                       || (ref && r->verdict
                                           == GC_INCONCLUSIVE)),
                       "T=%ld BT=%ld gate=%d seed=%llu ref=%s: %s, worst nu "
                       "%g", T, BT, gate, (unsigned long long) seed,
                       ref ? "f32" : "mpfr", st ? gc_strerror (st)
                       : gc_verdict_name (r->verdict), r ? r->worst_nu : 0);
        /* The chunked f32 forward agrees with the MPFR recurrence within the
           derived budget, at x and at every stencil point measured.  */
        if (ref)
          ck_assert_msg (r->forward_error_ulps <= r->forward_budget_ulps,
                         "T=%ld BT=%ld: forward off by %g ulp, budget %g",
                         T, BT, r->forward_error_ulps, r->forward_budget_ulps);
        gc_result_free (r);
        gcm_destroy (inst);
      }
}
END_TEST

/* Every coordinate, at a padded shape, and the raw (layer-free) forms.  */
START_TEST (test_correct_all_coordinates)
{
  static const long forms[][2] = { { 1, 1 }, { 0, 1 }, { 1, 0 }, { 0, 0 } };
  gcm_instance *inst = make (9, 4, _i % 2, forms[_i][0], forms[_i][1],
                             gct_seed (), 0);
  gc_ck_assert_gradient (&inst->model, inst->x, NULL);
  gcm_destroy (inst);
}
END_TEST

/* Every mutant fails in MPFR mode, every coordinate, at T = BT + 1 (one
   padded chunk) and T = 37 with BT = 16, mild and strong gates.  */
START_TEST (test_mutants_fail_mpfr)
{
  const gcm_spec *spec = gcm_find ("gdn");
  int mutant = 1 + _i % (int) spec->n_mutants;
  int cfg = _i / (int) spec->n_mutants;
  /* a tangent's bug is not the backward's: tests/check_higher.c */
  if (spec->mutants[mutant - 1].only)
    return;
  long BT = cfg % 2 ? 16 : 4, T = cfg % 2 ? 37 : BT + 1, gate = cfg / 2;
  gcm_instance *inst = make (T, BT, gate, 1, 1, gct_seed (), mutant);
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&inst->model, inst->x, NULL, &r), GC_OK);
  /* a precision-only mutant is caught as what it is (manual: "The f64
     twin") */
  gc_verdict want = spec->mutants[mutant - 1].precision ? GC_PRECISION
                    : GC_FAIL;
  ck_assert_msg (r->verdict == want, "mutant %s: %s at T=%ld BT=%ld "
                 "gate=%ld (worst nu %g), not %s",
                 spec->mutants[mutant - 1].name,
                 gc_verdict_name (r->verdict), T, BT, gate, r->worst_nu,
                 gc_verdict_name (want));
  gc_result_free (r);
  gcm_destroy (inst);
}
END_TEST

/* The missing read scale is diagnosed with its factor: K^0.5 (K = 4 here,
   so 2; the default shape's K = 8 gives 2.8284 in the CLI test).  */
START_TEST (test_read_scale_diagnosed)
{
  const gcm_spec *spec = gcm_find ("gdn");
  gcm_instance *inst = make (9, 4, 0, 1, 1, gct_seed (),
                             gcm_mutant_index (spec, "no-read-scale"));
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&inst->model, inst->x, NULL, &r), GC_OK);
  ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_CONSTANT_FACTOR);
  ck_assert_str_eq (r->diagnosis.closed_form, "2");
  ck_assert_str_eq (r->diagnosis.block, "q");
  double tol = gct_factor_tolerance (r, 2.0);
  ck_assert_double_eq_tol (r->diagnosis.factor, 2.0, tol);
  printf ("# no-read-scale: factor %.9g, tolerance %.3g\n",
          r->diagnosis.factor, tol);
  gc_result_free (r);
  gcm_destroy (inst);
}
END_TEST

/* In f32 mode a mutant fails wherever its effect exceeds the f32 noise
   floor.  The loop index picks a mutant; the test measures its effect, the
   largest |analytic - exact| over the coordinates, against the largest f32
   bar, and asserts failure when the effect is above that bar.  Where it is
   not, the test says so with both numbers (TAP comment) and passes: that
   is the resolution of an f32 reference, not a miss of the check.  */
START_TEST (test_mutants_f32)
{
  const gcm_spec *spec = gcm_find ("gdn");
  int mutant = 1 + _i;
  if (spec->mutants[mutant - 1].only)   /* tests/check_higher.c */
    return;
  gcm_instance *inst = make (37, 16, 0, 1, 1, gct_seed (), mutant);
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F32;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&inst->model, inst->x, &o, &r), GC_OK);
  /* The mutant's effect per coordinate against the f32 bar there: the MPFR
     check of the same mutant gives the exact derivative as its reference.  */
  gc_result *rm = NULL;
  gc_options om;
  gc_options_init (&om);
  ck_assert_int_eq (gc_check (&inst->model, inst->x, &om, &rm), GC_OK);
  double best = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      double effect = fabs (rm->dirs[k].analytic - rm->dirs[k].reference);
      best = fmax (best, effect / r->dirs[k].bar);
    }
  /* The f32 check's own reference errs by at most its truncation and
     reference-rounding terms, each below the bar: an effect above 2 bars
     leaves |analytic - reference| above 1 bar, a certain failure.  Between
     1 and 2 bars the f32 reference's own error may hide it.  */
  /* a precision-only mutant is found as one ("The f64 twin") */
  gc_verdict want = spec->mutants[mutant - 1].precision ? GC_PRECISION
                    : GC_FAIL;
  if (best > 2)
    ck_assert_msg (r->verdict == want, "mutant %s: effect %g bars, yet "
                   "the f32 check gave %s", spec->mutants[mutant - 1].name,
                   best, gc_verdict_name (r->verdict));
  else
    printf ("# mutant %s: largest effect %.3g of the f32 bar: within the "
            "f32 reference's own error (2 bars)\n",
            spec->mutants[mutant - 1].name, best);
  gc_result_free (r);
  gc_result_free (rm);
  gcm_destroy (inst);
}
END_TEST

/* The f64 forward's incremental evaluation (models/gdn.c, loss_f64)
   reruns a sequence from its first perturbed step: its value must be bit
   for bit the full evaluation's, at every kind of parameter (q, k, v, g,
   beta at the first, a middle and the last step; the initial state), and
   under a directed rounding mode it must not use the base built to
   nearest.  */
START_TEST (test_f64_incremental_exact)
{
  gcm_instance *a = make (37, 16, 0, 1, 1, gct_seed (), 0);
  size_t n = a->model.n;
  double *x = malloc (n * sizeof *x);
  ck_assert_ptr_nonnull (x);
  for (size_t i = 0; i < n; i++)
    x[i] = a->x[i];
  double base, again;
  ck_assert_int_eq (a->model.loss_f64 (a->model.ctx, x, &base), 0);
  ck_assert_int_eq (a->model.loss_f64 (a->model.ctx, x, &again), 0);
  ck_assert (memcmp (&base, &again, sizeof base) == 0);
  size_t probes = 0;
  for (size_t i = 0; i < n; i += 5)
    {
      double keep = x[i];
      x[i] = keep + 0x1p-12 * (1 + fabs (keep));
      /* a fresh instance evaluates in full (its base is this point) */
      gcm_instance *b = make (37, 16, 0, 1, 1, gct_seed (), 0);
      double inc, full;
      ck_assert_int_eq (a->model.loss_f64 (a->model.ctx, x, &inc), 0);
      ck_assert_int_eq (b->model.loss_f64 (b->model.ctx, x, &full), 0);
      ck_assert_msg (memcmp (&inc, &full, sizeof inc) == 0,
                     "parameter %zu: incremental %.17g, full %.17g", i, inc,
                     full);
      ck_assert (inc != base);
      /* toward +inf: the full evaluation under that mode, not the base */
      fesetround (FE_UPWARD);
      double up_a, up_b;
      ck_assert_int_eq (a->model.loss_f64 (a->model.ctx, x, &up_a), 0);
      ck_assert_int_eq (b->model.loss_f64 (b->model.ctx, x, &up_b), 0);
      fesetround (FE_TONEAREST);
      ck_assert (memcmp (&up_a, &up_b, sizeof up_a) == 0);
      gcm_destroy (b);
      x[i] = keep;
      probes++;
    }
  ck_assert_uint_ge (probes, 100);
  free (x);
  gcm_destroy (a);
}
END_TEST

static Suite *
gdn_suite (void)
{
  Suite *s = suite_create ("gdn");
  TCase *tc = tcase_create ("correct");
  tcase_set_timeout (tc, 600);
  tcase_add_loop_test (tc, test_correct_passes, 0, 24);
  tcase_add_loop_test (tc, test_correct_all_coordinates, 0, 4);
  tcase_add_test (tc, test_f64_incremental_exact);
  suite_add_tcase (s, tc);
  TCase *tm = tcase_create ("mutants");
  tcase_set_timeout (tm, 600);
  const gcm_spec *spec = gcm_find ("gdn");
  tcase_add_loop_test (tm, test_mutants_fail_mpfr, 0,
                       4 * (int) spec->n_mutants);
  tcase_add_test (tm, test_read_scale_diagnosed);
  tcase_add_loop_test (tm, test_mutants_f32, 0, (int) spec->n_mutants);
  suite_add_tcase (s, tm);
  return s;
}

int
main (void)
{
  return gct_run (gdn_suite ());
}
