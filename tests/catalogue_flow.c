/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* catalogue_flow.c -- the diagnosis catalogue's data flows: its
   recurrences, its masked attention and its staircase (issue 36; manual: "Diagnosis", "Where the error enters",
   "Staircases"): where the error enters when shared weights fail alike,
   read along a per-step axis or over blocks numbered by step, which
   tensors pass behind a softmax, and a forward whose stairs the step
   spans.  The frame: catalogue.h.  */

#include "catalogue.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* Random directions drawn within each block still localise it (each
   block's directions pass or fail as the block does); over whole-vector
   random directions, each mixing every step, no step is read.  */
START_TEST (test_gru_steps_random)
{
  for (int per_block = 1; per_block >= 0; per_block--)
    {
      cat m;
      gru_init (&m, GR_DROP_STEP);
      gc_options o;
      gc_options_init (&o);
      o.reference = GC_REF_F64;
      o.directions = GC_DIR_RANDOM;
      o.n_random = per_block ? 3 : 24;
      o.random_per_block = per_block;
      gc_result *r = gct_check_ok (&m.model, m.x, &o);
      const char *t = r->diagnosis.text;
      fprintf (stderr, "# gru random%s: %s -- %s\n",
               per_block ? " per block" : "", gc_verdict_name (r->verdict), t);
      ck_assert_int_eq (r->verdict, GC_FAIL);
      if (per_block)
        ck_assert_msg (strstr (t, "the error enters at step 5 (inputs of "
                               "steps 0..5 fail, of steps 6..7 pass; blocks "
                               "x0 .. x7, one per step)"), "%s", t);
      else
        ck_assert_msg (!strstr (t, "enters at step"), "%s", t);
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

void
catalogue_flow_pass (int twin)
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
}

void
catalogue_flow (TCase *tc)
{
  tcase_add_test (tc, test_rnn_shared_weights);
  tcase_add_test (tc, test_gru_steps);
  tcase_add_test (tc, test_gru_steps_random);
  tcase_add_test (tc, test_staircase);
  tcase_add_test (tc, test_attention_mask_and_rowsum);
}
