/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_diagnosis_catalogue.c -- the diagnosis catalogue (issue 36): for
   each kind of finding, a small model of our own with a known bug and the
   diagnosis it must give.  The models are written once in double; the
   f32 path is the same computation rounded to float at its end (its
   error within half an ulp, inside any bar), the twin the same
   computation unrounded, so that every failure is the injected bug's:

   (rnn, gru, stair and attn in catalogue_flow.c)
     rnn        h_t = tanh(W h_{t-1} + U x_t + b), t = 0..T-1, shared W,
                U, b; per-step inputs xs[T,H] are parameters too.  Bugs:
                the recurrent weight transposed in the backward (W where
                W^T belongs), and the loss term of one step dropped.
     gru        a GRU-like recurrence, the inputs one block per step
                (x0 .. x7), six shared gate weights.  Bugs: the loss term
                of step 5 dropped; the recurrent Uh transposed.
     stair      a forward quantised to stairs of 1/3e6, finer than the
                step, the backward the smooth surrogate's.
     attn       o = sum_j softmax_j(temp q.k_j, masked) v_j.  Bugs: the
                mask ignored in the backward; the softmax backward
                without its row-sum term.
     scale      L = sum c_i tanh(s w_i), one-element s: ds negated.
     mean14     L = (1/14) sum (exp(3x)/9 + sin(5x)/25): the 1/N dropped in the
                backward and its twin alike (an exact x14, twin on).
     bf16       a correct backward whose every element is rounded to bf16
                by bit operations, nothing declared, no twin.
     hsig       hardsigmoid x/6 + 1/2: the f32 path and its twin multiply
                by float32(1/6), the reference forward by 1/6 (torch's
                float64 hardsigmoid does so): the twin is not the
                reference's algorithm.

   Each test asserts the kind, and the words a reader acts on.  */

#include "catalogue.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
cat_loss32 (void *ctx, const float *x, float *l)
{
  cat *m = ctx;
  double xd[256];
  for (size_t i = 0; i < m->n; i++)
    xd[i] = x[i];
  *l = (float) m->loss (m, xd, 32);
  return 0;
}

static int
cat_loss64 (void *ctx, const double *x, double *l)
{
  cat *m = ctx;
  *l = m->loss (m, x, 64);
  return 0;
}

static int
cat_grad32 (void *ctx, const float *x, float *g)
{
  cat *m = ctx;
  double xd[256], gd[256];
  for (size_t i = 0; i < m->n; i++)
    xd[i] = x[i];
  m->grad (m, xd, gd, 32);
  for (size_t i = 0; i < m->n; i++)
    g[i] = (float) gd[i];
  if (m->round32)
    m->round32 (g, m->n);
  return 0;
}

int
cat_grad64 (void *ctx, const double *x, double *g)
{
  cat *m = ctx;
  m->grad (m, x, g, 64);
  return 0;
}

static uint64_t cat_state;

static double
cat_uniform (void)
{
  cat_state = cat_state * 6364136223846793005u + 1442695040888963407u;
  return (double) (cat_state >> 11) * 0x1p-53 * 2 - 1;
}

void
cat_init (cat *m, const char *name, size_t n, bool twin)
{
  memset (m, 0, sizeof *m);
  m->n = n;
  m->model.abi = GC_MODEL_ABI;
  m->model.name = name;
  m->model.n = n;
  m->model.loss_f32 = cat_loss32;
  m->model.grad_f32 = cat_grad32;
  m->model.loss_f64 = cat_loss64;
  m->model.grad_f64 = twin ? cat_grad64 : NULL;
  m->model.ctx = m;
  m->model.forward_depth = 64;
  m->model.backward_depth = 64;
  m->model.blocks = m->blocks;
  cat_state = gct_seed () * 2 + 1;
  for (size_t i = 0; i < n; i++)
    {
      m->x[i] = (float) (0.8 * cat_uniform ());
      m->c[i] = cat_uniform ();
    }
}

void
cat_block (cat *m, const char *name, size_t offset, size_t d0, size_t d1)
{
  gc_block *b = &m->blocks[m->model.n_blocks++];
  *b = (gc_block) { name, offset, d0 * (d1 ? d1 : 1), d1 ? 2 : 1,
                    { d0, d1 } };
}

gc_result *
cat_check (cat *m)
{
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F64;
  gc_result *r = gct_check_ok (&m->model, m->x, &o);
  fprintf (stderr, "# %s bug %d twin %d: %s -- %s\n", m->model.name, m->bug,
           m->model.grad_f64 != NULL, gc_verdict_name (r->verdict),
           r->diagnosis.text);
  /* bench/diagnosis.py's rows: model, bug, twin, verdict, kind, text */
  const char *tsv = getenv ("GC_CATALOGUE_TSV");
  FILE *f = tsv ? fopen (tsv, "a") : NULL;
  if (f)
    {
      fprintf (f, "%s\t%d\t%d\t%s\t%s\t%s\n", m->model.name, m->bug,
               m->model.grad_f64 != NULL, gc_verdict_name (r->verdict),
               gc_ck__diagnosis_name (r->diagnosis.kind), r->diagnosis.text);
      fclose (f);
    }
  return r;
}

/* ------------------------------------------------------------------ */
/* scale: s[1] then w[N]; L = sum c_i tanh(s w_i).  */

enum { SC_N = 12 };

static double
scale_loss (const cat *m, const double *p, int path)
{
  (void) path;
  double l = 0;
  for (size_t i = 0; i < SC_N; i++)
    l += m->c[i] * tanh (p[0] * p[1 + i]);
  return l;
}

static void
scale_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  g[0] = 0;
  for (size_t i = 0; i < SC_N; i++)
    {
      double t = tanh (p[0] * p[1 + i]), d = m->c[i] * (1 - t * t);
      g[0] += d * p[1 + i];
      g[1 + i] = d * p[0];
    }
  if (m->bug)
    g[0] = -g[0];
}

/* A one-element tensor with its sign flipped is called a sign flip, with
   the caveat that one element is all the evidence; with and without the
   twin alike.  */
START_TEST (test_one_element_sign_flip)
{
  for (int twin = 0; twin < 2; twin++)
    {
      cat m;
      cat_init (&m, "scale", SC_N + 1, twin);
      m.bug = 1;
      m.loss = scale_loss;
      m.grad = scale_grad;
      m.x[0] = 0.9f;
      cat_block (&m, "s", 0, 1, 0);
      cat_block (&m, "w", 1, SC_N, 0);
      gc_result *r = cat_check (&m);
      const gc_diagnosis *dg = &r->diagnosis;
      ck_assert_uint_eq (r->n_failed, 1);
      ck_assert_msg (dg->kind == GC_DIAG_SIGN_FLIP, "twin %d: %s", twin,
                     dg->text);
      ck_assert_msg (strstr (dg->text, "one element"), "%s", dg->text);
      ck_assert_str_eq (dg->block, "s");
      gc_result_free (r);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* mean14: L = (1/14) sum (exp(3x)/9 + sin(5x)/25), n = 14: curved enough
   that the twin's reference errs near its bar (a x14 read against f64
   terms unscaled by 14 was "logic error ... from 14 to 14").  */

enum { M14_N = 14 };

static double
mean14_loss (const cat *m, const double *p, int path)
{
  (void) m;
  (void) path;
  double l = 0;
  for (size_t i = 0; i < M14_N; i++)
    l += exp (3 * p[i]) / 9 + sin (5 * p[i]) / 25;
  return l / M14_N;
}

static void
mean14_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  for (size_t i = 0; i < M14_N; i++)
    g[i] = (exp (3 * p[i]) / 3 + cos (5 * p[i]) / 5) / (m->bug ? 1 : M14_N);
}

/* An exact x14 (a dropped 1/N) in the backward and its twin: "constant
   factor 14" with the twin on as without it.  */
START_TEST (test_integer_factor_with_twin)
{
  static const gc_constant n14[] = { { "N", 14 } };
  for (int twin = 0; twin < 2; twin++)
    {
      cat m;
      cat_init (&m, "mean14", M14_N, twin);
      m.bug = 1;
      m.loss = mean14_loss;
      m.grad = mean14_grad;
      m.model.constants = n14;
      m.model.n_constants = 1;
      gc_result *r = cat_check (&m);
      const gc_diagnosis *dg = &r->diagnosis;
      ck_assert_int_eq (r->verdict, GC_FAIL);
      ck_assert_msg (dg->kind == GC_DIAG_CONSTANT_FACTOR
                     && strcmp (dg->closed_form, "N") == 0,
                     "twin %d: %s", twin, dg->text);
      ck_assert (fabs (dg->factor - 14) < 1e-3);
      /* the range's ends printed to the digits that tell them apart
         (issue 36: "from 14 to 14"), or said equal */
      const char *rg = strstr (dg->text, "ratios ");
      ck_assert_ptr_nonnull (rg);
      char lo[40], hi[40];
      ck_assert_int_eq (sscanf (rg, "ratios %39s to %39[^;]", lo, hi), 2);
      ck_assert_msg (strcmp (lo, hi) != 0 || strstr (hi, "(all equal)"),
                     "%s", dg->text);
      ck_assert_msg (strtod (lo, NULL) <= strtod (hi, NULL), "%s", dg->text);
      gc_result_free (r);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* bf16: L = sum c_i tanh(a_i x_i) + x_i^2 / 4 over 64 elements; the f32
   path rounds every gradient element to bf16 (round to nearest even by
   bit operations), nothing declared, no twin.  */

enum { BF_N = 64 };

static double
bf_loss (const cat *m, const double *p, int path)
{
  (void) path;
  double l = 0;
  for (size_t i = 0; i < BF_N; i++)
    l += m->c[i] * tanh (2 * p[i]) + p[i] * p[i] / 4;
  return l;
}

static void
bf_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  for (size_t i = 0; i < BF_N; i++)
    {
      double t = tanh (2 * p[i]);
      g[i] = 2 * m->c[i] * (1 - t * t) + p[i] / 2;
    }
}

static void
bf_round (float *g, size_t n)
{
  for (size_t i = 0; i < n; i++)
    g[i] = gcm_bf16_round (g[i]);
}

static void
bf_init (cat *m, void (*round) (float *, size_t))
{
  cat_init (m, "bf16", BF_N, false);
  m->loss = bf_loss;
  m->grad = bf_grad;
  m->round32 = round;
  cat_block (m, "x", 0, BF_N, 0);
}

/* Undeclared rounding: the ratios scatter within 2^-8 of 1 on both
   sides: suspected rounding of about bf16's unit roundoff, with the
   declaration that would settle it -- not a logic error.  */
START_TEST (test_undeclared_bf16)
{
  cat m;
  bf_init (&m, bf_round);
  m.bug = 1;   /* (a label: the rounding is the f32 path's end) */
  gc_result *r = cat_check (&m);
  const gc_diagnosis *dg = &r->diagnosis;
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_msg (dg->kind == GC_DIAG_ROUNDING_SUSPECTED, "%s", dg->text);
  ck_assert_msg (strstr (dg->text, "bf16") && strstr (dg->text, "2^-8")
                 && strstr (dg->text, "grad_f64"), "%s", dg->text);
  gc_result_free (r);
}
END_TEST

/* Not every small scatter is rounding: a backward off by a relative 3%
   on alternate elements, one sign, is no rounding of any format's
   roundoff -- it keeps its logic error.  */
static void
bf_bias (float *g, size_t n)
{
  for (size_t i = 0; i < n; i += 2)
    g[i] *= 1.03f;
}

START_TEST (test_bias_not_rounding)
{
  cat m;
  bf_init (&m, bf_bias);
  m.bug = 2;
  gc_result *r = cat_check (&m);
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_msg (r->diagnosis.kind != GC_DIAG_ROUNDING_SUSPECTED, "%s",
                 r->diagnosis.text);
  gc_result_free (r);
}
END_TEST

/* tanh-gemm's dx-bf16-sum (bf16 partial sums in the f32 path only): with
   the twin, precision findings worded as such, never "failure(s)"; without
   it, suspected rounding of bf16's unit roundoff, not a logic error.  */
START_TEST (test_bf16_sums_both_paths)
{
  gct_model *t = gct_tanh_gemm (8, 16, 8, gct_seed (),
                                gct_tanh_mutant ("dx-bf16-sum"));
  gc_result *r = gct_check_ok (&t->model, t->x, NULL);
  const gc_diagnosis *dg = &r->diagnosis;
  fprintf (stderr, "# dx-bf16-sum, twin: %s -- %s\n",
           gc_verdict_name (r->verdict), dg->text);
  ck_assert_int_eq (r->verdict, GC_PRECISION);
  ck_assert_msg (dg->kind == GC_DIAG_PRECISION
                 && strstr (dg->text, "precision finding(s)")
                 && !strstr (dg->text, "failure(s)")
                 && strstr (dg->text, "g32 / g64"), "%s", dg->text);
  gc_result_free (r);
  gc_options o;
  gc_options_init (&o);
  o.no_twin = 1;
  r = gct_check_ok (&t->model, t->x, &o);
  dg = &r->diagnosis;
  fprintf (stderr, "# dx-bf16-sum, no twin: %s -- %s\n",
           gc_verdict_name (r->verdict), dg->text);
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_msg (dg->kind == GC_DIAG_ROUNDING_SUSPECTED
                 && strstr (dg->text, "like bf16"), "%s", dg->text);
  gc_result_free (r);
  gct_free (t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* deep: L = sum c_i (1 + x_i/K)^K, K = 2^16, the f32 forward by K float
   multiplications (a forward far deeper than the default depth n = 8,
   untouched), the reference by pow in double; the backward x (1 + 1e-3)
   (torch's prod read so).  */

enum { DP_N = 8, DP_K = 1 << 16 };

static int
deep_loss32 (void *ctx, const float *x, float *l)
{
  cat *m = ctx;
  float s = 0;
  for (size_t i = 0; i < DP_N; i++)
    {
      float b = 1 + x[i] / DP_K, p = 1;
      for (size_t k = 0; k < DP_K; k++)
        p *= b;
      s += (float) m->c[i] * p;
    }
  *l = s;
  return 0;
}

static int
deep_magnitude (void *ctx, const float *x, float *l)
{
  cat *m = ctx;
  double s = 0;
  for (size_t i = 0; i < DP_N; i++)
    s += fabs (m->c[i]) * pow (1 + (double) x[i] / DP_K, DP_K);
  *l = (float) s;
  return 0;
}

static double
deep_loss (const cat *m, const double *p, int path)
{
  (void) path;
  double s = 0;
  for (size_t i = 0; i < DP_N; i++)
    s += m->c[i] * pow (1 + p[i] / DP_K, DP_K);
  return s;
}

static void
deep_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  for (size_t i = 0; i < DP_N; i++)
    g[i] = m->c[i] * pow (1 + p[i] / DP_K, DP_K - 1) * (m->bug ? 1.001 : 1);
}

/* Forward mismatch only where the forwards are known to disagree: beyond
   the worst case of a defaulted depth, the gradient's x1.001 is
   diagnosed (a constant factor), the forwards' difference said first;
   declared, the same distance is a forward mismatch.  */
START_TEST (test_forward_mismatch_needs_declared_depth)
{
  for (int declared = 0; declared < 2; declared++)
    {
      cat m;
      cat_init (&m, "deep", DP_N, false);
      m.bug = 1;
      m.loss = deep_loss;
      m.grad = deep_grad;
      m.model.loss_f32 = deep_loss32;
      m.model.loss_magnitude_f32 = deep_magnitude;
      m.model.forward_depth = declared ? 8 : 0;
      gc_result *r = cat_check (&m);
      const gc_diagnosis *dg = &r->diagnosis;
      ck_assert_int_eq (r->verdict, GC_FAIL);
      if (declared)
        ck_assert_msg (dg->kind == GC_DIAG_FORWARD_MISMATCH, "%s", dg->text);
      else
        ck_assert_msg (dg->kind == GC_DIAG_CONSTANT_FACTOR
                       && strncmp (dg->text, "first: ", 7) == 0
                       && strstr (dg->text, "defaulted forward depth"),
                       "%s", dg->text);
      gc_result_free (r);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* hsig: L = sum c_i hardsigmoid(x_i) + x_i^3 / 6, x in (-3, 3).  */

enum { HS_N = 16 };

static double
hs_loss (const cat *m, const double *p, int path)
{
  /* the f32 forward multiplies by float32(1/6), the reference by 1/6 */
  double sixth = path == 32 ? (double) (1.0f / 6) : 1.0 / 6;
  double l = 0;
  for (size_t i = 0; i < HS_N; i++)
    l += m->c[i] * (p[i] * sixth + 0.5) + p[i] * p[i] * p[i] / 6;
  return l;
}

static void
hs_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  /* both backward paths multiply by float32(1/6) */
  double sixth = (double) (1.0f / 6);
  for (size_t i = 0; i < HS_N; i++)
    g[i] = m->c[i] * sixth + p[i] * p[i] / 2;
}

/* The twin's f64 path differs from the reference by float32(1/6) / (1/6)
   = 1 + 3e-8, far below f32's resolution, far above f64's: a twin that
   is not the reference's algorithm, named so, not a logic error of the
   op.  */
START_TEST (test_twin_not_the_algorithm)
{
  cat m;
  cat_init (&m, "hsig", HS_N, true);
  m.bug = 1;   /* (a label: the twin's constant is the bug) */
  m.loss = hs_loss;
  m.grad = hs_grad;
  cat_block (&m, "x", 0, HS_N, 0);
  gc_result *r = cat_check (&m);
  const gc_diagnosis *dg = &r->diagnosis;
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_msg (dg->kind == GC_DIAG_TWIN_DIFFERS, "%s", dg->text);
  ck_assert_msg (strstr (dg->text, "g32 agrees with the reference"), "%s",
                 dg->text);
  gc_result_free (r);
}
END_TEST

/* hsig with its twin off by 1 + 1e-4 (the f32 path and the reference
   right) and magnitudes declared 1e7 times the gradient's: the f32 bar is
   blind (resolution above 1), so g32's agreement with the reference says
   nothing, and a g64 gap of 1e-4 is "a few f32 roundings" only of those
   inflated magnitudes.  No twin-differs reading may rest on it (a new
   user's trial: a zero row's defaulted magnitudes made the f32 check
   blind and the diagnosis blamed the twin); the algorithm's failure is
   diagnosed as what it is, a factor.  */
static void
hs_grad_twin_off (const cat *m, const double *p, double *g, int path)
{
  for (size_t i = 0; i < HS_N; i++)
    g[i] = (m->c[i] / 6 + p[i] * p[i] / 2) * (path == 64 ? 1 + 1e-4 : 1);
}

static double
hs_loss_exact (const cat *m, const double *p, int path)
{
  (void) path;
  double l = 0;
  for (size_t i = 0; i < HS_N; i++)
    l += m->c[i] * (p[i] / 6 + 0.5) + p[i] * p[i] * p[i] / 6;
  return l;
}

static int
hs_blind_magnitude (void *ctx, const float *x, float *g)
{
  cat *m = ctx;
  for (size_t i = 0; i < m->n; i++)
    g[i] = (float) (1e7 * (fabs (m->c[i]) / 6 + (double) x[i] * x[i] / 2));
  return 0;
}

START_TEST (test_twin_differs_needs_a_seeing_bar)
{
  cat m;
  cat_init (&m, "hsig-blind", HS_N, true);
  m.bug = 1;
  m.loss = hs_loss_exact;
  m.grad = hs_grad_twin_off;
  m.model.grad_magnitude_f32 = hs_blind_magnitude;
  cat_block (&m, "x", 0, HS_N, 0);
  gc_result *r = cat_check (&m);
  const gc_diagnosis *dg = &r->diagnosis;
  ck_assert_int_eq (r->verdict, GC_FAIL);
  ck_assert_uint_eq (r->n_failed_algorithm, HS_N);
  for (size_t k = 0; k < r->n_directions; k++)
    ck_assert_msg (!(r->dirs[k].resolution < 1), "x[%zu] resolution %g: "
                   "the f32 bar is meant blind", k, r->dirs[k].resolution);
  ck_assert_msg (dg->kind != GC_DIAG_TWIN_DIFFERS, "%s", dg->text);
  ck_assert_msg (dg->kind == GC_DIAG_CONSTANT_FACTOR, "%s", dg->text);
  gc_result_free (r);
}
END_TEST

/* The catalogue's models without their bugs pass, with and without the
   twin: every failure above is the injected bug's.  */
START_TEST (test_correct_models_pass)
{
  for (int twin = 0; twin < 2; twin++)
    {
      cat m;
      catalogue_flow_pass (twin);
      gc_result *r;
      cat_init (&m, "scale", SC_N + 1, twin);
      m.loss = scale_loss;
      m.grad = scale_grad;
      m.x[0] = 0.9f;
      r = cat_check (&m);
      ck_assert_msg (r->verdict == GC_PASS, "scale: %s", r->diagnosis.text);
      gc_result_free (r);
      cat_init (&m, "mean14", M14_N, twin);
      m.loss = mean14_loss;
      m.grad = mean14_grad;
      r = cat_check (&m);
      ck_assert_msg (r->verdict == GC_PASS, "mean14: %s", r->diagnosis.text);
      gc_result_free (r);
      bf_init (&m, NULL);
      m.model.grad_f64 = twin ? cat_grad64 : NULL;
      r = cat_check (&m);
      ck_assert_msg (r->verdict == GC_PASS, "bf16 unrounded: %s",
                     r->diagnosis.text);
      gc_result_free (r);
    }
}
END_TEST

static Suite *
catalogue_suite (void)
{
  Suite *s = suite_create ("diagnosis catalogue");
  TCase *tc = tcase_create ("catalogue");
  tcase_set_timeout (tc, 120);
  catalogue_flow (tc);
  tcase_add_test (tc, test_one_element_sign_flip);
  tcase_add_test (tc, test_integer_factor_with_twin);
  tcase_add_test (tc, test_undeclared_bf16);
  tcase_add_test (tc, test_bias_not_rounding);
  tcase_add_test (tc, test_bf16_sums_both_paths);
  tcase_add_test (tc, test_forward_mismatch_needs_declared_depth);
  tcase_add_test (tc, test_twin_not_the_algorithm);
  tcase_add_test (tc, test_twin_differs_needs_a_seeing_bar);
  tcase_add_test (tc, test_correct_models_pass);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (catalogue_suite ());
}
