/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* kda.c -- Kimi Delta Attention: per-channel decay, FLA's conventions;
   equations in shared/reference/models-kda-gdn.md: gate §1.2, recurrence
   §2.2, chunked WY form §3.2, recurrent adjoint §5.1, chain rules §5.4,
   chunked backward §6.

   Raw parameters, in order: q, k [B,T,H,K]; v [B,T,HV,V]; g_raw
   [B,T,HV,K]; b_raw [B,T,HV]; A_log [HV]; dt_bias [HV,K]; S0 [B,HV,K,V].
   Inside the op: q, k L2-normalised (eps 1e-6 inside the square root),
   beta = sigmoid(b_raw), the gate g = -exp(A_log) softplus(g_raw + dt_bias)
   (or lb sigmoid(exp(A_log)(g_raw + dt_bias)), lb = -5), read scale K^-0.5,
   grouped value heads (value head hv reads q/k head hv / (HV/H)).

   Two f32 paths, chosen by CHUNK: the naive recurrence with its recurrent
   adjoint, and the chunked WY form over a zero-padded scratch (OpenBLAS for
   the matrix work) with the chunked backward that reads it.  The reference
   is the recurrence in MPFR; outputs o and S_T feed the forward oracle.  */

#include "delta.h"
#include "mpseq.h"

#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { KEY_B, KEY_T, KEY_H, KEY_HV, KEY_K, KEY_V, KEY_BT, KEY_CHUNK,
       KEY_GATE, KEY_STRONG, KEY_LOSS };

static const gcm_key keys[] = {
  { "B", 1, 1, 64, "batch" },
  { "T", 37, 1, 4096, "sequence length" },
  { "H", 2, 1, 64, "q/k heads" },
  { "HV", 4, 1, 256, "value heads (a multiple of H)" },
  { "K", 8, 1, 256, "key dimension" },
  { "V", 8, 1, 256, "value dimension" },
  { "BT", 16, 1, 256, "chunk size" },
  { "CHUNK", 1, 0, 1, "1: chunked WY path; 0: naive recurrence" },
  { "GATE", 0, 0, 1, "0: -exp(A_log) softplus(x); 1: lower bound -5 sigmoid(exp(A_log) x)" },
  { "STRONG", 0, 0, 1, "0: mild gates (g about -0.05); 1: strong (g about -2)" },
  { "LOSS", 1, 1, 1000, "scale of the cotangents dO, dS_T" },
};

enum { MUT_NONE, MUT_SOFTPLUS_OUTSIDE, MUT_CHUNK_NO_READ_SCALE,
       MUT_DOUBLE_SCALE, MUT_GATE_GRAD_NO_SIGMOID, MUT_GVA_NO_GROUP_SUM };

static const gcm_mutant mutants[] = {
  { "softplus-outside", "g = -softplus(exp(A_log) x) in forward and backward alike" },
  { "chunk-no-read-scale", "the chunked path uses read scale 1.0, forward and backward" },
  { "double-scale", "the read scale is applied twice, forward and backward" },
  { "gate-grad-no-sigmoid", "dg_raw lacks the sigmoid(x) factor" },
  { "gva-no-group-sum", "dq, dk keep one value head of the group instead of the sum" },
};

static const float LOWER_BOUND = -5.0f;

typedef struct kda
{
  gcm_instance inst;
  size_t B, T, H, HV, G, K, V, BT, NT, Tp;
  bool chunk, lowerbound;
  int mutant;
  float scale;               /* the read scale the f32 path applies */
  float *dout, *dst;         /* [B,T,HV,V], [B,HV,K,V] */
  size_t off_q, off_k, off_v, off_g, off_b, off_a, off_dt, off_s;
  size_t n_out;
  gc_block blocks[8], out_blocks[2];
  gc_constant constants[5];
  gcm_mpseq mp;
  gcm_mpseq_ops mp_ops;
} kda;

/* torch's softplus: x above the threshold 20 is returned as is.  */
static float
softplusf_ (float x)
{
  return x > 20.0f ? x : log1pf (expf (x));
}

/* ---------------------------------------------------------------------- */
/* Inputs inside the op, computed once per call for every row.  */

typedef struct prep
{
  float *qn, *kn;            /* [B,T,H,K] normalised */
  float *rq, *rk;            /* [B,T,H] 1/sqrt(|x|^2 + eps) */
  float *g;                  /* [B,T,HV,K] the gate's output (log decay) */
  float *beta;               /* [B,T,HV] */
} prep;

static bool
prep_alloc (const kda *m, prep *p)
{
  size_t rh = m->B * m->T * m->H, rv = m->B * m->T * m->HV;
  float *mem = malloc ((2 * rh * m->K + 2 * rh + rv * m->K + rv)
                       * sizeof (float));
  if (!mem)
    return false;
  p->qn = mem;
  p->kn = p->qn + rh * m->K;
  p->rq = p->kn + rh * m->K;
  p->rk = p->rq + rh;
  p->g = p->rk + rh;
  p->beta = p->g + rv * m->K;
  return true;
}

static void
prep_free (prep *p)
{
  free (p->qn);
}

static void
prep_run (const kda *m, const float *x, prep *p)
{
  size_t K = m->K, rh = m->B * m->T * m->H, rv = m->B * m->T * m->HV;
  for (size_t row = 0; row < rh; row++)
    {
      const float *q = x + m->off_q + row * K, *k = x + m->off_k + row * K;
      float sq = 0, sk = 0;
      for (size_t i = 0; i < K; i++)
        {
          sq += q[i] * q[i];
          sk += k[i] * k[i];
        }
      p->rq[row] = 1.0f / sqrtf (sq + GCM_L2_EPS);
      p->rk[row] = 1.0f / sqrtf (sk + GCM_L2_EPS);
      for (size_t i = 0; i < K; i++)
        {
          p->qn[row * K + i] = q[i] * p->rq[row];
          p->kn[row * K + i] = k[i] * p->rk[row];
        }
    }
  for (size_t row = 0; row < rv; row++)
    {
      size_t hv = row % m->HV;
      float ea = expf (x[m->off_a + hv]);
      p->beta[row] = gcm_sigmoidf (x[m->off_b + row]);
      for (size_t i = 0; i < K; i++)
        {
          float z = x[m->off_g + row * K + i] + x[m->off_dt + hv * K + i];
          float g;
          if (m->lowerbound)
            g = LOWER_BOUND * gcm_sigmoidf (ea * z);
          else
            g = -ea * softplusf_ (z);
          if (m->mutant == MUT_SOFTPLUS_OUTSIDE)
            g = -softplusf_ (ea * z);                        /* MUTANT */
          p->g[row * K + i] = g;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* One (b, hv) sequence: padded inputs and the scratch of either path.  */

typedef struct seq
{
  float *q, *k, *v, *g, *beta;  /* [Tp,K] x3 ([Tp,V] for v), [Tp] */
  float *gam;                   /* [Tp,K] chunk-local cumsum */
  float *A, *Aqk;               /* [NT,BT,BT] */
  float *W;                     /* [Tp,K] */
  float *vnew;                  /* [Tp,V] */
  float *h;                     /* [NT+1,K,V]: h_n; the recurrent path keeps
                                   every state here: [T+1,K,V] */
} seq;

static size_t
seq_floats (const kda *m)
{
  size_t Tp = m->Tp, K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  size_t nh = m->chunk ? NT + 1 : m->T + 1;
  return 3 * Tp * K + Tp * V + Tp + Tp * K + 2 * NT * BT * BT + Tp * K
         + Tp * V + nh * K * V;
}

static void
seq_bind (const kda *m, seq *s, float *p)
{
  size_t Tp = m->Tp, K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  s->q = p; p += Tp * K;
  s->k = p; p += Tp * K;
  s->g = p; p += Tp * K;
  s->v = p; p += Tp * V;
  s->beta = p; p += Tp;
  s->gam = p; p += Tp * K;
  s->A = p; p += NT * BT * BT;
  s->Aqk = p; p += NT * BT * BT;
  s->W = p; p += Tp * K;
  s->vnew = p; p += Tp * V;
  s->h = p;
}

static void
seq_gather (const kda *m, const float *x, const prep *p, size_t b, size_t hv,
            seq *s)
{
  size_t T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V;
  size_t hh = hv / m->G;
  memset (s->q, 0, seq_floats (m) * sizeof (float));
  for (size_t t = 0; t < T; t++)
    {
      size_t rowh = (b * T + t) * H + hh, rowv = (b * T + t) * HV + hv;
      memcpy (s->q + t * K, p->qn + rowh * K, K * sizeof (float));
      memcpy (s->k + t * K, p->kn + rowh * K, K * sizeof (float));
      memcpy (s->g + t * K, p->g + rowv * K, K * sizeof (float));
      memcpy (s->v + t * V, x + m->off_v + rowv * V, V * sizeof (float));
      s->beta[t] = p->beta[rowv];
    }
  memcpy (s->h, x + m->off_s + (b * HV + hv) * K * V, K * V * sizeof (float));
}

typedef struct work
{
  float *E, *Kd, *L, *Kb, *Vb, *Qe, *U, *dVn, *dAqk, *Tm, *dKd, *dW, *dA,
        *dWb, *dUb, *tmp, *dL, *dG, *dS, *dh, *Sp, *e, *de;
} work;

static size_t
work_floats (const kda *m)
{
  size_t K = m->K, V = m->V, BT = m->BT;
  return 2 * BT * K + BT * BT + BT * K + BT * V + BT * K + BT * V + BT * V
         + BT * BT + BT * K + BT * K + BT * K + BT * BT + BT * K + BT * V
         + BT * BT + BT * BT + BT * K + 2 * K * V + K * V + 2 * V;
}

static void
work_bind (const kda *m, work *w, float *p)
{
  size_t K = m->K, V = m->V, BT = m->BT;
  w->E = p; p += BT * K;
  w->Kd = p; p += BT * K;
  w->L = p; p += BT * BT;
  w->Kb = p; p += BT * K;
  w->Vb = p; p += BT * V;
  w->Qe = p; p += BT * K;
  w->U = p; p += BT * V;
  w->dVn = p; p += BT * V;
  w->dAqk = p; p += BT * BT;
  w->Tm = p; p += BT * K;
  w->dKd = p; p += BT * K;
  w->dW = p; p += BT * K;
  w->dA = p; p += BT * BT;
  w->dWb = p; p += BT * K;
  w->dUb = p; p += BT * V;
  w->tmp = p; p += BT * BT;
  w->dL = p; p += BT * BT;
  w->dG = p; p += BT * K;
  w->dS = p; p += K * V;
  w->dh = p; p += K * V;
  w->Sp = p; p += K * V;
  w->e = p; p += V;
  w->de = p;
}

/* ---------------------------------------------------------------------- */
/* The chunked WY forward (§3.2): O [Tp,V]; the final state in slab NT.  */

static void
chunk_forward (const kda *m, seq *s, work *w, float *O)
{
  size_t K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  float scale = m->scale;
  for (size_t n = 0; n < NT; n++)
    {
      size_t base = n * BT;
      const float *q = s->q + base * K, *k = s->k + base * K;
      const float *v = s->v + base * V, *beta = s->beta + base;
      float *G = s->gam + base * K;
      float *A = s->A + n * BT * BT, *Aqk = s->Aqk + n * BT * BT;
      float *Wn = s->W + base * K, *vn = s->vnew + base * V;
      const float *hn = s->h + n * K * V;
      float *hnext = s->h + (n + 1) * K * V;
      for (size_t i = 0; i < K; i++)
        {
          float acc = 0;
          for (size_t r = 0; r < BT; r++)
            {
              acc += s->g[(base + r) * K + i];
              G[r * K + i] = acc;
              w->E[r * K + i] = expf (acc);
            }
        }
      /* exp(G_r - G_c) per channel, only for c <= r (at most 1).  */
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c < BT; c++)
          {
            float lk = 0, qk = 0;
            if (c <= r)
              for (size_t i = 0; i < K; i++)
                {
                  float ex = expf (G[r * K + i] - G[c * K + i]);
                  lk += k[r * K + i] * k[c * K + i] * ex;
                  qk += q[r * K + i] * k[c * K + i] * ex;
                }
            w->L[r * BT + c] = c < r ? beta[r] * lk : 0.0f;
            Aqk[r * BT + c] = c <= r ? scale * qk : 0.0f;
          }
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t c = 0; c < r; c++)
            {
              float sum = 0;
              for (size_t j = c; j < r; j++)
                sum += w->L[r * BT + j] * A[j * BT + c];
              A[r * BT + c] = -sum;
            }
          A[r * BT + r] = 1.0f;
          for (size_t c = r + 1; c < BT; c++)
            A[r * BT + c] = 0.0f;
        }
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t i = 0; i < K; i++)
            {
              w->Kb[r * K + i] = beta[r] * w->E[r * K + i] * k[r * K + i];
              w->Qe[r * K + i] = scale * w->E[r * K + i] * q[r * K + i];
              w->Kd[r * K + i] = k[r * K + i]
                * expf (G[(BT - 1) * K + i] - G[r * K + i]);
            }
          for (size_t j = 0; j < V; j++)
            w->Vb[r * V + j] = beta[r] * v[r * V + j];
        }
      gcm_mm (CblasNoTrans, CblasNoTrans, BT, K, BT, 1, A, BT, w->Kb, K, 0, Wn, K);
      gcm_mm (CblasNoTrans, CblasNoTrans, BT, V, BT, 1, A, BT, w->Vb, V, 0, w->U, V);
      memcpy (vn, w->U, BT * V * sizeof (float));
      gcm_mm (CblasNoTrans, CblasNoTrans, BT, V, K, -1, Wn, K, hn, V, 1, vn, V);
      float *o = O + base * V;
      gcm_mm (CblasNoTrans, CblasNoTrans, BT, V, K, 1, w->Qe, K, hn, V, 0, o, V);
      gcm_mm (CblasNoTrans, CblasNoTrans, BT, V, BT, 1, Aqk, BT, vn, V, 1, o, V);
      for (size_t i = 0; i < K; i++)
        {
          float el = w->E[(BT - 1) * K + i];
          for (size_t j = 0; j < V; j++)
            hnext[i * V + j] = el * hn[i * V + j];
        }
      gcm_mm (CblasTrans, CblasNoTrans, K, V, BT, 1, w->Kd, K, vn, V, 1, hnext, V);
    }
}

/* The chunked backward (§6), reading the scratch.  dO [Tp,V]; w->dS holds
   dS_T on entry, dS0 on exit; gradients w.r.t. the op's inner inputs.  */
static void
chunk_backward (const kda *m, const seq *s, work *w, const float *dO,
                float *dq, float *dk, float *dv, float *dbeta, float *dg)
{
  size_t K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  float scale = m->scale;
  for (size_t n = NT; n-- > 0;)
    {
      size_t base = n * BT;
      const float *q = s->q + base * K, *k = s->k + base * K;
      const float *v = s->v + base * V, *beta = s->beta + base;
      const float *G = s->gam + base * K;
      const float *A = s->A + n * BT * BT, *Aqk = s->Aqk + n * BT * BT;
      const float *Wn = s->W + base * K, *vn = s->vnew + base * V;
      const float *hn = s->h + n * K * V;
      const float *dOc = dO + base * V;
      float *dqc = dq + base * K, *dkc = dk + base * K, *dvc = dv + base * V;
      float *dbc = dbeta + base, *dG = w->dG;
      const float *Gl = G + (BT - 1) * K;
      memset (dG, 0, BT * K * sizeof (float));
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          {
            w->E[r * K + i] = expf (G[r * K + i]);
            w->Kd[r * K + i] = k[r * K + i] * expf (Gl[i] - G[r * K + i]);
          }
      /* 1. dVnew = Aqk^T dO + Kd dS;  dAqk = dO Vnew^T  */
      gcm_mm (CblasTrans, CblasNoTrans, BT, V, BT, 1, Aqk, BT, dOc, V, 0, w->dVn, V);
      gcm_mm (CblasNoTrans, CblasNoTrans, BT, V, K, 1, w->Kd, K, w->dS, V, 1, w->dVn, V);
      gcm_mm (CblasNoTrans, CblasTrans, BT, BT, V, 1, dOc, V, vn, V, 0, w->dAqk, BT);
      /* 2. inter-chunk output, t = scale E (dO h^T)  */
      gcm_mm (CblasNoTrans, CblasTrans, BT, K, V, 1, dOc, V, hn, V, 0, w->Tm, K);
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          {
            float t = scale * w->E[r * K + i] * w->Tm[r * K + i];
            dqc[r * K + i] += t;
            dG[r * K + i] += q[r * K + i] * t;
          }
      /* 3. state out  */
      for (size_t i = 0; i < K; i++)
        {
          float sh = 0;
          for (size_t j = 0; j < V; j++)
            sh += w->dS[i * V + j] * hn[i * V + j];
          dG[(BT - 1) * K + i] += w->E[(BT - 1) * K + i] * sh;
        }
      gcm_mm (CblasNoTrans, CblasTrans, BT, K, V, 1, vn, V, w->dS, V, 0, w->dKd, K);
      for (size_t c = 0; c < BT; c++)
        for (size_t i = 0; i < K; i++)
          {
            float d = w->dKd[c * K + i];
            dkc[c * K + i] += d * expf (Gl[i] - G[c * K + i]);
            float z = d * w->Kd[c * K + i];
            dG[(BT - 1) * K + i] += z;
            dG[c * K + i] -= z;
          }
      /* 4. Aqk, per channel  */
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c <= r; c++)
          {
            float da = scale * w->dAqk[r * BT + c];
            if (da == 0)
              continue;
            for (size_t i = 0; i < K; i++)
              {
                float X = da * expf (G[r * K + i] - G[c * K + i]);
                dqc[r * K + i] += X * k[c * K + i];
                dkc[c * K + i] += X * q[r * K + i];
                float tt = X * q[r * K + i] * k[c * K + i];
                dG[r * K + i] += tt;
                dG[c * K + i] -= tt;
              }
          }
      /* 5. Vnew = U - W h_n  */
      gcm_mm (CblasNoTrans, CblasTrans, BT, K, V, -1, w->dVn, V, hn, V, 0, w->dW, K);
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          w->Qe[r * K + i] = scale * w->E[r * K + i] * q[r * K + i];
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          w->dh[i * V + j] = w->E[(BT - 1) * K + i] * w->dS[i * V + j];
      gcm_mm (CblasTrans, CblasNoTrans, K, V, BT, 1, w->Qe, K, dOc, V, 1, w->dh, V);
      gcm_mm (CblasTrans, CblasNoTrans, K, V, BT, -1, Wn, K, w->dVn, V, 1, w->dh, V);
      /* 6. WY  */
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t i = 0; i < K; i++)
            w->Kb[r * K + i] = beta[r] * w->E[r * K + i] * k[r * K + i];
          for (size_t j = 0; j < V; j++)
            w->Vb[r * V + j] = beta[r] * v[r * V + j];
        }
      gcm_mm (CblasNoTrans, CblasTrans, BT, BT, K, 1, w->dW, K, w->Kb, K, 0, w->dA, BT);
      gcm_mm (CblasNoTrans, CblasTrans, BT, BT, V, 1, w->dVn, V, w->Vb, V, 1, w->dA, BT);
      gcm_mm (CblasTrans, CblasNoTrans, BT, K, BT, 1, A, BT, w->dW, K, 0, w->dWb, K);
      gcm_mm (CblasTrans, CblasNoTrans, BT, V, BT, 1, A, BT, w->dVn, V, 0, w->dUb, V);
      for (size_t c = 0; c < BT; c++)
        {
          float uv = 0, wk = 0;
          for (size_t j = 0; j < V; j++)
            {
              dvc[c * V + j] += beta[c] * w->dUb[c * V + j];
              uv += w->dUb[c * V + j] * v[c * V + j];
            }
          for (size_t i = 0; i < K; i++)
            {
              float ek = w->E[c * K + i] * k[c * K + i];
              wk += w->dWb[c * K + i] * ek;
              dkc[c * K + i] += beta[c] * w->E[c * K + i] * w->dWb[c * K + i];
              dG[c * K + i] += beta[c] * ek * w->dWb[c * K + i];
            }
          dbc[c] += uv + wk;
        }
      /* 7. dL = -A^T dA A^T  */
      gcm_mm (CblasNoTrans, CblasTrans, BT, BT, BT, 1, w->dA, BT, A, BT, 0, w->tmp, BT);
      gcm_mm (CblasTrans, CblasNoTrans, BT, BT, BT, -1, A, BT, w->tmp, BT, 0, w->dL, BT);
      /* 8. L, per channel (r > c)  */
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c < r; c++)
          {
            float dl = w->dL[r * BT + c], X = 0;
            for (size_t i = 0; i < K; i++)
              {
                float ex = expf (G[r * K + i] - G[c * K + i]);
                float kk = k[r * K + i] * k[c * K + i] * ex;
                X += kk;
                dkc[r * K + i] += beta[r] * dl * k[c * K + i] * ex;
                dkc[c * K + i] += beta[r] * dl * k[r * K + i] * ex;
                float tt = dl * beta[r] * kk;
                dG[r * K + i] += tt;
                dG[c * K + i] -= tt;
              }
            dbc[r] += dl * X;
          }
      /* 9. reverse cumsum of dG inside the chunk, per channel  */
      for (size_t i = 0; i < K; i++)
        {
          float acc = 0;
          for (size_t r = BT; r-- > 0;)
            {
              acc += dG[r * K + i];
              dg[(base + r) * K + i] = acc;
            }
        }
      memcpy (w->dS, w->dh, K * V * sizeof (float));
    }
}

/* ---------------------------------------------------------------------- */
/* The naive recurrence (§2.2) and its adjoint (§5.1); every state kept.  */

static void
rec_forward (const kda *m, seq *s, work *w, float *O)
{
  size_t T = m->T, K = m->K, V = m->V;
  float scale = m->scale;
  for (size_t t = 0; t < T; t++)
    {
      const float *S = s->h + t * K * V;
      float *Sn = s->h + (t + 1) * K * V;
      const float *q = s->q + t * K, *k = s->k + t * K, *v = s->v + t * V;
      for (size_t i = 0; i < K; i++)
        {
          float a = expf (s->g[t * K + i]);
          for (size_t j = 0; j < V; j++)
            Sn[i * V + j] = a * S[i * V + j];
        }
      for (size_t j = 0; j < V; j++)
        {
          float sum = 0;
          for (size_t i = 0; i < K; i++)
            sum += k[i] * Sn[i * V + j];
          w->e[j] = s->beta[t] * (v[j] - sum);
        }
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          Sn[i * V + j] += k[i] * w->e[j];
      for (size_t j = 0; j < V; j++)
        {
          float sum = 0;
          for (size_t i = 0; i < K; i++)
            sum += q[i] * Sn[i * V + j];
          O[t * V + j] = scale * sum;
        }
    }
}

static void
rec_backward (const kda *m, const seq *s, work *w, const float *dO, float *dq,
              float *dk, float *dv, float *dbeta, float *dg)
{
  size_t T = m->T, K = m->K, V = m->V;
  float scale = m->scale;
  float *dS = w->dS, *Sp = w->Sp, *e = w->e, *de = w->de;
  for (size_t t = T; t-- > 0;)
    {
      const float *Sprev = s->h + t * K * V, *St = s->h + (t + 1) * K * V;
      const float *q = s->q + t * K, *k = s->k + t * K, *v = s->v + t * V;
      float beta = s->beta[t];
      for (size_t i = 0; i < K; i++)
        {
          float a = expf (s->g[t * K + i]);
          for (size_t j = 0; j < V; j++)
            Sp[i * V + j] = a * Sprev[i * V + j];
        }
      for (size_t j = 0; j < V; j++)
        {
          float sum = 0;
          for (size_t i = 0; i < K; i++)
            sum += k[i] * Sp[i * V + j];
          e[j] = v[j] - sum;
        }
      for (size_t i = 0; i < K; i++)
        {
          float sum = 0;
          for (size_t j = 0; j < V; j++)
            sum += St[i * V + j] * dO[t * V + j];
          dq[t * K + i] = scale * sum;
        }
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          dS[i * V + j] += scale * q[i] * dO[t * V + j];
      float db = 0;
      for (size_t j = 0; j < V; j++)
        {
          float dd = 0;
          for (size_t i = 0; i < K; i++)
            dd += dS[i * V + j] * k[i];
          db += dd * e[j];
          de[j] = beta * dd;
          dv[t * V + j] = de[j];
        }
      dbeta[t] = db;
      for (size_t i = 0; i < K; i++)
        {
          float a = expf (s->g[t * K + i]), sk = 0, gi = 0;
          for (size_t j = 0; j < V; j++)
            sk += dS[i * V + j] * beta * e[j] - Sp[i * V + j] * de[j];
          dk[t * K + i] = sk;
          for (size_t j = 0; j < V; j++)
            {
              float dsp = dS[i * V + j] - k[i] * de[j];
              gi += dsp * Sp[i * V + j];
              dS[i * V + j] = a * dsp;
            }
          dg[t * K + i] = gi;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Callbacks.  */

typedef struct buffers
{
  float *mem;
  prep p;
  seq *seqs;                 /* B*HV */
  work w;
  float *O;                  /* [Tp,V] */
} buffers;

static bool
buffers_alloc (const kda *m, buffers *bf)
{
  size_t ns = m->B * m->HV;
  bf->mem = malloc ((ns * seq_floats (m) + work_floats (m) + m->Tp * m->V)
                    * sizeof (float));
  bf->seqs = malloc (ns * sizeof *bf->seqs);
  if (!bf->mem || !bf->seqs || !prep_alloc (m, &bf->p))
    {
      free (bf->mem);
      free (bf->seqs);
      return false;
    }
  float *p = bf->mem;
  for (size_t i = 0; i < ns; i++, p += seq_floats (m))
    seq_bind (m, &bf->seqs[i], p);
  work_bind (m, &bf->w, p);
  bf->O = p + work_floats (m);
  return true;
}

static void
buffers_free (buffers *bf)
{
  prep_free (&bf->p);
  free (bf->mem);
  free (bf->seqs);
}

/* Run the f32 path on every sequence.  With OUT, write o [B,T,HV,V] and
   S_T [B,HV,K,V]; with LOSS, the loss (accumulated in double, rounded once)
   and its magnitude, the sum of |terms| (manual: "Reference rounding").  */
static void
forward_all (const kda *m, const float *x, buffers *bf, float *out,
             float *loss, float *magnitude)
{
  size_t T = m->T, HV = m->HV, K = m->K, V = m->V;
  prep_run (m, x, &bf->p);
  double L = 0, M = 0;
  for (size_t b = 0; b < m->B; b++)
    for (size_t hv = 0; hv < HV; hv++)
      {
        seq *s = &bf->seqs[b * HV + hv];
        seq_gather (m, x, &bf->p, b, hv, s);
        if (m->chunk)
          chunk_forward (m, s, &bf->w, bf->O);
        else
          rec_forward (m, s, &bf->w, bf->O);
        const float *ST = s->h + (m->chunk ? m->NT : T) * K * V;
        for (size_t t = 0; t < T; t++)
          {
            size_t row = (b * T + t) * HV + hv;
            for (size_t j = 0; j < V; j++)
              {
                double c = (double) bf->O[t * V + j] * m->dout[row * V + j];
                L += c;
                M += fabs (c);
                if (out)
                  out[row * V + j] = bf->O[t * V + j];
              }
          }
        const float *dST = m->dst + (b * HV + hv) * K * V;
        for (size_t e = 0; e < K * V; e++)
          {
            double c = (double) ST[e] * dST[e];
            L += c;
            M += fabs (c);
          }
        if (out)
          memcpy (out + m->B * T * HV * V + (b * HV + hv) * K * V, ST,
                  K * V * sizeof (float));
      }
  if (loss)
    *loss = (float) L;
  if (magnitude)
    *magnitude = (float) M;
}

static int
loss_f32 (void *ctx, const float *x, float *loss)
{
  const kda *m = ctx;
  buffers bf;
  if (!buffers_alloc (m, &bf))
    return -1;
  forward_all (m, x, &bf, NULL, loss, NULL);
  buffers_free (&bf);
  return 0;
}

static int
loss_magnitude_f32 (void *ctx, const float *x, float *mag)
{
  const kda *m = ctx;
  buffers bf;
  float loss;
  if (!buffers_alloc (m, &bf))
    return -1;
  forward_all (m, x, &bf, NULL, &loss, mag);
  buffers_free (&bf);
  return 0;
}

static int
outputs_f32 (void *ctx, const float *x, float *out)
{
  const kda *m = ctx;
  buffers bf;
  if (!buffers_alloc (m, &bf))
    return -1;
  forward_all (m, x, &bf, out, NULL, NULL);
  buffers_free (&bf);
  return 0;
}

/* The backward.  A_log and dt_bias are reductions over every (b, t) and
   channel; they are accumulated in double and rounded once.  With MAG, the
   magnitude of each element's computation (manual: "Adjoint rounding"):
   the largest |gradient| of its tensor, except for the two reductions, whose
   terms each carry the error of their own factor's tensor and which can
   cancel: A_log[hv] gets max|dg| sum|g| (softplus gate; max|dg_raw| sum|x|
   for the lower-bound gate), dt_bias[hv, i] gets B T max|dg_raw|, maxima
   and sums over the value head's elements.  */
static int
backward_all (const kda *m, const float *x, float *grad, float *mag)
{
  size_t T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V, Tp = m->Tp;
  buffers bf;
  if (!buffers_alloc (m, &bf))
    return -1;
  /* per-sequence gradients of the inner inputs, then the raw dq, dk
     accumulated over the group before the norm's chain rule  */
  size_t rh = m->B * T * H;
  float *gb = malloc ((3 * Tp * K + Tp * V + Tp + 2 * rh * K) * sizeof (float));
  /* per value head: the reductions, and the scales of their terms */
  double *red = calloc (HV * (K + 4), sizeof *red);
  if (!gb || !red)
    {
      free (gb);
      free (red);
      buffers_free (&bf);
      return -1;
    }
  double *acc_a = red, *acc_dt = acc_a + HV, *fac_max = acc_dt + HV * K;
  double *other_sum = fac_max + HV, *graw_max = other_sum + HV;
  float *dq = gb, *dk = dq + Tp * K, *dg = dk + Tp * K, *dv = dg + Tp * K;
  float *dbeta = dv + Tp * V, *dqn = dbeta + Tp, *dkn = dqn + rh * K;
  float loss;
  forward_all (m, x, &bf, NULL, &loss, NULL);
  memset (grad, 0, m->inst.model.n * sizeof (float));
  memset (dqn, 0, 2 * rh * K * sizeof (float));
  for (size_t b = 0; b < m->B; b++)
    for (size_t hv = 0; hv < HV; hv++)
      {
        const seq *s = &bf.seqs[b * HV + hv];
        size_t hh = hv / m->G;
        float *dOp = bf.O;
        memset (dOp, 0, Tp * V * sizeof (float));
        memset (gb, 0, (3 * Tp * K + Tp * V + Tp) * sizeof (float));
        for (size_t t = 0; t < T; t++)
          memcpy (dOp + t * V, m->dout + ((b * T + t) * HV + hv) * V,
                  V * sizeof (float));
        memcpy (bf.w.dS, m->dst + (b * HV + hv) * K * V, K * V * sizeof (float));
        if (m->chunk)
          chunk_backward (m, s, &bf.w, dOp, dq, dk, dv, dbeta, dg);
        else
          rec_backward (m, s, &bf.w, dOp, dq, dk, dv, dbeta, dg);
        memcpy (grad + m->off_s + (b * HV + hv) * K * V, bf.w.dS,
                K * V * sizeof (float));
        float ea = expf (x[m->off_a + hv]);
        for (size_t t = 0; t < T; t++)
          {
            size_t rowv = (b * T + t) * HV + hv, rowh = (b * T + t) * H + hh;
            /* GVA: dq, dk summed over the value heads of the group.  */
            bool first = hv % m->G == 0;
            for (size_t i = 0; i < K; i++)
              {
                if (m->mutant == MUT_GVA_NO_GROUP_SUM && !first)
                  {
                    dqn[rowh * K + i] = dq[t * K + i];       /* MUTANT */
                    dkn[rowh * K + i] = dk[t * K + i];
                    continue;
                  }
                dqn[rowh * K + i] += dq[t * K + i];
                dkn[rowh * K + i] += dk[t * K + i];
              }
            memcpy (grad + m->off_v + rowv * V, dv + t * V, V * sizeof (float));
            float beta = bf.p.beta[rowv];
            grad[m->off_b + rowv] = dbeta[t] * beta * (1.0f - beta);
            /* the gate (§1.2, §5.4)  */
            for (size_t i = 0; i < K; i++)
              {
                float z = x[m->off_g + rowv * K + i] + x[m->off_dt + hv * K + i];
                float d = dg[t * K + i], graw, dA;
                if (m->mutant == MUT_SOFTPLUS_OUTSIDE)
                  {
                    float sg = gcm_sigmoidf (ea * z);           /* MUTANT */
                    graw = -d * sg * ea;
                    dA = graw * z;
                  }
                else if (m->lowerbound)
                  {
                    float sg = gcm_sigmoidf (ea * z);
                    float sd = sg * (1.0f - sg);
                    if (m->mutant == MUT_GATE_GRAD_NO_SIGMOID) sd = 1.0f; /* MUTANT */
                    graw = d * LOWER_BOUND * sd * ea;
                    dA = graw * z;
                  }
                else
                  {
                    float sg = gcm_sigmoidf (z);
                    if (m->mutant == MUT_GATE_GRAD_NO_SIGMOID) sg = 1.0f; /* MUTANT */
                    graw = -d * ea * sg;
                    dA = d * bf.p.g[rowv * K + i];
                  }
                grad[m->off_g + rowv * K + i] = graw;
                acc_dt[hv * K + i] += graw;
                acc_a[hv] += dA;
                /* dA = d g (softplus) or graw z: the factor carrying the
                   backward's error, and the other  */
                bool softplus = !m->lowerbound
                                && m->mutant != MUT_SOFTPLUS_OUTSIDE;
                fac_max[hv] = fmax (fac_max[hv], fabs (softplus ? d : graw));
                other_sum[hv] += fabs (softplus ? bf.p.g[rowv * K + i] : z);
                graw_max[hv] = fmax (graw_max[hv], fabs (graw));
              }
          }
      }
  for (size_t hv = 0; hv < HV; hv++)
    {
      grad[m->off_a + hv] = (float) acc_a[hv];
      for (size_t i = 0; i < K; i++)
        grad[m->off_dt + hv * K + i] = (float) acc_dt[hv * K + i];
    }
  /* the L2 norm's chain rule on the group sums  */
  for (size_t row = 0; row < rh; row++)
    {
      const float *qn = bf.p.qn + row * K, *kn = bf.p.kn + row * K;
      float dqy = 0, dky = 0;
      for (size_t i = 0; i < K; i++)
        {
          dqy += dqn[row * K + i] * qn[i];
          dky += dkn[row * K + i] * kn[i];
        }
      for (size_t i = 0; i < K; i++)
        {
          grad[m->off_q + row * K + i] = bf.p.rq[row] * (dqn[row * K + i]
                                                          - dqy * qn[i]);
          grad[m->off_k + row * K + i] = bf.p.rk[row] * (dkn[row * K + i]
                                                          - dky * kn[i]);
        }
    }
  if (mag)
    {
      for (size_t b = 0; b < m->inst.model.n_blocks; b++)
        {
          const gc_block *bl = &m->inst.model.blocks[b];
          float mx = 0;
          for (size_t k = bl->offset; k < bl->offset + bl->count; k++)
            mx = fmaxf (mx, fabsf (grad[k]));
          for (size_t k = bl->offset; k < bl->offset + bl->count; k++)
            mag[k] = mx;
        }
      for (size_t hv = 0; hv < HV; hv++)
        {
          mag[m->off_a + hv] = (float) (fac_max[hv] * other_sum[hv]);
          for (size_t i = 0; i < K; i++)
            mag[m->off_dt + hv * K + i] = (float) ((double) (m->B * T)
                                                   * graw_max[hv]);
        }
    }
  free (gb);
  free (red);
  buffers_free (&bf);
  return 0;
}

static int
grad_f32 (void *ctx, const float *x, float *grad)
{
  return backward_all (ctx, x, grad, NULL);
}

static int
grad_magnitude_f32 (void *ctx, const float *x, float *mag)
{
  const kda *m = ctx;
  float *g = malloc (m->inst.model.n * sizeof *g);
  if (!g)
    return -1;
  int rc = backward_all (m, x, g, mag);
  free (g);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* The MPFR reference: the recurrence with the gate, the sigmoid and the
   normalisation inside; one step at a time for models/mpseq.h.  Sequence s
   is (b, hv) = (s / HV, s % HV).  A step's inputs: qn [K], kn [K], v [V],
   beta, alpha = exp(g) [K].  */

static size_t
mp_input_size (const kda *m)
{
  return 3 * m->K + m->V + 1;
}

static void *
mp_work_new (const void *ctx, mpfr_prec_t p)
{
  const kda *m = ctx;
  return gcm_delta_mp_new (m->K, m->V, mp_input_size (m), p);
}

static void
mp_init_state (const void *ctx, mpfr_srcptr x, size_t s, void *wk)
{
  const kda *m = ctx;
  gcm_delta_mp *w = wk;
  for (size_t ij = 0; ij < m->K * m->V; ij++)
    mpfr_set (w->S[ij], x + m->off_s + s * m->K * m->V + ij, MPFR_RNDN);
}

/* The gate of §1.2 exactly as FLA writes it: g = -exp(A) log(1 + exp(x)),
   or g = -5 / (1 + exp(-exp(A) x)), x = g_raw + dt_bias.  */
static void
mp_prepare (const void *ctx, mpfr_srcptr x, size_t s, size_t t, void *wk,
            mpfr_t *in)
{
  const kda *m = ctx;
  gcm_delta_mp *w = wk;
  size_t T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V;
  size_t b = s / HV, hv = s % HV, hh = hv / m->G;
  size_t rowh = (b * T + t) * H + hh, rowv = (b * T + t) * HV + hv;
  mpfr_t *qn = in, *kn = qn + K, *v = kn + K, *beta = v + V, *al = beta + 1;
  gcm_delta_mp_normalize (w, x + m->off_q + rowh * K, x + m->off_k + rowh * K,
                          true, qn, kn);
  for (size_t j = 0; j < V; j++)
    mpfr_set (v[j], x + m->off_v + rowv * V + j, MPFR_RNDN);
  gcm_delta_mp_sigmoid (*beta, x + m->off_b + rowv);
  /* w->a holds exp(A_log) for the channels  */
  mpfr_exp (w->a, x + m->off_a + hv, MPFR_RNDN);
  for (size_t i = 0; i < K; i++)
    {
      mpfr_add (w->t1, x + m->off_g + rowv * K + i, x + m->off_dt + hv * K + i,
                MPFR_RNDN);
      if (m->lowerbound)
        {
          mpfr_mul (w->t1, w->t1, w->a, MPFR_RNDN);
          mpfr_neg (w->t1, w->t1, MPFR_RNDN);
          mpfr_exp (w->t1, w->t1, MPFR_RNDN);
          mpfr_add_ui (w->t1, w->t1, 1, MPFR_RNDN);
          mpfr_si_div (w->t1, (long) LOWER_BOUND, w->t1, MPFR_RNDN);
        }
      else
        {
          mpfr_exp (w->t1, w->t1, MPFR_RNDN);
          mpfr_log1p (w->t1, w->t1, MPFR_RNDN);
          mpfr_mul (w->t1, w->t1, w->a, MPFR_RNDN);
          mpfr_neg (w->t1, w->t1, MPFR_RNDN);
        }
      mpfr_exp (al[i], w->t1, MPFR_RNDN);
    }
}

static void
mp_step_o (const kda *m, size_t s, size_t t, mpfr_t *in, gcm_delta_mp *w,
           mpfr_ptr acc, mpfr_ptr o)
{
  size_t K = m->K, V = m->V;
  size_t rowv = (s / m->HV * m->T + t) * m->HV + s % m->HV;
  mpfr_t *qn = in, *kn = qn + K, *v = kn + K, *beta = v + V, *al = beta + 1;
  gcm_delta_mp_step (w, al, true, kn, qn, v, *beta, m->dout + rowv * V, o,
                     acc);
}

static void
mp_step (const void *ctx, size_t s, size_t t, mpfr_t *in, void *wk,
         mpfr_ptr acc)
{
  mp_step_o (ctx, s, t, in, wk, acc, NULL);
}

static void
mp_final (const void *ctx, size_t s, void *wk, mpfr_ptr acc)
{
  const kda *m = ctx;
  gcm_delta_mp_final (wk, m->dst + s * m->K * m->V, acc);
}

/* Whether the parameters every step of sequence S shares, A_log and
   dt_bias of its value head, differ from the base point's.  */
static int
mp_shared_differs (const kda *m, mpfr_srcptr x, size_t s)
{
  size_t K = m->K, hv = s % m->HV;
  const float *x0 = m->inst.x;
  return gcm_mp_differs (x, x0, m->off_a + hv, 1)
         || gcm_mp_differs (x, x0, m->off_dt + hv * K, K);
}

static int
mp_initial_differs (const void *ctx, mpfr_srcptr x, size_t s)
{
  const kda *m = ctx;
  return gcm_mp_differs (x, m->inst.x, m->off_s + s * m->K * m->V,
                         m->K * m->V)
         || mp_shared_differs (m, x, s);
}

static int
mp_inputs_differ (const void *ctx, mpfr_srcptr x, size_t s, size_t t)
{
  const kda *m = ctx;
  size_t T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V;
  size_t b = s / HV, hv = s % HV, hh = hv / m->G;
  size_t rowh = (b * T + t) * H + hh, rowv = (b * T + t) * HV + hv;
  const float *x0 = m->inst.x;
  return gcm_mp_differs (x, x0, m->off_q + rowh * K, K)
         || gcm_mp_differs (x, x0, m->off_k + rowh * K, K)
         || gcm_mp_differs (x, x0, m->off_v + rowv * V, V)
         || gcm_mp_differs (x, x0, m->off_g + rowv * K, K)
         || gcm_mp_differs (x, x0, m->off_b + rowv, 1)
         || mp_shared_differs (m, x, s);
}

static int
loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  kda *m = ctx;
  return gcm_mpseq_loss (&m->mp, &m->mp_ops, m, m->inst.x, m->inst.model.n,
                         x, loss);
}

/* The reference outputs o [B,T,HV,V] and S_T [B,HV,K,V], for the oracle.  */
static int
outputs_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr out)
{
  const kda *m = ctx;
  size_t T = m->T, HV = m->HV, K = m->K, V = m->V;
  gcm_delta_mp *w = mp_work_new (m, mpfr_get_prec (out));
  if (!w)
    return -1;
  for (size_t s = 0; s < m->B * HV; s++)
    {
      size_t b = s / HV, hv = s % HV;
      mp_init_state (m, x, s, w);
      for (size_t t = 0; t < T; t++)
        {
          mp_prepare (m, x, s, t, w, w->in);
          mp_step_o (m, s, t, w->in, w, NULL,
                     out + ((b * T + t) * HV + hv) * V);
        }
      for (size_t ij = 0; ij < K * V; ij++)
        mpfr_set (out + m->B * T * HV * V + s * K * V + ij, w->S[ij],
                  MPFR_RNDN);
    }
  gcm_delta_mp_free (w);
  return 0;
}

/* ---------------------------------------------------------------------- */

static void
destroy (gcm_instance *inst)
{
  kda *m = (kda *) inst;
  gcm_mpseq_clear (&m->mp);
  free (m->dout);
  free (m->dst);
  free (inst->x);
  free (m);
}

static gc_status
create (const long *val, uint64_t seed, int mutant, gcm_instance **out)
{
  if (val[KEY_HV] % val[KEY_H] != 0)
    return GC_EINVAL;
  kda *m = calloc (1, sizeof *m);
  if (!m)
    return GC_ENOMEM;
  gcm_mpseq_init (&m->mp);
  m->B = (size_t) val[KEY_B];
  m->T = (size_t) val[KEY_T];
  m->H = (size_t) val[KEY_H];
  m->HV = (size_t) val[KEY_HV];
  m->G = m->HV / m->H;
  m->K = (size_t) val[KEY_K];
  m->V = (size_t) val[KEY_V];
  m->BT = (size_t) val[KEY_BT];
  m->chunk = val[KEY_CHUNK] != 0;
  m->lowerbound = val[KEY_GATE] != 0;
  m->mutant = mutant;
  m->NT = (m->T + m->BT - 1) / m->BT;
  m->Tp = m->chunk ? m->NT * m->BT : m->T;
  double scale = 1.0 / sqrt ((double) m->K);
  if (mutant == MUT_CHUNK_NO_READ_SCALE && m->chunk)
    scale = 1.0;                                             /* MUTANT */
  if (mutant == MUT_DOUBLE_SCALE)
    scale *= scale;                                          /* MUTANT */
  m->scale = (float) scale;
  size_t B = m->B, T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V;
  size_t rh = B * T * H, rv = B * T * HV;
  m->off_q = 0;
  m->off_k = m->off_q + rh * K;
  m->off_v = m->off_k + rh * K;
  m->off_g = m->off_v + rv * V;
  m->off_b = m->off_g + rv * K;
  m->off_a = m->off_b + rv;
  m->off_dt = m->off_a + HV;
  m->off_s = m->off_dt + HV * K;
  size_t n = m->off_s + B * HV * K * V;
  m->n_out = rv * V + B * HV * K * V;
  m->inst.x = malloc (n * sizeof (float));
  m->dout = malloc (rv * V * sizeof (float));
  m->dst = malloc (B * HV * K * V * sizeof (float));
  if (!m->inst.x || !m->dout || !m->dst)
    {
      destroy (&m->inst);
      return GC_ENOMEM;
    }
  float *x = m->inst.x;
  bool strong = val[KEY_STRONG] != 0;
  gcm_rng r;
  gcm_rng_seed (&r, seed, 41);
  for (size_t i = 0; i < rh * K; i++)
    x[m->off_q + i] = (float) gcm_normal (&r);
  gcm_rng_seed (&r, seed, 42);
  for (size_t i = 0; i < rh * K; i++)
    x[m->off_k + i] = (float) gcm_normal (&r);
  gcm_rng_seed (&r, seed, 43);
  for (size_t i = 0; i < rv * V; i++)
    x[m->off_v + i] = (float) gcm_normal (&r);
  /* Gates: mild, softplus(x) about 0.13 and exp(A_log) about 0.3, so
     g about -0.04; strong, softplus about 0.7 and exp(A_log) 1 to 4.  */
  gcm_rng_seed (&r, seed, 44);
  for (size_t i = 0; i < rv * K; i++)
    x[m->off_g + i] = (float) ((strong ? 1.0 : 0.5) * gcm_normal (&r));
  gcm_rng_seed (&r, seed, 45);
  for (size_t i = 0; i < rv; i++)
    x[m->off_b + i] = (float) gcm_normal (&r);
  gcm_rng_seed (&r, seed, 46);
  for (size_t i = 0; i < HV; i++)
    x[m->off_a + i] = (float) log (strong ? 1 + 3 * gcm_uniform (&r)
                                          : 0.1 + 0.4 * gcm_uniform (&r));
  gcm_rng_seed (&r, seed, 47);
  for (size_t i = 0; i < HV * K; i++)
    x[m->off_dt + i] = (float) ((strong ? 0.0 : -2.0)
                                + 0.5 * gcm_normal (&r));
  gcm_rng_seed (&r, seed, 48);
  for (size_t i = 0; i < B * HV * K * V; i++)
    x[m->off_s + i] = (float) gcm_normal (&r);
  double ls = (double) val[KEY_LOSS];
  gcm_rng_seed (&r, seed, 49);
  for (size_t i = 0; i < rv * V; i++)
    m->dout[i] = (float) (ls * gcm_normal (&r));
  gcm_rng_seed (&r, seed, 50);
  for (size_t i = 0; i < B * HV * K * V; i++)
    m->dst[i] = (float) (ls * gcm_normal (&r));

  m->blocks[0] = (gc_block) { "q", m->off_q, rh * K, 4, { B, T, H, K } };
  m->blocks[1] = (gc_block) { "k", m->off_k, rh * K, 4, { B, T, H, K } };
  m->blocks[2] = (gc_block) { "v", m->off_v, rv * V, 4, { B, T, HV, V } };
  m->blocks[3] = (gc_block) { "g_raw", m->off_g, rv * K, 4, { B, T, HV, K } };
  m->blocks[4] = (gc_block) { "b_raw", m->off_b, rv, 3, { B, T, HV } };
  m->blocks[5] = (gc_block) { "A_log", m->off_a, HV, 1, { HV } };
  m->blocks[6] = (gc_block) { "dt_bias", m->off_dt, HV * K, 2, { HV, K } };
  m->blocks[7] = (gc_block) { "S0", m->off_s, B * HV * K * V, 4,
                              { B, HV, K, V } };
  m->out_blocks[0] = (gc_block) { "o", 0, rv * V, 4, { B, T, HV, V } };
  m->out_blocks[1] = (gc_block) { "S_T", rv * V, B * HV * K * V, 4,
                                  { B, HV, K, V } };
  m->constants[0] = (gc_constant) { "K", (double) K };
  m->constants[1] = (gc_constant) { "V", (double) V };
  m->constants[2] = (gc_constant) { "BT", (double) m->BT };
  m->constants[3] = (gc_constant) { "T", (double) T };
  m->constants[4] = (gc_constant) { "G", (double) m->G };
  m->mp_ops = (gcm_mpseq_ops) { B * HV, T, K * V, mp_initial_differs,
                                mp_work_new, gcm_delta_mp_work_free,
                                gcm_delta_mp_state,
                                mp_init_state, mp_input_size (m), mp_prepare,
                                mp_inputs_differ, mp_step, mp_final };

  gc_model *md = &m->inst.model;
  md->abi = GC_MODEL_ABI;
  md->name = "kda";
  md->n = n;
  md->loss_f32 = loss_f32;
  md->grad_f32 = grad_f32;
  md->grad_magnitude_f32 = grad_magnitude_f32;
  md->loss_magnitude_f32 = loss_magnitude_f32;
  md->loss_mpfr = loss_mpfr;
  md->ctx = m;
  /* Depths (manual: "The accumulation factor"): the rounded operations on
     the longest path from an input to the loss (forward) and to a gradient
     element (backward), counted as gdn's (models/gdn.c), with per-channel
     gates.
     The inputs: the L2 norm, sum q^2 (K), + eps, sqrt, 1/, * (4); the gate,
     z = g_raw + dt_bias, softplus (exp, log1p), times exp(A_log) (4; 5 for
     the lower-bound gate); beta's sigmoid (3).
     Chunked forward: g reaches h_{n+1} through the cumsum (BT), G_r - G_c
     and exp (2), k_r k_c ex (1), L's K-term sum (K) and beta (1), A
     (2 BT), W (BT), Vnew (K + 1) and the update (BT + 1): 5 BT + 2 K + 6,
     longer than k's path; each later chunk adds K + BT + 2 (Vnew and the
     update; an output is no longer); the loss 2.
     Recurrent forward: g reaches S_t through exp and the decay (2), S^T k
     (K), v - . and beta (2), the rank-1 update (2): K + 6; each later step
     adds K + 5; the output (K + 1) is no longer; the loss 2.
     Chunked backward: dS crosses a chunk in K + BT + 2 (as gdn's); it
     leaves along the longest path through dVnew (K + 1), dW (V), dA
     (K + 1), dL (2 BT), dL's factors (2), the additions into dG in step 8
     (BT) and the cumsum (BT): 4 BT + 2 K + V + 4.  (Through <dS_i, h_n,i>
     (V), E and the addition to dG_last (2), the later additions into that
     element (BT, BT + 1, 1, BT - 1 in steps 3, 4, 6, 8) and the cumsum
     (BT) it is 4 BT + V + 3, shorter.)
     Recurrent backward: dS crosses a step through dS += (1), dd = dS k (K),
     de = beta dd (1), dS - k de (2), the decay (1): K + 5; it leaves
     through dd, de, dsp as above (K + 4), the product with Sp (1) and the
     V-term sum for dg (V): K + V + 5.
     The backward adds the forward's depth (it reads the forward's values),
     then the chain rules: the group sum (G) and the L2 norm's, <dq, q> (K),
     a product, a subtraction, a product (3); the gate's (at most 4) and
     the sigmoid's (3) are shorter.  */
  size_t BT = m->BT, NT = m->NT;
  size_t in = K + 4 > 5 ? K + 4 : 5, chain = m->G + K + 3;
  if (m->chunk)
    {
      md->forward_depth = in + 5 * BT + 2 * K + 6 + (NT - 1) * (K + BT + 2)
                          + 2;
      md->backward_depth = md->forward_depth + (NT - 1) * (K + BT + 2)
                           + 4 * BT + 2 * K + V + 4 + chain;
    }
  else
    {
      md->forward_depth = in + K + 6 + (T - 1) * (K + 5) + 2;
      md->backward_depth = md->forward_depth + (T - 1) * (K + 5) + K + V + 5
                           + chain;
    }
  md->n_blocks = 8;
  md->blocks = m->blocks;
  md->n_constants = 5;
  md->constants = m->constants;
  md->n_outputs = m->n_out;
  md->outputs_f32 = outputs_f32;
  md->outputs_mpfr = outputs_mpfr;
  md->output_depth = md->forward_depth - 2;
  md->n_output_blocks = 2;
  md->output_blocks = m->out_blocks;
  m->inst.destroy = destroy;
  gcm_extra (&m->inst, "dO", m->dout, 4, (size_t[]) { B, T, HV, V });
  gcm_extra (&m->inst, "dS_T", m->dst, 4, (size_t[]) { B, HV, K, V });
  *out = &m->inst;
  return GC_OK;
}

const gcm_spec gcm_kda_spec = {
  "kda",
  "Kimi Delta Attention: per-channel gated delta rule, recurrent or chunked f32 path; MPFR recurrence reference; forward oracle",
  sizeof keys / sizeof keys[0], keys,
  sizeof mutants / sizeof mutants[0], mutants,
  create,
};
