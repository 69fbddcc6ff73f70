/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_reference.c -- the reference side against closed-form derivatives.

   For functions whose exact gradient is known (a polynomial, log-sum-exp,
   tanh of an sgemm product), the central difference's true error
   |D(h) - g*| must lie within the reported reference terms (truncation +
   reference rounding), the f32 backward's true error |g_hat - g*| within the
   adjoint term, and the terms must not be absurdly loose: where the true
   error is measurable, a term is at most 1000 times it.  Each term is tested
   in a regime where it dominates: the default (rounding-free MPFR), a large
   step (truncation), a low precision (MPFR rounding).  */

#include "gctest.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* "Measurable": the comparison itself errs by the double roundings of the
   exact gradient and of the reported values, a few 2^-53 |g*|; a true error
   above 2^-40 |g*| exceeds that by 2^13, so term / true is measured to
   better than 0.1 %, not an artefact of the comparison.  */
#define MEASURABLE(err, g) ((err) > 0x1p-40 * fabs (g))

typedef struct stats
{
  double worst_cover;     /* max over i of true / term: must be <= 1 */
  double worst_loose;     /* max over measurable i of term / true */
  double max_true, max_term;
  size_t measurable;
} stats;

static void
ref_stats (const gc_result *r, const double *exact, stats *s)
{
  *s = (stats) { 0 };
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      double g = exact[d->index];
      double err = fabs (d->reference - g);
      double term = d->terms[GC_TERM_TRUNCATION].value
                    + d->terms[GC_TERM_REFERENCE].value;
      s->worst_cover = fmax (s->worst_cover, term > 0 ? err / term
                                             : err > 0 ? INFINITY : 0);
      s->max_true = fmax (s->max_true, err);
      s->max_term = fmax (s->max_term, term);
      if (MEASURABLE (err, g))
        {
          s->measurable++;
          s->worst_loose = fmax (s->worst_loose, term / err);
        }
    }
}

static void
adj_stats (const gc_result *r, const double *exact, stats *s)
{
  *s = (stats) { 0 };
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      double g = exact[d->index];
      double err = fabs (d->analytic - g);
      double term = d->terms[GC_TERM_ADJOINT].value;
      s->worst_cover = fmax (s->worst_cover, term > 0 ? err / term
                                             : err > 0 ? INFINITY : 0);
      s->max_true = fmax (s->max_true, err);
      s->max_term = fmax (s->max_term, term);
      if (MEASURABLE (err, g))
        s->measurable++;
    }
}

static gct_model *
make (int which, uint64_t seed)
{
  switch (which)
    {
    case 0: return gct_poly (24, seed);
    case 1: return gct_lse (24, seed);
    default: return gct_tanh_gemm (4, 8, 4, seed, 0);
    }
}

static const char *const names[] = { "poly", "log-sum-exp", "tanh-gemm" };

/* Default options: the check passes, every reference error and every f32
   adjoint error lies within its terms.  */
START_TEST (test_default_regime)
{
  for (uint64_t s = 0; s < gct_seeds (5); s++)
    {
      gct_model *t = make (_i, gct_seed () + s);
      double *exact = malloc (t->n * sizeof *exact);
      t->exact_grad (t, exact);
      gc_result *r = gct_check_ok (&t->model, t->x, NULL);
      ck_assert_msg (r->verdict == GC_PASS, "%s: verdict %s, worst nu %g",
                     names[_i], gc_verdict_name (r->verdict), r->worst_nu);
      stats sr, sa;
      ref_stats (r, exact, &sr);
      adj_stats (r, exact, &sa);
      ck_assert_msg (sr.worst_cover <= 1, "%s: reference error exceeds its "
                     "terms by %g", names[_i], sr.worst_cover);
      ck_assert_msg (sa.worst_cover <= 1, "%s: f32 adjoint error exceeds "
                     "the adjoint term by %g", names[_i], sa.worst_cover);
      /* Not absurdly loose: the largest adjoint term within 1000 times the
         largest real f32 adjoint error.  */
      if (sa.measurable)
        ck_assert_msg (sa.max_term <= GCT_LOOSENESS_MAX * sa.max_true,
                       "%s: adjoint term %g vs real error %g", names[_i],
                       sa.max_term, sa.max_true);
      gc_result_free (r);
      free (exact);
      gct_free (t);
    }
}
END_TEST

/* A large step: truncation dominates the reference's error; the truncation
   term covers it and is within 1000 times it wherever it is measurable.  */
START_TEST (test_truncation_regime)
{
  gc_options o;
  gc_options_init (&o);
  o.step = 0x1p-6;
  for (uint64_t s = 0; s < gct_seeds (5); s++)
    {
      gct_model *t = make (_i, gct_seed () + s);
      double *exact = malloc (t->n * sizeof *exact);
      t->exact_grad (t, exact);
      gc_result *r = gct_check_ok (&t->model, t->x, &o);
      stats sr;
      ref_stats (r, exact, &sr);
      ck_assert_msg (sr.worst_cover <= 1, "%s: truncation error exceeds the "
                     "terms by %g", names[_i], sr.worst_cover);
      ck_assert_msg (sr.measurable > 0, "%s: no measurable truncation at "
                     "h = 2^-6", names[_i]);
      ck_assert_msg (sr.worst_loose <= GCT_LOOSENESS_MAX, "%s: truncation "
                     "term %g times the true error", names[_i],
                     sr.worst_loose);
      gc_result_free (r);
      free (exact);
      gct_free (t);
    }
}
END_TEST

/* A low MPFR precision: the MPFR rounding term dominates; it covers the
   real error of every direction and, over the check, is within 1000 times
   the largest real error (one direction's rounding error can be near zero
   by chance, so the comparison is of maxima).  */
START_TEST (test_rounding_regime)
{
  gc_options o;
  gc_options_init (&o);
  o.precision = 30;
  o.step = 0x1p-14;
  for (uint64_t s = 0; s < gct_seeds (5); s++)
    {
      gct_model *t = make (_i, gct_seed () + s);
      double *exact = malloc (t->n * sizeof *exact);
      t->exact_grad (t, exact);
      gc_result *r = gct_check_ok (&t->model, t->x, &o);
      stats sr;
      ref_stats (r, exact, &sr);
      ck_assert_msg (sr.worst_cover <= 1, "%s: MPFR rounding error exceeds "
                     "the terms by %g", names[_i], sr.worst_cover);
      ck_assert_msg (sr.max_term <= GCT_LOOSENESS_MAX * sr.max_true,
                     "%s: rounding term %g vs largest real error %g",
                     names[_i], sr.max_term, sr.max_true);
      gc_result_free (r);
      free (exact);
      gct_free (t);
    }
}
END_TEST

/* Random unit directions: the correct gradient passes, a doubled block
   fails.  */
START_TEST (test_random_directions)
{
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 8;
  o.seed = gct_seed ();
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_result *r = gct_check_ok (&t->model, t->x, &o);
  ck_assert_int_eq (r->verdict, GC_PASS);
  ck_assert_uint_eq (r->n_directions, 8);
  for (size_t k = 0; k < 8; k++)
    ck_assert (r->dirs[k].index == SIZE_MAX);
  gc_result_free (r);
  gct_free (t);
  t = gct_tanh_gemm (4, 8, 4, gct_seed (), gct_tanh_mutant ("dw-twice"));
  r = gct_check_ok (&t->model, t->x, &o);
  ck_assert_int_eq (r->verdict, GC_FAIL);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* A kink at the point: |x| at x = 0 is reported as non-smooth, neither a
   pass nor a failure; away from kinks the same model passes.  */
START_TEST (test_nonsmooth)
{
  gct_model *t = gct_abs (6, gct_seed ());
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  ck_assert_int_eq (r->verdict, GC_PASS);
  gc_result_free (r);
  t->x[3] = 0;
  r = gct_check_ok (&t->model, t->x, NULL);
  ck_assert_int_eq (r->verdict, GC_NONSMOOTH);
  ck_assert_uint_eq (r->n_nonsmooth, 1);
  ck_assert_int_eq (r->dirs[3].verdict, GC_NONSMOOTH);
  /* The jump of |x|' at 0 is 2.  */
  ck_assert_double_eq_tol (r->dirs[3].jump, 2.0, r->dirs[3].bar);
  ck_assert_int_eq (r->diagnosis.kind, GC_DIAG_NONSMOOTH);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* Threads: any number of workers gives bit-identical directions.  */
START_TEST (test_threads_identical)
{
  gct_model *t = gct_tanh_gemm (4, 8, 4, gct_seed (), 0);
  gc_options o;
  gc_options_init (&o);
  gc_result *r1 = gct_check_ok (&t->model, t->x, &o);
  o.threads = 3;
  gc_result *r3 = gct_check_ok (&t->model, t->x, &o);
  ck_assert_uint_eq (r1->n_directions, r3->n_directions);
  for (size_t k = 0; k < r1->n_directions; k++)
    {
      ck_assert (r1->dirs[k].analytic == r3->dirs[k].analytic);
      ck_assert (r1->dirs[k].reference == r3->dirs[k].reference);
      ck_assert (r1->dirs[k].bar == r3->dirs[k].bar);
    }
  gc_result_free (r1);
  gc_result_free (r3);
  gct_free (t);
}
END_TEST

/* Reentrancy: two checks in two threads at once give the same results as
   the same checks one after the other.  */
typedef struct job
{
  gct_model *t;
  gc_result *r;
} job;

static void *
run_job (void *arg)
{
  job *j = arg;
  gc_check (&j->t->model, j->t->x, NULL, &j->r);
  return NULL;
}

START_TEST (test_two_checks_in_two_threads)
{
  job a = { gct_tanh_gemm (4, 8, 4, gct_seed (), 0), NULL };
  job b = { gct_lse (16, gct_seed ()), NULL };
  pthread_t ta, tb;
  ck_assert_int_eq (pthread_create (&ta, NULL, run_job, &a), 0);
  ck_assert_int_eq (pthread_create (&tb, NULL, run_job, &b), 0);
  pthread_join (ta, NULL);
  pthread_join (tb, NULL);
  job *jobs[2] = { &a, &b };
  for (int k = 0; k < 2; k++)
    {
      gc_result *seq = gct_check_ok (&jobs[k]->t->model, jobs[k]->t->x, NULL);
      gc_result *par = jobs[k]->r;
      ck_assert_ptr_nonnull (par);
      ck_assert_int_eq (par->status, GC_OK);
      ck_assert_uint_eq (par->n_directions, seq->n_directions);
      for (size_t d = 0; d < seq->n_directions; d++)
        {
          ck_assert (par->dirs[d].analytic == seq->dirs[d].analytic);
          ck_assert (par->dirs[d].reference == seq->dirs[d].reference);
          ck_assert (par->dirs[d].bar == seq->dirs[d].bar);
        }
      gc_result_free (seq);
      gc_result_free (par);
      gct_free (jobs[k]->t);
    }
}
END_TEST

/* The derived precision and step: 128 bits, h a power of two.  */
START_TEST (test_defaults_derived)
{
  gct_model *t = gct_poly (8, gct_seed ());
  gc_options o;   /* MPFR's default step (the tiered default takes f64's
                     where f64 decides: manual "The tiered reference") */
  gc_options_init (&o);
  o.reference = GC_REF_MPFR;
  gc_result *r = gct_check_ok (&t->model, t->x, &o);
  ck_assert_int_eq (r->precision, 128);
  double sq = 0;
  for (size_t i = 0; i < t->n; i++)
    sq += (double) t->x[i] * t->x[i];
  double rms = sqrt (sq / (double) t->n);
  for (size_t k = 0; k < r->n_directions; k++)
    {
      int e;
      double f = frexp (r->dirs[k].step, &e);
      ck_assert_msg (f == 0.5, "step %a is not a power of two",
                     r->dirs[k].step);
      /* h = 2^(floor(log2 s) - floor(128/3)), s = max(|x_i|, rms x):
         h / s in (2^-43, 2^-42].  */
      double s = fmax (fabs (t->x[r->dirs[k].index]), rms);
      double rel = r->dirs[k].step / s;
      ck_assert_msg (rel > 0x1p-43 && rel <= 0x1p-42, "h / s = %a", rel);
    }
  gc_result_free (r);
  gct_free (t);
}
END_TEST

static Suite *
reference_suite (void)
{
  Suite *s = suite_create ("reference");
  TCase *tc = tcase_create ("closed forms");
  tcase_set_timeout (tc, 120);
  tcase_add_loop_test (tc, test_default_regime, 0, 3);
  tcase_add_loop_test (tc, test_truncation_regime, 0, 3);
  tcase_add_loop_test (tc, test_rounding_regime, 0, 3);
  tcase_add_test (tc, test_random_directions);
  tcase_add_test (tc, test_nonsmooth);
  tcase_add_test (tc, test_threads_identical);
  tcase_add_test (tc, test_two_checks_in_two_threads);
  tcase_add_test (tc, test_defaults_derived);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (reference_suite ());
}
