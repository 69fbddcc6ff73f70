/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gdn_tangent.h -- gdn's forward-mode tangent along its recurrent path
   (manual: "The JVP check"): the naive recurrence (§2.3) in f32, each
   value carried with its tangent along the direction w (dual numbers), the
   loss's tangent <grad L, w> its result.  Included once by gdn.c, after
   the struct gdn; its mutant is one marked line.

   Per step, with n(x) = x / sqrt(|x|^2 + eps) (NORM), sigma (SIGMOID):
     qn, kn = n(q), n(k);  beta = sigma(b);  a = exp(g)
     S = a S;  e = beta (v - S^T kn);  S = S + kn e^T;  o = S^T qn
     L += scale <o, dO>,  and at the end L += <S_T, dS_T>;
   the tangent of each line by the product rule.  */

/* n(x)'s value and tangent: XN = x r, DXN = dx r + x dr,
   r = (|x|^2 + eps)^-1/2, dr = -r^3 <x, dx> (NORM; else r = 1).  */
static void
tangent_norm (const gdn *m, const float *x, const float *dx, float *xn,
              float *dxn)
{
  size_t K = m->K;
  float s = 0, ds = 0;
  for (size_t i = 0; i < K; i++)
    {
      s += x[i] * x[i];
      ds += x[i] * dx[i];
    }
  float r = m->norm ? 1 / sqrtf (s + GCM_L2_EPS) : 1;
  float dr = m->norm ? -r * r * r * ds : 0;
  for (size_t i = 0; i < K; i++)
    {
      xn[i] = x[i] * r;
      dxn[i] = dx[i] * r + x[i] * dr;
    }
}

/* Sequence (b, hh)'s tangent; S, DS (K V) and W (4 K + 2 V) are scratch.  */
static float
tangent_seq (const gdn *m, const float *x, const float *w, size_t b,
             size_t hh, float *S, float *dS, float *scratch)
{
  size_t T = m->T, H = m->H, K = m->K, V = m->V, KV = K * V;
  size_t s = b * H + hh;
  float *qn = scratch, *dqn = qn + K, *kn = dqn + K, *dkn = kn + K;
  float *e = dkn + K, *de = e + V;
  memcpy (S, x + m->off_s + s * KV, KV * sizeof *S);
  memcpy (dS, w + m->off_s + s * KV, KV * sizeof *dS);
  float dL = 0;
  for (size_t t = 0; t < T; t++)
    {
      size_t row = (b * T + t) * H + hh;
      tangent_norm (m, x + m->off_q + row * K, w + m->off_q + row * K, qn,
                    dqn);
      tangent_norm (m, x + m->off_k + row * K, w + m->off_k + row * K, kn,
                    dkn);
      const float *v = x + m->off_v + row * V, *dv = w + m->off_v + row * V;
      float braw = x[m->off_b + row], dbraw = w[m->off_b + row];
      float beta = m->sigmoid ? 1 / (1 + expf (-braw)) : braw;
      float dbeta = m->sigmoid ? beta * (1 - beta) * dbraw : dbraw;
      float a = expf (x[m->off_g + row]), da = a * w[m->off_g + row];
      for (size_t ij = 0; ij < KV; ij++)
        {
          dS[ij] = da * S[ij] + a * dS[ij];
          S[ij] *= a;
        }
      for (size_t j = 0; j < V; j++)
        {
          float sum = 0, dsum = 0;
          for (size_t i = 0; i < K; i++)
            {
              sum += kn[i] * S[i * V + j];
              dsum += dkn[i] * S[i * V + j] + kn[i] * dS[i * V + j];
            }
          e[j] = beta * (v[j] - sum);
          de[j] = dbeta * (v[j] - sum) + beta * (dv[j] - dsum);
        }
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          {
            S[i * V + j] += kn[i] * e[j];
            dS[i * V + j] += (m->mutant == MUT_JVP_NO_DK ? 0   /* MUTANT */
                              : dkn[i] * e[j]) + kn[i] * de[j];
          }
      const float *dO = m->dout + row * V;
      for (size_t j = 0; j < V; j++)
        {
          float dox = 0;
          for (size_t i = 0; i < K; i++)
            dox += dqn[i] * S[i * V + j] + qn[i] * dS[i * V + j];
          dL += m->scale * dox * dO[j];
        }
    }
  const float *dST = m->dst + s * KV;
  for (size_t ij = 0; ij < KV; ij++)
    dL += dS[ij] * dST[ij];
  return dL;
}

/* The jvp_f32 callback: the sum of the sequences' tangents.  */
static int
jvp_recurrent_f32 (void *ctx, const float *x, const float *w, float *out)
{
  gdn *m = ctx;
  size_t K = m->K, V = m->V, KV = K * V;
  float *buf = malloc ((2 * KV + 4 * K + 2 * V) * sizeof *buf);
  if (!buf)
    return -1;
  float dL = 0;
  for (size_t b = 0; b < m->B; b++)
    for (size_t hh = 0; hh < m->H; hh++)
      dL += tangent_seq (m, x, w, b, hh, buf, buf + KV, buf + 2 * KV);
  free (buf);
  *out = dL;
  return 0;
}

/* The tangent's depth ("The accumulation factor", manual: "The JVP
   check"): per step, the state's tangent crosses da S + a dS (2), dsum's K
   products and sums (2 K), de (3), the update (2): 2 K + 7; the norm's
   chain first (K + 4), the output's K-term sum, the product with dO and
   the sums over V, steps and the final <dS_T, dS_T> (K V): as declared
   here.  */
static size_t
tangent_depth (const gdn *m)
{
  return (m->norm ? m->K + 4 : 0) + (m->sigmoid ? 3 : 0)
         + m->T * (2 * m->K + 7) + 2 * m->K + m->V + m->K * m->V
         + m->B * m->H + 4;
}
