/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_diagnosis_catalogue.c -- the diagnosis catalogue (issue 36): for
   each kind of finding, a small model of our own with a known bug and the
   diagnosis it must give.  The models are written once in double; the
   f32 path is the same computation rounded to float at its end (its
   error within half an ulp, inside any bar), the twin the same
   computation unrounded, so that every failure is the injected bug's:

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

#include "gctest.h"
#include "gradcheck-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CAT_NONE = 0 };

typedef struct cat cat;
struct cat
{
  gc_model model;
  size_t n;
  float x[256];
  double c[256];              /* fixed cotangents / coefficients */
  double mask[16];
  gc_block blocks[24];
  char names[16][8];          /* block names made at run time */
  int bug;
  double (*loss) (const cat *m, const double *x, int path);
  /* the backward under test in PATH (32: the f32 path, 64: its twin) */
  void (*grad) (const cat *m, const double *x, double *g, int path);
  void (*round32) (float *g, size_t n);   /* the f32 path's end, or NULL */
};

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

static int
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

static void
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

static void
cat_block (cat *m, const char *name, size_t offset, size_t d0, size_t d1)
{
  gc_block *b = &m->blocks[m->model.n_blocks++];
  *b = (gc_block) { name, offset, d0 * (d1 ? d1 : 1), d1 ? 2 : 1,
                    { d0, d1 } };
}

static gc_result *
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
/* rnn: H = 4, T = 8; parameters xs[T,H], W[H,H], U[H,H], b[H].  */

enum { RNN_H = 4, RNN_T = 8, RNN_XS = 0, RNN_W = RNN_T * RNN_H,
       RNN_U = RNN_W + RNN_H * RNN_H, RNN_B = RNN_U + RNN_H * RNN_H,
       RNN_N = RNN_B + RNN_H };
enum { RNN_TRANSPOSED = 1, RNN_DROP_STEP = 2 };
#define RNN_DROPPED 3   /* the step whose loss term the bug drops */

static void
rnn_forward (const double *p, double h[RNN_T + 1][RNN_H])
{
  for (size_t j = 0; j < RNN_H; j++)
    h[0][j] = 0.5;
  for (size_t t = 0; t < RNN_T; t++)
    for (size_t i = 0; i < RNN_H; i++)
      {
        double z = p[RNN_B + i];
        for (size_t j = 0; j < RNN_H; j++)
          z += p[RNN_W + i * RNN_H + j] * h[t][j]
               + p[RNN_U + i * RNN_H + j] * p[RNN_XS + t * RNN_H + j];
        h[t + 1][i] = tanh (z);
      }
}

static double
rnn_loss (const cat *m, const double *p, int path)
{
  (void) path;
  double h[RNN_T + 1][RNN_H], l = 0;
  rnn_forward (p, h);
  for (size_t t = 0; t < RNN_T; t++)
    for (size_t j = 0; j < RNN_H; j++)
      l += m->c[t * RNN_H + j] * h[t + 1][j];
  return l;
}

static void
rnn_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  double h[RNN_T + 1][RNN_H], dh[RNN_H] = { 0 };
  rnn_forward (p, h);
  memset (g, 0, RNN_N * sizeof *g);
  for (size_t t = RNN_T; t-- > 0;)
    {
      double dz[RNN_H], nh[RNN_H] = { 0 };
      for (size_t i = 0; i < RNN_H; i++)
        {
          if (!(m->bug == RNN_DROP_STEP && t == RNN_DROPPED))
            dh[i] += m->c[t * RNN_H + i];
          dz[i] = dh[i] * (1 - h[t + 1][i] * h[t + 1][i]);
        }
      for (size_t i = 0; i < RNN_H; i++)
        {
          g[RNN_B + i] += dz[i];
          for (size_t j = 0; j < RNN_H; j++)
            {
              g[RNN_W + i * RNN_H + j] += dz[i] * h[t][j];
              g[RNN_U + i * RNN_H + j] += dz[i] * p[RNN_XS + t * RNN_H + j];
              g[RNN_XS + t * RNN_H + j] += p[RNN_U + i * RNN_H + j] * dz[i];
              /* dh_{t-1} = W^T dz; the bug uses W */
              nh[j] += (m->bug == RNN_TRANSPOSED
                        ? p[RNN_W + j * RNN_H + i] : p[RNN_W + i * RNN_H + j])
                       * dz[i];
            }
        }
      memcpy (dh, nh, sizeof dh);
    }
}

static void
rnn_init (cat *m, int bug)
{
  cat_init (m, "rnn", RNN_N, true);
  m->bug = bug;
  m->loss = rnn_loss;
  m->grad = rnn_grad;
  cat_block (m, "xs", RNN_XS, RNN_T, RNN_H);
  cat_block (m, "W", RNN_W, RNN_H, RNN_H);
  cat_block (m, "U", RNN_U, RNN_H, RNN_H);
  cat_block (m, "b", RNN_B, RNN_H, 0);
}

/* Shared weights: W, U and b fail wholly under either bug, and the
   diagnosis says they fail alike and does not name one of them as
   nearest the bug; the per-step inputs localise it: their failures stop
   at the step where the error enters (the backward runs from T-1 down):
   the dropped step 3, or step 6 for the transposed weight (the first
   propagation through W, from step 7 into step 6).  */
START_TEST (test_rnn_shared_weights)
{
  static const struct { int bug; const char *axis, *step; } cases[] = {
    { RNN_DROP_STEP, "axis 0: 0-3 fail, 4-7 pass",
      "the error enters at step 3 (inputs of steps 0..3 fail, of steps "
      "4..7 pass; "
      "axis 0 of xs read as the step)" },
    { RNN_TRANSPOSED, "axis 0: 0-6 fail, 7 passes",
      "the error enters at step 6 (inputs of steps 0..6 fail, of step 7 "
      "pass; "
      "axis 0 of xs read as the step)" } };
  for (size_t c = 0; c < 2; c++)
    {
      cat m;
      rnn_init (&m, cases[c].bug);
      gc_result *r = cat_check (&m);
      const char *t = r->diagnosis.text;
      ck_assert_int_eq (r->verdict, GC_FAIL);
      /* the group right after the kind, none named as nearest */
      ck_assert_msg (!strncmp (t, "logic error: 3 tensors fail alike, "
                               "wholly: W (16/16), U (16/16), b (4/4)", 57),
                     "%s", t);
      ck_assert_msg (!strstr (t, "weaker lead"), "%s", t);
      ck_assert_msg (strstr (t, cases[c].axis), "%s", t);
      ck_assert_msg (strstr (t, cases[c].step), "%s", t);
      gc_result_free (r);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* gru: a GRU-like recurrence (the minimal gated unit), H = 3, T = 8:
     z_t = sigmoid(Wz x_t + Uz h_{t-1} + bz),
     c_t = tanh(Wh x_t + Uh h_{t-1} + bh),
     h_t = (1 - z_t) h_{t-1} + z_t c_t,   L = sum_t coef_t . h_t,
   the inputs one block per step (x0 .. x7), the six gate weights shared
   by every step.  Bugs: the loss term of step 5 dropped; the recurrent
   weight Uh transposed in the backward.  */

enum { GR_H = 3, GR_T = 8, GR_X = 0, GR_WZ = GR_T * GR_H,
       GR_UZ = GR_WZ + GR_H * GR_H, GR_BZ = GR_UZ + GR_H * GR_H,
       GR_WH = GR_BZ + GR_H, GR_UH = GR_WH + GR_H * GR_H,
       GR_BH = GR_UH + GR_H * GR_H, GR_N = GR_BH + GR_H };
enum { GR_DROP_STEP = 1, GR_TRANSPOSED = 2 };
#define GR_DROPPED 5

static double
gr_sig (double a)
{
  return 1 / (1 + exp (-a));
}

static void
gru_forward (const double *p, double h[GR_T + 1][GR_H],
             double z[GR_T][GR_H], double c[GR_T][GR_H])
{
  for (size_t j = 0; j < GR_H; j++)
    h[0][j] = 0.3;
  for (size_t t = 0; t < GR_T; t++)
    for (size_t i = 0; i < GR_H; i++)
      {
        double az = p[GR_BZ + i], ac = p[GR_BH + i];
        for (size_t j = 0; j < GR_H; j++)
          {
            double x = p[GR_X + t * GR_H + j];
            az += p[GR_WZ + i * GR_H + j] * x
                  + p[GR_UZ + i * GR_H + j] * h[t][j];
            ac += p[GR_WH + i * GR_H + j] * x
                  + p[GR_UH + i * GR_H + j] * h[t][j];
          }
        z[t][i] = gr_sig (az);
        c[t][i] = tanh (ac);
        h[t + 1][i] = (1 - z[t][i]) * h[t][i] + z[t][i] * c[t][i];
      }
}

static double
gru_loss (const cat *m, const double *p, int path)
{
  (void) path;
  double h[GR_T + 1][GR_H], z[GR_T][GR_H], c[GR_T][GR_H], l = 0;
  gru_forward (p, h, z, c);
  for (size_t t = 0; t < GR_T; t++)
    for (size_t j = 0; j < GR_H; j++)
      l += m->c[t * GR_H + j] * h[t + 1][j];
  return l;
}

static void
gru_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  double h[GR_T + 1][GR_H], z[GR_T][GR_H], c[GR_T][GR_H];
  double dh[GR_H] = { 0 };
  gru_forward (p, h, z, c);
  memset (g, 0, GR_N * sizeof *g);
  for (size_t t = GR_T; t-- > 0;)
    {
      double daz[GR_H], dac[GR_H], nh[GR_H];
      for (size_t i = 0; i < GR_H; i++)
        {
          if (!(m->bug == GR_DROP_STEP && t == GR_DROPPED))
            dh[i] += m->c[t * GR_H + i];
          daz[i] = dh[i] * (c[t][i] - h[t][i]) * z[t][i] * (1 - z[t][i]);
          dac[i] = dh[i] * z[t][i] * (1 - c[t][i] * c[t][i]);
          nh[i] = dh[i] * (1 - z[t][i]);
        }
      for (size_t i = 0; i < GR_H; i++)
        {
          g[GR_BZ + i] += daz[i];
          g[GR_BH + i] += dac[i];
          for (size_t j = 0; j < GR_H; j++)
            {
              double x = p[GR_X + t * GR_H + j];
              g[GR_WZ + i * GR_H + j] += daz[i] * x;
              g[GR_UZ + i * GR_H + j] += daz[i] * h[t][j];
              g[GR_WH + i * GR_H + j] += dac[i] * x;
              g[GR_UH + i * GR_H + j] += dac[i] * h[t][j];
              g[GR_X + t * GR_H + j] += p[GR_WZ + i * GR_H + j] * daz[i]
                                        + p[GR_WH + i * GR_H + j] * dac[i];
              /* dh_{t-1} += Uh^T dac; the bug uses Uh */
              nh[j] += p[GR_UZ + i * GR_H + j] * daz[i]
                       + (m->bug == GR_TRANSPOSED
                          ? p[GR_UH + j * GR_H + i] : p[GR_UH + i * GR_H + j])
                         * dac[i];
            }
        }
      memcpy (dh, nh, sizeof dh);
    }
}

static void
gru_init (cat *m, int bug)
{
  cat_init (m, "gru", GR_N, true);
  m->bug = bug;
  m->loss = gru_loss;
  m->grad = gru_grad;
  for (size_t t = 0; t < GR_T; t++)
    {
      snprintf (m->names[t], sizeof m->names[t], "x%zu", t);
      cat_block (m, m->names[t], GR_X + t * GR_H, GR_H, 0);
    }
  cat_block (m, "Wz", GR_WZ, GR_H, GR_H);
  cat_block (m, "Uz", GR_UZ, GR_H, GR_H);
  cat_block (m, "bz", GR_BZ, GR_H, 0);
  cat_block (m, "Wh", GR_WH, GR_H, GR_H);
  cat_block (m, "Uh", GR_UH, GR_H, GR_H);
  cat_block (m, "bh", GR_BH, GR_H, 0);
}

/* The per-step blocks localise the error without a declaration: the
   dropped term of step 5 fails the inputs of steps 0..5 and passes 6, 7;
   the transposed Uh fails every step before the last (its first use in
   the backward carries step 7's gradient into step 6).  The shared gate
   weights fail alike, as one group; none is named nearest the bug.  With
   and without the twin.  */
START_TEST (test_gru_steps)
{
  static const struct { int bug; const char *step; } cases[] = {
    { GR_DROP_STEP, "the error enters at step 5 (inputs of steps 0..5 "
      "fail, of steps 6..7 pass; blocks x0 .. x7, one per step)" },
    { GR_TRANSPOSED, "the error enters at step 6 (inputs of steps 0..6 "
      "fail, of step 7 pass; blocks x0 .. x7, one per step)" } };
  for (int twin = 0; twin < 2; twin++)
    for (size_t c = 0; c < 2; c++)
      {
        cat m;
        gru_init (&m, cases[c].bug);
        m.model.grad_f64 = twin ? cat_grad64 : NULL;
        gc_result *r = cat_check (&m);
        const char *t = r->diagnosis.text;
        ck_assert_int_eq (r->verdict, GC_FAIL);
        ck_assert_msg (strstr (t, "tensors fail alike, wholly: x0 .. x")
                       && strstr (t, "(3/3 each)")
                       && strstr (t, "Uz (9/9)") && strstr (t, "bh (3/3)")
                       && strstr (t, "none is nearer it"), "%s", t);
        ck_assert_msg (!strstr (t, "weaker lead"), "%s", t);
        ck_assert_msg (strstr (t, cases[c].step), "%s", t);
        gc_result_free (r);
      }
}
END_TEST

/* ------------------------------------------------------------------ */
/* stair: L = sum c_i q(x_i) + x_i^2 / 4, q(x) = floor(S x) / S, S = 3e6:
   stairs of 3.3e-7, finer than the step (h ~ 1e-6; a power of two would
   put the stairs on the step's own grid, and the central differences
   would read them exactly); the backward
   differentiates the smooth surrogate (q(x) = x, a straight-through
   estimator), as a quantised op's backward does.  */

enum { ST_N = 16 };
#define ST_SCALE 3e6

static double
stair_loss (const cat *m, const double *p, int path)
{
  (void) path;
  double l = 0;
  for (size_t i = 0; i < ST_N; i++)
    l += m->c[i] * floor (p[i] * ST_SCALE) / ST_SCALE + p[i] * p[i] / 4;
  return l;
}

static void
stair_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  for (size_t i = 0; i < ST_N; i++)
    g[i] = m->c[i] + p[i] / 2;
}

/* A forward read at a step that spans many stairs: named a staircase
   (steps spanning structure), not a kink at x and not a logic error,
   with and without the twin.  */
START_TEST (test_staircase)
{
  for (int twin = 0; twin < 2; twin++)
    {
      cat m;
      cat_init (&m, "stair", ST_N, twin);
      m.bug = 1;   /* (a label: the forward's stairs) */
      m.loss = stair_loss;
      m.grad = stair_grad;
      cat_block (&m, "x", 0, ST_N, 0);
      gc_result *r = cat_check (&m);
      const gc_diagnosis *dg = &r->diagnosis;
      ck_assert_msg (r->verdict == GC_NONSMOOTH || r->verdict == GC_FAIL,
                     "%s", gc_verdict_name (r->verdict));
      ck_assert_msg (dg->kind == GC_DIAG_STAIRCASE
                     && strstr (dg->text, "steps spanning structure")
                     && !strstr (dg->text, "logic error"),
                     "twin %d: %s", twin, dg->text);
      gc_result_free (r);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* attn: D = 4, N = 6 keys, the last two masked; parameters q[D], K[N,D],
   V[N,D], temp[1].  */

enum { AT_D = 4, AT_N = 6, AT_Q = 0, AT_K = AT_D, AT_V = AT_K + AT_N * AT_D,
       AT_T = AT_V + AT_N * AT_D, AT_NP = AT_T + 1 };
enum { AT_MASK_IGNORED = 1, AT_NO_ROWSUM = 2 };

static void
attn_probs (const cat *m, const double *p, bool masked, double *pr)
{
  double s[AT_N], mx = -INFINITY, z = 0;
  for (size_t j = 0; j < AT_N; j++)
    {
      s[j] = 0;
      for (size_t d = 0; d < AT_D; d++)
        s[j] += p[AT_Q + d] * p[AT_K + j * AT_D + d];
      s[j] *= p[AT_T];
      if (masked && m->mask[j] == 0)
        s[j] = -INFINITY;
      mx = fmax (mx, s[j]);
    }
  for (size_t j = 0; j < AT_N; j++)
    z += pr[j] = exp (s[j] - mx);
  for (size_t j = 0; j < AT_N; j++)
    pr[j] /= z;
}

static double
attn_loss (const cat *m, const double *p, int path)
{
  (void) path;
  double pr[AT_N], l = 0;
  attn_probs (m, p, true, pr);
  for (size_t j = 0; j < AT_N; j++)
    for (size_t d = 0; d < AT_D; d++)
      l += m->c[d] * pr[j] * p[AT_V + j * AT_D + d];
  return l;
}

static void
attn_grad (const cat *m, const double *p, double *g, int path)
{
  (void) path;
  double pr[AT_N], dp[AT_N], ds[AT_N], sum = 0;
  attn_probs (m, p, m->bug != AT_MASK_IGNORED, pr);
  memset (g, 0, AT_NP * sizeof *g);
  for (size_t j = 0; j < AT_N; j++)
    {
      dp[j] = 0;
      for (size_t d = 0; d < AT_D; d++)
        {
          g[AT_V + j * AT_D + d] = pr[j] * m->c[d];
          dp[j] += p[AT_V + j * AT_D + d] * m->c[d];
        }
      sum += pr[j] * dp[j];
    }
  for (size_t j = 0; j < AT_N; j++)
    {
      ds[j] = pr[j] * (dp[j] - (m->bug == AT_NO_ROWSUM ? 0 : sum));
      double qk = 0;
      for (size_t d = 0; d < AT_D; d++)
        qk += p[AT_Q + d] * p[AT_K + j * AT_D + d];
      g[AT_T] += ds[j] * qk;
      for (size_t d = 0; d < AT_D; d++)
        {
          g[AT_Q + d] += p[AT_T] * ds[j] * p[AT_K + j * AT_D + d];
          g[AT_K + j * AT_D + d] += p[AT_T] * ds[j] * p[AT_Q + d];
        }
    }
}

static void
attn_init (cat *m, int bug)
{
  cat_init (m, "attn", AT_NP, true);
  m->bug = bug;
  m->loss = attn_loss;
  m->grad = attn_grad;
  for (size_t j = 0; j < AT_N; j++)
    m->mask[j] = j < AT_N - 2;
  m->x[AT_T] = 1.3f;
  cat_block (m, "q", AT_Q, AT_D, 0);
  cat_block (m, "K", AT_K, AT_N, AT_D);
  cat_block (m, "V", AT_V, AT_N, AT_D);
  cat_block (m, "temp", AT_T, 1, 0);
}

/* The masked softmax: the two bugs read apart.  Without the row-sum term
   V passes (its gradient does not go through the softmax backward) and
   the one-element temp, q and K fail: the text says which pass.  With
   the mask ignored, V's masked rows, whose reference is 0, fail: the
   text says the reference is 0 there.  Neither names temp as nearest.  */
START_TEST (test_attention_mask_and_rowsum)
{
  cat m;
  attn_init (&m, AT_NO_ROWSUM);
  gc_result *r = cat_check (&m);
  const char *t = r->diagnosis.text;
  ck_assert_int_eq (r->verdict, GC_FAIL);
  const char *pass = strstr (t, "passes: ");
  ck_assert_msg (pass && strstr (pass, "V"), "%s", t);
  ck_assert_msg (!strstr (t, "weaker lead"), "%s", t);
  gc_result_free (r);

  attn_init (&m, AT_MASK_IGNORED);
  r = cat_check (&m);
  t = r->diagnosis.text;
  ck_assert_int_eq (r->verdict, GC_FAIL);
  size_t vfail = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->index >= AT_V + 4 * AT_D && d->index < AT_T)
        vfail += d->verdict == GC_FAIL && d->reference == 0;
    }
  ck_assert_uint_eq (vfail, 2 * AT_D);
  ck_assert_msg (strstr (t, "V (") || strcmp (r->diagnosis.block, "V") == 0,
                 "%s", t);
  ck_assert_msg (!strstr (t, "weaker lead"), "%s", t);
  gc_result_free (r);
}
END_TEST

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

/* The catalogue's models without their bugs pass, with and without the
   twin: every failure above is the injected bug's.  */
START_TEST (test_correct_models_pass)
{
  for (int twin = 0; twin < 2; twin++)
    {
      cat m;
      rnn_init (&m, 0);
      m.model.grad_f64 = twin ? cat_grad64 : NULL;
      gc_result *r = cat_check (&m);
      ck_assert_msg (r->verdict == GC_PASS, "rnn: %s", r->diagnosis.text);
      gc_result_free (r);
      gru_init (&m, 0);
      m.model.grad_f64 = twin ? cat_grad64 : NULL;
      r = cat_check (&m);
      ck_assert_msg (r->verdict == GC_PASS, "gru: %s", r->diagnosis.text);
      gc_result_free (r);
      attn_init (&m, 0);
      m.model.grad_f64 = twin ? cat_grad64 : NULL;
      r = cat_check (&m);
      ck_assert_msg (r->verdict == GC_PASS, "attn: %s", r->diagnosis.text);
      gc_result_free (r);
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
  tcase_add_test (tc, test_rnn_shared_weights);
  tcase_add_test (tc, test_gru_steps);
  tcase_add_test (tc, test_staircase);
  tcase_add_test (tc, test_attention_mask_and_rowsum);
  tcase_add_test (tc, test_one_element_sign_flip);
  tcase_add_test (tc, test_integer_factor_with_twin);
  tcase_add_test (tc, test_undeclared_bf16);
  tcase_add_test (tc, test_bias_not_rounding);
  tcase_add_test (tc, test_bf16_sums_both_paths);
  tcase_add_test (tc, test_forward_mismatch_needs_declared_depth);
  tcase_add_test (tc, test_twin_not_the_algorithm);
  tcase_add_test (tc, test_correct_models_pass);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (catalogue_suite ());
}
