/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* kda_backward.h -- kda's f32 path, written once over the element type
   (real.h) and included twice by kda.c (manual: "Writing a twin"): the
   forward that fills the scratch (chunked WY form or naive recurrence) and
   the backward that reads it.  The _f32 instantiation is the path under
   test (loss_f32, outputs_f32, grad_f32 and the magnitudes); the _f64 one
   is its twin, grad_f64: the same algorithm, double throughout.  Each
   mutant is in the template, so both carry it; the read scale is the
   instantiation's own (R_SCALE), rounded to f32 only in the f32 path.  */

#include "real.h"

#undef r_log1p
#undef r_fmax
#undef R_SCALE
#if GCM_REAL == 32
# define r_log1p log1pf
# define r_fmax fmaxf
# define R_SCALE(m) ((m)->scale)
#else
# define r_log1p log1p
# define r_fmax fmax
# define R_SCALE(m) ((m)->scale64)
#endif

/* torch's softplus: x above the threshold 20 is returned as is.  */
static real
R_ (softplus) (real x)
{
  return x > 20 ? x : r_log1p (r_exp (x));
}

/* ---------------------------------------------------------------------- */
/* Inputs inside the op, computed once per call for every row.  */

typedef struct R_ (prep)
{
  real *qn, *kn;             /* [B,T,H,K] normalised */
  real *rq, *rk;             /* [B,T,H] 1/sqrt(|x|^2 + eps) */
  real *g;                   /* [B,T,HV,K] the gate's output (log decay) */
  real *beta;                /* [B,T,HV] */
} R_ (prep);

static bool
R_ (prep_alloc) (const kda *m, R_ (prep) *p)
{
  size_t rh = m->B * m->T * m->H, rv = m->B * m->T * m->HV;
  real *mem = malloc ((2 * rh * m->K + 2 * rh + rv * m->K + rv)
                      * sizeof (real));
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
R_ (prep_free) (R_ (prep) *p)
{
  free (p->qn);
}

static void
R_ (prep_run) (const kda *m, const real *x, R_ (prep) *p)
{
  size_t K = m->K, rh = m->B * m->T * m->H, rv = m->B * m->T * m->HV;
  for (size_t row = 0; row < rh; row++)
    {
      const real *q = x + m->off_q + row * K, *k = x + m->off_k + row * K;
      real sq = 0, sk = 0;
      for (size_t i = 0; i < K; i++)
        {
          sq += q[i] * q[i];
          sk += k[i] * k[i];
        }
      p->rq[row] = (real) 1 / r_sqrt (sq + GCM_L2_EPS);
      p->rk[row] = (real) 1 / r_sqrt (sk + GCM_L2_EPS);
      for (size_t i = 0; i < K; i++)
        {
          p->qn[row * K + i] = q[i] * p->rq[row];
          p->kn[row * K + i] = k[i] * p->rk[row];
        }
    }
  for (size_t row = 0; row < rv; row++)
    {
      size_t hv = row % m->HV;
      real ea = r_exp (x[m->off_a + hv]);
      p->beta[row] = r_sigmoid (x[m->off_b + row]);
      for (size_t i = 0; i < K; i++)
        {
          real z = x[m->off_g + row * K + i] + x[m->off_dt + hv * K + i];
          real g;
          if (m->lowerbound)
            g = LOWER_BOUND * r_sigmoid (ea * z);
          else
            g = -ea * R_ (softplus) (z);
          if (m->mutant == MUT_SOFTPLUS_OUTSIDE)
            g = -R_ (softplus) (ea * z);                        /* MUTANT */
          p->g[row * K + i] = g;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* One (b, hv) sequence: padded inputs and the scratch of either path.  */

typedef struct R_ (seq)
{
  real *q, *k, *v, *g, *beta;  /* [Tp,K] x3 ([Tp,V] for v), [Tp] */
  real *gam;                   /* [Tp,K] chunk-local cumsum */
  real *A, *Aqk;               /* [NT,BT,BT] */
  real *W;                     /* [Tp,K] */
  real *vnew;                  /* [Tp,V] */
  real *h;                     /* [NT+1,K,V]: h_n; the recurrent path keeps
                                  every state here: [T+1,K,V] */
} R_ (seq);

static void
R_ (seq_bind) (const kda *m, R_ (seq) *s, real *p)
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
R_ (seq_gather) (const kda *m, const real *x, const R_ (prep) *p, size_t b,
                 size_t hv, R_ (seq) *s)
{
  size_t T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V;
  size_t hh = hv / m->G;
  memset (s->q, 0, seq_elems (m) * sizeof (real));
  for (size_t t = 0; t < T; t++)
    {
      size_t rowh = (b * T + t) * H + hh, rowv = (b * T + t) * HV + hv;
      memcpy (s->q + t * K, p->qn + rowh * K, K * sizeof (real));
      memcpy (s->k + t * K, p->kn + rowh * K, K * sizeof (real));
      memcpy (s->g + t * K, p->g + rowv * K, K * sizeof (real));
      memcpy (s->v + t * V, x + m->off_v + rowv * V, V * sizeof (real));
      s->beta[t] = p->beta[rowv];
    }
  memcpy (s->h, x + m->off_s + (b * HV + hv) * K * V, K * V * sizeof (real));
}

typedef struct R_ (work)
{
  real *E, *Kd, *L, *Kb, *Vb, *Qe, *U, *dVn, *dAqk, *Tm, *dKd, *dW, *dA,
        *dWb, *dUb, *tmp, *dL, *dG, *dS, *dh, *Sp, *e, *de;
} R_ (work);

static void
R_ (work_bind) (const kda *m, R_ (work) *w, real *p)
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
R_ (chunk_forward) (const kda *m, R_ (seq) *s, R_ (work) *w, real *O)
{
  size_t K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  real scale = R_SCALE (m);
  for (size_t n = 0; n < NT; n++)
    {
      size_t base = n * BT;
      const real *q = s->q + base * K, *k = s->k + base * K;
      const real *v = s->v + base * V, *beta = s->beta + base;
      real *G = s->gam + base * K;
      real *A = s->A + n * BT * BT, *Aqk = s->Aqk + n * BT * BT;
      real *Wn = s->W + base * K, *vn = s->vnew + base * V;
      const real *hn = s->h + n * K * V;
      real *hnext = s->h + (n + 1) * K * V;
      for (size_t i = 0; i < K; i++)
        {
          real acc = 0;
          for (size_t r = 0; r < BT; r++)
            {
              acc += s->g[(base + r) * K + i];
              G[r * K + i] = acc;
              w->E[r * K + i] = r_exp (acc);
            }
        }
      /* exp(G_r - G_c) per channel, only for c <= r (at most 1).  */
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c < BT; c++)
          {
            real lk = 0, qk = 0;
            if (c <= r)
              for (size_t i = 0; i < K; i++)
                {
                  real ex = r_exp (G[r * K + i] - G[c * K + i]);
                  lk += k[r * K + i] * k[c * K + i] * ex;
                  qk += q[r * K + i] * k[c * K + i] * ex;
                }
            w->L[r * BT + c] = c < r ? beta[r] * lk : 0;
            Aqk[r * BT + c] = c <= r ? scale * qk : 0;
          }
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t c = 0; c < r; c++)
            {
              real sum = 0;
              for (size_t j = c; j < r; j++)
                sum += w->L[r * BT + j] * A[j * BT + c];
              A[r * BT + c] = -sum;
            }
          A[r * BT + r] = 1;
          for (size_t c = r + 1; c < BT; c++)
            A[r * BT + c] = 0;
        }
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t i = 0; i < K; i++)
            {
              w->Kb[r * K + i] = beta[r] * w->E[r * K + i] * k[r * K + i];
              w->Qe[r * K + i] = scale * w->E[r * K + i] * q[r * K + i];
              w->Kd[r * K + i] = k[r * K + i]
                * r_exp (G[(BT - 1) * K + i] - G[r * K + i]);
            }
          for (size_t j = 0; j < V; j++)
            w->Vb[r * V + j] = beta[r] * v[r * V + j];
        }
      r_mm (CblasNoTrans, CblasNoTrans, BT, K, BT, 1, A, BT, w->Kb, K, 0, Wn, K);
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, BT, 1, A, BT, w->Vb, V, 0, w->U, V);
      memcpy (vn, w->U, BT * V * sizeof (real));
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, K, -1, Wn, K, hn, V, 1, vn, V);
      real *o = O + base * V;
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, K, 1, w->Qe, K, hn, V, 0, o, V);
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, BT, 1, Aqk, BT, vn, V, 1, o, V);
      for (size_t i = 0; i < K; i++)
        {
          real el = w->E[(BT - 1) * K + i];
          for (size_t j = 0; j < V; j++)
            hnext[i * V + j] = el * hn[i * V + j];
        }
      r_mm (CblasTrans, CblasNoTrans, K, V, BT, 1, w->Kd, K, vn, V, 1, hnext, V);
    }
}

/* The chunked backward (§6), reading the scratch.  dO [Tp,V]; w->dS holds
   dS_T on entry, dS0 on exit; gradients w.r.t. the op's inner inputs.  */
static void
R_ (chunk_backward) (const kda *m, const R_ (seq) *s, R_ (work) *w,
                     const real *dO, real *dq, real *dk, real *dv,
                     real *dbeta, real *dg)
{
  size_t K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  real scale = R_SCALE (m);
  for (size_t n = NT; n-- > 0;)
    {
      size_t base = n * BT;
      const real *q = s->q + base * K, *k = s->k + base * K;
      const real *v = s->v + base * V, *beta = s->beta + base;
      const real *G = s->gam + base * K;
      const real *A = s->A + n * BT * BT, *Aqk = s->Aqk + n * BT * BT;
      const real *Wn = s->W + base * K, *vn = s->vnew + base * V;
      const real *hn = s->h + n * K * V;
      const real *dOc = dO + base * V;
      real *dqc = dq + base * K, *dkc = dk + base * K, *dvc = dv + base * V;
      real *dbc = dbeta + base, *dG = w->dG;
      const real *Gl = G + (BT - 1) * K;
      memset (dG, 0, BT * K * sizeof (real));
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          {
            w->E[r * K + i] = r_exp (G[r * K + i]);
            w->Kd[r * K + i] = k[r * K + i] * r_exp (Gl[i] - G[r * K + i]);
          }
      /* 1. dVnew = Aqk^T dO + Kd dS;  dAqk = dO Vnew^T  */
      r_mm (CblasTrans, CblasNoTrans, BT, V, BT, 1, Aqk, BT, dOc, V, 0, w->dVn, V);
      r_mm (CblasNoTrans, CblasNoTrans, BT, V, K, 1, w->Kd, K, w->dS, V, 1, w->dVn, V);
      r_mm (CblasNoTrans, CblasTrans, BT, BT, V, 1, dOc, V, vn, V, 0, w->dAqk, BT);
      /* 2. inter-chunk output, t = scale E (dO h^T)  */
      r_mm (CblasNoTrans, CblasTrans, BT, K, V, 1, dOc, V, hn, V, 0, w->Tm, K);
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          {
            real t = scale * w->E[r * K + i] * w->Tm[r * K + i];
            dqc[r * K + i] += t;
            dG[r * K + i] += q[r * K + i] * t;
          }
      /* 3. state out  */
      for (size_t i = 0; i < K; i++)
        {
          real sh = 0;
          for (size_t j = 0; j < V; j++)
            sh += w->dS[i * V + j] * hn[i * V + j];
          dG[(BT - 1) * K + i] += w->E[(BT - 1) * K + i] * sh;
        }
      r_mm (CblasNoTrans, CblasTrans, BT, K, V, 1, vn, V, w->dS, V, 0, w->dKd, K);
      for (size_t c = 0; c < BT; c++)
        for (size_t i = 0; i < K; i++)
          {
            real d = w->dKd[c * K + i];
            dkc[c * K + i] += d * r_exp (Gl[i] - G[c * K + i]);
            real z = d * w->Kd[c * K + i];
            dG[(BT - 1) * K + i] += z;
            dG[c * K + i] -= z;
          }
      /* 4. Aqk, per channel  */
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c <= r; c++)
          {
            real da = scale * w->dAqk[r * BT + c];
            if (da == 0)
              continue;
            for (size_t i = 0; i < K; i++)
              {
                real X = da * r_exp (G[r * K + i] - G[c * K + i]);
                dqc[r * K + i] += X * k[c * K + i];
                dkc[c * K + i] += X * q[r * K + i];
                real tt = X * q[r * K + i] * k[c * K + i];
                dG[r * K + i] += tt;
                dG[c * K + i] -= tt;
              }
          }
      /* 5. Vnew = U - W h_n  */
      r_mm (CblasNoTrans, CblasTrans, BT, K, V, -1, w->dVn, V, hn, V, 0, w->dW, K);
      for (size_t r = 0; r < BT; r++)
        for (size_t i = 0; i < K; i++)
          w->Qe[r * K + i] = scale * w->E[r * K + i] * q[r * K + i];
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          w->dh[i * V + j] = w->E[(BT - 1) * K + i] * w->dS[i * V + j];
      r_mm (CblasTrans, CblasNoTrans, K, V, BT, 1, w->Qe, K, dOc, V, 1, w->dh, V);
      r_mm (CblasTrans, CblasNoTrans, K, V, BT, -1, Wn, K, w->dVn, V, 1, w->dh, V);
      /* 6. WY  */
      for (size_t r = 0; r < BT; r++)
        {
          for (size_t i = 0; i < K; i++)
            w->Kb[r * K + i] = beta[r] * w->E[r * K + i] * k[r * K + i];
          for (size_t j = 0; j < V; j++)
            w->Vb[r * V + j] = beta[r] * v[r * V + j];
        }
      r_mm (CblasNoTrans, CblasTrans, BT, BT, K, 1, w->dW, K, w->Kb, K, 0, w->dA, BT);
      r_mm (CblasNoTrans, CblasTrans, BT, BT, V, 1, w->dVn, V, w->Vb, V, 1, w->dA, BT);
      r_mm (CblasTrans, CblasNoTrans, BT, K, BT, 1, A, BT, w->dW, K, 0, w->dWb, K);
      r_mm (CblasTrans, CblasNoTrans, BT, V, BT, 1, A, BT, w->dVn, V, 0, w->dUb, V);
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
              real ek = w->E[c * K + i] * k[c * K + i];
              wk += w->dWb[c * K + i] * ek;
              dkc[c * K + i] += beta[c] * w->E[c * K + i] * w->dWb[c * K + i];
              dG[c * K + i] += beta[c] * ek * w->dWb[c * K + i];
            }
          dbc[c] += uv + wk;
        }
      /* 7. dL = -A^T dA A^T  */
      r_mm (CblasNoTrans, CblasTrans, BT, BT, BT, 1, w->dA, BT, A, BT, 0, w->tmp, BT);
      r_mm (CblasTrans, CblasNoTrans, BT, BT, BT, -1, A, BT, w->tmp, BT, 0, w->dL, BT);
      /* 8. L, per channel (r > c)  */
      for (size_t r = 0; r < BT; r++)
        for (size_t c = 0; c < r; c++)
          {
            real dl = w->dL[r * BT + c], X = 0;
            for (size_t i = 0; i < K; i++)
              {
                real ex = r_exp (G[r * K + i] - G[c * K + i]);
                real kk = k[r * K + i] * k[c * K + i] * ex;
                X += kk;
                dkc[r * K + i] += beta[r] * dl * k[c * K + i] * ex;
                dkc[c * K + i] += beta[r] * dl * k[r * K + i] * ex;
                real tt = dl * beta[r] * kk;
                dG[r * K + i] += tt;
                dG[c * K + i] -= tt;
              }
            dbc[r] += dl * X;
          }
      /* 9. reverse cumsum of dG inside the chunk, per channel  */
      for (size_t i = 0; i < K; i++)
        {
          real acc = 0;
          for (size_t r = BT; r-- > 0;)
            {
              acc += dG[r * K + i];
              dg[(base + r) * K + i] = acc;
            }
        }
      memcpy (w->dS, w->dh, K * V * sizeof (real));
    }
}

/* ---------------------------------------------------------------------- */
/* The naive recurrence (§2.2) and its adjoint (§5.1); every state kept.  */

static void
R_ (rec_forward) (const kda *m, R_ (seq) *s, R_ (work) *w, real *O)
{
  size_t T = m->T, K = m->K, V = m->V;
  real scale = R_SCALE (m);
  for (size_t t = 0; t < T; t++)
    {
      const real *S = s->h + t * K * V;
      real *Sn = s->h + (t + 1) * K * V;
      const real *q = s->q + t * K, *k = s->k + t * K, *v = s->v + t * V;
      for (size_t i = 0; i < K; i++)
        {
          real a = r_exp (s->g[t * K + i]);
          for (size_t j = 0; j < V; j++)
            Sn[i * V + j] = a * S[i * V + j];
        }
      for (size_t j = 0; j < V; j++)
        {
          real sum = 0;
          for (size_t i = 0; i < K; i++)
            sum += k[i] * Sn[i * V + j];
          w->e[j] = s->beta[t] * (v[j] - sum);
        }
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          Sn[i * V + j] += k[i] * w->e[j];
      for (size_t j = 0; j < V; j++)
        {
          real sum = 0;
          for (size_t i = 0; i < K; i++)
            sum += q[i] * Sn[i * V + j];
          O[t * V + j] = scale * sum;
        }
    }
}

static void
R_ (rec_backward) (const kda *m, const R_ (seq) *s, R_ (work) *w,
                   const real *dO, real *dq, real *dk, real *dv, real *dbeta,
                   real *dg)
{
  size_t T = m->T, K = m->K, V = m->V;
  real scale = R_SCALE (m);
  real *dS = w->dS, *Sp = w->Sp, *e = w->e, *de = w->de;
  for (size_t t = T; t-- > 0;)
    {
      const real *Sprev = s->h + t * K * V, *St = s->h + (t + 1) * K * V;
      const real *q = s->q + t * K, *k = s->k + t * K, *v = s->v + t * V;
      real beta = s->beta[t];
      for (size_t i = 0; i < K; i++)
        {
          real a = r_exp (s->g[t * K + i]);
          for (size_t j = 0; j < V; j++)
            Sp[i * V + j] = a * Sprev[i * V + j];
        }
      for (size_t j = 0; j < V; j++)
        {
          real sum = 0;
          for (size_t i = 0; i < K; i++)
            sum += k[i] * Sp[i * V + j];
          e[j] = v[j] - sum;
        }
      for (size_t i = 0; i < K; i++)
        {
          real sum = 0;
          for (size_t j = 0; j < V; j++)
            sum += St[i * V + j] * dO[t * V + j];
          dq[t * K + i] = scale * sum;
        }
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          dS[i * V + j] += scale * q[i] * dO[t * V + j];
      real db = 0;
      for (size_t j = 0; j < V; j++)
        {
          real dd = 0;
          for (size_t i = 0; i < K; i++)
            dd += dS[i * V + j] * k[i];
          db += dd * e[j];
          de[j] = beta * dd;
          dv[t * V + j] = de[j];
        }
      dbeta[t] = db;
      for (size_t i = 0; i < K; i++)
        {
          real a = r_exp (s->g[t * K + i]), sk = 0, gi = 0;
          for (size_t j = 0; j < V; j++)
            sk += dS[i * V + j] * beta * e[j] - Sp[i * V + j] * de[j];
          dk[t * K + i] = sk;
          for (size_t j = 0; j < V; j++)
            {
              real dsp = dS[i * V + j] - k[i] * de[j];
              gi += dsp * Sp[i * V + j];
              dS[i * V + j] = a * dsp;
            }
          dg[t * K + i] = gi;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Every sequence.  */

typedef struct R_ (buffers)
{
  real *mem;
  R_ (prep) p;
  R_ (seq) *seqs;            /* B*HV */
  R_ (work) w;
  real *O;                   /* [Tp,V] */
} R_ (buffers);

static bool
R_ (buffers_alloc) (const kda *m, R_ (buffers) *bf)
{
  size_t ns = m->B * m->HV;
  bf->mem = malloc ((ns * seq_elems (m) + work_elems (m) + m->Tp * m->V)
                    * sizeof (real));
  bf->seqs = malloc (ns * sizeof *bf->seqs);
  if (!bf->mem || !bf->seqs || !R_ (prep_alloc) (m, &bf->p))
    {
      free (bf->mem);
      free (bf->seqs);
      return false;
    }
  real *p = bf->mem;
  for (size_t i = 0; i < ns; i++, p += seq_elems (m))
    R_ (seq_bind) (m, &bf->seqs[i], p);
  R_ (work_bind) (m, &bf->w, p);
  bf->O = p + work_elems (m);
  return true;
}

static void
R_ (buffers_free) (R_ (buffers) *bf)
{
  R_ (prep_free) (&bf->p);
  free (bf->mem);
  free (bf->seqs);
}

/* Run the path on every sequence.  With OUT, write o [B,T,HV,V] and
   S_T [B,HV,K,V]; with LOSS, the loss (accumulated in double, rounded once)
   and its magnitude, the sum of |terms| (manual: "Reference rounding").  */
static void
R_ (forward_all) (const kda *m, const real *x, R_ (buffers) *bf, real *out,
                  real *loss, real *magnitude)
{
  size_t T = m->T, HV = m->HV, K = m->K, V = m->V;
  R_ (prep_run) (m, x, &bf->p);
  double L = 0, M = 0;
  for (size_t b = 0; b < m->B; b++)
    for (size_t hv = 0; hv < HV; hv++)
      {
        R_ (seq) *s = &bf->seqs[b * HV + hv];
        R_ (seq_gather) (m, x, &bf->p, b, hv, s);
        if (m->chunk)
          R_ (chunk_forward) (m, s, &bf->w, bf->O);
        else
          R_ (rec_forward) (m, s, &bf->w, bf->O);
        const real *ST = s->h + (m->chunk ? m->NT : T) * K * V;
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
                  K * V * sizeof (real));
      }
  if (loss)
    *loss = (real) L;
  if (magnitude)
    *magnitude = (real) M;
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
R_ (backward_all) (const kda *m, const real *x, real *grad, real *mag)
{
  size_t T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V, Tp = m->Tp;
  R_ (buffers) bf;
  if (!R_ (buffers_alloc) (m, &bf))
    return -1;
  /* per-sequence gradients of the inner inputs, then the raw dq, dk
     accumulated over the group before the norm's chain rule  */
  size_t rh = m->B * T * H;
  real *gb = malloc ((3 * Tp * K + Tp * V + Tp + 2 * rh * K) * sizeof (real));
  /* per value head: the reductions, and the scales of their terms */
  double *red = calloc (HV * (K + 4), sizeof *red);
  if (!gb || !red)
    {
      free (gb);
      free (red);
      R_ (buffers_free) (&bf);
      return -1;
    }
  double *acc_a = red, *acc_dt = acc_a + HV, *fac_max = acc_dt + HV * K;
  double *other_sum = fac_max + HV, *graw_max = other_sum + HV;
  real *dq = gb, *dk = dq + Tp * K, *dg = dk + Tp * K, *dv = dg + Tp * K;
  real *dbeta = dv + Tp * V, *dqn = dbeta + Tp, *dkn = dqn + rh * K;
  real loss;
  R_ (forward_all) (m, x, &bf, NULL, &loss, NULL);
  memset (grad, 0, m->inst.model.n * sizeof (real));
  memset (dqn, 0, 2 * rh * K * sizeof (real));
  for (size_t b = 0; b < m->B; b++)
    for (size_t hv = 0; hv < HV; hv++)
      {
        const R_ (seq) *s = &bf.seqs[b * HV + hv];
        size_t hh = hv / m->G;
        real *dOp = bf.O;
        memset (dOp, 0, Tp * V * sizeof (real));
        memset (gb, 0, (3 * Tp * K + Tp * V + Tp) * sizeof (real));
        /* the cotangents are f32; each is exactly a real  */
        for (size_t t = 0; t < T; t++)
          for (size_t j = 0; j < V; j++)
            dOp[t * V + j] = m->dout[((b * T + t) * HV + hv) * V + j];
        for (size_t ij = 0; ij < K * V; ij++)
          bf.w.dS[ij] = m->dst[(b * HV + hv) * K * V + ij];
        if (m->chunk)
          R_ (chunk_backward) (m, s, &bf.w, dOp, dq, dk, dv, dbeta, dg);
        else
          R_ (rec_backward) (m, s, &bf.w, dOp, dq, dk, dv, dbeta, dg);
        memcpy (grad + m->off_s + (b * HV + hv) * K * V, bf.w.dS,
                K * V * sizeof (real));
        real ea = r_exp (x[m->off_a + hv]);
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
            memcpy (grad + m->off_v + rowv * V, dv + t * V, V * sizeof (real));
            real beta = bf.p.beta[rowv];
            grad[m->off_b + rowv] = dbeta[t] * beta * ((real) 1 - beta);
            /* the gate (§1.2, §5.4)  */
            for (size_t i = 0; i < K; i++)
              {
                real z = x[m->off_g + rowv * K + i] + x[m->off_dt + hv * K + i];
                real d = dg[t * K + i], graw, dA;
                if (m->mutant == MUT_SOFTPLUS_OUTSIDE)
                  {
                    real sg = r_sigmoid (ea * z);           /* MUTANT */
                    graw = -d * sg * ea;
                    dA = graw * z;
                  }
                else if (m->lowerbound)
                  {
                    real sg = r_sigmoid (ea * z);
                    real sd = sg * ((real) 1 - sg);
                    if (m->mutant == MUT_GATE_GRAD_NO_SIGMOID) sd = 1; /* MUTANT */
                    graw = d * LOWER_BOUND * sd * ea;
                    dA = graw * z;
                  }
                else
                  {
                    real sg = r_sigmoid (z);
                    if (m->mutant == MUT_GATE_GRAD_NO_SIGMOID) sg = 1; /* MUTANT */
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
      grad[m->off_a + hv] = (real) acc_a[hv];
      for (size_t i = 0; i < K; i++)
        grad[m->off_dt + hv * K + i] = (real) acc_dt[hv * K + i];
    }
  /* the L2 norm's chain rule on the group sums  */
  for (size_t row = 0; row < rh; row++)
    {
      const real *qn = bf.p.qn + row * K, *kn = bf.p.kn + row * K;
      real dqy = 0, dky = 0;
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
          real mx = 0;
          for (size_t k = bl->offset; k < bl->offset + bl->count; k++)
            mx = r_fmax (mx, r_fabs (grad[k]));
          for (size_t k = bl->offset; k < bl->offset + bl->count; k++)
            mag[k] = mx;
        }
      for (size_t hv = 0; hv < HV; hv++)
        {
          mag[m->off_a + hv] = (real) (fac_max[hv] * other_sum[hv]);
          for (size_t i = 0; i < K; i++)
            mag[m->off_dt + hv * K + i] = (real) ((double) (m->B * T)
                                                   * graw_max[hv]);
        }
    }
  free (gb);
  free (red);
  R_ (buffers_free) (&bf);
  return 0;
}
