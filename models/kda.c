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
   the matrix work) with the chunked backward that reads it; both written
   once over the element type (kda_backward.h), so that each has its f64
   twin (grad_f64: the same algorithm in double, OpenBLAS dgemm).  The
   references are the recurrence in f64 (incremental) and in MPFR; outputs
   o and S_T feed the forward oracle.  */

#include "delta.h"
#include "mpseq.h"

#include <cblas.h>
#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Shape and layout: the shape keys, the mutants' numbers, the instance and
   its scratch sizes.  */

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

/* The mutants' numbers, in the catalogue's order (section "Mutants"
   below).  */
enum { MUT_NONE, MUT_SOFTPLUS_OUTSIDE, MUT_CHUNK_NO_READ_SCALE,
       MUT_DOUBLE_SCALE, MUT_GATE_GRAD_NO_SIGMOID, MUT_GVA_NO_GROUP_SUM };

static const float LOWER_BOUND = -5.0f;

typedef struct kda
{
  gcm_instance inst;
  size_t B, T, H, HV, G, K, V, BT, NT, Tp;
  bool chunk, lowerbound;
  int mutant;
  float scale;               /* the read scale the f32 path applies */
  double scale64;            /* the same, as its twin applies it */
  float *dout, *dst;         /* [B,T,HV,V], [B,HV,K,V] */
  size_t off_q, off_k, off_v, off_g, off_b, off_a, off_dt, off_s;
  size_t n_out;
  gc_block blocks[8], out_blocks[2];
  gc_constant constants[5];
  gcm_mpseq mp;
  gcm_mpseq_ops mp_ops;
  pthread_mutex_t f64_lock;      /* taken to build the f64 trajectory */
  struct f64_base *_Atomic f64;  /* built once, read freely; see loss_f64 */
  atomic_int f64_none;           /* 1: not to be built (memory) */
} kda;

/* The sizes of a sequence's scratch and of the work area, in elements.  */

static size_t
seq_elems (const kda *m)
{
  size_t Tp = m->Tp, K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  size_t nh = m->chunk ? NT + 1 : m->T + 1;
  return 3 * Tp * K + Tp * V + Tp + Tp * K + 2 * NT * BT * BT + Tp * K
         + Tp * V + nh * K * V;
}

static size_t
work_elems (const kda *m)
{
  size_t K = m->K, V = m->V, BT = m->BT;
  return 2 * BT * K + BT * BT + BT * K + BT * V + BT * K + BT * V + BT * V
         + BT * BT + BT * K + BT * K + BT * K + BT * BT + BT * K + BT * V
         + BT * BT + BT * BT + BT * K + 2 * K * V + K * V + 2 * V;
}

/* ---------------------------------------------------------------------- */
/* Forward and backward: the path (kda_backward.h), once over the element
   type: the _f32 functions are the path under test, the _f64 ones its
   twin.  */

#define GCM_REAL 32
#include "kda_backward.h"
#undef GCM_REAL
#define GCM_REAL 64
#include "kda_backward.h"

/* ---------------------------------------------------------------------- */
/* Forward: the f32 path's loss, its magnitude and outputs.  */

static int
loss_f32 (void *ctx, const float *x, float *loss)
{
  const kda *m = ctx;
  buffers_f32 bf;
  if (!buffers_alloc_f32 (m, &bf))
    return -1;
  forward_all_f32 (m, x, &bf, NULL, loss, NULL);
  buffers_free_f32 (&bf);
  return 0;
}

static int
loss_magnitude_f32 (void *ctx, const float *x, float *mag)
{
  const kda *m = ctx;
  buffers_f32 bf;
  float loss;
  if (!buffers_alloc_f32 (m, &bf))
    return -1;
  forward_all_f32 (m, x, &bf, NULL, &loss, mag);
  buffers_free_f32 (&bf);
  return 0;
}

static int
outputs_f32 (void *ctx, const float *x, float *out)
{
  const kda *m = ctx;
  buffers_f32 bf;
  if (!buffers_alloc_f32 (m, &bf))
    return -1;
  forward_all_f32 (m, x, &bf, out, NULL, NULL);
  buffers_free_f32 (&bf);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Backward: the f32 path's gradient, its f64 twin's, and the gradient's
   magnitude.  */

static int
grad_f32 (void *ctx, const float *x, float *grad)
{
  return backward_all_f32 (ctx, x, grad, NULL);
}

static int
grad_f64 (void *ctx, const double *x, double *grad)
{
  return backward_all_f64 (ctx, x, grad, NULL);
}

static int
grad_magnitude_f32 (void *ctx, const float *x, float *mag)
{
  const kda *m = ctx;
  float *g = malloc (m->inst.model.n * sizeof *g);
  if (!g)
    return -1;
  int rc = backward_all_f32 (m, x, g, mag);
  free (g);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Reference forwards.  The f64 reference: the naive recurrence (§2.2), a different algorithm
   from the chunked path, with the gate, the sigmoid and the normalisation
   inside, the same function as the MPFR reference below (the read scale
   K^-1/2 whatever the mutant, the softplus without torch's threshold).

   It is evaluated incrementally, like the MPFR one (models/mpseq.h): a
   central difference perturbs one parameter, which enters one sequence
   (b, hv) from one step on (q, k: the G sequences of a group; A_log,
   dt_bias: every step of the value head's B sequences).  The base
   trajectory, at the instance's point, keeps for every sequence the state
   before each step, the loss accumulated within the sequence before it,
   and the sequence's whole contribution (built at the first call, to
   nearest, under a lock, and read only afterwards).  A call reruns each
   sequence from the first step whose inputs differ from the base point's;
   the others contribute their stored totals.  Each sequence's contribution
   is accumulated on its own and the contributions are summed in order, in
   the full evaluation too, so an incremental value is bit for bit the full
   one.  Under a rounding mode other than to nearest (gradcheck's
   rounding-sensitivity reruns) the evaluation is full and the base is not
   used.  */
typedef struct f64_base
{
  double *state;           /* [S][T][K*V]: the state before step t */
  double *acc;             /* [S][T]: the sequence's loss before step t */
  double *total;           /* [S] */
} f64_base;

static void
f64_base_free (f64_base *fb)
{
  if (!fb)
    return;
  free (fb->state);
  free (fb->acc);
  free (fb->total);
  free (fb);
}

/* Whether any of x[off .. off+count) differs from the instance's point.  */
static bool
f64_differs (const kda *m, const double *x, size_t off, size_t count)
{
  const float *x0 = m->inst.x;
  for (size_t i = off; i < off + count; i++)
    if (x[i] != (double) x0[i])
      return true;
  return false;
}

/* Whether sequence S's step T's own inputs differ from the base point's.  */
static bool
f64_step_differs (const kda *m, const double *x, size_t s, size_t t)
{
  size_t T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V;
  size_t b = s / HV, hv = s % HV, hh = hv / m->G;
  size_t rowh = (b * T + t) * H + hh, rowv = (b * T + t) * HV + hv;
  return f64_differs (m, x, m->off_q + rowh * K, K)
         || f64_differs (m, x, m->off_k + rowh * K, K)
         || f64_differs (m, x, m->off_v + rowv * V, V)
         || f64_differs (m, x, m->off_g + rowv * K, K)
         || f64_differs (m, x, m->off_b + rowv, 1);
}

/* Sequence S at X from step T0 on, from the state ST and the loss ACC
   accumulated before T0; its whole contribution.  With BUILD, the state
   and accumulated loss before each step are stored there.  W is scratch:
   qn, kn, alpha (K each) and e (V).  */
static double
ref_seq (const kda *m, const double *x, size_t s, size_t t0, double *St,
         double acc, double *w, f64_base *build)
{
  size_t T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V;
  size_t b = s / HV, hv = s % HV, hh = hv / m->G;
  double scale = 1 / sqrt ((double) K);
  double *qn = w, *kn = qn + K, *al = kn + K, *e = al + K;
  double ea = exp (x[m->off_a + hv]);
  const double *dt = x + m->off_dt + hv * K;
  double L = acc;
  for (size_t t = t0; t < T; t++)
    {
      if (build)
        {
          memcpy (build->state + (s * T + t) * K * V, St,
                  K * V * sizeof *St);
          build->acc[s * T + t] = L;
        }
      size_t rowh = (b * T + t) * H + hh, rowv = (b * T + t) * HV + hv;
      const double *q = x + m->off_q + rowh * K, *k = x + m->off_k + rowh * K;
      const double *v = x + m->off_v + rowv * V;
      const double *graw = x + m->off_g + rowv * K;
      double sq = GCM_L2_EPS, sk = GCM_L2_EPS;
      for (size_t i = 0; i < K; i++)
        {
          sq += q[i] * q[i];
          sk += k[i] * k[i];
        }
      double rq = 1 / sqrt (sq), rk = 1 / sqrt (sk);
      for (size_t i = 0; i < K; i++)
        {
          qn[i] = q[i] * rq;
          kn[i] = k[i] * rk;
          /* the gate of §1.2: -exp(A) log(1 + exp(z)), written
             z + log1p(exp(-z)) for z > 0 (no overflow), or
             -5 / (1 + exp(-exp(A) z))  */
          double z = graw[i] + dt[i], g;
          if (m->lowerbound)
            g = LOWER_BOUND / (1 + exp (-ea * z));
          else
            g = -ea * (z > 0 ? z + log1p (exp (-z)) : log1p (exp (z)));
          al[i] = exp (g);
        }
      double beta = 1 / (1 + exp (-x[m->off_b + rowv]));
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          St[i * V + j] *= al[i];
      for (size_t j = 0; j < V; j++)
        {
          double sum = 0;
          for (size_t i = 0; i < K; i++)
            sum += kn[i] * St[i * V + j];
          e[j] = beta * (v[j] - sum);
        }
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          St[i * V + j] += kn[i] * e[j];
      const float *dO = m->dout + rowv * V;
      for (size_t j = 0; j < V; j++)
        {
          double o = 0;
          for (size_t i = 0; i < K; i++)
            o += qn[i] * St[i * V + j];
          L += scale * o * dO[j];
        }
    }
  const float *dST = m->dst + s * K * V;
  for (size_t ij = 0; ij < K * V; ij++)
    L += St[ij] * dST[ij];
  if (build)
    build->total[s] = L;
  return L;
}

/* The base trajectory at the instance's point (NULL: memory runs out, or
   too large: 512 MiB at most).  */
static f64_base *
f64_base_new (const kda *m)
{
  size_t S = m->B * m->HV, T = m->T, KV = m->K * m->V, n = m->inst.model.n;
  if ((double) S * T * (KV + 1) * sizeof (double) > 512.0 * 1048576)
    return NULL;
  f64_base *fb = calloc (1, sizeof *fb);
  double *x = malloc (n * sizeof *x);
  double *w = malloc ((KV + 3 * m->K + m->V) * sizeof *w);
  if (fb)
    {
      fb->state = malloc (S * T * KV * sizeof *fb->state);
      fb->acc = malloc (S * T * sizeof *fb->acc);
      fb->total = malloc (S * sizeof *fb->total);
    }
  if (!fb || !x || !w || !fb->state || !fb->acc || !fb->total)
    {
      f64_base_free (fb);
      free (x);
      free (w);
      return NULL;
    }
  for (size_t i = 0; i < n; i++)
    x[i] = m->inst.x[i];
  for (size_t s = 0; s < S; s++)
    {
      memcpy (w, x + m->off_s + s * KV, KV * sizeof *w);
      ref_seq (m, x, s, 0, w, 0, w + KV, fb);
    }
  free (x);
  free (w);
  return fb;
}

static int
loss_f64 (void *ctx, const double *x, double *loss)
{
  kda *m = ctx;
  size_t HV = m->HV, K = m->K, V = m->V, T = m->T, KV = K * V;
  bool nearest = fegetround () == FE_TONEAREST;
  f64_base *fb = nearest ? atomic_load (&m->f64) : NULL;
  if (nearest && !fb && !atomic_load (&m->f64_none))
    {
      pthread_mutex_lock (&m->f64_lock);
      fb = atomic_load (&m->f64);
      if (!fb && !atomic_load (&m->f64_none))
        {
          fb = f64_base_new (m);
          if (fb)
            atomic_store (&m->f64, fb);
          else
            atomic_store (&m->f64_none, 1);
        }
      pthread_mutex_unlock (&m->f64_lock);
    }
  double *w = malloc ((KV + 3 * K + V) * sizeof *w);
  if (!w)
    return -1;
  double L = 0;
  for (size_t s = 0; s < m->B * HV; s++)
    {
      size_t hv = s % HV, t0 = 0;
      if (fb && !f64_differs (m, x, m->off_s + s * KV, KV)
          && !f64_differs (m, x, m->off_a + hv, 1)
          && !f64_differs (m, x, m->off_dt + hv * K, K))
        {
          while (t0 < T && !f64_step_differs (m, x, s, t0))
            t0++;
          if (t0 == T)
            {
              L += fb->total[s];
              continue;
            }
          memcpy (w, fb->state + (s * T + t0) * KV, KV * sizeof *w);
          L += ref_seq (m, x, s, t0, w, fb->acc[s * T + t0], w + KV, NULL);
        }
      else
        {
          memcpy (w, x + m->off_s + s * KV, KV * sizeof *w);
          L += ref_seq (m, x, s, 0, w, 0, w + KV, NULL);
        }
    }
  free (w);
  *loss = L;
  return 0;
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

/* A step's outputs, at row (b, t, hv) of o [B,T,HV,V].  */
static void
mp_step_out (const void *ctx, size_t s, size_t t, mpfr_t *in, void *wk,
             mpfr_ptr o)
{
  const kda *m = ctx;
  size_t row = (s / m->HV * m->T + t) * m->HV + s % m->HV;
  mp_step_o (m, s, t, in, wk, NULL, o + row * m->V);
}

/* The reference outputs o [B,T,HV,V] and S_T [B,HV,K,V], for the oracle.  */
static int
outputs_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr out)
{
  const kda *m = ctx;
  return gcm_mpseq_outputs (&m->mp_ops, m, x, out);
}

/* ---------------------------------------------------------------------- */
/* Mutants: known-buggy paths, numbered by the enum above.  Each breaks
   the line marked MUTANT: softplus-outside in kda_backward.h's gate
   (forward and backward alike), gva-no-group-sum and gate-grad-no-sigmoid
   in its backward; chunk-no-read-scale and double-scale in kda_new's read
   scale below.  */

static const gcm_mutant mutants[] = {
  { "softplus-outside", "g = -softplus(exp(A_log) x) in forward and backward alike" },
  { "chunk-no-read-scale", "the chunked path uses read scale 1.0, forward and backward" },
  { "double-scale", "the read scale is applied twice, forward and backward" },
  { "gate-grad-no-sigmoid", "dg_raw lacks the sigmoid(x) factor" },
  { "gva-no-group-sum", "dq, dk keep one value head of the group instead of the sum" },
};

/* ---------------------------------------------------------------------- */
/* Set-up: the instance from the shape, its inputs and cotangents.  */

static void
destroy (gcm_instance *inst)
{
  kda *m = (kda *) inst;
  gcm_mpseq_clear (&m->mp);
  f64_base_free (atomic_load (&m->f64));
  pthread_mutex_destroy (&m->f64_lock);
  free (m->dout);
  free (m->dst);
  free (inst->x);
  free (m);
}

/* The instance with its shape read from VAL and its read scale (where two
   mutants break it), its locks and caches set up; no buffers yet.  NULL
   when memory runs out.  */
static kda *
kda_new (const long *val, int mutant)
{
  kda *m = calloc (1, sizeof *m);
  if (!m)
    return NULL;
  gcm_mpseq_init (&m->mp);
  pthread_mutex_init (&m->f64_lock, NULL);
  atomic_init (&m->f64, NULL);
  atomic_init (&m->f64_none, 0);
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
  m->scale64 = scale;
  return m;
}

/* The parameters' layout (q, k, v, g_raw, b_raw, A_log, dt_bias, S0 in
   that order) and the buffers: the parameters, dO and dS_T.  The number
   of parameters, 0 when memory runs out.  */
static size_t
layout_alloc (kda *m)
{
  size_t HV = m->HV, K = m->K, V = m->V;
  size_t rh = m->B * m->T * m->H, rv = m->B * m->T * HV;
  size_t nS = m->B * HV * K * V;
  m->off_q = 0;
  m->off_k = m->off_q + rh * K;
  m->off_v = m->off_k + rh * K;
  m->off_g = m->off_v + rv * V;
  m->off_b = m->off_g + rv * K;
  m->off_a = m->off_b + rv;
  m->off_dt = m->off_a + HV;
  m->off_s = m->off_dt + HV * K;
  size_t n = m->off_s + nS;
  m->n_out = rv * V + nS;
  m->inst.x = malloc (n * sizeof (float));
  m->dout = malloc (rv * V * sizeof (float));
  m->dst = malloc (nS * sizeof (float));
  if (!m->inst.x || !m->dout || !m->dst)
    return 0;
  return n;
}

/* The inputs and cotangents, each block from its own stream of SEED.  */
static void
fill_inputs (kda *m, const long *val, uint64_t seed)
{
  size_t HV = m->HV, K = m->K, V = m->V;
  size_t rh = m->B * m->T * m->H, rv = m->B * m->T * HV;
  size_t nS = m->B * HV * K * V;
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
  for (size_t i = 0; i < nS; i++)
    x[m->off_s + i] = (float) gcm_normal (&r);
  double ls = (double) val[KEY_LOSS];
  gcm_rng_seed (&r, seed, 49);
  for (size_t i = 0; i < rv * V; i++)
    m->dout[i] = (float) (ls * gcm_normal (&r));
  gcm_rng_seed (&r, seed, 50);
  for (size_t i = 0; i < nS; i++)
    m->dst[i] = (float) (ls * gcm_normal (&r));
}

/* The named blocks of the parameters and the outputs, the constants, and
   the MPFR reference's sequence operations.  */
static void
describe_blocks (kda *m)
{
  size_t B = m->B, T = m->T, H = m->H, HV = m->HV, K = m->K, V = m->V;
  size_t rh = B * T * H, rv = B * T * HV;
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
                                mp_inputs_differ, mp_step, mp_final,
                                V, mp_step_out };
}

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
static void
set_depths (const kda *m, gc_model *md)
{
  size_t T = m->T, K = m->K, V = m->V, BT = m->BT, NT = m->NT;
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
  md->output_depth = md->forward_depth - 2;
}

/* The model description: N parameters, the f32, f64 and MPFR callbacks,
   the depths, the blocks; then the extras dO and dS_T.  */
static void
describe_model (kda *m, size_t n)
{
  size_t B = m->B, T = m->T, HV = m->HV, K = m->K, V = m->V;
  gc_model *md = &m->inst.model;
  md->abi = GC_MODEL_ABI;
  md->name = "kda";
  md->n = n;
  md->loss_f32 = loss_f32;
  md->grad_f32 = grad_f32;
  md->grad_f64 = grad_f64;
  md->grad_magnitude_f32 = grad_magnitude_f32;
  md->loss_magnitude_f32 = loss_magnitude_f32;
  md->loss_f64 = loss_f64;
  md->loss_mpfr = loss_mpfr;
  md->ctx = m;
  set_depths (m, md);
  md->n_blocks = 8;
  md->blocks = m->blocks;
  md->n_constants = 5;
  md->constants = m->constants;
  md->n_outputs = m->n_out;
  md->outputs_f32 = outputs_f32;
  md->outputs_mpfr = outputs_mpfr;
  md->n_output_blocks = 2;
  md->output_blocks = m->out_blocks;
  m->inst.destroy = destroy;
  gcm_extra (&m->inst, "dO", m->dout, 4, (size_t[]) { B, T, HV, V });
  gcm_extra (&m->inst, "dS_T", m->dst, 4, (size_t[]) { B, HV, K, V });
}

static gc_status
create (const long *val, uint64_t seed, int mutant, gcm_instance **out)
{
  if (val[KEY_HV] % val[KEY_H] != 0)
    return GC_EINVAL;
  kda *m = kda_new (val, mutant);
  if (!m)
    return GC_ENOMEM;
  size_t n = layout_alloc (m);
  if (!n)
    {
      destroy (&m->inst);
      return GC_ENOMEM;
    }
  fill_inputs (m, val, seed);
  describe_blocks (m);
  describe_model (m, n);
  *out = &m->inst;
  return GC_OK;
}

const gcm_spec gcm_kda_spec = {
  "kda",
  "Kimi Delta Attention: per-channel gated delta rule, recurrent or chunked f32 path with its f64 twin; f64 and MPFR recurrence references; forward oracle",
  sizeof keys / sizeof keys[0], keys,
  sizeof mutants / sizeof mutants[0], mutants,
  create,
};
