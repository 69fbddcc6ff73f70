/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gdn_backward.h -- gdn's production path, written once over the element
   type (real.h) and included twice by gdn.c: the chunked forward that fills
   the padded scratch, and the backward (§6) that reads it.  As _f32 they
   are the op under test (grad_f32, and the f32 forward's callbacks); as
   _f64 the backward is its f64 twin (grad_f64; manual: "Writing a twin").
   Each mutant is one marked line, in both.  */

#include "real.h"

#define seq R_ (seq)
#define work R_ (work)
#define buffers R_ (buffers)
#define seq_floats R_ (seq_floats)
#define seq_bind R_ (seq_bind)
#define seq_gather R_ (seq_gather)
#define work_floats R_ (work_floats)
#define work_bind R_ (work_bind)
#define seq_forward R_ (seq_forward)
#define seq_backward R_ (seq_backward)
#define buffers_alloc R_ (buffers_alloc)
#define buffers_free R_ (buffers_free)
#define forward_all R_ (forward_all)

/* The read scale K^-1/2 in the instantiation's type: f32's rounded once
   at set-up (bit for bit the op's), f64's its own.  */
static real
R_ (read_scale) (const gdn *m)
{
#if GCM_REAL == 32
  return m->scale;
#else
  return 1 / sqrt ((double) m->K);
#endif
}

/* Manual: "Rounding classes": a tensor of N values stored in the model's
   storage format (gdn-bf16, gdn-fp16: models/gdn_bf16.c), and one value
   so; in f32 gdn (store 0) and in the f64 twin, nothing: storage is a
   precision choice of the f32 path, not the algorithm.  */
static void
R_ (store) (const gdn *m, real *p, size_t n)
{
#if GCM_REAL == 32
  if (m->store)
    for (size_t i = 0; i < n; i++)
      p[i] = gcm_store (m->store, p[i]);
#else
  (void) m;
  (void) p;
  (void) n;
#endif
}

static real
R_ (store1) (const gdn *m, real v)
{
  R_ (store) (m, &v, 1);
  return v;
}

/* ---------------------------------------------------------------------- */
/* The padded scratch of one (b, h) sequence.  */

typedef struct seq
{
  real *q, *k, *v;        /* [Tp,K], [Tp,K], [Tp,V]: normalised, padded */
  real *beta, *g;         /* [Tp] */
  real *rq, *rk;          /* [Tp]: 1/sqrt(|x|^2 + eps) of the raw q, k */
  real *gam;              /* [Tp]: chunk-local inclusive cumsum of g */
  real *A, *Aqk;          /* [NT,BT,BT] */
  real *W;                /* [Tp,K] */
  real *U;                /* [Tp,V] */
  real *vnew;             /* [Tp+1,V]: one zero row past the end */
  real *h;                /* [NT+2,K,V]: slab 0 zeros, slab n+1 = h_n */
} seq;

static size_t
seq_floats (const gdn *m)
{
  size_t Tp = m->Tp, K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  return 2 * Tp * K + Tp * V + 2 * Tp + 2 * Tp + Tp + 2 * NT * BT * BT
         + Tp * K + Tp * V + (Tp + 1) * V + (NT + 2) * K * V;
}

static void
seq_bind (const gdn *m, seq *s, real *p)
{
  size_t Tp = m->Tp, K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  s->q = p; p += Tp * K;
  s->k = p; p += Tp * K;
  s->v = p; p += Tp * V;
  s->beta = p; p += Tp;
  s->g = p; p += Tp;
  s->rq = p; p += Tp;
  s->rk = p; p += Tp;
  s->gam = p; p += Tp;
  s->A = p; p += NT * BT * BT;
  s->Aqk = p; p += NT * BT * BT;
  s->W = p; p += Tp * K;
  s->U = p; p += Tp * V;
  s->vnew = p; p += (Tp + 1) * V;
  s->h = p;
}

/* Gather (b, h)'s inputs into the zero-padded buffers, normalising q, k and
   passing beta through the sigmoid when asked.  */
static void
seq_gather (const gdn *m, const real *x, size_t b, size_t hh, seq *s)
{
  size_t T = m->T, H = m->H, K = m->K, V = m->V;
  memset (s->q, 0, seq_floats (m) * sizeof (real));
  for (size_t t = 0; t < T; t++)
    {
      size_t row = (b * T + t) * H + hh;
      const real *q = x + m->off_q + row * K, *k = x + m->off_k + row * K;
      real sq = 0, sk = 0;
      for (size_t i = 0; i < K; i++)
        {
          sq += q[i] * q[i];
          sk += k[i] * k[i];
        }
      real rq = m->norm ? 1 / r_sqrt (sq + GCM_L2_EPS) : 1;
      real rk = m->norm ? 1 / r_sqrt (sk + GCM_L2_EPS) : 1;
      s->rq[t] = rq;
      s->rk[t] = rk;
      for (size_t i = 0; i < K; i++)
        {
          s->q[t * K + i] = q[i] * rq;
          s->k[t * K + i] = k[i] * rk;
        }
      memcpy (s->v + t * V, x + m->off_v + row * V, V * sizeof (real));
      s->g[t] = x[m->off_g + row];
      real braw = x[m->off_b + row];
      s->beta[t] = m->sigmoid ? r_sigmoid (braw) : braw;
    }
  memcpy (s->h + K * V, x + m->off_s + (b * H + hh) * K * V,
          K * V * sizeof (real));
  /* the normalised q, k as the norm's kernel stores them */
  R_ (store) (m, s->q, T * K);
  R_ (store) (m, s->k, T * K);
}

/* Work space of one chunk, shared by forward and backward.  */
typedef struct work
{
  real *KK, *QK, *L, *Kb, *Vb, *Qe, *Kd, *E;
  real *dVn, *dAqk, *Tm, *dKd, *Mu, *dW, *dA, *dWb, *dUb, *tmp, *dL, *dG;
  real *dS, *dh;
} work;

static size_t
work_floats (const gdn *m)
{
  size_t K = m->K, V = m->V, BT = m->BT;
  return 3 * BT * BT + BT * K + BT * V + BT * K + BT * K + BT
         + BT * V + BT * BT + BT * K + BT * K + BT * BT + BT * K + BT * BT
         + BT * K + BT * V + BT * BT + BT * BT + BT + 2 * K * V;
}

static void
work_bind (const gdn *m, work *w, real *p)
{
  size_t K = m->K, V = m->V, BT = m->BT;
  w->KK = p; p += BT * BT;
  w->QK = p; p += BT * BT;
  w->L = p; p += BT * BT;
  w->Kb = p; p += BT * K;
  w->Vb = p; p += BT * V;
  w->Qe = p; p += BT * K;
  w->Kd = p; p += BT * K;
  w->E = p; p += BT;
  w->dVn = p; p += BT * V;
  w->dAqk = p; p += BT * BT;
  w->Tm = p; p += BT * K;
  w->dKd = p; p += BT * K;
  w->Mu = p; p += BT * BT;
  w->dW = p; p += BT * K;
  w->dA = p; p += BT * BT;
  w->dWb = p; p += BT * K;
  w->dUb = p; p += BT * V;
  w->tmp = p; p += BT * BT;
  w->dL = p; p += BT * BT;
  w->dG = p; p += BT;
  w->dS = p; p += K * V;
  w->dh = p;
}

/* ---------------------------------------------------------------------- */
/* Forward: the chunked WY form (§3.3), filling the scratch.  O receives the
   outputs [Tp,V]; the final state is slab NT+1 of s->h.  */

static void
seq_forward (const gdn *m, seq *s, work *w, real *O)
{
  size_t K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  real scale = R_ (read_scale) (m);
  for (size_t n = 0; n < NT; n++)
    {
      size_t base = n * BT;
      const real *q = s->q + base * K, *k = s->k + base * K;
      const real *v = s->v + base * V, *beta = s->beta + base;
      real *G = s->gam + base;
      real *A = s->A + n * BT * BT, *Aqk = s->Aqk + n * BT * BT;
      real *Wn = s->W + base * K, *Un = s->U + base * V;
      real *vn = s->vnew + base * V;
      const real *hn = s->h + (n + 1) * K * V;
      real *hnext = s->h + (n + 2) * K * V;

      real acc = 0;
      for (size_t r = 0; r < BT; r++)
        {
          acc += s->g[base + r];
          G[r] = acc;
          w->E[r] = r_exp (G[r]);
        }
      r_mm (CblasNoTrans, CblasTrans, BT, BT, K, 1, k, K, k, K, 0, w->KK, BT);
      r_mm (CblasNoTrans, CblasTrans, BT, BT, K, 1, q, K, k, K, 0, w->QK, BT);
      /* L strictly lower, A = (I + L)^-1 by forward substitution; Aqk lower
         with the diagonal.  exp(G_r - G_c) only for c <= r, where it is at
         most 1 (never overflows for strong gates).  */
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c < BT; c++)
          {
            real ex = c <= r ? r_exp (G[r] - G[c]) : 0;
            w->L[r * BT + c] = c < r ? beta[r] * w->KK[r * BT + c] * ex : 0;
            Aqk[r * BT + c] = c <= r ? scale * w->QK[r * BT + c] * ex : 0;
          }
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t c = 0; c < r; c++)
            {
              real sum = 0;
              for (size_t mm_ = c; mm_ < r; mm_++)
                sum += w->L[r * BT + mm_] * A[mm_ * BT + c];
              A[r * BT + c] = -sum;
            }
          A[r * BT + r] = 1;
          for (size_t c = r + 1; c < BT; c++)
            A[r * BT + c] = 0;
        }
      R_ (store) (m, A, BT * BT);
      R_ (store) (m, Aqk, BT * BT);
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t i = 0; i < K; i++)
            w->Kb[r * K + i] = beta[r] * w->E[r] * k[r * K + i];
          for (size_t j = 0; j < V; j++)
            w->Vb[r * V + j] = beta[r] * v[r * V + j];
        }
      /* W = A diag(beta) (E . K), U = A diag(beta) V, Vnew = U - W h_n  */
      r_mm (CblasNoTrans, CblasNoTrans, BT, K, BT, 1, A, BT, w->Kb, K, 0, Wn, K);
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, BT, 1, A, BT, w->Vb, V, 0, Un, V);
      R_ (store) (m, Wn, BT * K);
      memcpy (vn, Un, BT * V * sizeof (real));
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, K, -1, Wn, K, hn, V, 1, vn, V);
      R_ (store) (m, Un, BT * V);
      R_ (store) (m, vn, BT * V);
      /* o = scale diag(E) Q h_n + Aqk Vnew  */
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          w->Qe[r * K + i] = scale * w->E[r] * q[r * K + i];
      real *o = O + base * V;
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, K, 1, w->Qe, K, hn, V, 0, o, V);
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, BT, 1, Aqk, BT, vn, V, 1, o, V);
      R_ (store) (m, o, BT * V);
      /* h_{n+1} = El h_n + (K . exp(G_last - G))^T Vnew  */
      real El = w->E[BT - 1];
      for (size_t r = 0; r < BT; r++)
        {
          real d = r_exp (G[BT - 1] - G[r]);
          for (size_t i = 0; i < K; i++)
            w->Kd[r * K + i] = k[r * K + i] * d;
        }
      for (size_t e = 0; e < K * V; e++)
        hnext[e] = El * hn[e];
      r_mm (CblasTrans, CblasNoTrans, K, V, BT, 1, w->Kd, K, vn, V, 1, hnext, V);
      R_ (store) (m, hnext, K * V);
    }
}

/* ---------------------------------------------------------------------- */
/* Backward (§6): reads the scratch.  dO is [Tp,V] (zero-padded); w->dS holds
   dS_T on entry and dS0 on exit.  Gradients w.r.t. the normalised q, k, v,
   beta and g are written to dq, dk, dv, dbeta, dg ([Tp,...]).  Each mutant
   is one marked line.  */

static void
seq_backward (const gdn *m, const seq *s, work *w, const real *dO,
              real *dq, real *dk, real *dv, real *dbeta, real *dg)
{
  size_t K = m->K, V = m->V, BT = m->BT, NT = m->NT, Tp = m->Tp;
  real scale = R_ (read_scale) (m);
  int mut = m->mutant;
  memset (dq, 0, Tp * K * sizeof (real));
  memset (dk, 0, Tp * K * sizeof (real));
  memset (dv, 0, Tp * V * sizeof (real));
  memset (dbeta, 0, Tp * sizeof (real));
  for (size_t n = NT; n-- > 0;)
    {
      size_t base = n * BT;
      const real *q = s->q + base * K, *k = s->k + base * K;
      const real *v = s->v + base * V, *beta = s->beta + base;
      const real *G = s->gam + base;
      const real *A = s->A + n * BT * BT, *Aqk = s->Aqk + n * BT * BT;
      const real *Wn = s->W + base * K;
      const real *hn = s->h + (n + 1) * K * V;
      const real *vn = s->vnew + base * V;
      if (mut == MUT_SCRATCH_ZEROS) hn = s->h;                 /* MUTANT */
      if (mut == MUT_SHIFT_CHUNK) hn = s->h + n * K * V;       /* MUTANT */
      if (mut == MUT_SHIFT_ROW) vn = s->vnew + (base + 1) * V; /* MUTANT */
      const real *dOc = dO + base * V;
      real *dqc = dq + base * K, *dkc = dk + base * K, *dvc = dv + base * V;
      real *dbc = dbeta + base;
      real *dG = w->dG;
      memset (dG, 0, BT * sizeof (real));
      for (size_t r = 0; r < BT; r++)
        w->E[r] = r_exp (G[r]);
      real El = w->E[BT - 1];
      for (size_t r = 0; r < BT; r++)
        {
          real d = r_exp (G[BT - 1] - G[r]);
          for (size_t i = 0; i < K; i++)
            w->Kd[r * K + i] = k[r * K + i] * d;
        }

      /* 1. dVnew = Aqk^T dO + Kd dS;  dAqk = dO Vnew^T (c <= r)  */
      r_mm (CblasTrans, CblasNoTrans, BT, V, BT, 1, Aqk, BT, dOc, V, 0, w->dVn, V);
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, K, 1, w->Kd, K, w->dS, V, 1, w->dVn, V);
      r_mm (CblasNoTrans, CblasTrans, BT, BT, V, 1, dOc, V, vn, V, 0, w->dAqk, BT);

      /* 2. inter-chunk output: dq_u += E_r (dO h^T)_r;
            dG_r += scale E_r q_r . (dO h^T)_r  */
      r_mm (CblasNoTrans, CblasTrans, BT, K, V, 1, dOc, V, hn, V, 0, w->Tm, K);
      for (size_t r = 0; r < BT; r++)
        {
          real dot = 0;
          for (size_t i = 0; i < K; i++)
            {
              dqc[r * K + i] += w->E[r] * w->Tm[r * K + i];
              dot += q[r * K + i] * w->Tm[r * K + i];
            }
          dG[r] += scale * w->E[r] * dot;
        }

      /* 3. state out: dG_last += El <dS, h_n>;  dKd = Vnew dS^T  */
      real sh = 0;
      for (size_t e = 0; e < K * V; e++)
        {
          sh += w->dS[e] * hn[e];
          if (mut == MUT_ACC_LOWP) sh = R_ (store1) (m, sh);   /* MUTANT */
        }
      dG[BT - 1] += El * sh;
      r_mm (CblasNoTrans, CblasTrans, BT, K, V, 1, vn, V, w->dS, V, 0, w->dKd, K);
      for (size_t c = 0; c < BT; c++)
        {
          real d = r_exp (G[BT - 1] - G[c]), sc = 0;
          for (size_t i = 0; i < K; i++)
            {
              dkc[c * K + i] += w->dKd[c * K + i] * d;
              sc += w->dKd[c * K + i] * w->Kd[c * K + i];
            }
          dG[BT - 1] += sc;
          dG[c] -= sc;
        }

      /* 4. Aqk = scale (Q K^T) . exp(G_r - G_c), c <= r:
            Mu = dAqk . exp;  dq_u += Mu K;  dk += scale Mu^T Q;
            dG_r += dAqk.Aqk (row sums), dG_c -= (column sums)  */
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c < BT; c++)
          {
            if (c > r)
              {
                w->Mu[r * BT + c] = 0;
                continue;
              }
            w->Mu[r * BT + c] = w->dAqk[r * BT + c] * r_exp (G[r] - G[c]);
            real z = w->dAqk[r * BT + c] * Aqk[r * BT + c];
            dG[r] += z;
            dG[c] -= z;
          }
      r_mm (CblasNoTrans, CblasNoTrans, BT, K, BT, 1, w->Mu, BT, k, K, 1, dqc, K);
      r_mm (CblasTrans, CblasNoTrans, BT, K, BT, scale, w->Mu, BT, q, K, 1, dkc, K);

      /* 5. Vnew = U - W h_n: dU = dVnew, dW = -dVnew h_n^T;
            dh = El dS + scale (Q.E)^T dO - W^T dVnew  */
      r_mm (CblasNoTrans, CblasTrans, BT, K, V, -1, w->dVn, V, hn, V, 0, w->dW, K);
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          w->Qe[r * K + i] = scale * w->E[r] * q[r * K + i];
      for (size_t e = 0; e < K * V; e++)
        w->dh[e] = El * w->dS[e];
      r_mm (CblasTrans, CblasNoTrans, K, V, BT, 1, w->Qe, K, dOc, V, 1, w->dh, V);
      r_mm (CblasTrans, CblasNoTrans, K, V, BT, -1, Wn, K, w->dVn, V, 1, w->dh, V);

      /* 6. WY: W = A Kb, U = A Vb with Kb = diag(beta E) K, Vb = diag(beta) V:
            dA = dW Kb^T + dU Vb^T;  dWb = A^T dW, dUb = A^T dU  */
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t i = 0; i < K; i++)
            w->Kb[r * K + i] = beta[r] * w->E[r] * k[r * K + i];
          for (size_t j = 0; j < V; j++)
            w->Vb[r * V + j] = beta[r] * v[r * V + j];
        }
      r_mm (CblasNoTrans, CblasTrans, BT, BT, K, 1, w->dW, K, w->Kb, K, 0, w->dA, BT);
      r_mm (CblasNoTrans, CblasTrans, BT, BT, V, 1, w->dVn, V, w->Vb, V, 1, w->dA, BT);
      CBLAS_TRANSPOSE at = CblasTrans;
      if (mut == MUT_A_TRANSPOSED) at = CblasNoTrans;          /* MUTANT */
      r_mm (at, CblasNoTrans, BT, K, BT, 1, A, BT, w->dW, K, 0, w->dWb, K);
      r_mm (at, CblasNoTrans, BT, V, BT, 1, A, BT, w->dVn, V, 0, w->dUb, V);
      for (size_t c = 0; c < BT; c++)
        {
          real uv = 0, wk = 0;
          for (size_t j = 0; j < V; j++)
            {
              dvc[c * V + j] += beta[c] * w->dUb[c * V + j];
              uv += w->dUb[c * V + j] * v[c * V + j];
            }
          for (size_t i = 0; i < K; i++)
            {
              dkc[c * K + i] += beta[c] * w->E[c] * w->dWb[c * K + i];
              wk += w->dWb[c * K + i] * k[c * K + i];
            }
          dbc[c] += uv + w->E[c] * wk;
          dG[c] += beta[c] * w->E[c] * wk;
        }

      /* 7. A = (I + L)^-1: dL = -A^T dA A^T, strictly lower part.  */
      r_mm (CblasNoTrans, CblasTrans, BT, BT, BT, 1, w->dA, BT, A, BT, 0, w->tmp, BT);
      r_mm (CblasTrans, CblasNoTrans, BT, BT, BT, -1, A, BT, w->tmp, BT, 0, w->dL, BT);

      /* 8. L = diag(beta) (K K^T) . exp(G_r - G_c), r > c:
            P = dL . exp;  dk_r += beta_r sum_c P_rc k_c;
            dk_c += sum_r P_rc beta_r k_r;  dbeta_r += sum_c P_rc KK_rc;
            dG_r += dL.L (row sums), dG_c -= (column sums)  */
      r_mm (CblasNoTrans, CblasTrans, BT, BT, K, 1, k, K, k, K, 0, w->KK, BT);
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c < BT; c++)
          {
            if (c >= r)
              {
                w->Mu[r * BT + c] = 0;
                continue;
              }
            real ex = r_exp (G[r] - G[c]);
            real p = w->dL[r * BT + c] * ex;
            w->Mu[r * BT + c] = p;
            dbc[r] += p * w->KK[r * BT + c];
            real z = beta[r] * p * w->KK[r * BT + c];
            dG[r] += z;
            dG[c] -= z;
          }
      /* Kb now: diag(beta) K, for the transposed product.  */
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          w->Kb[r * K + i] = beta[r] * k[r * K + i];
      r_mm (CblasNoTrans, CblasNoTrans, BT, K, BT, 1, w->Mu, BT, k, K, 0, w->Tm, K);
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          dkc[r * K + i] += beta[r] * w->Tm[r * K + i];
      r_mm (CblasTrans, CblasNoTrans, BT, K, BT, 1, w->Mu, BT, w->Kb, K, 1, dkc, K);

      /* 9. dg_s = sum_{r >= s} dG_r: the reverse cumsum inside the chunk.  */
      real acc = 0;
      for (size_t r = BT; r-- > 0;)
        {
          acc += dG[r];
          if (mut == MUT_ACC_LOWP) acc = R_ (store1) (m, acc); /* MUTANT */
          dg[base + r] = acc;
          if (mut == MUT_NO_DG_CUMSUM) dg[base + r] = dG[r];   /* MUTANT */
        }

      /* 10. on to the previous chunk  */
      memcpy (w->dS, w->dh, K * V * sizeof (real));
      if (mut == MUT_DS_BF16)                                  /* MUTANT */
        for (size_t e = 0; e < K * V; e++)
          w->dS[e] = r_lowp (w->dS[e]);
    }
  /* The read scale multiplies every path into dq.  */
  real dq_scale = scale;
  if (mut == MUT_NO_READ_SCALE) dq_scale = 1;                 /* MUTANT */
  for (size_t e = 0; e < Tp * K; e++)
    dq[e] *= dq_scale;
}

/* ---------------------------------------------------------------------- */
/* Buffers of a whole forward and backward.  */

typedef struct buffers
{
  real *mem;
  seq *seqs;          /* B*H of them */
  work w;
  real *O;           /* [Tp,V] */
} buffers;

static bool
buffers_alloc (const gdn *m, buffers *bf)
{
  size_t ns = m->B * m->H;
  size_t total = ns * seq_floats (m) + work_floats (m) + m->Tp * m->V;
  bf->mem = malloc (total * sizeof (real));
  bf->seqs = malloc (ns * sizeof *bf->seqs);
  if (!bf->mem || !bf->seqs)
    {
      free (bf->mem);
      free (bf->seqs);
      return false;
    }
  real *p = bf->mem;
  for (size_t i = 0; i < ns; i++, p += seq_floats (m))
    seq_bind (m, &bf->seqs[i], p);
  work_bind (m, &bf->w, p);
  p += work_floats (m);
  bf->O = p;
  return true;
}

static void
buffers_free (buffers *bf)
{
  free (bf->mem);
  free (bf->seqs);
}

/* Run the forward of every sequence; accumulate the loss in double (the
   scalarisation, not part of the op) and round it once.  */
static int
forward_all (const gdn *m, const real *x, buffers *bf, double *loss,
             double *magnitude, real *out)
{
  size_t T = m->T, H = m->H, K = m->K, V = m->V;
  double L = 0, M = 0;
  for (size_t b = 0; b < m->B; b++)
    for (size_t hh = 0; hh < H; hh++)
      {
        seq *s = &bf->seqs[b * H + hh];
        seq_gather (m, x, b, hh, s);
        seq_forward (m, s, &bf->w, bf->O);
        for (size_t t = 0; t < T; t++)
          {
            const float *dO = m->dout + ((b * T + t) * H + hh) * V;
            for (size_t j = 0; j < V; j++)
              {
                L += (double) bf->O[t * V + j] * dO[j];
                M += fabs ((double) bf->O[t * V + j] * dO[j]);
              }
            if (out)
              memcpy (out + ((b * T + t) * H + hh) * V, bf->O + t * V,
                      V * sizeof (real));
          }
        const real *ST = s->h + (m->NT + 1) * K * V;
        if (out)
          memcpy (out + m->B * T * H * V + (b * H + hh) * K * V, ST,
                  K * V * sizeof (real));
        const float *dST = m->dst + (b * H + hh) * K * V;
        for (size_t e = 0; e < K * V; e++)
          {
            L += (double) ST[e] * dST[e];
            M += fabs ((double) ST[e] * dST[e]);
          }
      }
  *loss = L;
  if (magnitude)
    *magnitude = M;
  return 0;
}

static int
R_ (grad) (void *ctx, const real *x, real *grad)
{
  gdn *m = ctx;
  size_t T = m->T, H = m->H, K = m->K, V = m->V, Tp = m->Tp;
  buffers bf;
  if (!buffers_alloc (m, &bf))
    return -1;
  real *gb = malloc ((2 * Tp * K + Tp * V + 2 * Tp) * sizeof (real));
  if (!gb)
    {
      buffers_free (&bf);
      return -1;
    }
  real *dq = gb, *dk = dq + Tp * K, *dv = dk + Tp * K, *dbeta = dv + Tp * V;
  real *dg = dbeta + Tp;
  double loss;
  forward_all (m, x, &bf, &loss, NULL, NULL);
  memset (grad, 0, m->inst.model.n * sizeof (real));
  for (size_t b = 0; b < m->B; b++)
    for (size_t hh = 0; hh < H; hh++)
      {
        const seq *s = &bf.seqs[b * H + hh];
        /* dO for this sequence, zero-padded (in the outputs' buffer, free
           after the forward); dS_T  */
        real *dOp = bf.O;
        memset (dOp, 0, Tp * V * sizeof (real));
        for (size_t t = 0; t < T; t++)
          for (size_t j = 0; j < V; j++)
            dOp[t * V + j] = m->dout[((b * T + t) * H + hh) * V + j];
        for (size_t e = 0; e < K * V; e++)
          bf.w.dS[e] = m->dst[(b * H + hh) * K * V + e];
        seq_backward (m, s, &bf.w, dOp, dq, dk, dv, dbeta, dg);
        real sgn = 1;
        if (m->mutant == MUT_DBETA_SIGN) sgn = -1;         /* MUTANT */
        /* Un-pad, chain through the L2 norm and the sigmoid.  */
        for (size_t t = 0; t < Tp; t++)
          {
            size_t dst = t;
            if (t >= T)
              {
                if (m->mutant != MUT_PAD_LEAK)
                  continue;
                dst = T - 1;                                     /* MUTANT */
                grad[m->off_g + (b * T + dst) * H + hh] += dg[t];
                continue;
              }
            size_t row = (b * T + t) * H + hh;
            const real *qh = s->q + t * K, *kh = s->k + t * K;
            real dqy = 0, dky = 0;
            for (size_t i = 0; i < K; i++)
              {
                dqy += dq[t * K + i] * qh[i];
                dky += dk[t * K + i] * kh[i];
              }
            for (size_t i = 0; i < K; i++)
              {
                real gq = dq[t * K + i], gk = dk[t * K + i];
                if (m->norm)
                  {
                    gq = s->rq[t] * (gq - dqy * qh[i]);
                    gk = s->rk[t] * (gk - dky * kh[i]);
                  }
                grad[m->off_q + row * K + i] = gq;
                grad[m->off_k + row * K + i] = gk;
              }
            memcpy (grad + m->off_v + row * V, dv + t * V, V * sizeof (real));
            if (m->mutant == MUT_DV_SCALE_1E6)                 /* MUTANT */
              for (size_t j = 0; j < V; j++)
                grad[m->off_v + row * V + j] *= (real) (1 + 1e-6);
            grad[m->off_g + row] += dg[t];
            real db = sgn * dbeta[t];
            if (m->sigmoid)
              db *= s->beta[t] * (1 - s->beta[t]);
            grad[m->off_b + row] = db;
          }
        memcpy (grad + m->off_s + (b * H + hh) * K * V, bf.w.dS,
                K * V * sizeof (real));
      }
  /* the gradient as the kernel stores it */
  R_ (store) (m, grad, m->inst.model.n);
  free (gb);
  buffers_free (&bf);
  return 0;
}

#undef seq
#undef work
#undef buffers
#undef seq_floats
#undef seq_bind
#undef seq_gather
#undef work_floats
#undef work_bind
#undef seq_forward
#undef seq_backward
#undef buffers_alloc
#undef buffers_free
#undef forward_all
