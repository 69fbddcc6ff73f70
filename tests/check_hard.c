/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_hard.c -- the catalogue of hard correct models and their buggy
   twins (tests/hard/): every correct model passes over 20 seeds, every
   twin fails or is inconclusive, never passes.  Also the verdict
   machinery those cases rest on (inconclusive directions, the resolution
   summary).  */

#include "gctest.h"
#include "hard/hard.h"
#include "hard/declared.h"
#include "hard/edges.h"
#include "models.h"

#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEEDS 20

static void correct_and_twin (hard_kind kind, size_t n, const gc_options *o,
                              gc_verdict want_twin, bool also_fail);

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
  /* tanh-gemm with an f32 reference at the default step: some directions
     cannot see a 100% error */
  gct_model *tg = gct_tanh_gemm (8, 16, 8, gct_seed (), 0);
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F32;
  gc_result *r = gct_check_ok (&tg->model, tg->x, &o);
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
      /* inconclusive exactly where a pass could not see a 100% error
         because of the reference's own terms */
      ck_assert_int_eq (d->verdict == GC_INCONCLUSIVE,
                        d->nu <= 1 && !(d->resolution < 1)
                        && d->terms[0].value + d->terms[1].value
                           >= d->terms[2].value);
    }
  qsort (res, n, sizeof *res, cmp_double);
  double median = n % 2 ? res[n / 2] : (res[n / 2 - 1] + res[n / 2]) / 2;
  ck_assert_uint_eq (r->n_inconclusive, inc);
  ck_assert_uint_eq (r->n_resolution_coarse, coarse);
  ck_assert_uint_eq (r->n_resolution_blind, blind);
  ck_assert (r->resolution_median == median);
  ck_assert (r->resolution_worst == res[n - 1]);
  ck_assert (r->dirs[r->blindest].resolution == res[n - 1]);
  ck_assert_uint_gt (inc, 0);
  ck_assert_uint_eq (r->n_failed, 0);
    {
      ck_assert_int_eq (r->verdict, GC_INCONCLUSIVE);
      char *t = gc_report (r, GC_FMT_TEXT);
      char *tap = gc_report (r, GC_FMT_TAP);
      ck_assert_ptr_nonnull (t);
      ck_assert_ptr_nonnull (tap);
      ck_assert_ptr_nonnull (strstr (t, "verdict: INCONCLUSIVE"));
      ck_assert_ptr_nonnull (strstr (t, "\nresolution: median "));
      /* the line names the blindest inconclusive direction (the blindest
         of all may pass: below the rounding of a correct backward) */
      const gc_direction *bi = NULL;
      for (size_t k = 0; k < n; k++)
        if (r->dirs[k].verdict == GC_INCONCLUSIVE
            && (!bi || r->dirs[k].resolution > bi->resolution))
          bi = &r->dirs[k];
      char want[160];
      snprintf (want, sizeof want, ", has bar %.3e against a reference of "
                "%.3e", bi->bar, bi->reference);
      const char *line = strstr (t, "inconclusive: the check cannot judge");
      ck_assert_ptr_nonnull (line);
      const char *eol = strchr (line, '\n');
      ck_assert_ptr_nonnull (eol);
      ck_assert_ptr_nonnull (strstr (line, "the blindest of them, "));
      const char *at = strstr (line, want);
      ck_assert (at && at < eol);
      /* where the twin's algorithm is what could not judge, the line
         gives its bar_64 and g64 too (the f32 bar did not decide) */
      if (!isnan (bi->analytic_f64)
          && bi->verdict_algorithm == GC_INCONCLUSIVE)
        {
          snprintf (want, sizeof want, "the twin's algorithm could not "
                    "judge it: bar_64 %.3e", bi->bar_f64);
          at = strstr (line, want);
          ck_assert (at && at < eol);
        }
      ck_assert_ptr_nonnull (strstr (tap, "# TODO inconclusive"));
      ck_assert_ptr_nonnull (strstr (tap, "\n# verdict: inconclusive\n"));
      free (t);
      free (tap);
    }
  free (res);
  gc_result_free (r);
  gct_free (tg);
}
END_TEST

/* The subnormal-gradient model: its 128-bit reference is 0 on dy, so those
   directions are evaluated again at higher precision, and the adjoint
   term carries the absolute error of subnormal roundings (manual: "Raising
   the precision", "Adjoint rounding").  The correct model passes, its twin
   fails.  */
START_TEST (test_subnormal_gradient)
{
  correct_and_twin (HARD_SUBNORMAL, 8, NULL, GC_FAIL, false);
}
END_TEST

/* Inputs the model did not declare are reported; a magnitude of 0 (below
   the value it bounds) is raised and reported, not silent.  The callbacks
   share the model's context, so the zero magnitude learns n from here
   (the test runs on one thread).  */
static size_t zero_n;

static int
zero_magnitude (void *ctx, const float *x, float *m)
{
  (void) ctx;
  (void) x;
  for (size_t i = 0; i < zero_n; i++)
    m[i] = 0;
  return 0;
}

/* The model's magnitude backward, times 1000 (a magnitude far above the
   computation's).  */
static gc_grad_f32_fn real_magnitude;

static int
big_magnitude (void *ctx, const float *x, float *m)
{
  int rc = real_magnitude (ctx, x, m);
  for (size_t i = 0; i < zero_n; i++)
    m[i] *= 1000;
  return rc;
}

START_TEST (test_declared_inputs)
{
  hard_model *h = hard_new (HARD_LARGE_PARAM, 8, gct_seed (), false);
  ck_assert_ptr_nonnull (h);
  gc_model m = h->model;
  m.forward_depth = 0;
  gc_result *r = gct_check_ok (&m, h->x, NULL);
  ck_assert_uint_eq (r->defaulted, GC_DEFAULTED_FORWARD_DEPTH
                     | GC_DEFAULTED_MAGNITUDES | GC_DEFAULTED_LOSS_MAGNITUDE);
  ck_assert_uint_eq (r->forward_depth, m.n);
  char *t = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (t);
  ck_assert_ptr_nonnull (strstr (t, "d_f 8 (NOT DECLARED: n used)"));
  ck_assert_ptr_nonnull (strstr (t, "magnitudes defaulted"));
  free (t);
  gc_result_free (r);
  hard_free (h);

  gct_model *tg = gct_tanh_gemm (8, 16, 8, gct_seed (), 0);
  r = gct_check_ok (&tg->model, tg->x, NULL);
  ck_assert_uint_eq (r->defaulted, 0);
  ck_assert_uint_eq (r->n_magnitude_low, 0);
  gc_result_free (r);
  gc_model zm = tg->model;
  zm.grad_magnitude_f32 = zero_magnitude;
  zero_n = zm.n;
  r = gct_check_ok (&zm, tg->x, NULL);
  /* every element with a nonzero gradient has m_i = 0 < |g_i| / 2 */
  size_t nonzero = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    nonzero += r->dirs[k].analytic != 0;
  ck_assert_uint_eq (r->n_magnitude_low, nonzero);
  t = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (t);
  ck_assert_ptr_nonnull (strstr (t, "below half the gradient value"));
  free (t);
  gc_result_free (r);

  /* Manual: "Measured rounding sensitivity": the implied depth against the
     declared one.  As declared (d_b counted by the manual's rules): no
     warning either way.  */
  r = gct_check_ok (&tg->model, tg->x, NULL);
  double implied = r->depth_implied;
  ck_assert_uint_eq (r->rounding_modes, 3);
  ck_assert (implied > 1 && implied <= (double) r->backward_depth);
  ck_assert (implied * 64 >= (double) r->backward_depth);
  t = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_null (strstr (t, "UNSUPPORTED"));
  ck_assert_ptr_null (strstr (t, "WARNING: the backward's spread"));
  free (t);
  gc_result_free (r);
  /* a depth of 1, below the measured implication: named as too small */
  gc_model dm = tg->model;
  dm.backward_depth = 1;
  r = gct_check_ok (&dm, tg->x, NULL);
  ck_assert (r->depth_implied > 1);
  t = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (strstr (t, "WARNING: the backward's spread"));
  free (t);
  gc_result_free (r);
  /* a depth of 1e6 and magnitudes 1000 times too large: both named as
     unsupported, with the factor and the supported value (manual: "What
     the measurement does not support") */
  dm.backward_depth = 1000000;
  r = gct_check_ok (&dm, tg->x, NULL);
  t = gc_report (r, GC_FMT_TEXT);
  ck_assert (r->depth_supported == 64 * r->depth_implied);
  ck_assert_msg (strstr (t, "UNSUPPORTED: the declared d_b = 1000000 is"),
                 "%.2000s", t);
  free (t);
  gc_result_free (r);
  dm = tg->model;
  real_magnitude = dm.grad_magnitude_f32;
  dm.grad_magnitude_f32 = big_magnitude;
  r = gct_check_ok (&dm, tg->x, NULL);
  ck_assert (r->depth_implied < implied / 500);
  t = gc_report (r, GC_FMT_TEXT);
  ck_assert_msg (strstr (t, "UNSUPPORTED: the declared magnitudes"),
                 "%.2000s", t);
  free (t);
  gc_result_free (r);
  gct_free (tg);
}
END_TEST

/* Run KIND (correct, then twin) over SEEDS seeds with OPTS: the correct
   model must pass every time, the twin must never pass, and its verdict
   must be WANT_TWIN (GC_FAIL also accepted where ALSO_FAIL).  */
static void
correct_and_twin (hard_kind kind, size_t n, const gc_options *o,
                  gc_verdict want_twin, bool also_fail)
{
  for (uint64_t s = 0; s < gct_seeds (SEEDS); s++)
    {
      uint64_t seed = gct_seed () + s;
      for (int twin = 0; twin < 2; twin++)
        {
          hard_model *h = hard_new (kind, n, seed, twin);
          ck_assert_ptr_nonnull (h);
          gc_result *r = gct_check_ok (&h->model, h->x, o);
          if (!twin)
            {
              char *t = r->verdict != GC_PASS ? gc_report (r, GC_FMT_TEXT)
                                              : NULL;
              ck_assert_msg (r->verdict == GC_PASS, "%s, seed %llu: %s",
                             hard_name (kind), (unsigned long long) seed,
                             t ? t : "");
              free (t);
            }
          else
            ck_assert_msg (r->verdict == want_twin
                           || (also_fail && r->verdict == GC_FAIL),
                           "%s twin, seed %llu: verdict %s",
                           hard_name (kind), (unsigned long long) seed,
                           gc_verdict_name (r->verdict));
          gc_result_free (r);
          hard_free (h);
        }
    }
}

/* A backward that does not re-zero its reduction buffer is right on its
   first call only: the second call at the centre shows it.  */
START_TEST (test_stale_buffer)
{
  correct_and_twin (HARD_STALE_BUFFER, 8, NULL, GC_NONDETERMINISTIC, false);
  hard_model *h = hard_new (HARD_STALE_BUFFER, 8, gct_seed (), true);
  ck_assert_ptr_nonnull (h);
  gc_result *r = gct_check_ok (&h->model, h->x, NULL);
  ck_assert_uint_eq (r->nondeterministic, GC_ND_GRAD);
  /* the second call adds the gradient once more: twice the first */
  ck_assert (r->nd_second == 2 * r->nd_first);
  ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_NONE);
  char *t = gc_report (r, GC_FMT_TEXT), *tap = gc_report (r, GC_FMT_TAP);
  ck_assert_ptr_nonnull (t);
  ck_assert_ptr_nonnull (tap);
  ck_assert_ptr_nonnull (strstr (t, "verdict: NON-DETERMINISTIC"));
  ck_assert_ptr_nonnull (strstr (t, "non-deterministic model: grad_f32"));
  ck_assert_ptr_nonnull (strstr (tap, "1..9\n"));
  ck_assert_ptr_nonnull (strstr (tap, "\nnot ok 9 - the model is "
                                 "deterministic: grad_f32"));
  /* Read back and merged, the report still says what the check found: a
     merged non-deterministic check must not come back as a pass.  */
  char *json = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (json);
  gc_result *back = NULL, *m = NULL;
  ck_assert_int_eq (gc_result_parse_json (json, strlen (json), &back), GC_OK);
  ck_assert_uint_eq (back->nondeterministic, GC_ND_GRAD);
  ck_assert_str_eq (back->nd_detail, r->nd_detail);
  ck_assert_int_eq (gc_result_merge (&back, 1, &m), GC_OK);
  ck_assert_int_eq (m->verdict, GC_NONDETERMINISTIC);
  ck_assert_uint_eq (m->nondeterministic, GC_ND_GRAD);
  gc_result_free (m);
  gc_result_free (back);
  free (json);
  free (t);
  free (tap);
  gc_result_free (r);
  hard_free (h);
}
END_TEST

/* An inconclusive check (a blind direction) merges into an inconclusive
   check, not a pass: merge judges the blindness again from the stored
   terms, and keeps a direction no two confirmation levels agreed on.  */
START_TEST (test_inconclusive_merges)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F32;
  gc_result *r = gct_check_ok (&t->model, t->x, &o);
  ck_assert_int_eq (r->verdict, GC_INCONCLUSIVE);
  char *json = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (json);
  gc_result *back = NULL, *m = NULL;
  ck_assert_int_eq (gc_result_parse_json (json, strlen (json), &back), GC_OK);
  ck_assert_int_eq (gc_result_merge (&back, 1, &m), GC_OK);
  ck_assert_int_eq (m->verdict, GC_INCONCLUSIVE);
  ck_assert_uint_eq (m->n_inconclusive, r->n_inconclusive);
  for (size_t k = 0; k < r->n_directions; k++)
    ck_assert_int_eq (m->dirs[k].verdict, r->dirs[k].verdict);
  gc_result_free (m);
  gc_result_free (back);
  free (json);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* A forward through a shared scratch array is wrong only when two threads
   call it at once: the serial re-evaluation shows it.  The correct model
   (locked) passes under two threads.  The twin is caught whenever a race
   made its values wrong; when the scheduler let no two calls overlap, its
   pass must be the serial check's, bit for bit; an inconclusive verdict
   (a race that left a stencil inconsistent) is no claim.  Over 20 seeds of 2 ms
   windows, at least one race is expected.  */
START_TEST (test_shared_scratch)
{
  gc_options o, serial;
  gc_options_init (&o);
  gc_options_init (&serial);
  o.threads = 2;
  size_t caught = 0;
  for (uint64_t s = 0; s < gct_seeds (SEEDS); s++)
    {
      uint64_t seed = gct_seed () + s;
      for (int twin = 0; twin < 2; twin++)
        {
          hard_model *h = hard_new (HARD_SHARED_SCRATCH, 8, seed, twin);
          ck_assert_ptr_nonnull (h);
          gc_result *r = gct_check_ok (&h->model, h->x, &o);
          if (!twin)
            ck_assert_msg (r->verdict == GC_PASS, "seed %llu: correct model "
                           "%s", (unsigned long long) seed,
                           gc_verdict_name (r->verdict));
          else if (r->verdict == GC_PASS)
            {
              gc_result *q = gct_check_ok (&h->model, h->x, &serial);
              for (size_t k = 0; k < r->n_directions; k++)
                ck_assert_msg (memcmp (&r->dirs[k].reference,
                                       &q->dirs[k].reference,
                                       sizeof (double)) == 0,
                               "seed %llu: the twin passed with values the "
                               "serial check does not give",
                               (unsigned long long) seed);
              gc_result_free (q);
            }
          else if (r->verdict == GC_INCONCLUSIVE)
            /* A race can also corrupt values so that a direction's stencil
               is not self-consistent: the check declines to judge it, and
               the serial re-evaluation (of the worst direction and the
               first, middle and last) need not include it.  Declining is
               no claim; seen under heavy load (make distcheck).  */
            ck_assert_uint_gt (r->n_inconclusive, 0);
          else
            {
              ck_assert_msg (r->verdict == GC_NONDETERMINISTIC
                             && (r->nondeterministic & GC_ND_THREADS),
                             "seed %llu: twin verdict %s",
                             (unsigned long long) seed,
                             gc_verdict_name (r->verdict));
              ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_NONE);
              caught++;
            }
          gc_result_free (r);
          hard_free (h);
        }
    }
  ck_assert_msg (caught > 0, "no race in %llu seeds",
                 (unsigned long long) gct_seeds (SEEDS));
}
END_TEST

/* sin(x) at |x| ~ 1e20: the default step (2^24 there) aliases; the
   directions are confirmed at finer steps, where the difference quotient
   converges (manual: "Confirming a direction").  The twin (1% off) fails.  */
START_TEST (test_large_parameters)
{
  correct_and_twin (HARD_LARGE_PARAM, 8, NULL, GC_FAIL, false);
  hard_model *h = hard_new (HARD_LARGE_PARAM, 8, gct_seed (), false);
  ck_assert_ptr_nonnull (h);
  gc_result *r = gct_check_ok (&h->model, h->x, NULL);
  for (size_t k = 0; k < r->n_directions; k++)
    ck_assert_msg (r->dirs[k].level > 0, "direction %zu judged at level %d: "
                   "the first step cannot resolve sin at 1e20", k,
                   r->dirs[k].level);
  gc_result_free (r);
  hard_free (h);
}
END_TEST

/* --prec 3300 (inside the documented range): the default step 2^-1100 s
   is below the smallest double; a correct model must pass, its twin
   (dW doubled) fail.  */
START_TEST (test_high_precision)
{
  gc_options o;
  gc_options_init (&o);
  o.precision = 3300;
  o.reference = GC_REF_MPFR;   /* MPFR's own step, which f64 would not take */
  int twice = gct_tanh_mutant ("dw-twice");
  for (uint64_t s = 0; s < gct_seeds (SEEDS); s++)
    for (int twin = 0; twin < 2; twin++)
      {
        gct_model *t = gct_tanh_gemm (2, 3, 2, gct_seed () + s,
                                      twin ? twice : 0);
        gc_result *r = gct_check_ok (&t->model, t->x, &o);
        ck_assert_msg (r->verdict == (twin ? GC_FAIL : GC_PASS),
                       "seed %llu%s: %s, worst nu %g",
                       (unsigned long long) (gct_seed () + s),
                       twin ? " (dw-twice)" : "",
                       gc_verdict_name (r->verdict), r->worst_nu);
        /* the step is 2^-1100 of the scale: below the doubles, yet exact */
        ck_assert (r->dirs[0].step == 0);
        gc_result_free (r);
        gct_free (t);
      }
}
END_TEST

/* tanh-gemm at M = 64, K = N = 1: z = w x reaches |z| ~ 5, where 1 - th^2
   cancels; with the magnitude 1 - th^2 instead of 1 + th^2 the correct
   backward failed on 7 of 40 seeds (nu 106 at seed 22).  Every seed
   passes; its mutants fail (no-tanh-derivative, dw-twice).  */
START_TEST (test_tanh_cancellation)
{
  int mut[2] = { gct_tanh_mutant ("no-tanh-derivative"),
                 gct_tanh_mutant ("dw-twice") };
  for (uint64_t s = 0; s < gct_seeds (40); s++)
    for (int k = 0; k < 3; k++)
      {
        gct_model *t = gct_tanh_gemm (64, 1, 1, s, k ? mut[k - 1] : 0);
        gc_result *r = gct_check_ok (&t->model, t->x, NULL);
        ck_assert_msg (r->verdict == (k ? GC_FAIL : GC_PASS),
                       "seed %llu, mutant %d: %s, worst nu %g",
                       (unsigned long long) s, k ? mut[k - 1] : 0,
                       gc_verdict_name (r->verdict), r->worst_nu);
        gc_result_free (r);
        gct_free (t);
      }
}
END_TEST

/* Parameters of size 1e-25 in an O(1) loss: at 128 bits the reference's
   rounding over the step is 5 times the gradient, and an 86% bug passed;
   the directions are evaluated again at a higher precision (manual:
   "Raising the precision").  */
START_TEST (test_tiny_parameters)
{
  correct_and_twin (HARD_TINY_PARAM, 8, NULL, GC_FAIL, false);
}
END_TEST

/* A knee 0.6 h from the point: the first stencil straddles it, D(h) is
   off by 20%; the confirmation's finer steps leave it out (manual:
   "Confirming a direction").  The twin returns the biased 0.8 and fails.  */
START_TEST (test_knee_near_point)
{
  correct_and_twin (HARD_KNEE, 8, NULL, GC_FAIL, false);
}
END_TEST

/* Correct code whose rounding errors align, where the derived bar alone
   (independent roundings) raised false alarms: a mean's gradient reduced
   naively (stagnation), arguments whose rounding an elementary function
   amplifies (sin(1000 x), a positional encoding, exp(3x) at 25).  The
   measured rounding sensitivity is in the bar (manual: "Measured rounding
   sensitivity"); the twins' bugs are still caught.  */
START_TEST (test_mean_reduction)
{
  correct_and_twin (HARD_MEAN_REDUCTION, 4, NULL, GC_FAIL, false);
}
END_TEST

START_TEST (test_amplified_argument)
{
  correct_and_twin (HARD_AMPLIFIED_ARGUMENT, 16, NULL, GC_FAIL, false);
}
END_TEST

START_TEST (test_positional)
{
  correct_and_twin (HARD_POSITIONAL, 16, NULL, GC_FAIL, false);
}
END_TEST

START_TEST (test_exp_argument)
{
  correct_and_twin (HARD_EXP_ARGUMENT, 16, NULL, GC_FAIL, false);
}
END_TEST

/* x^4 at x = 0: the fourth difference J = -delta^4 f / 2h is h^3 f''''/2,
   not 0, on an analytic function, and the loss (h^4) rounds far below it:
   it was NON-SMOOTH.  A kink's J does not shrink with h, this one shrinks
   as h^3 at the confirmation's finer steps (manual: "Non-smooth points").
   The twin's offset is caught.  A kink at the point stays non-smooth
   (check_reference).  */
START_TEST (test_quartic_zero)
{
  correct_and_twin (HARD_QUARTIC_ZERO, 8, NULL, GC_FAIL, false);
}
END_TEST

/* A backward that misbehaves only under a directed rounding mode: a
   non-finite value leaves that mode out (and says so), a failing call
   stops the check with GC_ECALLBACK naming the mode (manual: "Measured
   rounding sensitivity").  */
static int mode_how;

static int
mode_loss (void *ctx, const float *x, float *loss)
{
  (void) ctx;
  float s = 0;
  for (int i = 0; i < 4; i++)
    s += x[i] * x[i] * 0.5f;
  *loss = s;
  return 0;
}

static int
mode_grad (void *ctx, const float *x, float *g)
{
  (void) ctx;
  for (int i = 0; i < 4; i++)
    g[i] = x[i];
  if (fegetround () == FE_UPWARD)
    {
      if (mode_how == 1)
        g[2] = NAN;
      else if (mode_how == 2)
        return 7;
    }
  return 0;
}

static int
mode_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  (void) ctx;
  mpfr_t t;
  mpfr_init2 (t, mpfr_get_prec (loss));
  mpfr_set_zero (loss, 1);
  for (int i = 0; i < 4; i++)
    {
      mpfr_sqr (t, x + i, MPFR_RNDN);
      mpfr_div_2ui (t, t, 1, MPFR_RNDN);
      mpfr_add (loss, loss, t, MPFR_RNDN);
    }
  mpfr_clear (t);
  return 0;
}

START_TEST (test_directed_mode_misbehaves)
{
  gc_model m = { .abi = GC_MODEL_ABI, .name = "mode-sensitive", .n = 4,
                 .loss_f32 = mode_loss, .grad_f32 = mode_grad,
                 .loss_mpfr = mode_mpfr, .forward_depth = 6,
                 .backward_depth = 1 };
  float x[4] = { 0.5f, -1.25f, 2.0f, 0.75f };
  gc_result *r;
  mode_how = 0;
  ck_assert_int_eq (gc_check (&m, x, NULL, &r), GC_OK);
  ck_assert_uint_eq (r->rounding_modes, 3);
  ck_assert_uint_eq (r->rounding_dropped, 0);
  ck_assert_int_eq (r->verdict, GC_PASS);
  gc_result_free (r);
  mode_how = 1;
  ck_assert_int_eq (gc_check (&m, x, NULL, &r), GC_OK);
  ck_assert_uint_eq (r->rounding_modes, 2);
  ck_assert_uint_eq (r->rounding_dropped, 1);
  ck_assert_msg (strstr (r->rounding_note, "toward +inf")
                 && strstr (r->rounding_note, "parameter 2"),
                 "note: %s", r->rounding_note);
  ck_assert_int_eq (r->verdict, GC_PASS);
  char *t = gc_report (r, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (strstr (t, "1 mode left out"));
  free (t);
  gc_result_free (r);
  mode_how = 2;
  ck_assert_int_eq (gc_check (&m, x, NULL, &r), GC_ECALLBACK);
  ck_assert_msg (strstr (r->detail, "toward +inf"), "detail: %s", r->detail);
  ck_assert_int_eq (r->verdict, GC_ERROR);
  gc_result_free (r);
  /* the mode is restored whatever the model did */
  ck_assert_int_eq (fegetround (), FE_TONEAREST);
}
END_TEST

/* Random directions that see (manual: "Directional checks"): the adjoint
   term of a random direction bounds <w, e> by the draw of w, not by every
   element's error aligned; on tanh-gemm with 2304 parameters the correct
   backward passes on 20 seeds of random:8 with that term in force, and a
   backward that doubles dW fails.  */
START_TEST (test_random_directions_see)
{
  int mut = gct_tanh_mutant ("dw-twice");
  for (uint64_t s = 0; s < gct_seeds (SEEDS); s++)
    for (int k = 0; k < 2; k++)
      {
        gct_model *t = gct_tanh_gemm (32, 64, 16, gct_seed () + s,
                                      k ? mut : 0);
        gc_options o;
        gc_options_init (&o);
        o.directions = GC_DIR_RANDOM;
        o.n_random = 8;
        o.seed = gct_seed () + s;
        gc_result *r = gct_check_ok (&t->model, t->x, &o);
        ck_assert_msg (r->verdict == (k ? GC_FAIL : GC_PASS),
                       "seed %llu, %s: %s, worst nu %g",
                       (unsigned long long) (gct_seed () + s),
                       k ? "dw-twice" : "correct",
                       gc_verdict_name (r->verdict), r->worst_nu);
        size_t drawn = 0;
        for (size_t j = 0; j < r->n_directions; j++)
          drawn += strcmp (r->dirs[j].terms[GC_TERM_ADJOINT].section,
                           "Directional checks") == 0;
        /* at 2304 elements the draw's bound is the smaller everywhere */
        ck_assert_uint_eq (drawn, r->n_directions);
        gc_result_free (r);
        gct_free (t);
      }
}
END_TEST

/* Issue 24 (manual: "What the measurement does not support").  Run M at
   X without a twin; print its before/after line; check that its JSON
   report, read back and merged, gives the same verdicts; return the
   result.  */
static gc_result *
declared_check (const char *what, const gc_model *m, const float *x,
                uint64_t seed)
{
  gc_options o;
  gc_options_init (&o);
  o.no_twin = 1;
  gc_result *r = gct_check_ok (m, x, &o);
  printf ("# %s, seed %llu: %s, worst nu %.3g, resolution worst %.3g; "
          "unsupported %zu, blind-defaulted %zu, beyond 2 gamma_d %zu, "
          "M_L low %d\n", what, (unsigned long long) seed,
          gc_verdict_name (r->verdict), r->worst_nu, r->resolution_worst,
          r->n_unsupported, r->n_blind_defaulted, r->n_spread_beyond,
          r->loss_magnitude_low);
  /* a report read back and merged judges as the check did */
  char *json = gc_report (r, GC_FMT_JSON);
  ck_assert_ptr_nonnull (json);
  gc_result *back = NULL, *mg = NULL;
  ck_assert_int_eq (gc_result_parse_json (json, strlen (json), &back), GC_OK);
  ck_assert_int_eq (gc_result_merge (&back, 1, &mg), GC_OK);
  ck_assert_msg (mg->verdict == r->verdict, "%s: merged %s, checked %s",
                 what, gc_verdict_name (mg->verdict),
                 gc_verdict_name (r->verdict));
  for (size_t k = 0; k < r->n_directions; k++)
    ck_assert_int_eq (mg->dirs[k].verdict, r->dirs[k].verdict);
  ck_assert_uint_eq (mg->n_unsupported, r->n_unsupported);
  ck_assert_uint_eq (mg->n_spread_beyond, r->n_spread_beyond);
  ck_assert_int_eq (mg->loss_magnitude_low, r->loss_magnitude_low);
  gc_result_free (mg);
  gc_result_free (back);
  free (json);
  return r;
}

/* The check's verdict must not be a pass (exit 0) for a bug: fail,
   inconclusive or precision.  */
static void
assert_no_pass (const char *what, gc_result *r, const char *want_text)
{
  char *t = gc_report (r, GC_FMT_TEXT);
  ck_assert_msg (r->verdict == GC_FAIL || r->verdict == GC_INCONCLUSIVE
                 || r->verdict == GC_PRECISION, "%s passed: %s", what, t);
  if (want_text && r->verdict != GC_FAIL)
    ck_assert_msg (strstr (t, want_text), "%s: no \"%s\" in %s", what,
                   want_text, t);
  free (t);
}

/* A correct model must never fail (a false alarm).  */
static void
assert_no_alarm (const char *what, gc_result *r, bool must_pass)
{
  char *t = gc_report (r, GC_FMT_TEXT);
  ck_assert_msg (must_pass ? r->verdict == GC_PASS
                 : r->verdict == GC_PASS || r->verdict == GC_INCONCLUSIVE,
                 "%s: %s", what, t);
  free (t);
}

/* Over-declaration buys no pass: tanh-gemm's dW scaled by 1 + 2^-12 is
   caught at its honest declarations; declared with d_b = 10^6 (the
   spreads imply about 5) or with magnitudes 1000 times the tensor scale,
   it must not pass, and the report names the declaration.  The correct
   backward under the same declarations does not fail.  */
START_TEST (test_overdeclared)
{
  const gcm_spec *spec = gcm_find ("tanh-gemm");
  for (uint64_t s = 0; s < gct_seeds (4); s++)
    {
      uint64_t seed = gct_seed () + s;
      long v[GCM_MAX_KEYS];
      char err[128];
      ck_assert_int_eq (gcm_parse_shape (spec, "M=8,K=16,N=8", v, err,
                                         sizeof err), GC_OK);
      gcm_instance *inst = NULL;
      ck_assert_int_eq (gcm_create (spec, v, seed, 0, &inst), GC_OK);
      const gc_model *in = &inst->model;
      size_t wn = in->blocks[0].count;
      static const struct { const char *what; size_t depth; double mag;
                            const char *says; } decl[] = {
        { "honest", 0, 0, NULL },
        { "d_b 1e6", 1000000, 0, "the declared d_b = 1000000" },
        { "magnitudes x1000", 0, 1000, "the declared magnitudes" } };
      for (size_t k = 0; k < 3; k++)
        for (int bug = 0; bug < 2; bug++)
          {
            declared_model *d
              = declared_wrap (in, inst->x, decl[k].depth, decl[k].mag,
                               false, 0, wn, bug ? 1.000244140625f : 1.0f);
            ck_assert_ptr_nonnull (d);
            char what[96];
            snprintf (what, sizeof what, "tanh-gemm%s, %s",
                      bug ? " dW x(1+2^-12)" : "", decl[k].what);
            gc_result *r = declared_check (what, &d->model, d->x, seed);
            if (bug)
              assert_no_pass (what, r, decl[k].says);
            else
              assert_no_alarm (what, r, k == 0);
            gc_result_free (r);
            declared_free (d);
          }
      gcm_destroy (inst);
    }
}
END_TEST

/* Defaulted magnitudes on a tensor spanning 2^-56: the smallest elements
   are blind at the tensor's scale; a doubled smallest element must not
   pass.  With its magnitudes declared the correct model passes and the
   twin fails.  */
START_TEST (test_mixed_scale)
{
  for (uint64_t s = 0; s < gct_seeds (SEEDS); s++)
    for (int mag = 0; mag < 2; mag++)
      for (int twin = 0; twin < 2; twin++)
        {
          uint64_t seed = gct_seed () + s;
          declared_model *d = declared_new (DECLARED_MIXED_SCALE, 8, seed,
                                            twin, mag);
          ck_assert_ptr_nonnull (d);
          char what[96];
          snprintf (what, sizeof what, "mixed-scale%s, magnitudes %s",
                    twin ? " twin" : "", mag ? "declared" : "defaulted");
          gc_result *r = declared_check (what, &d->model, d->x, seed);
          if (twin)
            assert_no_pass (what, r, mag ? NULL : "magnitude was defaulted");
          else
            assert_no_alarm (what, r, mag);
          if (twin && mag)
            ck_assert_int_eq (r->verdict, GC_FAIL);
          gc_result_free (r);
          declared_free (d);
        }
}
END_TEST

/* A spread that would widen its own bar: a reduction cut to 16 bits after
   each addition, the cut following the rounding mode, is a precision
   finding (exit 6), never a pass; the f32 reduction passes.  */
START_TEST (test_spread_beyond_worst_case)
{
  for (uint64_t s = 0; s < gct_seeds (8); s++)
    for (int twin = 0; twin < 2; twin++)
      {
        uint64_t seed = gct_seed () + s;
        declared_model *d = declared_new (DECLARED_LOW_PRECISION, 4, seed,
                                          twin, true);
        ck_assert_ptr_nonnull (d);
        gc_result *r = declared_check (twin ? "low-precision twin"
                                       : "low-precision", &d->model, d->x,
                                       seed);
        if (twin)
          {
            assert_no_pass ("low-precision twin", r, "PRECISION");
            ck_assert (r->verdict == GC_FAIL || r->n_spread_beyond > 0);
          }
        else
          assert_no_alarm ("low-precision", r, true);
        gc_result_free (r);
        declared_free (d);
      }
}
END_TEST

/* M_L is validated as the magnitudes are: a declared 0 is below |L| / 2,
   raised, and the report says so; the verdict stands.  */
START_TEST (test_loss_magnitude_zero)
{
  hard_model *h = hard_new (HARD_POSITIONAL, 8, gct_seed (), false);
  ck_assert_ptr_nonnull (h);
  declared_model *d = declared_wrap (&h->model, h->x, 0, 0, true, 0, 0, 1);
  ck_assert_ptr_nonnull (d);
  gc_result *r = declared_check ("positional, M_L 0", &d->model, d->x,
                                 gct_seed ());
  ck_assert_int_eq (r->loss_magnitude_low, 1);
  ck_assert (r->loss_magnitude >= fabs (r->loss_f32));
  char *t = gc_report (r, GC_FMT_TEXT);
  ck_assert_msg (strstr (t, "the declared M_L = 0 is below half of |L|"),
                 "%s", t);
  free (t);
  assert_no_alarm ("positional, M_L 0", r, true);
  gc_result_free (r);
  declared_free (d);
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
  tcase_add_test (tc, test_stale_buffer);
  tcase_add_test (tc, test_shared_scratch);
  tcase_add_test (tc, test_large_parameters);
  tcase_add_test (tc, test_subnormal_gradient);
  tcase_add_test (tc, test_tiny_parameters);
  tcase_add_test (tc, test_knee_near_point);
  tcase_add_test (tc, test_mean_reduction);
  tcase_add_test (tc, test_amplified_argument);
  tcase_add_test (tc, test_positional);
  tcase_add_test (tc, test_exp_argument);
  tcase_add_test (tc, test_quartic_zero);
  tcase_add_test (tc, test_directed_mode_misbehaves);
  suite_add_tcase (s, tc);
  /* The cases whose model calls OpenBLAS (tanh-gemm): tests/kernels.sh
     runs this case under every kernel the CPU runs (CK_RUN_CASE=blas); the
     others are plain C, whose results no kernel changes.  */
  TCase *tb = tcase_create ("blas");
  tcase_set_timeout (tb, 600);
  tcase_add_test (tb, test_declared_inputs);
  tcase_add_test (tb, test_high_precision);
  tcase_add_test (tb, test_inconclusive_merges);
  tcase_add_test (tb, test_random_directions_see);
  tcase_add_test (tb, test_resolution_summary);
  tcase_add_test (tb, test_tanh_cancellation);
  suite_add_tcase (s, tb);
  /* Issue 24: passes that rest on a declaration.  */
  TCase *td = tcase_create ("declared");
  tcase_set_timeout (td, 600);
  tcase_add_test (td, test_overdeclared);
  tcase_add_test (td, test_mixed_scale);
  tcase_add_test (td, test_spread_beyond_worst_case);
  tcase_add_test (td, test_loss_magnitude_zero);
  suite_add_tcase (s, td);
  /* Issue 24 round 3: the check's own edges (tests/hard/edges_tests.c).  */
  edges_add_tests (s);
  return s;
}

int
main (void)
{
  return gct_run (hard_suite ());
}
