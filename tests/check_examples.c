/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_examples.c -- three ops outside the catalogue, written as a model
   author would (f32 forward and backward in plain C, the MPFR reference on
   the kit), each with realistic backward bugs: RMSNorm -> linear -> softmax
   cross-entropy, a causal softmax attention head, and LayerNorm.  Every
   correct backward passes; every bug fails, is located in a tensor it
   corrupts, and is diagnosed with its true kind where it has one (a
   factor, a zero region, a shift) and never as a pattern it is not.  The
   table of bug -> verdict -> diagnosis is printed as TAP comments.  */

#include "gctest.h"
#include "gradcheck-mp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- model */

typedef struct ex
{
  int op;                 /* 0 rmsnorm-ce, 1 attention, 2 layernorm */
  int bug;                /* 0: the correct backward */
  size_t n;
  /* rmsnorm-ce: R rows of D, C classes; attention: T, M, DK (= DV);
     layernorm: R rows of D */
  size_t R, D, C, T, M, DK;
  int label[16];
  float dout[64];         /* cotangents: attention's dO, layernorm's dY */
  gc_block blocks[4];
  gc_constant consts[4];
} ex;

static const float EPS = 1e-5f;

/* ---- RMSNorm -> linear -> softmax cross-entropy, mean over rows.
   X [R,D] at 0, g [D], W [D,C].  */

static int
ce_f32 (void *ctx, const float *x, float *loss)
{
  ex *e = ctx;
  size_t R = e->R, D = e->D, C = e->C;
  const float *g = x + R * D, *W = g + D;
  float L = 0;
  for (size_t r = 0; r < R; r++)
    {
      const float *xr = x + r * D;
      float ss = 0, h[16], z[16], m = -INFINITY, se = 0;
      for (size_t j = 0; j < D; j++)
        ss += xr[j] * xr[j];
      float inv = 1 / sqrtf (ss / (float) D + EPS);
      for (size_t j = 0; j < D; j++)
        h[j] = xr[j] * inv * g[j];
      for (size_t c = 0; c < C; c++)
        {
          z[c] = 0;
          for (size_t j = 0; j < D; j++)
            z[c] += h[j] * W[j * C + c];
          m = fmaxf (m, z[c]);
        }
      for (size_t c = 0; c < C; c++)
        se += expf (z[c] - m);
      L += m + logf (se) - z[e->label[r]];
    }
  *loss = L / (float) R;
  return 0;
}

static int
ce_grad (void *ctx, const float *x, float *gr)
{
  ex *e = ctx;
  size_t R = e->R, D = e->D, C = e->C;
  const float *g = x + R * D, *W = g + D;
  float *dX = gr, *dg = gr + R * D, *dW = dg + D;
  memset (gr, 0, e->n * sizeof *gr);
  for (size_t r = 0; r < R; r++)
    {
      const float *xr = x + r * D;
      float ss = 0, xh[16], h[16], z[16], m = -INFINITY, se = 0, dz[16];
      for (size_t j = 0; j < D; j++)
        ss += xr[j] * xr[j];
      float inv = 1 / sqrtf (ss / (float) D + EPS);
      for (size_t j = 0; j < D; j++)
        {
          xh[j] = xr[j] * inv;
          h[j] = xh[j] * g[j];
        }
      for (size_t c = 0; c < C; c++)
        {
          z[c] = 0;
          for (size_t j = 0; j < D; j++)
            z[c] += h[j] * W[j * C + c];
          m = fmaxf (m, z[c]);
        }
      for (size_t c = 0; c < C; c++)
        se += expf (z[c] - m);
      for (size_t c = 0; c < C; c++)
        {
          dz[c] = expf (z[c] - m) / se - (c == (size_t) e->label[r]);
          if (e->bug != 1)          /* bug 1: the mean's 1/R forgotten */
            dz[c] /= (float) R;
        }
      float dh[16], dxh[16], proj = 0;
      for (size_t j = 0; j < D; j++)
        {
          dh[j] = 0;
          for (size_t c = 0; c < C; c++)
            {
              /* bug 2: dW from the normalised input without the gain */
              dW[j * C + c] += (e->bug == 2 ? xh[j] : h[j]) * dz[c];
              dh[j] += dz[c] * W[j * C + c];
            }
          if (e->bug != 4 || r + 1 < R)  /* bug 4: dg misses the last row */
            dg[j] += dh[j] * xh[j];
          dxh[j] = dh[j] * g[j];
          proj += dxh[j] * xh[j];
        }
      for (size_t j = 0; j < D; j++)
        /* bug 3: the projection through the RMS is dropped */
        dX[r * D + j] = inv * (dxh[j] - (e->bug == 3 ? 0 : xh[j] * proj
                                                             / (float) D));
    }
  return 0;
}

static int
ce_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  ex *e = ctx;
  size_t R = e->R, D = e->D, C = e->C;
  mpfr_srcptr g = x + R * D, W = g + D;
  mpfr_prec_t p = mpfr_get_prec (loss);
  mpfr_ptr h = gc_mp_array_new (D, p), z = gc_mp_array_new (C + 1, p);
  if (!h || !z)
    return 1;
  mpfr_set_zero (loss, 1);
  for (size_t r = 0; r < R; r++)
    {
      gc_mp_rmsnorm (h, x + r * D, D, EPS, g);
      gc_mp_gemv (z, 1, D, C, W, C, h);
      gc_mp_logsumexp (z + C, z, C);
      mpfr_add (loss, loss, z + C, MPFR_RNDN);
      mpfr_sub (loss, loss, z + e->label[r], MPFR_RNDN);
    }
  mpfr_div_ui (loss, loss, (unsigned long) R, MPFR_RNDN);
  gc_mp_array_free (h, D);
  gc_mp_array_free (z, C + 1);
  return 0;
}

/* ---- Causal softmax attention head, L = sum O . dO.
   X [T,M] at 0, Wq [M,DK], Wk [M,DK], Wv [M,DK].  */

static void
att_forward (const ex *e, const float *x, float *Q, float *K, float *V,
             float *P)
{
  size_t T = e->T, M = e->M, DK = e->DK;
  const float *X = x, *Wq = X + T * M, *Wk = Wq + M * DK, *Wv = Wk + M * DK;
  for (size_t t = 0; t < T; t++)
    for (size_t d = 0; d < DK; d++)
      {
        float q = 0, k = 0, v = 0;
        for (size_t i = 0; i < M; i++)
          {
            q += X[t * M + i] * Wq[i * DK + d];
            k += X[t * M + i] * Wk[i * DK + d];
            v += X[t * M + i] * Wv[i * DK + d];
          }
        Q[t * DK + d] = q;
        K[t * DK + d] = k;
        V[t * DK + d] = v;
      }
  float sc = 1 / sqrtf ((float) DK);
  for (size_t i = 0; i < T; i++)
    {
      float m = -INFINITY, s = 0;
      for (size_t j = 0; j < T; j++)
        {
          float a = 0;
          for (size_t d = 0; d < DK; d++)
            a += Q[i * DK + d] * K[j * DK + d];
          P[i * T + j] = a * sc;
          if (j <= i)
            m = fmaxf (m, P[i * T + j]);
        }
      for (size_t j = 0; j < T; j++)
        {
          P[i * T + j] = j <= i ? expf (P[i * T + j] - m) : 0;
          s += P[i * T + j];
        }
      for (size_t j = 0; j < T; j++)
        P[i * T + j] /= s;
    }
}

static int
att_f32 (void *ctx, const float *x, float *loss)
{
  ex *e = ctx;
  size_t T = e->T, DK = e->DK;
  float Q[64], K[64], V[64], P[64];
  att_forward (e, x, Q, K, V, P);
  float L = 0;
  for (size_t i = 0; i < T; i++)
    for (size_t d = 0; d < DK; d++)
      {
        float o = 0;
        for (size_t j = 0; j <= i; j++)
          o += P[i * T + j] * V[j * DK + d];
        L += o * e->dout[i * DK + d];
      }
  *loss = L;
  return 0;
}

static int
att_grad (void *ctx, const float *x, float *gr)
{
  ex *e = ctx;
  size_t T = e->T, M = e->M, DK = e->DK;
  const float *X = x, *Wq = X + T * M, *Wk = Wq + M * DK, *Wv = Wk + M * DK;
  float Q[64], K[64], V[64], P[64];
  att_forward (e, x, Q, K, V, P);
  const float *dO = e->dout;
  float dQ[64] = { 0 }, dK[64] = { 0 }, dV[64] = { 0 };
  float sc = e->bug == 1 ? 1 : 1 / sqrtf ((float) DK); /* bug 1: no scale */
  for (size_t i = 0; i < T; i++)
    {
      float dP[16], rs = 0;
      for (size_t j = 0; j <= i; j++)
        {
          dP[j] = 0;
          for (size_t d = 0; d < DK; d++)
            {
              dP[j] += dO[i * DK + d] * V[j * DK + d];
              /* bug 5: dV from P, not P^T (row i of P feeds V_i) */
              if (e->bug == 5)
                dV[i * DK + d] += P[i * T + j] * dO[j * DK + d];
              else
                dV[j * DK + d] += P[i * T + j] * dO[i * DK + d];
            }
          rs += dP[j] * P[i * T + j];
        }
      for (size_t j = 0; j <= i; j++)
        {
          /* bug 2: the softmax backward without its row-sum term */
          float dS = P[i * T + j] * (dP[j] - (e->bug == 2 ? 0 : rs)) * sc;
          for (size_t d = 0; d < DK; d++)
            {
              dQ[i * DK + d] += dS * K[j * DK + d];
              dK[j * DK + d] += dS * Q[i * DK + d];
            }
        }
    }
  float *dX = gr, *dWq = dX + T * M, *dWk = dWq + M * DK, *dWv = dWk + M * DK;
  memset (gr, 0, e->n * sizeof *gr);
  for (size_t t = 0; t < T; t++)
    for (size_t i = 0; i < M; i++)
      for (size_t d = 0; d < DK; d++)
        {
          dWq[i * DK + d] += X[t * M + i] * dQ[t * DK + d];
          dWk[i * DK + d] += X[t * M + i] * dK[t * DK + d];
          dWv[i * DK + d] += X[t * M + i] * dV[t * DK + d];
          dX[t * M + i] += dQ[t * DK + d] * Wq[i * DK + d]
                           + dK[t * DK + d] * Wk[i * DK + d];
          if (e->bug != 4)          /* bug 4: dX misses the value path */
            dX[t * M + i] += dV[t * DK + d] * Wv[i * DK + d];
        }
  if (e->bug == 3)
    /* bug 3: the key projection's gradient written as dWq (a copy-paste
       slip: dWk = X^T dQ) */
    for (size_t i = 0; i < M * DK; i++)
      dWk[i] = dWq[i];
  return 0;
}

static int
att_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  ex *e = ctx;
  size_t T = e->T, M = e->M, DK = e->DK;
  mpfr_prec_t p = mpfr_get_prec (loss);
  mpfr_ptr Q = gc_mp_array_new (3 * T * DK, p), K = Q + T * DK,
           V = K + T * DK, s = gc_mp_array_new (T + DK + 2, p),
           o = s + T, sc = o + DK, li = sc + 1;
  if (!Q || !s)
    return 1;
  gc_mp_gemm (Q, 0, 0, T, DK, M, x, M, x + T * M, DK);
  gc_mp_gemm (K, 0, 0, T, DK, M, x, M, x + T * M + M * DK, DK);
  gc_mp_gemm (V, 0, 0, T, DK, M, x, M, x + T * M + 2 * M * DK, DK);
  mpfr_set_ui (sc, (unsigned long) DK, MPFR_RNDN);
  mpfr_rec_sqrt (sc, sc, MPFR_RNDN);
  mpfr_set_zero (loss, 1);
  for (size_t i = 0; i < T; i++)
    {
      for (size_t j = 0; j <= i; j++)
        {
          gc_mp_dot (s + j, Q + i * DK, 1, K + j * DK, 1, DK);
          mpfr_mul (s + j, s + j, sc, MPFR_RNDN);
        }
      gc_mp_softmax (s, s, i + 1);
      gc_mp_gemv (o, 1, i + 1, DK, V, DK, s);
      gc_mp_dot_f32 (li, o, e->dout + i * DK, DK);
      mpfr_add (loss, loss, li, MPFR_RNDN);
    }
  gc_mp_array_free (Q, 3 * T * DK);
  gc_mp_array_free (s, T + DK + 2);
  return 0;
}

/* ---- LayerNorm with gain and bias, L = sum Y . dY.
   X [R,D] at 0, gamma [D], beta [D].  */

static int
ln_f32 (void *ctx, const float *x, float *loss)
{
  ex *e = ctx;
  size_t R = e->R, D = e->D;
  const float *ga = x + R * D, *be = ga + D;
  float L = 0;
  for (size_t r = 0; r < R; r++)
    {
      const float *xr = x + r * D;
      float mu = 0, var = 0;
      for (size_t j = 0; j < D; j++)
        mu += xr[j];
      mu /= (float) D;
      for (size_t j = 0; j < D; j++)
        var += (xr[j] - mu) * (xr[j] - mu);
      float inv = 1 / sqrtf (var / (float) D + EPS);
      for (size_t j = 0; j < D; j++)
        L += ((xr[j] - mu) * inv * ga[j] + be[j]) * e->dout[r * D + j];
    }
  *loss = L;
  return 0;
}

static int
ln_grad (void *ctx, const float *x, float *gr)
{
  ex *e = ctx;
  size_t R = e->R, D = e->D;
  const float *ga = x + R * D;
  float *dX = gr, *dga = gr + R * D, *dbe = dga + D;
  memset (gr, 0, e->n * sizeof *gr);
  for (size_t r = 0; r < R; r++)
    {
      const float *xr = x + r * D, *dy = e->dout + r * D;
      float mu = 0, var = 0, xh[16], dxh[16], s1 = 0, s2 = 0;
      for (size_t j = 0; j < D; j++)
        mu += xr[j];
      mu /= (float) D;
      for (size_t j = 0; j < D; j++)
        var += (xr[j] - mu) * (xr[j] - mu);
      float inv = 1 / sqrtf (var / (float) D + EPS);
      for (size_t j = 0; j < D; j++)
        {
          xh[j] = (xr[j] - mu) * inv;
          /* bug 4: dgamma written one place on (an off-by-one index whose
             last write the loop bound drops) */
          size_t jj = e->bug == 4 ? j + 1 : j;
          if (jj < D)
            dga[jj] += dy[j] * xh[j];
          /* bug 1: dbeta accumulated twice */
          dbe[j] += e->bug == 1 ? 2 * dy[j] : dy[j];
          dxh[j] = dy[j] * ga[j];
          s1 += dxh[j];
          s2 += dxh[j] * xh[j];
        }
      if (e->bug == 5 && r + 1 == R)
        continue;               /* bug 5: the last row's dX left at zero */
      for (size_t j = 0; j < D; j++)
        /* bug 2: the mean's term (s1) dropped */
        dX[r * D + j] = inv * (dxh[j] - (e->bug == 2 ? 0 : s1 / (float) D)
                               - xh[j] * s2 / (float) D);
    }
  return 0;
}

static int
ln_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  ex *e = ctx;
  size_t R = e->R, D = e->D;
  mpfr_srcptr ga = x + R * D, be = ga + D;
  mpfr_ptr c = gc_mp_array_new (D + 1, mpfr_get_prec (loss)), mu = c + D;
  if (!c)
    return 1;
  mpfr_set_zero (loss, 1);
  for (size_t r = 0; r < R; r++)
    {
      gc_mp_sum (mu, x + r * D, D);
      mpfr_div_ui (mu, mu, (unsigned long) D, MPFR_RNDN);
      for (size_t j = 0; j < D; j++)
        mpfr_sub (c + j, x + r * D + j, mu, MPFR_RNDN);
      gc_mp_rmsnorm (c, c, D, EPS, ga);   /* LayerNorm: RMSNorm of x - mu */
      for (size_t j = 0; j < D; j++)
        mpfr_add (c + j, c + j, be + j, MPFR_RNDN);
      gc_mp_dot_f32 (mu, c, e->dout + r * D, D);
      mpfr_add (loss, loss, mu, MPFR_RNDN);
    }
  gc_mp_array_free (c, D + 1);
  return 0;
}

/* ---------------------------------------------------------------- build */

static float
urand (uint64_t *s)
{
  *s = *s * 6364136223846793005u + 1442695040888963407u;
  return (float) ((double) (*s >> 11) * 0x1p-53 * 2 - 1);
}

static gc_model
make (ex *e, int op, int bug, uint64_t seed, float *x)
{
  memset (e, 0, sizeof *e);
  e->op = op;
  e->bug = bug;
  gc_model m;
  memset (&m, 0, sizeof m);
  m.abi = GC_MODEL_ABI;
  m.ctx = e;
  uint64_t s = seed;
  if (op == 0)
    {
      e->R = 6, e->D = 8, e->C = 5;
      size_t R = e->R, D = e->D, C = e->C;
      e->n = R * D + D + D * C;
      e->blocks[0] = (gc_block) { "X", 0, R * D, 2, { R, D } };
      e->blocks[1] = (gc_block) { "g", R * D, D, 1, { D } };
      e->blocks[2] = (gc_block) { "W", R * D + D, D * C, 2, { D, C } };
      m.n_blocks = 3;
      e->consts[0] = (gc_constant) { "R", (double) R };
      e->consts[1] = (gc_constant) { "D", (double) D };
      e->consts[2] = (gc_constant) { "C", (double) C };
      m.n_constants = 3;
      for (size_t r = 0; r < R; r++)
        e->label[r] = (int) (r * 3 % C);
      for (size_t i = 0; i < e->n; i++)
        x[i] = urand (&s);
      for (size_t j = 0; j < D; j++)
        x[R * D + j] = 1 + 0.5f * urand (&s);
      m.name = "rmsnorm-ce";
      m.loss_f32 = ce_f32;
      m.grad_f32 = ce_grad;
      m.loss_mpfr = ce_mpfr;
      /* longest chains: the D-term sum of squares, / D, + eps, sqrt, 1/.,
         two products, the D-term logit, max, exp, the C-term sum, log, two
         additions, the R-term sum, / R (forward); the backward adds the
         softmax's division and subtraction, / R, the C-term dh, the
         D-term projection and its three operations, or the R-term sums of
         dW and dg  */
      m.forward_depth = 2 * D + C + R + 13;
      m.backward_depth = 3 * D + 2 * C + 2 * R + 20;
    }
  else if (op == 1)
    {
      e->T = 6, e->M = 4, e->DK = 3;
      size_t T = e->T, M = e->M, DK = e->DK;
      e->n = T * M + 3 * M * DK;
      e->blocks[0] = (gc_block) { "X", 0, T * M, 2, { T, M } };
      e->blocks[1] = (gc_block) { "Wq", T * M, M * DK, 2, { M, DK } };
      e->blocks[2] = (gc_block) { "Wk", T * M + M * DK, M * DK, 2, { M, DK } };
      e->blocks[3] = (gc_block) { "Wv", T * M + 2 * M * DK, M * DK, 2,
                                  { M, DK } };
      m.n_blocks = 4;
      e->consts[0] = (gc_constant) { "T", (double) T };
      e->consts[1] = (gc_constant) { "d", (double) DK };
      m.n_constants = 2;
      for (size_t i = 0; i < e->n; i++)
        x[i] = urand (&s);
      for (size_t i = 0; i < T * DK; i++)
        e->dout[i] = urand (&s);
      m.name = "causal-attention";
      m.loss_f32 = att_f32;
      m.grad_f32 = att_grad;
      m.loss_mpfr = att_mpfr;
      /* Q, K, V (M terms), the DK-term score, scale, max, exp, the T-term
         sum, the division, the T-term output, the T*DK-term loss; the
         backward: dP (DK terms), the T-term row sum, dS (3), dQ/dK (T
         terms), dW (T terms), dX (3 DK terms) on top of the forward's
         probabilities  */
      m.forward_depth = M + DK + 3 * T + T * DK + 8;
      m.backward_depth = M + 2 * DK + 4 * T + 3 * DK + 3 * T + 16;
    }
  else
    {
      e->R = 5, e->D = 6;
      size_t R = e->R, D = e->D;
      e->n = R * D + 2 * D;
      e->blocks[0] = (gc_block) { "X", 0, R * D, 2, { R, D } };
      e->blocks[1] = (gc_block) { "gamma", R * D, D, 1, { D } };
      e->blocks[2] = (gc_block) { "beta", R * D + D, D, 1, { D } };
      m.n_blocks = 3;
      e->consts[0] = (gc_constant) { "R", (double) R };
      e->consts[1] = (gc_constant) { "D", (double) D };
      m.n_constants = 2;
      for (size_t i = 0; i < e->n; i++)
        x[i] = urand (&s);
      for (size_t j = 0; j < D; j++)
        x[R * D + j] = 1 + 0.5f * urand (&s);
      for (size_t i = 0; i < R * D; i++)
        e->dout[i] = urand (&s);
      m.name = "layernorm";
      m.loss_f32 = ln_f32;
      m.grad_f32 = ln_grad;
      m.loss_mpfr = ln_mpfr;
      /* mean (D + 1), centring, the D-term variance, / D, + eps, sqrt,
         1/., two products, + beta, the R*D-term loss; the backward: the
         D-term sums s1, s2 and their combination (4) after the forward's
         normalised values, or the R-term dgamma  */
      m.forward_depth = 2 * D + R * D + 10;
      m.backward_depth = 5 * D + R + 20;
    }
  m.n = e->n;
  m.blocks = e->blocks;
  m.constants = e->consts;
  return m;
}

/* ----------------------------------------------------------------- bugs */

typedef struct bug
{
  int op, bug;
  const char *what;
  /* the tensors the bug corrupts (comma-separated); those of them where
     its effect has a kind, that kind (-1: none, the diagnosis must read
     logic), the closed form of a factor ("" none); in the other corrupted
     tensors the diagnosis must read logic */
  const char *tensors, *kind_tensors;
  int kind;
  const char *form;
} bug;

static const bug bugs[] = {
  { 0, 1, "the mean's 1/R forgotten in dz", "X,g,W", "X,g,W",
    GC_DIAG_CONSTANT_FACTOR, "R" },
  { 0, 2, "dW from the normalised input without the gain", "W", "", -1, "" },
  { 0, 3, "RMSNorm backward without its projection term", "X", "", -1, "" },
  { 0, 4, "dg misses the last row", "g", "", -1, "" },
  { 1, 1, "the 1/sqrt(d) score scale missing in dS", "X,Wq,Wk", "Wq,Wk",
    GC_DIAG_CONSTANT_FACTOR, "3^0.5" },
  { 1, 2, "softmax backward without its row-sum term", "X,Wq,Wk", "", -1,
    "" },
  { 1, 3, "dWk = X^T dQ (copy-paste)", "Wk", "", -1, "" },
  { 1, 4, "dX misses the value path", "X", "", -1, "" },
  { 1, 5, "dV from P instead of P^T", "X,Wv", "", -1, "" },
  { 2, 1, "dbeta accumulated twice", "beta", "beta", GC_DIAG_CONSTANT_FACTOR,
    "2" },
  { 2, 2, "LayerNorm backward without the mean term", "X", "X",
    GC_DIAG_AXIS_OFFSET, "" },
  { 2, 4, "dgamma written one place on", "gamma", "gamma", GC_DIAG_SHIFTED,
    "" },
  { 2, 5, "the last row's dX left at zero", "X", "X", GC_DIAG_ZERO_REGION,
    "" },
};

static bool
in_list (const char *list, const char *name)
{
  size_t l = strlen (name);
  for (const char *p = list; p && *p;)
    {
      if (strncmp (p, name, l) == 0 && (p[l] == ',' || p[l] == 0))
        return true;
      p = strchr (p, ',');
      p = p ? p + 1 : NULL;
    }
  return false;
}

START_TEST (test_correct_pass)
{
  for (uint64_t k = 0; k < gct_seeds (5); k++)
    for (int op = 0; op < 3; op++)
      {
        ex e;
        float x[128];
        gc_model m = make (&e, op, 0, gct_seed () + k, x);
        gc_result *r = gct_check_ok (&m, x, NULL);
        ck_assert_msg (r->verdict == GC_PASS, "%s seed %llu: %s (worst nu "
                       "%g): %s", m.name, (unsigned long long) k,
                       gc_verdict_name (r->verdict), r->worst_nu,
                       r->diagnosis.text);
        gc_result_free (r);
      }
}
END_TEST

START_TEST (test_bug)
{
  const bug *b = &bugs[_i];
  for (uint64_t k = 0; k < gct_seeds (3); k++)
    {
      ex e;
      float x[128];
      gc_model m = make (&e, b->op, b->bug, gct_seed () + k, x);
      gc_result *r = gct_check_ok (&m, x, NULL);
      const gc_diagnosis *dg = &r->diagnosis;
      if (k == 0)
        fprintf (stderr, "# %s | %s | %s (%zu/%zu) | %s\n", m.name, b->what,
                 gc_verdict_name (r->verdict), r->n_failed, r->n_directions,
                 dg->text);
      ck_assert_int_eq (r->verdict, GC_FAIL);
      /* located: the diagnosed tensor is one the bug corrupts, and every
         failing tensor is one */
      ck_assert_msg (in_list (b->tensors, dg->block), "%s: diagnosed in "
                     "'%s': %s", b->what, dg->block, dg->text);
      for (size_t d = 0; d < r->n_directions; d++)
        if (r->dirs[d].verdict == GC_FAIL)
          {
            char nm[64];
            gc_param_name (r, r->dirs[d].index, nm, sizeof nm);
            *strchr (nm, '[') = 0;
            ck_assert_msg (in_list (b->tensors, nm), "%s: %s fails", b->what,
                           nm);
          }
      if (b->kind >= 0 && in_list (b->kind_tensors, dg->block))
        ck_assert_msg (dg->kind == (gc_diagnosis_kind) b->kind, "%s: %s",
                       b->what, dg->text);
      else
        ck_assert_msg (dg->kind == GC_DIAG_LOGIC, "%s: %s", b->what,
                       dg->text);
      if (b->form[0] && dg->closed_form[0])
        ck_assert_str_eq (dg->closed_form, b->form);
      gc_result_free (r);

      /* At the coarse resolution of the f32 reference the diagnosis may
         see less, never something else: a pattern it claims is the bug's,
         a closed form it names is the factor's.  */
      gc_options o;
      gc_options_init (&o);
      o.reference = GC_REF_F32;
      r = gct_check_ok (&m, x, &o);
      dg = &r->diagnosis;
      if (k == 0)
        fprintf (stderr, "#   f32 reference: %s (%zu/%zu) | %s\n",
                 gc_verdict_name (r->verdict), r->n_failed, r->n_directions,
                 dg->text);
      if (r->verdict == GC_FAIL)
        {
          ck_assert_msg (in_list (b->tensors, dg->block), "%s (f32): '%s'",
                         b->what, dg->block);
          bool pattern = dg->kind == GC_DIAG_CONSTANT_FACTOR
                         || dg->kind == GC_DIAG_SIGN_FLIP
                         || dg->kind == GC_DIAG_ZERO_REGION
                         || dg->kind == GC_DIAG_SHIFTED
                         || dg->kind == GC_DIAG_AXIS_OFFSET
                         || dg->kind == GC_DIAG_APPROX_SHIFT;
          if (pattern)
            ck_assert_msg (in_list (b->kind_tensors, dg->block)
                           && dg->kind == (gc_diagnosis_kind) b->kind,
                           "%s (f32): %s", b->what, dg->text);
          if (dg->closed_form[0])
            ck_assert_str_eq (dg->closed_form, b->form);
        }
      gc_result_free (r);
    }
}
END_TEST

static Suite *
examples_suite (void)
{
  Suite *s = suite_create ("examples");
  TCase *tc = tcase_create ("new ops");
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_correct_pass);
  tcase_add_loop_test (tc, test_bug, 0, sizeof bugs / sizeof *bugs);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return gct_run (examples_suite ());
}
