/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gdn.c -- the padded-scratch gated-delta op (Gated DeltaNet, scalar
   per-head decay), FLA's conventions; equations in
   shared/reference/models-kda-gdn.md: recurrence §2.3, chunked WY form §3.3,
   scratch §3.5, chunked backward §6.

   Parameters, in order: q, k [B,T,H,K]; v [B,T,H,V]; g [B,T,H] (log decay);
   beta [B,T,H] (a logit when SIGMOID=1, beta itself otherwise);
   S0 [B,H,K,V].  Loss: L = sum o*dO + <S_T, dS_T>, seeded cotangents.

   Production forward: f32, chunked WY form over buffers zero-padded to
   Tp = ceil(T/BT)*BT, matrix work on OpenBLAS.  It saves a padded scratch
   (per-chunk states h_n, A, Aqk, W, U, Vnew, the chunk-local cumsum).  The
   hand-written backward reads that scratch.  Reference forwards: the naive
   recurrence, a different algorithm, in MPFR and in f64.  */

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
/* Shape and layout: the shape keys, the mutants' numbers, the instance.  */

enum { KEY_B, KEY_T, KEY_H, KEY_K, KEY_V, KEY_BT, KEY_NORM, KEY_SIGMOID,
       KEY_GATE, KEY_LOSS };

/* gdn's shape keys, gdn-bf16's and gdn-fp16's too (models/gdn_bf16.c).  */
const gcm_key gcm_gdn_keys[GCM_GDN_N_KEYS] = {
  { "B", 1, 1, 64, "batch" },
  { "T", 37, 1, 4096, "sequence length" },
  { "H", 2, 1, 64, "heads" },
  { "K", 8, 1, 256, "key dimension" },
  { "V", 8, 1, 256, "value dimension" },
  { "BT", 16, 1, 256, "chunk size" },
  { "NORM", 1, 0, 1, "1: q, k L2-normalised inside the op (eps 1e-6 inside the square root)" },
  { "SIGMOID", 1, 0, 1, "1: beta given as a logit, passed through a sigmoid" },
  { "GATE", 0, 0, 1, "0: mild gates g = logsigmoid(z)/8; 1: strong, g = logsigmoid(z)" },
  { "LOSS", 1, 1, 1000, "scale of the cotangents dO, dS_T (the loss's size)" },
};

#define keys gcm_gdn_keys

/* The mutants' numbers, in the catalogue's order (section "Mutants"
   below); gdn_bf16.c and gdn_tangent.h use them: not to be renumbered.  */
enum { MUT_NONE, MUT_SCRATCH_ZEROS, MUT_SHIFT_CHUNK, MUT_SHIFT_ROW,
       MUT_PAD_LEAK, MUT_NO_READ_SCALE, MUT_NO_DG_CUMSUM, MUT_DBETA_SIGN,
       MUT_A_TRANSPOSED, MUT_DV_SCALE_1E6, MUT_DS_BF16,
       MUT_JVP_NO_DK /* gdn_tangent.h */,
       /* gdn-bf16's and gdn-fp16's own (models/gdn_bf16.c), past the
          end of gdn's list: sums kept in the storage format */
       MUT_ACC_LOWP };

typedef struct gdn
{
  gcm_instance inst;
  size_t B, T, H, K, V, BT, NT, Tp;
  bool norm, sigmoid;
  int mutant;
  int store;               /* GCM_STORE_*: the f32 path's storage format */
  float scale;             /* K^-0.5 in f32 */
  float *dout;             /* [B,T,H,V] */
  float *dst;              /* [B,H,K,V] */
  size_t off_q, off_k, off_v, off_g, off_b, off_s;
  gc_block blocks[6], out_blocks[2];
  gc_constant constants[5];
  gcm_mpseq mp;                  /* MPFR base trajectories */
  gcm_mpseq_ops mp_ops;
  pthread_mutex_t f64_lock;      /* taken to build the f64 trajectory */
  struct f64_base *_Atomic f64;  /* built once, read freely; see loss_f64 */
  atomic_int f64_none;           /* 1: not to be built (memory) */
} gdn;

/* ---------------------------------------------------------------------- */
/* Forward and backward: the production path, once over the element type:
   the f32 op and the f64 twin of its backward (manual: "Writing a twin").
   gdn_backward.h reads as the forward (seq_forward, forward_all) and the
   backward (seq_backward, grad) over the padded scratch.  */
#define GCM_REAL 32
#include "gdn_backward.h"
#undef GCM_REAL
#define GCM_REAL 64
#include "gdn_backward.h"

/* The forward-mode tangent of the recurrent path (manual: "The JVP
   check").  */
#include "gdn_tangent.h"

/* ---------------------------------------------------------------------- */
/* Forward: the f32 op's loss, outputs and loss magnitude.  */

static int
loss_f32 (void *ctx, const float *x, float *loss)
{
  gdn *m = ctx;
  buffers_f32 bf;
  double L;
  if (!buffers_alloc_f32 (m, &bf))
    return -1;
  int rc = forward_all_f32 (m, x, &bf, &L, NULL, NULL);
  buffers_free_f32 (&bf);
  *loss = (float) L;
  return rc;
}

static int
outputs_f32 (void *ctx, const float *x, float *out)
{
  gdn *m = ctx;
  buffers_f32 bf;
  double loss;
  if (!buffers_alloc_f32 (m, &bf))
    return -1;
  int rc = forward_all_f32 (m, x, &bf, &loss, NULL, out);
  buffers_free_f32 (&bf);
  return rc;
}

/* The loss's magnitude: the sum of |terms| of its final reduction (manual:
   "Reference rounding"); random cotangents make L itself a small difference
   of large terms.  */
static int
loss_magnitude_f32 (void *ctx, const float *x, float *mag)
{
  gdn *m = ctx;
  buffers_f32 bf;
  double loss, M;
  if (!buffers_alloc_f32 (m, &bf))
    return -1;
  int rc = forward_all_f32 (m, x, &bf, &loss, &M, NULL);
  buffers_free_f32 (&bf);
  *mag = (float) M;
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Reference forwards: the naive recurrence (§2.3), q and k normalised and
   beta through the sigmoid inside, as in the f32 op.  */

/* The f64 forward is evaluated incrementally, like the MPFR one
   (models/mpseq.h): a central difference perturbs one parameter, which
   enters one sequence (b, h) at one step.  The base trajectory keeps, for
   every sequence, the state before each step, the loss accumulated within
   the sequence before it, and the sequence's whole contribution, at the
   point of the first call (built then, to nearest, under a lock, and read
   only afterwards).  A call reruns each sequence from the first step whose
   inputs differ from the base point's; the others contribute their stored
   totals.  Each sequence's contribution is accumulated on its own and the
   contributions are summed in order, in the full evaluation too, so an
   incremental value is bit for bit the full one.  Under a rounding mode
   other than to nearest (gradcheck's rounding-sensitivity reruns) the
   evaluation is full and the base is not used.  */
typedef struct f64_base
{
  double *x0;              /* n */
  double *state;           /* [S][T][K*V]: the state before step t */
  double *acc;             /* [S][T]: the sequence's loss before step t */
  double *total;           /* [S] */
} f64_base;

static void
f64_base_free (f64_base *fb)
{
  if (!fb)
    return;
  free (fb->x0);
  free (fb->state);
  free (fb->acc);
  free (fb->total);
  free (fb);
}

/* Whether row (b, t, h)'s inputs at X differ from X0's.  */
static bool
row_differs (const gdn *m, const double *x, const double *x0, size_t row)
{
  size_t K = m->K, V = m->V;
  return memcmp (x + m->off_q + row * K, x0 + m->off_q + row * K,
                 K * sizeof *x) != 0
         || memcmp (x + m->off_k + row * K, x0 + m->off_k + row * K,
                    K * sizeof *x) != 0
         || memcmp (x + m->off_v + row * V, x0 + m->off_v + row * V,
                    V * sizeof *x) != 0
         || memcmp (&x[m->off_b + row], &x0[m->off_b + row], sizeof *x) != 0
         || memcmp (&x[m->off_g + row], &x0[m->off_g + row], sizeof *x) != 0;
}

/* Sequence (b, hh) at X from step T0 on, from the state S and the loss ACC
   accumulated before T0; its whole contribution.  With BUILD, the state
   and accumulated loss before each step are stored there.  QN, KN (2K) and
   E (V) are scratch.  */
static double
seq_ref64 (const gdn *m, const double *x, size_t b, size_t hh, size_t t0,
         double *S, double acc, double *qn, double *e, f64_base *build)
{
  size_t T = m->T, H = m->H, K = m->K, V = m->V;
  size_t s = b * H + hh;
  double scale = 1.0 / sqrt ((double) K);
  double *kn = qn + K;
  double L = acc;
  for (size_t t = t0; t < T; t++)
    {
      if (build)
        {
          memcpy (build->state + (s * T + t) * K * V, S,
                  K * V * sizeof *S);
          build->acc[s * T + t] = L;
        }
      size_t row = (b * T + t) * H + hh;
      const double *q = x + m->off_q + row * K, *k = x + m->off_k + row * K;
      const double *v = x + m->off_v + row * V;
      double sq = 0, sk = 0;
      for (size_t i = 0; i < K; i++)
        {
          sq += q[i] * q[i];
          sk += k[i] * k[i];
        }
      double rq = m->norm ? 1 / sqrt (sq + GCM_L2_EPS) : 1;
      double rk = m->norm ? 1 / sqrt (sk + GCM_L2_EPS) : 1;
      for (size_t i = 0; i < K; i++)
        {
          qn[i] = q[i] * rq;
          kn[i] = k[i] * rk;
        }
      double braw = x[m->off_b + row];
      double beta = m->sigmoid ? 1 / (1 + exp (-braw)) : braw;
      double a = exp (x[m->off_g + row]);
      for (size_t ij = 0; ij < K * V; ij++)
        S[ij] *= a;
      for (size_t j = 0; j < V; j++)
        {
          double sum = 0;
          for (size_t i = 0; i < K; i++)
            sum += kn[i] * S[i * V + j];
          e[j] = beta * (v[j] - sum);
        }
      for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < V; j++)
          S[i * V + j] += kn[i] * e[j];
      const float *dO = m->dout + row * V;
      for (size_t j = 0; j < V; j++)
        {
          double o = 0;
          for (size_t i = 0; i < K; i++)
            o += qn[i] * S[i * V + j];
          L += scale * o * dO[j];
        }
    }
  const float *dST = m->dst + s * K * V;
  for (size_t ij = 0; ij < K * V; ij++)
    L += S[ij] * dST[ij];
  if (build)
    build->total[s] = L;
  return L;
}

/* The base trajectory at X (NULL: memory runs out, or too large: 512 MiB
   at most).  */
static f64_base *
f64_base_new (const gdn *m, const double *x)
{
  size_t S = m->B * m->H, T = m->T, KV = m->K * m->V, n = m->inst.model.n;
  if ((double) S * T * (KV + 1) * sizeof (double) > 512.0 * 1048576)
    return NULL;
  f64_base *fb = calloc (1, sizeof *fb);
  double *w = malloc ((KV + 2 * m->K + m->V) * sizeof *w);
  if (fb)
    {
      fb->x0 = malloc (n * sizeof *fb->x0);
      fb->state = malloc (S * T * KV * sizeof *fb->state);
      fb->acc = malloc (S * T * sizeof *fb->acc);
      fb->total = malloc (S * sizeof *fb->total);
    }
  if (!fb || !w || !fb->x0 || !fb->state || !fb->acc || !fb->total)
    {
      f64_base_free (fb);
      free (w);
      return NULL;
    }
  memcpy (fb->x0, x, n * sizeof *x);
  for (size_t b = 0; b < m->B; b++)
    for (size_t hh = 0; hh < m->H; hh++)
      {
        memcpy (w, x + m->off_s + (b * m->H + hh) * KV, KV * sizeof *w);
        seq_ref64 (m, x, b, hh, 0, w, 0, w + KV, w + KV + 2 * m->K, fb);
      }
  free (w);
  return fb;
}

static int
loss_f64 (void *ctx, const double *x, double *loss)
{
  gdn *m = ctx;
  size_t H = m->H, K = m->K, V = m->V, T = m->T, KV = K * V;
  bool nearest = fegetround () == FE_TONEAREST;
  f64_base *fb = nearest ? atomic_load (&m->f64) : NULL;
  if (nearest && !fb && !atomic_load (&m->f64_none))
    {
      pthread_mutex_lock (&m->f64_lock);
      fb = atomic_load (&m->f64);
      if (!fb && !atomic_load (&m->f64_none))
        {
          fb = f64_base_new (m, x);
          if (fb)
            atomic_store (&m->f64, fb);
          else
            atomic_store (&m->f64_none, 1);
        }
      pthread_mutex_unlock (&m->f64_lock);
    }
  double *w = malloc ((KV + 2 * K + V) * sizeof *w);
  if (!w)
    return -1;
  double L = 0;
  for (size_t b = 0; b < m->B; b++)
    for (size_t hh = 0; hh < H; hh++)
      {
        size_t s = b * H + hh, t0 = 0;
        const double *s0 = x + m->off_s + s * KV;
        if (fb && memcmp (s0, fb->x0 + m->off_s + s * KV, KV * sizeof *s0)
                  == 0)
          {
            while (t0 < T && !row_differs (m, x, fb->x0, (b * T + t0) * H + hh))
              t0++;
            if (t0 == T)
              {
                L += fb->total[s];
                continue;
              }
            memcpy (w, fb->state + (s * T + t0) * KV, KV * sizeof *w);
            L += seq_ref64 (m, x, b, hh, t0, w, fb->acc[s * T + t0], w + KV,
                          w + KV + 2 * K, NULL);
          }
        else
          {
            memcpy (w, s0, KV * sizeof *w);
            L += seq_ref64 (m, x, b, hh, 0, w, 0, w + KV, w + KV + 2 * K, NULL);
          }
      }
  free (w);
  *loss = L;
  return 0;
}

/* The MPFR recurrence, one step at a time, for the incremental evaluation
   of models/mpseq.h: a central difference reruns only the perturbed
   sequence from the perturbed step on.  Sequence s is (b, h) = (s / H,
   s % H).  A step's inputs: qn [K], kn [K], v [V], beta, a = exp(g).  */

static size_t
mp_input_size (const gdn *m)
{
  return 2 * m->K + m->V + 2;
}

static void *
mp_work_new (const void *ctx, mpfr_prec_t p)
{
  const gdn *m = ctx;
  return gcm_delta_mp_new (m->K, m->V, mp_input_size (m), p);
}

static void
mp_init_state (const void *ctx, mpfr_srcptr x, size_t s, void *wk)
{
  const gdn *m = ctx;
  gcm_delta_mp *w = wk;
  for (size_t ij = 0; ij < m->K * m->V; ij++)
    mpfr_set (w->S[ij], x + m->off_s + s * m->K * m->V + ij, MPFR_RNDN);
}

/* §2.3, q and k normalised and beta through the sigmoid inside, as in the
   f32 op.  */
static void
mp_prepare (const void *ctx, mpfr_srcptr x, size_t s, size_t t, void *wk,
            mpfr_t *in)
{
  const gdn *m = ctx;
  size_t T = m->T, H = m->H, K = m->K, V = m->V;
  size_t row = (s / H * T + t) * H + s % H;
  mpfr_t *qn = in, *kn = qn + K, *v = kn + K, *beta = v + V, *a = beta + 1;
  gcm_delta_mp_normalize (wk, x + m->off_q + row * K, x + m->off_k + row * K,
                          m->norm, qn, kn);
  for (size_t j = 0; j < V; j++)
    mpfr_set (v[j], x + m->off_v + row * V + j, MPFR_RNDN);
  if (m->sigmoid)
    gcm_delta_mp_sigmoid (*beta, x + m->off_b + row);
  else
    mpfr_set (*beta, x + m->off_b + row, MPFR_RNDN);
  mpfr_exp (*a, x + m->off_g + row, MPFR_RNDN);
}

static void
mp_step_o (const gdn *m, size_t s, size_t t, mpfr_t *in, gcm_delta_mp *w,
           mpfr_ptr acc, mpfr_ptr o)
{
  size_t K = m->K, V = m->V;
  size_t row = (s / m->H * m->T + t) * m->H + s % m->H;
  mpfr_t *qn = in, *kn = qn + K, *v = kn + K, *beta = v + V, *a = beta + 1;
  gcm_delta_mp_step (w, a, false, kn, qn, v, *beta, m->dout + row * V, o, acc);
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
  const gdn *m = ctx;
  gcm_delta_mp_final (wk, m->dst + s * m->K * m->V, acc);
}

static int
mp_initial_differs (const void *ctx, mpfr_srcptr x, size_t s)
{
  const gdn *m = ctx;
  return gcm_mp_differs (x, m->inst.x, m->off_s + s * m->K * m->V,
                         m->K * m->V);
}

static int
mp_inputs_differ (const void *ctx, mpfr_srcptr x, size_t s, size_t t)
{
  const gdn *m = ctx;
  size_t K = m->K, V = m->V;
  size_t row = (s / m->H * m->T + t) * m->H + s % m->H;
  const float *x0 = m->inst.x;
  return gcm_mp_differs (x, x0, m->off_q + row * K, K)
         || gcm_mp_differs (x, x0, m->off_k + row * K, K)
         || gcm_mp_differs (x, x0, m->off_v + row * V, V)
         || gcm_mp_differs (x, x0, m->off_g + row, 1)
         || gcm_mp_differs (x, x0, m->off_b + row, 1);
}

static int
loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  gdn *m = ctx;
  return gcm_mpseq_loss (&m->mp, &m->mp_ops, m, m->inst.x, m->inst.model.n,
                         x, loss);
}

/* A step's outputs, at row (b, t, h) of o [B,T,H,V].  */
static void
mp_step_out (const void *ctx, size_t s, size_t t, mpfr_t *in, void *wk,
             mpfr_ptr o)
{
  const gdn *m = ctx;
  size_t row = (s / m->H * m->T + t) * m->H + s % m->H;
  mp_step_o (m, s, t, in, wk, NULL, o + row * m->V);
}

/* The reference outputs o [B,T,H,V] and S_T [B,H,K,V], for the oracle.  */
static int
outputs_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr out)
{
  const gdn *m = ctx;
  return gcm_mpseq_outputs (&m->mp_ops, m, x, out);
}

/* ---------------------------------------------------------------------- */
/* Mutants: known-buggy backwards, numbered by the enum above.  Each breaks
   the line marked MUTANT: scratch-zeros, scratch-shift-chunk,
   scratch-shift-row, no-dg-cumsum, a-transposed, ds-bf16 and no-read-scale
   in gdn_backward.h's seq_backward; dbeta-sign, pad-leak and dv-scale-1e-6
   in its grad; jvp-no-dk in gdn_tangent.h; acc-lowp (gdn-bf16's and
   gdn-fp16's own, models/gdn_bf16.c) in seq_backward.  */

static const gcm_mutant mutants[] = {
  { "scratch-zeros", "the backward reads zeros where the saved chunk states are" },
  { "scratch-shift-chunk", "the backward reads the previous chunk's state" },
  { "scratch-shift-row", "the backward reads Vnew one row on" },
  { "pad-leak", "gradients of padding rows are added into the last real row" },
  { "no-read-scale", "the read scale is missing in dq" },
  { "no-dg-cumsum", "the reverse cumulative sum of dg is skipped" },
  { "dbeta-sign", "dbeta is negated" },
  { "a-transposed", "A is used where A^T belongs in the WY backward" },
  { "dv-scale-1e-6", "dv is scaled by 1 + 1e-6 (seen at a finer resolution"
    " than f32's: the twin's algorithm check)" },
  { "ds-bf16", "the state's adjoint dS is stored in bf16 between chunks in"
    " the f32 path only (a precision loss: PRECISION with the twin)" , 1 },
  /* gdn_tangent.h: gradcheck jvp sees it, run does not */
  { "jvp-no-dk", "the tangent forgets dk in the state update (gradcheck"
    " jvp)", 0, "jvp" },
};

/* ---------------------------------------------------------------------- */
/* Set-up: the instance from the shape, its inputs and cotangents.  */

static void
destroy (gcm_instance *inst)
{
  gdn *m = (gdn *) inst;
  gcm_mpseq_clear (&m->mp);
  f64_base_free (atomic_load (&m->f64));
  pthread_mutex_destroy (&m->f64_lock);
  free (m->dout);
  free (m->dst);
  free (inst->x);
  free (m);
}

static gc_status
create (const long *val, uint64_t seed, int mutant, gcm_instance **out)
{
  return gcm_gdn_create_stored (val, seed, mutant, GCM_STORE_F32, out);
}

/* The instance with its shape read from VAL, its locks and caches set up;
   no buffers yet.  NULL when memory runs out.  */
static gdn *
gdn_new (const long *val, int mutant, int store)
{
  gdn *m = calloc (1, sizeof *m);
  if (!m)
    return NULL;
  gcm_mpseq_init (&m->mp);
  pthread_mutex_init (&m->f64_lock, NULL);
  atomic_init (&m->f64, NULL);
  atomic_init (&m->f64_none, 0);
  m->B = (size_t) val[KEY_B];
  m->T = (size_t) val[KEY_T];
  m->H = (size_t) val[KEY_H];
  m->K = (size_t) val[KEY_K];
  m->V = (size_t) val[KEY_V];
  m->BT = (size_t) val[KEY_BT];
  m->norm = val[KEY_NORM] != 0;
  m->sigmoid = val[KEY_SIGMOID] != 0;
  m->mutant = mutant;
  m->store = store;
  m->NT = (m->T + m->BT - 1) / m->BT;
  m->Tp = m->NT * m->BT;
  m->scale = (float) (1.0 / sqrt ((double) m->K));
  return m;
}

/* The parameters' layout (q, k, v, g, beta, S0 in that order) and the
   buffers: the parameters, dO and dS_T.  The number of parameters, 0 when
   memory runs out.  */
static size_t
layout_alloc (gdn *m)
{
  size_t rows = m->B * m->T * m->H, K = m->K, V = m->V;
  m->off_q = 0;
  m->off_k = m->off_q + rows * K;
  m->off_v = m->off_k + rows * K;
  m->off_g = m->off_v + rows * V;
  m->off_b = m->off_g + rows;
  m->off_s = m->off_b + rows;
  size_t n = m->off_s + m->B * m->H * K * V;
  m->inst.x = malloc (n * sizeof (float));
  m->dout = malloc (rows * V * sizeof (float));
  m->dst = malloc (m->B * m->H * K * V * sizeof (float));
  if (!m->inst.x || !m->dout || !m->dst)
    return 0;
  return n;
}

/* The inputs and cotangents, each block from its own stream of SEED.  */
static void
fill_inputs (gdn *m, const long *val, uint64_t seed)
{
  size_t rows = m->B * m->T * m->H, K = m->K, V = m->V;
  size_t nS = m->B * m->H * K * V;
  float *x = m->inst.x;
  gcm_rng r;
  gcm_rng_seed (&r, seed, 21);
  for (size_t i = 0; i < rows * K; i++)
    x[m->off_q + i] = (float) gcm_normal (&r);
  gcm_rng_seed (&r, seed, 22);
  for (size_t i = 0; i < rows * K; i++)
    x[m->off_k + i] = (float) gcm_normal (&r);
  if (!m->norm)
    /* Without the op's own normalisation the inputs arrive normalised, as
       from the layer, so that the state stays bounded (§8).  */
    for (size_t row = 0; row < rows; row++)
      for (size_t off = m->off_q; off <= m->off_k; off += m->off_k - m->off_q)
        {
          float *p = x + off + row * K;
          double s2 = 0;
          for (size_t i = 0; i < K; i++)
            s2 += (double) p[i] * p[i];
          for (size_t i = 0; i < K; i++)
            p[i] = (float) (p[i] / sqrt (s2));
        }
  gcm_rng_seed (&r, seed, 23);
  for (size_t i = 0; i < rows * V; i++)
    x[m->off_v + i] = (float) gcm_normal (&r);
  gcm_rng_seed (&r, seed, 24);
  double gdiv = val[KEY_GATE] ? 1.0 : 8.0;
  for (size_t i = 0; i < rows; i++)
    {
      double z = gcm_normal (&r);
      /* logsigmoid(z) = -log(1 + e^-z), FLA's gate distribution  */
      x[m->off_g + i] = (float) (-log1p (exp (-z)) / gdiv);
    }
  gcm_rng_seed (&r, seed, 25);
  for (size_t i = 0; i < rows; i++)
    {
      double z = gcm_normal (&r);
      x[m->off_b + i] = (float) (m->sigmoid ? z : 1 / (1 + exp (-z)));
    }
  gcm_rng_seed (&r, seed, 26);
  for (size_t i = 0; i < nS; i++)
    x[m->off_s + i] = (float) gcm_normal (&r);
  double ls = (double) val[KEY_LOSS];
  gcm_rng_seed (&r, seed, 27);
  for (size_t i = 0; i < rows * V; i++)
    m->dout[i] = (float) (ls * gcm_normal (&r));
  gcm_rng_seed (&r, seed, 28);
  for (size_t i = 0; i < nS; i++)
    m->dst[i] = (float) (ls * gcm_normal (&r));
}

/* Manual: "Rounding classes": a model that stores in a narrower format
   stores its inputs so (the N parameters and the cotangents), and the
   reference runs on exactly those values.  */
static void
store_inputs (gdn *m, size_t n)
{
  int store = m->store;
  size_t rows = m->B * m->T * m->H, nS = m->B * m->H * m->K * m->V;
  float *x = m->inst.x;
  for (size_t i = 0; store && i < n; i++)
    x[i] = gcm_store (store, x[i]);
  for (size_t i = 0; store && i < rows * m->V; i++)
    m->dout[i] = gcm_store (store, m->dout[i]);
  for (size_t i = 0; store && i < nS; i++)
    m->dst[i] = gcm_store (store, m->dst[i]);
}

/* The named blocks of the parameters and the outputs, the constants, and
   the MPFR reference's sequence operations.  */
static void
describe_blocks (gdn *m)
{
  size_t B = m->B, T = m->T, H = m->H, K = m->K, V = m->V;
  size_t rows = B * T * H;
  m->blocks[0] = (gc_block) { "q", m->off_q, rows * K, 4, { B, T, H, K } };
  m->blocks[1] = (gc_block) { "k", m->off_k, rows * K, 4, { B, T, H, K } };
  m->blocks[2] = (gc_block) { "v", m->off_v, rows * V, 4, { B, T, H, V } };
  m->blocks[3] = (gc_block) { "g", m->off_g, rows, 3, { B, T, H } };
  m->blocks[4] = (gc_block) { m->sigmoid ? "beta_logit" : "beta", m->off_b,
                              rows, 3, { B, T, H } };
  m->blocks[5] = (gc_block) { "S0", m->off_s, B * H * K * V, 4, { B, H, K, V } };
  m->constants[0] = (gc_constant) { "K", (double) K };
  m->constants[1] = (gc_constant) { "V", (double) V };
  m->constants[2] = (gc_constant) { "BT", (double) m->BT };
  m->constants[3] = (gc_constant) { "T", (double) T };
  m->constants[4] = (gc_constant) { "H", (double) H };
  m->out_blocks[0] = (gc_block) { "o", 0, rows * V, 4, { B, T, H, V } };
  m->out_blocks[1] = (gc_block) { "S_T", rows * V, B * H * K * V, 4,
                                  { B, H, K, V } };

  m->mp_ops = (gcm_mpseq_ops) { B * H, T, K * V, mp_initial_differs,
                                mp_work_new, gcm_delta_mp_work_free,
                                gcm_delta_mp_state,
                                mp_init_state, mp_input_size (m), mp_prepare,
                                mp_inputs_differ, mp_step, mp_final,
                                V, mp_step_out };
}

/* Depths (manual: "The accumulation factor"): the rounded operations on
   the longest path from an input to the loss (forward) and to a gradient
   element (backward); a product of K terms counts K, A's forward
   substitution 2 BT (row r reaches row r' > r through one product and at
   most r' - r additions).
   Forward.  The inputs: the L2 norm, sum q^2 (K), + eps, sqrt, 1/, *
   (4); beta's sigmoid (3).  A chunk's inputs reach the next state
   h_{n+1} along the longer of: g through the cumsum (BT), G_r - G_c and
   exp (2), L's factor (1); k through K K^T (K) and L's two factors (2);
   then A (2 BT), W = A Kb (BT), Vnew = U - W h_n (K + 1) and h_{n+1} =
   El h_n + Kd^T Vnew (BT + 1): 5 BT + K + 5 or 4 BT + 2 K + 4.  Each
   later chunk takes the state through Vnew and the update again
   (K + BT + 2); a chunk's output from h_n (Vnew, then Aqk Vnew) is no
   longer; the loss adds 2 (the product with dO, and the one rounding of
   the double accumulation).
   Backward.  The cotangent dS crosses a chunk through dVnew = ... + Kd dS
   (K + 1) and dh = ... - W^T dVnew (BT + 1): K + BT + 2.  In its chunk
   it leaves along the longer of: <dS, h_n> (K V), El and the addition to
   dG_last (2), the later additions into that element of dG (BT in step
   3, BT + 1 in step 4, 1 in step 6, BT - 1 in step 8) and the reverse
   cumsum (BT): K V + 4 BT + 3; or dVnew (K + 1), dW (V), dA (K + 1),
   dL = -A^T dA A^T (2 BT), dL's factors (3), the additions into dG in
   step 8 (BT) and the cumsum (BT): 4 BT + 2 K + V + 5.  The backward
   starts from the forward's saved values: its depth adds the forward's.
   Then the chain rules: the L2 norm's, <dq, q> (K), a product, a
   subtraction, a product (3); the sigmoid's (3).  */
static void
set_depths (const gdn *m, gc_model *md)
{
  size_t K = m->K, V = m->V, BT = m->BT, NT = m->NT;
  size_t in = m->norm ? K + 4 : 0, chain = m->norm ? K + 3 : 0;
  if (m->sigmoid)
    {
      in = in > 3 ? in : 3;
      chain = chain > 3 ? chain : 3;
    }
  size_t entry = 4 * BT + K + (BT + 5 > K + 4 ? BT + 5 : K + 4);
  size_t leave = 4 * BT + (K * V + 3 > 2 * K + V + 5 ? K * V + 3
                                                       : 2 * K + V + 5);
  md->forward_depth = in + entry + (NT - 1) * (K + BT + 2) + 2;
  md->backward_depth = md->forward_depth + (NT - 1) * (K + BT + 2) + leave
                       + chain;
  md->tangent_depth = tangent_depth (m);
  md->output_depth = md->forward_depth - 2;
}

/* The model description: N parameters, the f32, f64 and MPFR callbacks,
   the depths, the blocks; then the extras dO and dS_T.  */
static void
describe_model (gdn *m, size_t n)
{
  size_t B = m->B, T = m->T, H = m->H, K = m->K, V = m->V;
  size_t rows = B * T * H;
  gc_model *md = &m->inst.model;
  md->abi = GC_MODEL_ABI;
  md->name = "gdn";
  md->n = n;
  md->loss_f32 = loss_f32;
  md->grad_f32 = grad_f32;
  md->grad_f64 = grad_f64;
  md->loss_magnitude_f32 = loss_magnitude_f32;
  md->loss_mpfr = loss_mpfr;
  md->loss_f64 = loss_f64;
  md->ctx = m;
  md->jvp_f32 = jvp_recurrent_f32;
  set_depths (m, md);
  md->n_blocks = 6;
  md->blocks = m->blocks;
  md->n_constants = 5;
  md->constants = m->constants;
  md->n_outputs = rows * V + B * H * K * V;
  md->outputs_f32 = outputs_f32;
  md->outputs_mpfr = outputs_mpfr;
  md->n_output_blocks = 2;
  md->output_blocks = m->out_blocks;
  m->inst.destroy = destroy;
  gcm_extra (&m->inst, "dO", m->dout, 4, (size_t[]) { B, T, H, V });
  gcm_extra (&m->inst, "dS_T", m->dst, 4, (size_t[]) { B, H, K, V });
}

gc_status
gcm_gdn_create_stored (const long *val, uint64_t seed, int mutant, int store,
                       gcm_instance **out)
{
  gdn *m = gdn_new (val, mutant, store);
  if (!m)
    return GC_ENOMEM;
  size_t n = layout_alloc (m);
  if (!n)
    {
      destroy (&m->inst);
      return GC_ENOMEM;
    }
  fill_inputs (m, val, seed);
  store_inputs (m, n);
  describe_blocks (m);
  describe_model (m, n);
  *out = &m->inst;
  return GC_OK;
}

const gcm_spec gcm_gdn_spec = {
  "gdn",
  "gated delta rule, padded-scratch chunked f32 op with a custom backward; MPFR recurrence reference",
  sizeof keys / sizeof keys[0], keys,
  sizeof mutants / sizeof mutants[0], mutants,
  create,
};
