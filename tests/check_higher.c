/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_higher.c -- the checks beyond the gradient (manual: "Beyond the
   gradient"): the JVP check, the HVP check and the Taylor test on the
   built-in models' correct tangents and HVPs (several seeds and shapes,
   under whatever OpenBLAS kernel the process got: no assertion depends on
   it), every JVP/HVP mutant caught, the Taylor test's rates on a correct
   and on a wrong gradient, reports and shards, and hostile callbacks.  */

#include "gctest.h"
#include "gradcheck.h"

#include <check.h>
#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Shapes of tanh-gemm (M, K, N): the default, a tall one, a small square
   and a wide one.  */
static const long shapes[][3] = { { 8, 16, 8 }, { 24, 4, 3 }, { 5, 5, 5 },
                                  { 2, 9, 17 } };
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static gct_model *
tanh_gemm (size_t s, uint64_t seed, const char *mutant)
{
  gct_model *t = gct_tanh_gemm (shapes[s][0], shapes[s][1], shapes[s][2],
                                seed, mutant ? gct_tanh_mutant (mutant) : 0);
  ck_assert (t);
  return t;
}

static void
print_result (const char *what, const gc_result *r)
{
  printf ("%-34s %-12s failed %zu inconclusive %zu of %zu, worst nu %.3g, "
          "median resolution %.3g\n", what, gc_verdict_name (r->verdict),
          r->n_failed, r->n_inconclusive, r->n_directions, r->worst_nu,
          r->resolution_median);
}

/* ---------------------------------------------------------------------- */
/* The JVP check                                                           */

START_TEST (test_jvp_correct)
{
  uint64_t seeds = gct_seeds (4);
  for (size_t s = 0; s < N_SHAPES; s++)
    for (uint64_t k = 0; k < seeds; k++)
      {
        gct_model *t = tanh_gemm (s, gct_seed () + k, NULL);
        gc_options o;
        gc_options_init (&o);
        gc_result *r = NULL;
        ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &o, &r), GC_OK);
        ck_assert_int_eq (r->kind, GC_CHECK_JVP);
        ck_assert_msg (r->verdict == GC_PASS, "correct JVP, shape %zu seed "
                       "%llu: %s, worst nu %g", s,
                       (unsigned long long) (gct_seed () + k),
                       gc_verdict_name (r->verdict), r->worst_nu);
        /* the tangent's own term replaced the adjoint's */
        ck_assert_str_eq (r->dirs[0].terms[GC_TERM_ADJOINT].section,
                          "The JVP check");
        gc_result_free (r);
        /* random directions (MPFR, exact: the tangent along the same v) */
        o.directions = GC_DIR_RANDOM;
        o.n_random = 6;
        ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &o, &r), GC_OK);
        ck_assert_msg (r->verdict == GC_PASS, "correct JVP, random, shape "
                       "%zu: %s, worst nu %g", s,
                       gc_verdict_name (r->verdict), r->worst_nu);
        if (k == 0)
          print_result ("correct JVP, random directions", r);
        /* "What a pass rules out" is derived for <v, g> alone: a JVP
           check's report claims no such bound.  */
        char *txt = gc_report (r, GC_FMT_TEXT);
        ck_assert_ptr_nonnull (txt);
        ck_assert_ptr_null (strstr (txt, "a pass rules out"));
        free (txt);
        gc_result_free (r);
        gct_free (t);
      }
}
END_TEST

START_TEST (test_jvp_mutant_caught)
{
  for (size_t s = 0; s < N_SHAPES; s++)
    {
      gct_model *t = tanh_gemm (s, gct_seed (), "jvp-no-dx");
      gc_options o;
      gc_options_init (&o);
      /* the gradient check does not call the tangent: it passes */
      gc_result *g = gct_check_ok (&t->model, t->x, &o);
      ck_assert_int_eq (g->verdict, GC_PASS);
      gc_result_free (g);
      gc_result *r = NULL;
      ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &o, &r), GC_OK);
      print_result ("JVP mutant jvp-no-dx", r);
      ck_assert_int_eq (r->verdict, GC_FAIL);
      /* the forgotten term is W dX: every X direction fails, no W one */
      size_t mk = (size_t) (shapes[s][0] * shapes[s][1]);
      for (size_t q = 0; q < r->n_directions; q++)
        if (r->dirs[q].index < mk)
          ck_assert_int_ne (r->dirs[q].verdict, GC_FAIL);
      ck_assert_uint_gt (r->n_failed, 0);
      gc_result_free (r);
      /* the HVP does not share the tangent's bug */
      gc_options_init (&o);
      o.directions = GC_DIR_RANDOM;
      o.n_random = 1;
      ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_OK);
      ck_assert_int_eq (r->verdict, GC_PASS);
      gc_result_free (r);
      gct_free (t);
    }
}
END_TEST

/* gdn's recurrent tangent (models/gdn_tangent.h): shapes of the gated
   delta op as KEY=VALUE over its defaults (the chunked forward against
   the recurrent tangent: two algorithms).  */
static const char *const gdn_shapes[] = {
  "", "T=5,H=1,K=4,V=3,BT=4", "T=20,NORM=0,SIGMOID=0,BT=8",
  "B=2,T=9,GATE=1" };

static gcm_instance *
gdn_instance (const char *shape, uint64_t seed, const char *mutant)
{
  const gcm_spec *spec = gcm_find ("gdn");
  ck_assert (spec);
  long v[GCM_MAX_KEYS];
  char err[160];
  ck_assert_int_eq (gcm_parse_shape (spec, shape, v, err, sizeof err),
                    GC_OK);
  int mi = mutant ? gcm_mutant_index (spec, mutant) : 0;
  ck_assert_int_ge (mi, 0);
  gcm_instance *in = NULL;
  ck_assert_int_eq (gcm_create (spec, v, seed, mi, &in), GC_OK);
  return in;
}

START_TEST (test_jvp_gdn)
{
  uint64_t seeds = gct_seeds (3);
  for (size_t s = 0; s < sizeof gdn_shapes / sizeof *gdn_shapes; s++)
    for (uint64_t k = 0; k < seeds; k++)
      {
        gcm_instance *in = gdn_instance (gdn_shapes[s], gct_seed () + k,
                                         NULL);
        gc_result *r = NULL;
        ck_assert_int_eq (gc_jvp_check (&in->model, in->x, NULL, &r), GC_OK);
        if (k == 0)
          print_result ("gdn correct JVP", r);
        /* no false alarm; an inconclusive direction only where the
           backward's rule makes one ("What the measurement does not
           support"): a blind pass whose magnitude was defaulted (gdn's
           are: the tensor's largest |g| manufactures the blindness) */
        ck_assert_msg (r->verdict == GC_PASS
                       || (r->verdict == GC_INCONCLUSIVE
                           && r->n_inconclusive == r->n_blind_defaulted),
                       "gdn JVP, shape '%s' seed %llu: %s, worst nu %g",
                       gdn_shapes[s], (unsigned long long) (gct_seed () + k),
                       gc_verdict_name (r->verdict), r->worst_nu);
        /* the backward's twin does not judge a tangent: the note on a
           blind direction does not send the caller to it */
        ck_assert_int_eq (r->twin_unused, 0);
        gc_result_free (r);
        gcm_destroy (in);
      }
  for (size_t s = 0; s < sizeof gdn_shapes / sizeof *gdn_shapes; s++)
    {
      gcm_instance *in = gdn_instance (gdn_shapes[s], gct_seed (),
                                       "jvp-no-dk");
      gc_result *r = NULL;
      ck_assert_int_eq (gc_jvp_check (&in->model, in->x, NULL, &r), GC_OK);
      print_result ("gdn JVP mutant jvp-no-dk", r);
      ck_assert_int_eq (r->verdict, GC_FAIL);
      gc_result_free (r);
      gcm_destroy (in);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The HVP check                                                           */

START_TEST (test_hvp_correct)
{
  uint64_t seeds = gct_seeds (4);
  static const size_t list[] = { 0, 3, 70, 140, 255 };
  for (size_t s = 0; s < N_SHAPES; s++)
    for (uint64_t k = 0; k < seeds; k++)
      {
        gct_model *t = tanh_gemm (s, gct_seed () + k, NULL);
        gc_options o;
        gc_options_init (&o);
        o.directions = GC_DIR_RANDOM;
        o.n_random = 3;
        o.seed = gct_seed () + k;
        gc_result *r = NULL;
        ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_OK);
        ck_assert_int_eq (r->reference, GC_REF_F64);
        ck_assert_msg (r->verdict == GC_PASS, "correct HVP, shape %zu seed "
                       "%llu: %s, worst nu %g", s,
                       (unsigned long long) (gct_seed () + k),
                       gc_verdict_name (r->verdict), r->worst_nu);
        if (k == 0)
          print_result ("correct HVP, random vectors", r);
        gc_result_free (r);
        /* coordinate vectors */
        size_t idx[5], ni = 0;
        for (size_t j = 0; j < 5; j++)
          if (list[j] < t->n)
            idx[ni++] = list[j];
        o.directions = GC_DIR_LIST;
        o.indices = idx;
        o.n_indices = ni;
        ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_OK);
        ck_assert_msg (r->verdict == GC_PASS, "correct HVP, coordinates, "
                       "shape %zu: %s, worst nu %g", s,
                       gc_verdict_name (r->verdict), r->worst_nu);
        gc_result_free (r);
        gct_free (t);
      }
}
END_TEST

START_TEST (test_hvp_mutants_caught)
{
  static const char *const mutants[] = { "hvp-no-second-order",
                                         "hvp-transposed", "hvp-scale-1e-6" };
  for (size_t j = 0; j < 3; j++)
    for (size_t s = 0; s < N_SHAPES; s++)
      {
        gct_model *t = tanh_gemm (s, gct_seed (), mutants[j]);
        gc_options o;
        gc_options_init (&o);
        o.directions = GC_DIR_RANDOM;
        o.n_random = 2;
        gc_result *r = NULL;
        ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_OK);
        if (s == 0)
          print_result (mutants[j], r);
        ck_assert_msg (r->verdict == GC_FAIL, "%s, shape %zu: %s",
                       mutants[j], s, gc_verdict_name (r->verdict));
        gc_result_free (r);
        /* and the JVP of the same model is right: only its HVP is wrong */
        gc_options_init (&o);
        ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &o, &r), GC_OK);
        ck_assert_int_eq (r->verdict, GC_PASS);
        gc_result_free (r);
        gct_free (t);
      }
}
END_TEST

/* Manual: "The HVP check", its twin: with hvp_f64 each element gets the
   algorithm's verdict at the twin's resolution; a 1e-6 scale error of the
   HVP's algorithm, below the f32 HVP's own rounding term, fails there
   and only there.  */
START_TEST (test_hvp_twin)
{
  for (size_t s = 0; s < N_SHAPES; s++)
    {
      gct_model *t = tanh_gemm (s, gct_seed (), NULL);
      gc_options o;
      gc_options_init (&o);
      o.directions = GC_DIR_RANDOM;
      o.n_random = 2;
      gc_result *r = NULL;
      ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_OK);
      ck_assert_int_eq (r->twin, 1);
      ck_assert_int_eq (r->verdict, GC_PASS);
      /* the algorithm's resolution is the twin's: finer than the f32
         HVP's rounding term allows the f32 verdict */
      ck_assert (r->resolution_f64_median < r->resolution_median);
      if (s == 0)
        print_result ("correct HVP, both twins", r);
      gc_result_free (r);
      gct_free (t);
      t = tanh_gemm (s, gct_seed (), "hvp-scale-1e-6");
      ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_OK);
      if (s == 0)
        print_result ("hvp-scale-1e-6, both twins", r);
      ck_assert_int_eq (r->verdict, GC_FAIL);
      ck_assert_uint_gt (r->n_failed_algorithm, 0);
      gc_result_free (r);
      /* without the HVP's twin the f32 bar, of relative size about
         lambda sqrt(d_H) u = 1e-5 (manual), cannot see a 1e-6 error */
      gc_model m = t->model;
      m.hvp_f64 = NULL;
      ck_assert_int_eq (gc_hvp_check (&m, t->x, &o, &r), GC_OK);
      ck_assert_int_eq (r->twin, 0);
      ck_assert_int_ne (r->verdict, GC_FAIL);
      gc_result_free (r);
      gct_free (t);
    }
}
END_TEST

/* Manual: "The HVP check": without the twin, differences of f32 gradients
   drown in their rounding: inconclusive, never passed on that, never a
   false alarm.  */
START_TEST (test_hvp_without_twin)
{
  gct_model *t = tanh_gemm (0, gct_seed (), NULL);
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 2;
  o.no_twin = 1;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_OK);
  print_result ("correct HVP, no twin", r);
  ck_assert_int_eq (r->reference, GC_REF_F32);
  ck_assert_uint_eq (r->n_failed, 0);
  /* every direction judged PASS has a resolution below 1 */
  for (size_t q = 0; q < r->n_directions; q++)
    if (r->dirs[q].verdict == GC_PASS)
      ck_assert (r->dirs[q].resolution < 1
                 || r->dirs[q].terms[GC_TERM_ADJOINT].value
                    > r->dirs[q].terms[GC_TERM_TRUNCATION].value
                      + r->dirs[q].terms[GC_TERM_REFERENCE].value);
  /* Manual: "The HVP check": without the twin the gradients' rounding
     over the step (E) rules the bar of most elements; with it, the HVP's
     own rounding does: the reference is no longer the limit */
  o.no_twin = 0;
  gc_result *w = NULL;
  ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &w), GC_OK);
  size_t ruled[2] = { 0, 0 };
  const gc_result *both[2] = { r, w };
  for (int j = 0; j < 2; j++)
    for (size_t q = 0; q < both[j]->n_directions; q++)
      {
        const gc_term *tm = both[j]->dirs[q].terms;
        ruled[j] += tm[GC_TERM_REFERENCE].value > tm[GC_TERM_ADJOINT].value;
      }
  ck_assert_uint_gt (2 * ruled[0], r->n_directions);
  ck_assert_uint_lt (2 * ruled[1], w->n_directions);
  ck_assert (w->resolution_median < r->resolution_median);
  gc_result_free (w);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The Taylor test                                                         */

static gc_taylor *
taylor_ok (const gct_model *t, const gc_options *o)
{
  gc_taylor *ty = NULL;
  gc_status st = gc_taylor_test (&t->model, t->x, o, 0, &ty);
  ck_assert_msg (st == GC_OK, "taylor: %s (%s)", gc_strerror (st),
                 ty ? ty->detail : "");
  return ty;
}

START_TEST (test_taylor_correct)
{
  uint64_t seeds = gct_seeds (4);
  for (size_t s = 0; s < N_SHAPES; s++)
    for (uint64_t k = 0; k < seeds; k++)
      {
        gct_model *t = tanh_gemm (s, gct_seed () + k, NULL);
        gc_options o;
        gc_options_init (&o);
        o.seed = gct_seed () + k;
        gc_taylor *ty = taylor_ok (t, &o);
        if (k == 0 && s == 0)
          {
            char *txt = gc_taylor_report (ty, GC_FMT_TEXT);
            printf ("%s", txt);
            free (txt);
          }
        ck_assert_msg (ty->verdict == GC_PASS, "Taylor r1, shape %zu seed "
                       "%llu: %s", s, (unsigned long long) o.seed,
                       gc_verdict_name (ty->verdict));
        ck_assert_msg (ty->verdict_hvp == GC_PASS, "Taylor r2, shape %zu "
                       "seed %llu: %s", s, (unsigned long long) o.seed,
                       gc_verdict_name (ty->verdict_hvp));
        /* the range reported holds rates of at least 2 and 3 less the
           window's half-width (manual), and r1's rate 2 is seen: the
           curvature <v, H v> is not 0 along a random v */
        size_t in_window = 0;
        for (size_t j = 0; j + 1 < ty->n_levels; j++)
          {
            if (ty->eps[j] <= ty->range1_hi && ty->eps[j + 1] >= ty->range1_lo)
              ck_assert (ty->rate1[j] >= 1.5);
            if (ty->eps[j] <= ty->range2_hi && ty->eps[j + 1] >= ty->range2_lo)
              ck_assert (ty->rate2[j] >= 2.5);
            in_window += ty->rate1[j] >= 1.5 && ty->rate1[j] <= 2.5;
          }
        ck_assert_uint_ge (in_window, 2);
        free (ty);
        gct_free (t);
      }
}
END_TEST

START_TEST (test_taylor_wrong)
{
  /* a gradient wrong by a factor 2 on W: along a random direction the
     first-order term stays, rate 1 */
  gct_model *t = tanh_gemm (0, gct_seed (), "dw-twice");
  gc_options o;
  gc_options_init (&o);
  gc_taylor *ty = taylor_ok (t, &o);
  char *txt = gc_taylor_report (ty, GC_FMT_TEXT);
  printf ("%s", txt);
  free (txt);
  ck_assert_int_eq (ty->verdict, GC_FAIL);
  size_t judged = 0;
  for (size_t j = 0; j + 1 < ty->n_levels; j++)
    if (ty->eps[j] <= ty->range1_hi && ty->eps[j + 1] >= ty->range1_lo)
      {
        /* rate 1 within the measurement: below the window's 1.5 */
        ck_assert (ty->rate1[j] < 1.5);
        judged++;
      }
  ck_assert_uint_ge (judged, 2);
  free (ty);
  gct_free (t);
  /* an HVP without its second-order term: r2 falls at rate 2, not 3 */
  t = tanh_gemm (0, gct_seed (), "hvp-no-second-order");
  ty = taylor_ok (t, &o);
  ck_assert_int_eq (ty->verdict, GC_PASS);
  ck_assert_int_eq (ty->verdict_hvp, GC_FAIL);
  free (ty);
  gct_free (t);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Reports and shards                                                      */

/* The HVP check in SC shards (vectors I, I + SC, ...), each read back from
   its JSON and merged: the unsharded check, direction by direction; with
   one shard left out, or one of a JVP check in its place, no merge.  */
static void
hvp_shards_merge (gct_model *t, gc_options o, size_t sc)
{
  gc_result *whole = NULL;
  ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &whole), GC_OK);
  gc_result *rd[4];
  ck_assert (sc <= 4);
  o.shard_count = sc;
  for (size_t k = 0; k < sc; k++)
    {
      gc_result *sh = NULL;
      o.shard_index = k;
      ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &sh), GC_OK);
      ck_assert_uint_eq (sh->n_total, whole->n_total);
      char *js = gc_report (sh, GC_FMT_JSON);
      ck_assert_int_eq (gc_result_parse_json (js, strlen (js), &rd[k]),
                        GC_OK);
      ck_assert_int_eq (rd[k]->kind, GC_CHECK_HVP);
      free (js);
      gc_result_free (sh);
    }
  gc_result *mg = NULL;
  ck_assert_int_eq (gc_result_merge (rd, sc, &mg), GC_OK);
  ck_assert_int_eq (mg->kind, GC_CHECK_HVP);
  ck_assert_int_eq (mg->verdict, whole->verdict);
  ck_assert_uint_eq (mg->n_directions, whole->n_directions);
  ck_assert_uint_eq (mg->n_failed, whole->n_failed);
  for (size_t q = 0; q < mg->n_directions; q++)
    {
      const gc_direction *a = &mg->dirs[q], *b = &whole->dirs[q];
      ck_assert_uint_eq (a->id, b->id);
      ck_assert_uint_eq (a->index, b->index);
      ck_assert_int_eq (a->verdict, b->verdict);
      ck_assert_int_eq (a->verdict_algorithm, b->verdict_algorithm);
      /* the values themselves: JSON keeps a double's 17 digits */
      ck_assert (a->analytic == b->analytic && a->reference == b->reference);
    }
  gc_result_free (mg);
  mg = NULL;
  if (sc > 1)
    {
      /* a shard missing */
      ck_assert_int_eq (gc_result_merge (rd, sc - 1, &mg), GC_EMISMATCH);
      gc_result_free (mg);
      mg = NULL;
      /* a JVP check's shard in place of one */
      gc_options oj;
      gc_options_init (&oj);
      oj.shard_count = sc;
      oj.shard_index = sc - 1;
      gc_result *j = NULL, *keep = rd[sc - 1];
      ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &oj, &j), GC_OK);
      rd[sc - 1] = j;
      ck_assert_int_eq (gc_result_merge (rd, sc, &mg), GC_EMISMATCH);
      gc_result_free (mg);
      rd[sc - 1] = keep;
      gc_result_free (j);
    }
  for (size_t k = 0; k < sc; k++)
    gc_result_free (rd[k]);
  gc_result_free (whole);
}

START_TEST (test_hvp_shards)
{
  static const size_t list[] = { 1, 4, 7, 11, 20 };
  for (size_t s = 0; s < 3; s++)
    {
      gct_model *t = tanh_gemm (s == 0 ? 2 : 1, gct_seed () + s,
                                s == 2 ? "hvp-transposed" : NULL);
      gc_options o;
      gc_options_init (&o);
      if (s == 0)
        {
          o.directions = GC_DIR_RANDOM;
          o.n_random = 3;
        }
      else
        {
          o.directions = GC_DIR_LIST;
          o.indices = list;
          o.n_indices = 5;
        }
      for (size_t sc = 1; sc <= 4; sc++)
        hvp_shards_merge (t, o, sc);
      gct_free (t);
    }
}
END_TEST

START_TEST (test_reports_and_shards)
{
  gct_model *t = tanh_gemm (2, gct_seed (), NULL);
  gc_options o;
  gc_options_init (&o);
  gc_result *whole = NULL;
  ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &o, &whole), GC_OK);
  for (gc_format f = GC_FMT_TEXT; f <= GC_FMT_TAP; f++)
    {
      char *s = gc_report (whole, f);
      ck_assert (s && *s);
      if (f == GC_FMT_TEXT)
        ck_assert (strstr (s, "JVP check") != NULL);
      if (f == GC_FMT_JSON)
        ck_assert (gct_json_valid (s));
      free (s);
    }
  /* two shards, read back from JSON and merged: the unsharded verdicts */
  gc_result *sh[2], *rd[2];
  o.shard_count = 2;
  for (size_t k = 0; k < 2; k++)
    {
      o.shard_index = k;
      ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &o, &sh[k]), GC_OK);
      char *js = gc_report (sh[k], GC_FMT_JSON);
      ck_assert_int_eq (gc_result_parse_json (js, strlen (js), &rd[k]),
                        GC_OK);
      ck_assert_int_eq (rd[k]->kind, GC_CHECK_JVP);
      free (js);
    }
  gc_result *mg = NULL;
  ck_assert_int_eq (gc_result_merge (rd, 2, &mg), GC_OK);
  ck_assert_int_eq (mg->verdict, whole->verdict);
  ck_assert_uint_eq (mg->n_directions, whole->n_directions);
  for (size_t q = 0; q < mg->n_directions; q++)
    {
      ck_assert_int_eq (mg->dirs[q].verdict, whole->dirs[q].verdict);
      ck_assert_str_eq (mg->dirs[q].terms[GC_TERM_ADJOINT].name,
                        "tangent rounding");
    }
  /* a gradient check's shard does not merge with a JVP check's */
  gc_options_init (&o);
  o.shard_count = 2;
  o.shard_index = 1;
  gc_result *g = gct_check_ok (&t->model, t->x, &o);
  gc_result *mixed[2] = { sh[0], g };
  gc_result *bad = NULL;
  ck_assert_int_eq (gc_result_merge (mixed, 2, &bad), GC_EMISMATCH);
  gc_result_free (bad);
  gc_result_free (g);
  gc_result_free (mg);
  for (size_t k = 0; k < 2; k++)
    {
      gc_result_free (sh[k]);
      gc_result_free (rd[k]);
    }
  gc_result_free (whole);
  /* the HVP's and the Taylor test's reports */
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 1;
  gc_result *h = NULL;
  ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &h), GC_OK);
  char *s = gc_report (h, GC_FMT_JSON);
  ck_assert (gct_json_valid (s) && strstr (s, "\"hvp\""));
  free (s);
  s = gc_report (h, GC_FMT_TEXT);
  ck_assert (strstr (s, "HVP check") != NULL);
  free (s);
  gc_result_free (h);
  gc_taylor *ty = taylor_ok (t, &o);
  for (gc_format f = GC_FMT_TEXT; f <= GC_FMT_TAP; f++)
    {
      s = gc_taylor_report (ty, f);
      ck_assert (s && *s);
      if (f == GC_FMT_JSON)
        ck_assert (gct_json_valid (s));
      free (s);
    }
  free (ty);
  gct_free (t);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* A spread beyond the declared depth (manual: "The JVP check", "What the
   measurement does not support")                                          */

/* tanh-gemm's tangent and HVP with an error that follows the rounding
   mode: 2^-10 |t| added upward, taken off in the other directed modes, none
   to nearest -- no rounding of a chain of depth d moves a value by more
   than gamma_d u-multiples of its magnitude, so under a small declared
   depth it is a lower precision, not a rounding of the declared
   arithmetic.  */
static gct_model *the_modal;

static float
modal (float t)
{
  int m = fegetround ();
  return m == FE_TONEAREST ? t
         : t + (m == FE_UPWARD ? 1 : -1) * 0x1p-10f * fabsf (t);
}

static int
modal_jvp (void *ctx, const float *x, const float *v, float *out)
{
  (void) ctx;
  int rc = the_modal->model.jvp_f32 (the_modal->model.ctx, x, v, out);
  *out = modal (*out);
  return rc;
}

static int
modal_hvp (void *ctx, const float *x, const float *v, float *out)
{
  (void) ctx;
  int rc = the_modal->model.hvp_f32 (the_modal->model.ctx, x, v, out);
  for (size_t i = 0; i < the_modal->n; i++)
    out[i] = modal (out[i]);
  return rc;
}

static double
input_of (const gc_term *t, const char *name)
{
  for (size_t k = 0; k < t->n_inputs; k++)
    if (!strcmp (t->inputs[k].name, name))
      return t->inputs[k].value;
  return NAN;
}

START_TEST (test_spread_beyond_depth)
{
  gct_model *t = tanh_gemm (2, gct_seed (), NULL);
  the_modal = t;
  gc_model m = t->model;
  m.jvp_f32 = modal_jvp;
  m.hvp_f32 = modal_hvp;
  m.tangent_depth = 2;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_jvp_check (&m, t->x, NULL, &r), GC_OK);
  print_result ("JVP, modal error beyond d_t = 2", r);
  /* every direction whose spread exceeds the worst case 2 gamma_d of the
     declared depth over its declared magnitudes is PRECISION, never a
     pass on a bar widened by that spread */
  size_t beyond = 0;
  for (size_t q = 0; q < r->n_directions; q++)
    {
      const gc_direction *d = &r->dirs[q];
      const gc_term *a = &d->terms[GC_TERM_ADJOINT];
      double worst = input_of (a, "gamma_d / u")
                     * (0x1p-24 * input_of (a, "sum |w_i| m_i")
                        + 0x1p-150 * input_of (a, "sum |w_i|"));
      if (input_of (a, "S_w") > 2 * worst)
        {
          beyond++;
          ck_assert_msg (d->verdict == GC_PRECISION, "direction %zu: spread "
                         "%g beyond 2 gamma_d %g, verdict %s", d->id,
                         input_of (a, "S_w"), 2 * worst,
                         gc_verdict_name (d->verdict));
        }
    }
  ck_assert_uint_gt (beyond, 0);
  ck_assert_uint_eq (r->n_spread_beyond, beyond);
  ck_assert_int_eq (r->verdict, GC_PRECISION);
  ck_assert (r->depth_implied > 2 && r->depth_implied_at < t->n);
  char *s = gc_report (r, GC_FMT_TEXT);
  ck_assert (strstr (s, "implied tangent depth") != NULL);
  ck_assert (strstr (s, "worst case 2 gamma_d of d_t are PRECISION") != NULL);
  free (s);
  /* read back from JSON: the same finding (the judge reads the term's
     inputs from the report) */
  s = gc_report (r, GC_FMT_JSON);
  gc_result *back = NULL;
  ck_assert_int_eq (gc_result_parse_json (s, strlen (s), &back), GC_OK);
  gc_result *one[1] = { back }, *mg = NULL;
  ck_assert_int_eq (gc_result_merge (one, 1, &mg), GC_OK);
  ck_assert_int_eq (mg->verdict, GC_PRECISION);
  ck_assert_uint_eq (mg->n_spread_beyond, beyond);
  free (s);
  gc_result_free (mg);
  gc_result_free (back);
  gc_result_free (r);
  /* control: a declared depth whose worst case covers 2^-10 |t|
     (2 gamma_d u m >= 2^15 2^-24 |t| = 2^-9 |t| at d = 2^14, m >= |t|):
     the same spread is a rounding of it, no finding */
  m.tangent_depth = 1u << 14;
  ck_assert_int_eq (gc_jvp_check (&m, t->x, NULL, &r), GC_OK);
  ck_assert_uint_eq (r->n_spread_beyond, 0);
  ck_assert_int_ne (r->verdict, GC_PRECISION);
  gc_result_free (r);
  /* the HVP: its magnitudes are always defaulted (no magnitude callback),
     and the backward's rule judges no spread against a defaulted
     magnitude ("What the measurement does not support"): its implied
     depth is measured and said beyond d_H, the bar includes the spread */
  m.hvp_depth = 2;
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 1;
  o.no_twin = 1;
  ck_assert_int_eq (gc_hvp_check (&m, t->x, &o, &r), GC_OK);
  ck_assert (r->depth_implied > 2);
  s = gc_report (r, GC_FMT_TEXT);
  ck_assert (strstr (s, "WARNING: the HVP's spread at") != NULL);
  ck_assert (strstr (s, "more than the declared d_H = 2") != NULL);
  free (s);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Hostile callbacks                                                       */

typedef struct hostile
{
  gct_model *base;
  int mode;      /* 1 NaN, 2 fail, 3 overrun, 4 writes into v */
} hostile;

static hostile the_hostile;

static int
bad_jvp (void *ctx, const float *x, const float *v, float *out)
{
  (void) ctx;
  hostile *h = &the_hostile;
  int rc = h->base->model.jvp_f32 (h->base->model.ctx, x, v, out);
  switch (h->mode)
    {
    case 1: *out = NAN; break;
    case 2: return 42;
    case 3: out[1] = 1; break;
    case 4: ((float *) v)[0] += 1; break;
    }
  return rc;
}

static int
bad_hvp (void *ctx, const float *x, const float *v, float *out)
{
  (void) ctx;
  hostile *h = &the_hostile;
  int rc = h->base->model.hvp_f32 (h->base->model.ctx, x, v, out);
  switch (h->mode)
    {
    case 1: out[3] = INFINITY; break;
    case 2: return 7;
    case 3: out[h->base->n] = 1; break;
    case 4: ((float *) x)[1] = 0; break;
    }
  return rc;
}

START_TEST (test_hostile)
{
  gct_model *t = tanh_gemm (2, gct_seed (), NULL);
  the_hostile.base = t;
  gc_model m = t->model;
  m.jvp_f32 = bad_jvp;
  m.hvp_f32 = bad_hvp;
  static const gc_status want[] = { GC_OK, GC_ENONFINITE, GC_ECALLBACK,
                                    GC_EOVERRUN, GC_EOVERRUN };
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 2;
  for (int mode = 1; mode <= 4; mode++)
    {
      the_hostile.mode = mode;
      gc_result *r = NULL;
      ck_assert_int_eq (gc_jvp_check (&m, t->x, &o, &r), want[mode]);
      ck_assert_int_eq (r->verdict, GC_ERROR);
      ck_assert (r->detail[0] && strstr (r->detail, "jvp_f32"));
      if (mode == 2)
        ck_assert_int_eq (r->callback_code, 42);
      char *s = gc_report (r, GC_FMT_TEXT);
      ck_assert (s);
      free (s);
      gc_result_free (r);
      ck_assert_int_eq (gc_hvp_check (&m, t->x, &o, &r), want[mode]);
      ck_assert_int_eq (r->verdict, GC_ERROR);
      ck_assert (strstr (r->detail, "hvp_f32"));
      gc_result_free (r);
      gc_taylor *ty = NULL;
      ck_assert_int_eq (gc_taylor_test (&m, t->x, &o, 0, &ty), want[mode]);
      free (ty);
    }
  /* no callbacks: GC_ENOREF, with the reason */
  m.jvp_f32 = NULL;
  m.hvp_f32 = NULL;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_jvp_check (&m, t->x, NULL, &r), GC_ENOREF);
  ck_assert (strstr (r->detail, "jvp_f32"));
  gc_result_free (r);
  ck_assert_int_eq (gc_hvp_check (&m, t->x, NULL, &r), GC_ENOREF);
  gc_result_free (r);
  /* an ABI-2 description ends before jvp_f32: read without it */
  gc_model v2 = t->model;
  v2.abi = 2;
  ck_assert_int_eq (gc_jvp_check (&v2, t->x, NULL, &r), GC_ENOREF);
  gc_result_free (r);
  v2.abi = GC_MODEL_ABI + 1;
  ck_assert_int_eq (gc_jvp_check (&v2, t->x, NULL, &r), GC_EABI);
  gc_result_free (r);
  ck_assert_int_eq (gc_hvp_check (&v2, t->x, NULL, &r), GC_EABI);
  gc_result_free (r);
  /* bad options */
  gc_options_init (&o);
  o.shard_count = 2;
  o.shard_index = 2;     /* no shard 2 of 2 */
  ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_EINVAL);
  gc_result_free (r);
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 1;
  o.reference = GC_REF_F32;
  ck_assert_int_eq (gc_jvp_check (&t->model, t->x, &o, &r), GC_EINVAL);
  gc_result_free (r);
  size_t far = t->n;
  gc_options_init (&o);
  o.directions = GC_DIR_LIST;
  o.indices = &far;
  o.n_indices = 1;
  ck_assert_int_eq (gc_hvp_check (&t->model, t->x, &o, &r), GC_EDIRECTION);
  gc_result_free (r);
  gc_taylor *ty = NULL;
  ck_assert_int_eq (gc_taylor_test (&t->model, t->x, &o, 0, &ty),
                    GC_EDIRECTION);
  free (ty);
  ck_assert_int_eq (gc_taylor_test (&t->model, t->x, NULL,
                                    GC_TAYLOR_MAX_LEVELS + 1, &ty),
                    GC_EINVAL);
  free (ty);
  /* NULL arguments */
  ck_assert_int_eq (gc_jvp_check (NULL, t->x, NULL, &r), GC_EINVAL);
  ck_assert (r == NULL);
  ck_assert_int_eq (gc_hvp_check (&t->model, NULL, NULL, &r), GC_EINVAL);
  ck_assert_int_eq (gc_taylor_test (&t->model, t->x, NULL, 0, NULL),
                    GC_EINVAL);
  /* a point with a NaN */
  float *x = malloc (t->n * sizeof *x);
  memcpy (x, t->x, t->n * sizeof *x);
  x[2] = NAN;
  ck_assert_int_eq (gc_hvp_check (&t->model, x, NULL, &r), GC_EPOINT);
  gc_result_free (r);
  ck_assert_int_eq (gc_taylor_test (&t->model, x, NULL, 0, &ty), GC_EPOINT);
  free (ty);
  free (x);
  gct_free (t);
}
END_TEST

static Suite *
higher_suite (void)
{
  Suite *s = suite_create ("higher");
  TCase *tc = tcase_create ("higher");
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_jvp_correct);
  tcase_add_test (tc, test_jvp_mutant_caught);
  tcase_add_test (tc, test_jvp_gdn);
  tcase_add_test (tc, test_hvp_correct);
  tcase_add_test (tc, test_hvp_mutants_caught);
  tcase_add_test (tc, test_hvp_without_twin);
  tcase_add_test (tc, test_hvp_twin);
  tcase_add_test (tc, test_taylor_correct);
  tcase_add_test (tc, test_taylor_wrong);
  tcase_add_test (tc, test_reports_and_shards);
  tcase_add_test (tc, test_hvp_shards);
  tcase_add_test (tc, test_spread_beyond_depth);
  tcase_add_test (tc, test_hostile);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (higher_suite ());
}
