/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_kda.c -- Kimi Delta Attention: the gradient check and the forward
   oracle on the correct model (both f32 paths, T not a multiple of BT,
   HV = H and 2H, mild and strong gates, softplus and lower-bound gates, 20
   seeds), and every mutant caught by the check that can see it:

     mutant                 f32 gradient  MPFR gradient  forward oracle
     softplus-outside       passes        fails          fails
     chunk-no-read-scale    passes        fails          fails (K^0.5)
     double-scale           passes        fails          fails (K^-0.5)
     gate-grad-no-sigmoid   fails         fails          passes
     gva-no-group-sum       fails         fails          passes

   A forward formula slip shared by the f32 forward and backward is
   invisible to a gradient check against the same forward (f32 mode); the
   MPFR reference is an independent forward and sees it, as the oracle does.
   Runs under whatever OpenBLAS kernel it gets; tests/kernels.sh runs it
   under every kernel.  */

#include "gctest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KB, KT, KH, KHV, KK, KV, KBT, KCHUNK, KGATE, KSTRONG, KLOSS };

static gcm_instance *
make (long T, long BT, long H, long HV, long chunk, long gate, long strong,
      uint64_t seed, int mutant)
{
  const gcm_spec *spec = gcm_find ("kda");
  long v[GCM_MAX_KEYS];
  char err[128];
  ck_assert_int_eq (gcm_parse_shape (spec, "", v, err, sizeof err), GC_OK);
  v[KB] = 1;
  v[KT] = T;
  v[KH] = H;
  v[KHV] = HV;
  v[KK] = 4;
  v[KV] = 4;
  v[KBT] = BT;
  v[KCHUNK] = chunk;
  v[KGATE] = gate;
  v[KSTRONG] = strong;
  gcm_instance *inst = NULL;
  ck_assert_int_eq (gcm_create (spec, v, seed, mutant, &inst), GC_OK);
  return inst;
}

static gc_verdict
gradient (gcm_instance *inst, gc_reference ref, gc_direction_kind dirs,
          uint64_t seed, double *worst)
{
  gc_options o;
  gc_options_init (&o);
  o.reference = ref;
  o.directions = dirs;
  o.n_random = 6;
  o.seed = seed;
  gc_result *r = NULL;
  gc_status st = gc_check (&inst->model, inst->x, &o, &r);
  ck_assert_msg (st == GC_OK, "gc_check: %s", gc_strerror (st));
  gc_verdict v = r->verdict;
  if (worst)
    *worst = r->worst_nu;
  gc_result_free (r);
  return v;
}

static gc_result *
oracle (gcm_instance *inst)
{
  gc_result *r = NULL;
  gc_status st = gc_forward_check (&inst->model, inst->x, NULL, &r);
  ck_assert_msg (st == GC_OK, "gc_forward_check: %s", gc_strerror (st));
  return r;
}

/* Loop index: chunk (2) x HV/H (2) x gate strength (2) x gate form (2).  */
START_TEST (test_correct_passes)
{
  long chunk = _i % 2, hv = (_i / 2) % 2 ? 4 : 2, strong = (_i / 4) % 2;
  long gate = _i / 8;
  for (uint64_t s = 0; s < gct_seeds (20); s++)
    {
      uint64_t seed = gct_seed () + s;
      gcm_instance *inst = make (11, 4, 2, hv, chunk, gate, strong, seed, 0);
      for (int ref = 0; ref < 2; ref++)
        {
          double nu;
          gc_verdict v = gradient (inst, ref ? GC_REF_F32 : GC_REF_MPFR,
                                   GC_DIR_RANDOM, seed, &nu);
          /* an f32 reference may be blind somewhere: inconclusive, never
             a failure (manual: "Inconclusive directions")  */
          ck_assert_msg (v == GC_PASS || (ref && v == GC_INCONCLUSIVE),
                         "chunk=%ld HV=%ld strong=%ld gate=%ld "
                         "seed=%llu %s: %s, worst nu %g", chunk, hv, strong,
                         gate, (unsigned long long) seed, ref ? "f32" : "mpfr",
                         gc_verdict_name (v), nu);
        }
      gc_result *r = oracle (inst);
      ck_assert_msg (r->verdict == GC_PASS, "oracle chunk=%ld HV=%ld seed=%llu:"
                     " worst nu %g", chunk, hv, (unsigned long long) seed,
                     r->worst_nu);
      gc_result_free (r);
      gcm_destroy (inst);
    }
}
END_TEST

/* Every coordinate, at the default-like shape with padding.  */
START_TEST (test_correct_all_coordinates)
{
  gcm_instance *inst = make (9, 4, 1, 2, _i, 0, 0, gct_seed (), 0);
  double nu;
  ck_assert_int_eq (gradient (inst, GC_REF_MPFR, GC_DIR_ALL, 1, &nu), GC_PASS);
  gcm_destroy (inst);
}
END_TEST

/* The catalogue, against the table at the top of this file; every
   coordinate, both paths (chunk-no-read-scale is a chunked-path bug: on the
   recurrent path it changes nothing, and every check passes).  */
START_TEST (test_mutants)
{
  const gcm_spec *spec = gcm_find ("kda");
  /* FACTOR: the oracle's constant ratio f32 / reference as a power of K
     (0: none); K = 4 here, so the names read "2" and "1/2" (K = 8 reads
     K^0.5: test_incident_ratio).  */
  static const struct { const char *name; gc_verdict f32, mpfr, oracle;
                        double factor; } table[] = {
    { "softplus-outside", GC_PASS, GC_FAIL, GC_FAIL, 0 },
    { "chunk-no-read-scale", GC_PASS, GC_FAIL, GC_FAIL, 0.5 },
    { "double-scale", GC_PASS, GC_FAIL, GC_FAIL, -0.5 },
    { "gate-grad-no-sigmoid", GC_FAIL, GC_FAIL, GC_PASS, 0 },
    { "gva-no-group-sum", GC_FAIL, GC_FAIL, GC_PASS, 0 },
  };
  size_t k = (size_t) _i / 2;
  long chunk = _i % 2;
  int mutant = gcm_mutant_index (spec, table[k].name);
  ck_assert_int_gt (mutant, 0);
  bool inert = !chunk && strcmp (table[k].name, "chunk-no-read-scale") == 0;
  gcm_instance *inst = make (9, 4, 1, 2, chunk, 0, 0, gct_seed (), mutant);
  gc_verdict want_f32 = inert ? GC_PASS : table[k].f32;
  gc_verdict want_mpfr = inert ? GC_PASS : table[k].mpfr;
  gc_verdict want_oracle = inert ? GC_PASS : table[k].oracle;
  double nu;
  gc_verdict v = gradient (inst, GC_REF_F32, GC_DIR_ALL, 1, &nu);
  /* Where the f32 check is expected to pass, a blind direction makes it
     inconclusive instead: either way it does not fail.  */
  ck_assert_msg (v == want_f32 || (want_f32 == GC_PASS
                                   && v == GC_INCONCLUSIVE),
                 "%s chunk=%ld: f32 gradient check %s (worst "
                 "nu %g)", table[k].name, chunk, gc_verdict_name (v), nu);
  v = gradient (inst, GC_REF_MPFR, GC_DIR_ALL, 1, &nu);
  ck_assert_msg (v == want_mpfr, "%s chunk=%ld: MPFR gradient check %s (worst "
                 "nu %g)", table[k].name, chunk, gc_verdict_name (v), nu);
  gc_result *r = oracle (inst);
  ck_assert_msg (r->verdict == want_oracle, "%s chunk=%ld: oracle %s (worst "
                 "nu %g)", table[k].name, chunk, gc_verdict_name (r->verdict),
                 r->worst_nu);
  if (table[k].factor != 0 && !inert)
    {
      ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_CONSTANT_FACTOR);
      double c = pow (4.0, table[k].factor);
      ck_assert_double_eq_tol (r->diagnosis.factor, c,
                               gct_factor_tolerance (r, c));
      ck_assert_str_eq (r->diagnosis.closed_form,
                        table[k].factor > 0 ? "2" : "1/2");
    }
  gc_result_free (r);
  gcm_destroy (inst);
}
END_TEST

/* The lower-bound gate's own gradient bug is seen as well.  */
START_TEST (test_lowerbound_gate_bug)
{
  const gcm_spec *spec = gcm_find ("kda");
  gcm_instance *inst = make (9, 4, 1, 2, 1, 1, 0, gct_seed (),
                             gcm_mutant_index (spec, "gate-grad-no-sigmoid"));
  double nu;
  ck_assert_int_eq (gradient (inst, GC_REF_MPFR, GC_DIR_ALL, 1, &nu), GC_FAIL);
  gcm_destroy (inst);
}
END_TEST

/* At K = 8, as in the incident, the missing read scale reads 2.8284.  */
START_TEST (test_incident_ratio)
{
  const gcm_spec *spec = gcm_find ("kda");
  long v[GCM_MAX_KEYS];
  char err[128];
  ck_assert_int_eq (gcm_parse_shape (spec, "T=20", v, err, sizeof err), GC_OK);
  gcm_instance *inst = NULL;
  ck_assert_int_eq (gcm_create (spec, v, gct_seed (),
                                gcm_mutant_index (spec, "chunk-no-read-scale"),
                                &inst), GC_OK);
  gc_result *r = oracle (inst);
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_str_eq (r->diagnosis.closed_form, "K^0.5");
  ck_assert_double_eq_tol (r->diagnosis.factor, sqrt (8.0),
                           gct_factor_tolerance (r, sqrt (8.0)));
  char *text = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (strstr (text, "2.8284 = K^0.5"));
  free (text);
  gc_result_free (r);
  gcm_destroy (inst);
}
END_TEST

static Suite *
kda_suite (void)
{
  Suite *s = suite_create ("kda");
  TCase *tc = tcase_create ("correct");
  tcase_set_timeout (tc, 600);
  tcase_add_loop_test (tc, test_correct_passes, 0, 16);
  tcase_add_loop_test (tc, test_correct_all_coordinates, 0, 2);
  suite_add_tcase (s, tc);
  TCase *tm = tcase_create ("mutants");
  tcase_set_timeout (tm, 600);
  tcase_add_loop_test (tm, test_mutants, 0, 10);
  tcase_add_test (tm, test_lowerbound_gate_bug);
  tcase_add_test (tm, test_incident_ratio);
  suite_add_tcase (s, tm);
  return s;
}

int
main (void)
{
  return gct_run (kda_suite ());
}
