/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gctest.c -- see gctest.h.  */

#include "gctest.h"

#include <signal.h>

#include <cblas.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t
gct_seed (void)
{
  static uint64_t seed;
  static bool printed;
  if (!printed)
    {
      const char *e = getenv ("GC_TEST_SEED");
      seed = e ? strtoull (e, NULL, 10) : 20261130;
      fprintf (stderr, "# GC_TEST_SEED=%llu\n", (unsigned long long) seed);
      printed = true;
    }
  return seed;
}

uint64_t
gct_seeds (uint64_t full)
{
  return getenv ("GC_TEST_QUICK") && full > 2 ? 2 : full;
}

int
gct_run (Suite *s)
{
  gct_seed ();
  SRunner *sr = srunner_create (s);
  srunner_run_all (sr, CK_ENV);
  int failed = srunner_ntests_failed (sr);
  /* A forked test that died of SIGILL ran an instruction this CPU lacks
     (an OpenBLAS kernel made for another one): the suite says so with
     exit 77, which tests/tap.sh and gradcheck's kernel probe read as
     "unsupported", never as a failure -- but only when every failure is
     one (a real failure beside it still fails the suite).  */
  int sigill = 0;
  TestResult **tr = failed ? srunner_failures (sr) : NULL;
  char want[64];
  snprintf (want, sizeof want, "Received signal %d ", SIGILL);
  for (int k = 0; tr && k < failed; k++)
    if (tr_rtype (tr[k]) == CK_ERROR && tr_msg (tr[k])
        && strncmp (tr_msg (tr[k]), want, strlen (want)) == 0)
      sigill++;
  free (tr);
  srunner_free (sr);
  if (failed && sigill == failed)
    {
      fprintf (stderr, "# %d test(s) died of SIGILL: this CPU lacks an "
               "instruction the code (its OpenBLAS kernel) uses; exit %d "
               "(unsupported)\n", sigill, GCT_EXIT_UNSUPPORTED);
      return GCT_EXIT_UNSUPPORTED;
    }
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static gct_model *
alloc_model (size_t n)
{
  gct_model *t = calloc (1, sizeof *t);
  t->x = malloc (n * sizeof *t->x);
  t->coef = calloc (2 * n + 1, sizeof *t->coef);
  t->n = n;
  t->model.abi = GC_MODEL_ABI;
  t->model.n = n;
  t->model.ctx = t;
  return t;
}

void
gct_free (gct_model *t)
{
  if (!t)
    return;
  if (t->inst)
    gcm_destroy (t->inst);
  else
    free (t->x);
  free (t->coef);
  free (t->priv);
  free (t);
}

/* ------------------------------------------------------------- polynomial */

static int
poly_f32 (void *ctx, const float *x, float *loss)
{
  gct_model *t = ctx;
  const float *a = t->coef, *b = t->coef + t->n;
  float s = 0;
  for (size_t i = 0; i < t->n; i++)
    {
      float xi = x[i];
      s += a[i] * xi * xi * xi * xi + b[i] * xi * xi * xi;
      if (i + 1 < t->n)
        s += xi * x[i + 1];
    }
  *loss = s;
  return 0;
}

static int
poly_grad (void *ctx, const float *x, float *g)
{
  gct_model *t = ctx;
  const float *a = t->coef, *b = t->coef + t->n;
  for (size_t i = 0; i < t->n; i++)
    {
      float xi = x[i];
      g[i] = 4 * a[i] * xi * xi * xi + 3 * b[i] * xi * xi;
      if (i + 1 < t->n)
        g[i] += x[i + 1];
      if (i > 0)
        g[i] += x[i - 1];
    }
  return 0;
}

static int
poly_f64 (void *ctx, const double *x, double *loss)
{
  gct_model *t = ctx;
  const float *a = t->coef, *b = t->coef + t->n;
  double s = 0;
  for (size_t i = 0; i < t->n; i++)
    {
      double xi = x[i];
      s += a[i] * xi * xi * xi * xi + b[i] * xi * xi * xi;
      if (i + 1 < t->n)
        s += xi * x[i + 1];
    }
  *loss = s;
  return 0;
}

static int
poly_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  gct_model *t = ctx;
  const float *a = t->coef, *b = t->coef + t->n;
  mpfr_prec_t p = mpfr_get_prec (loss);
  mpfr_t s, u, v;
  mpfr_inits2 (p, s, u, v, (mpfr_ptr) 0);
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < t->n; i++)
    {
      mpfr_pow_ui (u, x + i, 4, MPFR_RNDN);
      mpfr_mul_d (u, u, a[i], MPFR_RNDN);
      mpfr_pow_ui (v, x + i, 3, MPFR_RNDN);
      mpfr_mul_d (v, v, b[i], MPFR_RNDN);
      mpfr_add (s, s, u, MPFR_RNDN);
      mpfr_add (s, s, v, MPFR_RNDN);
      if (i + 1 < t->n)
        {
          mpfr_mul (u, x + i, x + i + 1, MPFR_RNDN);
          mpfr_add (s, s, u, MPFR_RNDN);
        }
    }
  mpfr_set (loss, s, MPFR_RNDN);
  mpfr_clears (s, u, v, (mpfr_ptr) 0);
  return 0;
}

static void
poly_exact (gct_model *t, double *g)
{
  /* Every product of f32 values and small integers here is exact in
     long double's 64 bits only approximately; use MPFR at 256 bits.  */
  const float *a = t->coef, *b = t->coef + t->n;
  mpfr_t s, u, xi;
  mpfr_inits2 (256, s, u, xi, (mpfr_ptr) 0);
  for (size_t i = 0; i < t->n; i++)
    {
      mpfr_set_flt (xi, t->x[i], MPFR_RNDN);
      mpfr_pow_ui (s, xi, 3, MPFR_RNDN);
      mpfr_mul_d (s, s, 4.0 * a[i], MPFR_RNDN);
      mpfr_sqr (u, xi, MPFR_RNDN);
      mpfr_mul_d (u, u, 3.0 * b[i], MPFR_RNDN);
      mpfr_add (s, s, u, MPFR_RNDN);
      if (i + 1 < t->n)
        mpfr_add_d (s, s, t->x[i + 1], MPFR_RNDN);
      if (i > 0)
        mpfr_add_d (s, s, t->x[i - 1], MPFR_RNDN);
      g[i] = mpfr_get_d (s, MPFR_RNDN);
    }
  mpfr_clears (s, u, xi, (mpfr_ptr) 0);
}

gct_model *
gct_poly (size_t n, uint64_t seed)
{
  gct_model *t = alloc_model (n);
  gcm_rng r;
  gcm_rng_seed (&r, seed, 11);
  for (size_t i = 0; i < n; i++)
    {
      t->x[i] = (float) (2 * gcm_uniform (&r) - 1);
      t->coef[i] = (float) (gcm_uniform (&r) + 0.5);            /* a */
      t->coef[n + i] = (float) (2 * gcm_uniform (&r) - 1);      /* b */
    }
  t->model.name = "poly";
  t->model.loss_f32 = poly_f32;
  t->model.grad_f32 = poly_grad;
  t->model.loss_f64 = poly_f64;
  t->model.loss_mpfr = poly_mpfr;
  /* Forward: x^4 takes 3 products, times a, the running sum of 3n terms.
     Backward: 4 a x^3 takes 4 products, then 3 additions.  */
  t->model.forward_depth = 4 + 3 * n;
  t->model.backward_depth = 8;
  t->exact_grad = poly_exact;
  return t;
}

/* ------------------------------------------------------------ log-sum-exp */

static int
lse_f32 (void *ctx, const float *x, float *loss)
{
  gct_model *t = ctx;
  float m = x[0], s = 0;
  for (size_t i = 1; i < t->n; i++)
    m = x[i] > m ? x[i] : m;
  for (size_t i = 0; i < t->n; i++)
    s += expf (x[i] - m);
  *loss = m + logf (s);
  return 0;
}

static int
lse_grad (void *ctx, const float *x, float *g)
{
  gct_model *t = ctx;
  float m = x[0], s = 0;
  for (size_t i = 1; i < t->n; i++)
    m = x[i] > m ? x[i] : m;
  for (size_t i = 0; i < t->n; i++)
    s += (g[i] = expf (x[i] - m));
  for (size_t i = 0; i < t->n; i++)
    g[i] /= s;
  return 0;
}

static int
lse_f64 (void *ctx, const double *x, double *loss)
{
  gct_model *t = ctx;
  double m = x[0], s = 0;
  for (size_t i = 1; i < t->n; i++)
    m = x[i] > m ? x[i] : m;
  for (size_t i = 0; i < t->n; i++)
    s += exp (x[i] - m);
  *loss = m + log (s);
  return 0;
}

static int
lse_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  gct_model *t = ctx;
  mpfr_t s, u;
  mpfr_inits2 (mpfr_get_prec (loss), s, u, (mpfr_ptr) 0);
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < t->n; i++)
    {
      mpfr_exp (u, x + i, MPFR_RNDN);
      mpfr_add (s, s, u, MPFR_RNDN);
    }
  mpfr_log (loss, s, MPFR_RNDN);
  mpfr_clears (s, u, (mpfr_ptr) 0);
  return 0;
}

static void
lse_exact (gct_model *t, double *g)
{
  mpfr_t s, u;
  mpfr_inits2 (256, s, u, (mpfr_ptr) 0);
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < t->n; i++)
    {
      mpfr_set_flt (u, t->x[i], MPFR_RNDN);
      mpfr_exp (u, u, MPFR_RNDN);
      mpfr_add (s, s, u, MPFR_RNDN);
    }
  for (size_t i = 0; i < t->n; i++)
    {
      mpfr_set_flt (u, t->x[i], MPFR_RNDN);
      mpfr_exp (u, u, MPFR_RNDN);
      mpfr_div (u, u, s, MPFR_RNDN);
      g[i] = mpfr_get_d (u, MPFR_RNDN);
    }
  mpfr_clears (s, u, (mpfr_ptr) 0);
}

gct_model *
gct_lse (size_t n, uint64_t seed)
{
  gct_model *t = alloc_model (n);
  gcm_rng r;
  gcm_rng_seed (&r, seed, 12);
  for (size_t i = 0; i < n; i++)
    t->x[i] = (float) (3 * gcm_normal (&r));
  t->model.name = "log-sum-exp";
  t->model.loss_f32 = lse_f32;
  t->model.grad_f32 = lse_grad;
  t->model.loss_f64 = lse_f64;
  t->model.loss_mpfr = lse_mpfr;
  /* Forward: subtract, exp, n-term sum, log, add.  Backward: subtract,
     exp, the n-term sum, the division.  */
  t->model.forward_depth = n + 4;
  t->model.backward_depth = n + 3;
  t->exact_grad = lse_exact;
  return t;
}

/* -------------------------------------------------------------- |x| + x^2 */

static int
abs_f32 (void *ctx, const float *x, float *loss)
{
  gct_model *t = ctx;
  float s = 0;
  for (size_t i = 0; i < t->n; i++)
    s += fabsf (x[i]) + 0.5f * x[i] * x[i];
  *loss = s;
  return 0;
}

static int
abs_grad (void *ctx, const float *x, float *g)
{
  gct_model *t = ctx;
  for (size_t i = 0; i < t->n; i++)
    g[i] = (x[i] > 0 ? 1.0f : x[i] < 0 ? -1.0f : 0.0f) + x[i];
  return 0;
}

static int
abs_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  gct_model *t = ctx;
  mpfr_t s, u;
  mpfr_inits2 (mpfr_get_prec (loss), s, u, (mpfr_ptr) 0);
  mpfr_set_zero (s, 1);
  for (size_t i = 0; i < t->n; i++)
    {
      mpfr_abs (u, x + i, MPFR_RNDN);
      mpfr_add (s, s, u, MPFR_RNDN);
      mpfr_sqr (u, x + i, MPFR_RNDN);
      mpfr_div_2ui (u, u, 1, MPFR_RNDN);
      mpfr_add (s, s, u, MPFR_RNDN);
    }
  mpfr_set (loss, s, MPFR_RNDN);
  mpfr_clears (s, u, (mpfr_ptr) 0);
  return 0;
}

static void
abs_exact (gct_model *t, double *g)
{
  for (size_t i = 0; i < t->n; i++)
    g[i] = (t->x[i] > 0 ? 1.0 : t->x[i] < 0 ? -1.0 : 0.0) + t->x[i];
}

gct_model *
gct_abs (size_t n, uint64_t seed)
{
  gct_model *t = alloc_model (n);
  gcm_rng r;
  gcm_rng_seed (&r, seed, 13);
  for (size_t i = 0; i < n; i++)
    t->x[i] = (float) (2 * gcm_uniform (&r) - 1);
  t->model.name = "abs";
  t->model.loss_f32 = abs_f32;
  t->model.grad_f32 = abs_grad;
  t->model.loss_mpfr = abs_mpfr;
  t->model.forward_depth = 3 * n;
  t->model.backward_depth = 2;
  t->exact_grad = abs_exact;
  return t;
}

/* -------------------------------------------------------------- tanh-gemm */

typedef struct
{
  long m, k, n;
  const float *dout;
} tg_shape;

static void
tg_exact (gct_model *t, double *g)
{
  tg_shape *s = t->priv;
  size_t m = (size_t) s->m, k = (size_t) s->k, n = (size_t) s->n;
  const float *w = t->x, *x = t->x + m * k;
  mpfr_t z, th, acc, u;
  mpfr_inits2 (256, z, th, acc, u, (mpfr_ptr) 0);
  mpfr_t *gz = malloc (m * n * sizeof *gz);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++)
      {
        mpfr_set_zero (z, 1);
        for (size_t l = 0; l < k; l++)
          {
            mpfr_set_flt (u, w[i * k + l], MPFR_RNDN);
            mpfr_mul_d (u, u, x[l * n + j], MPFR_RNDN);
            mpfr_add (z, z, u, MPFR_RNDN);
          }
        mpfr_tanh (th, z, MPFR_RNDN);
        mpfr_sqr (th, th, MPFR_RNDN);
        mpfr_ui_sub (th, 1, th, MPFR_RNDN);
        mpfr_init2 (gz[i * n + j], 256);
        mpfr_mul_d (gz[i * n + j], th, s->dout[i * n + j], MPFR_RNDN);
      }
  for (size_t i = 0; i < m; i++)
    for (size_t l = 0; l < k; l++)
      {
        mpfr_set_zero (acc, 1);
        for (size_t j = 0; j < n; j++)
          {
            mpfr_mul_d (u, gz[i * n + j], x[l * n + j], MPFR_RNDN);
            mpfr_add (acc, acc, u, MPFR_RNDN);
          }
        g[i * k + l] = mpfr_get_d (acc, MPFR_RNDN);
      }
  for (size_t l = 0; l < k; l++)
    for (size_t j = 0; j < n; j++)
      {
        mpfr_set_zero (acc, 1);
        for (size_t i = 0; i < m; i++)
          {
            mpfr_mul_d (u, gz[i * n + j], w[i * k + l], MPFR_RNDN);
            mpfr_add (acc, acc, u, MPFR_RNDN);
          }
        g[m * k + l * n + j] = mpfr_get_d (acc, MPFR_RNDN);
      }
  for (size_t i = 0; i < m * n; i++)
    mpfr_clear (gz[i]);
  free (gz);
  mpfr_clears (z, th, acc, u, (mpfr_ptr) 0);
}

gct_model *
gct_tanh_gemm (long m, long k, long n, uint64_t seed, int mutant)
{
  const gcm_spec *spec = gcm_find ("tanh-gemm");
  long v[3] = { m, k, n };
  gcm_instance *inst;
  if (gcm_create (spec, v, seed, mutant, &inst) != GC_OK)
    return NULL;
  gct_model *t = calloc (1, sizeof *t);
  tg_shape *s = malloc (sizeof *s);
  ck_assert (t && s);
  *s = (tg_shape) { m, k, n, inst->extra[0].data };
  t->inst = inst;
  t->model = inst->model;
  t->x = inst->x;
  t->n = inst->model.n;
  t->priv = s;
  t->exact_grad = tg_exact;
  return t;
}

/* ---------------------------------------------------------------- wrapper */

/* The injected bug of W on G (N values of type T): elements [lo, hi)
   read SHIFT places on (zero beyond the range) or multiplied by FACTOR,
   then ADD at ADD_AT.  */
#define WRAP_INJECT(T, w, g)                                             \
  do                                                                     \
    {                                                                    \
      if ((w)->shift)                                                    \
        {                                                                \
          T *copy = malloc ((w)->model.n * sizeof *copy);                \
          memcpy (copy, (g), (w)->model.n * sizeof *copy);               \
          for (size_t i = (w)->lo; i < (w)->hi; i++)                     \
            {                                                            \
              long j = (long) i + (w)->shift;                            \
              (g)[i] = j >= (long) (w)->lo && j < (long) (w)->hi         \
                       ? copy[j] : (T) 0;                                \
            }                                                            \
          free (copy);                                                   \
        }                                                                \
      else                                                               \
        for (size_t i = (w)->lo; i < (w)->hi; i++)                       \
          (g)[i] = (T) ((g)[i] * (w)->factor);                           \
      if ((w)->add_at != SIZE_MAX)                                       \
        (g)[(w)->add_at] = (T) ((g)[(w)->add_at] + (w)->add);            \
    }                                                                    \
  while (0)

static int
wrap_grad (void *ctx, const float *x, float *g)
{
  gct_wrap *w = ctx;
  int rc = w->base->model.grad_f32 (w->base->model.ctx, x, g);
  WRAP_INJECT (float, w, g);
  return rc;
}

/* The base's twin with the same injected bug (manual: "The f64 twin"): a
   bug in the backward's algorithm, in both types.  */
static int
wrap_grad64 (void *ctx, const double *x, double *g)
{
  gct_wrap *w = ctx;
  int rc = w->base->model.grad_f64 (w->base->model.ctx, x, g);
  WRAP_INJECT (double, w, g);
  return rc;
}

static int
wrap_loss (void *ctx, const float *x, float *l)
{
  gct_wrap *w = ctx;
  return w->base->model.loss_f32 (w->base->model.ctx, x, l);
}

static int
wrap_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  gct_wrap *w = ctx;
  return w->base->model.loss_mpfr (w->base->model.ctx, x, l);
}

static int
wrap_f64 (void *ctx, const double *x, double *l)
{
  gct_wrap *w = ctx;
  return w->base->model.loss_f64 (w->base->model.ctx, x, l);
}

static int
wrap_mag (void *ctx, const float *x, float *g)
{
  gct_wrap *w = ctx;
  return w->base->model.grad_magnitude_f32 (w->base->model.ctx, x, g);
}

static int
wrap_loss_mag (void *ctx, const float *x, float *l)
{
  gct_wrap *w = ctx;
  return w->base->model.loss_magnitude_f32 (w->base->model.ctx, x, l);
}

static int
wrap_out32 (void *ctx, const float *x, float *o)
{
  gct_wrap *w = ctx;
  return w->base->model.outputs_f32 (w->base->model.ctx, x, o);
}

static int
wrap_outmp (void *ctx, mpfr_srcptr x, mpfr_ptr o)
{
  gct_wrap *w = ctx;
  return w->base->model.outputs_mpfr (w->base->model.ctx, x, o);
}

void
gct_wrap_init (gct_wrap *w, const gct_model *base)
{
  memset (w, 0, sizeof *w);
  w->base = base;
  w->model = base->model;
  w->model.ctx = w;
  w->model.loss_f32 = wrap_loss;
  w->model.grad_f32 = wrap_grad;
  w->model.grad_f64 = base->model.grad_f64 ? wrap_grad64 : NULL;
  w->model.loss_mpfr = base->model.loss_mpfr ? wrap_mpfr : NULL;
  w->model.loss_f64 = base->model.loss_f64 ? wrap_f64 : NULL;
  /* Every callback of the base runs with the base's context.  */
  w->model.grad_magnitude_f32 = base->model.grad_magnitude_f32 ? wrap_mag
                                                               : NULL;
  w->model.loss_magnitude_f32 = base->model.loss_magnitude_f32
                                ? wrap_loss_mag : NULL;
  w->model.outputs_f32 = base->model.outputs_f32 ? wrap_out32 : NULL;
  w->model.outputs_mpfr = base->model.outputs_mpfr ? wrap_outmp : NULL;
  w->model.outputs_magnitude_f32 = NULL;
  w->factor = 1;
  w->add_at = SIZE_MAX;
}

/* ------------------------------------------------------------------- JSON */

static const char *json_value (const char *p, int depth);

static const char *
ws (const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}

static const char *
json_string (const char *p)
{
  if (*p++ != '"')
    return NULL;
  while (*p && *p != '"')
    {
      if ((unsigned char) *p < 0x20)
        return NULL;
      if (*p == '\\')
        {
          p++;
          if (*p == 'u')
            {
              for (int k = 1; k <= 4; k++)
                if (!isxdigit ((unsigned char) p[k]))
                  return NULL;
              p += 4;
            }
          else if (!strchr ("\"\\/bfnrt", *p) || !*p)
            return NULL;
        }
      p++;
    }
  return *p == '"' ? p + 1 : NULL;
}

static const char *
json_number (const char *p)
{
  if (*p == '-')
    p++;
  if (*p == '0')
    p++;
  else if (isdigit ((unsigned char) *p))
    while (isdigit ((unsigned char) *p))
      p++;
  else
    return NULL;
  if (*p == '.')
    {
      p++;
      if (!isdigit ((unsigned char) *p))
        return NULL;
      while (isdigit ((unsigned char) *p))
        p++;
    }
  if (*p == 'e' || *p == 'E')
    {
      p++;
      if (*p == '+' || *p == '-')
        p++;
      if (!isdigit ((unsigned char) *p))
        return NULL;
      while (isdigit ((unsigned char) *p))
        p++;
    }
  return p;
}

static const char *
json_value (const char *p, int depth)
{
  if (depth > 64)
    return NULL;
  p = ws (p);
  if (*p == '{' || *p == '[')
    {
      char close = *p == '{' ? '}' : ']';
      bool obj = *p == '{';
      p = ws (p + 1);
      if (*p == close)
        return p + 1;
      for (;;)
        {
          if (obj)
            {
              p = json_string (ws (p));
              if (!p)
                return NULL;
              p = ws (p);
              if (*p++ != ':')
                return NULL;
            }
          p = json_value (p, depth + 1);
          if (!p)
            return NULL;
          p = ws (p);
          if (*p == ',')
            {
              p++;
              continue;
            }
          return *p == close ? p + 1 : NULL;
        }
    }
  if (*p == '"')
    return json_string (p);
  if (strncmp (p, "true", 4) == 0)
    return p + 4;
  if (strncmp (p, "false", 5) == 0)
    return p + 5;
  if (strncmp (p, "null", 4) == 0)
    return p + 4;
  return json_number (p);
}

bool
gct_json_valid (const char *text)
{
  if (!text)
    return false;
  const char *p = json_value (text, 0);
  return p && *ws (p) == 0;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The mutant's value is a = c (g + e_a), g + e_a a correct f32 value, and
   the reference is r = g + e_r.  To first order a/r - c = c (e_a - e_r)/g,
   and |e_a| <= A/|c| (the mutant's adjoint term A scales with its values),
   |e_r| <= T + E: |a/r - c| <= max(1, |c|) bar/|r| = max(1, |c|) res.  The
   diagnosed factor is the median ratio (index nf/2 of the sorted ratios);
   the nf/2 + 1 failures of resolution at most R, the resolution at index
   nf/2 of the sorted resolutions, have ratios within max(1, |c|) R of c,
   and they cannot all lie on one side of the median: it is within
   max(1, |c|) R of c.  The failures are those of the diagnosed block.  */
double
gct_factor_tolerance (const gc_result *r, double c)
{
  double *res = malloc ((r->n_directions ? r->n_directions : 1) * sizeof *res);
  ck_assert_ptr_nonnull (res);
  size_t nf = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      char name[96];
      if (d->verdict != GC_FAIL)
        continue;
      if (r->diagnosis.block[0] && d->index != SIZE_MAX)
        {
          gc_param_name (r, d->index, name, sizeof name);
          size_t l = strlen (r->diagnosis.block);
          if (strncmp (name, r->diagnosis.block, l) != 0 || name[l] != '[')
            continue;
        }
      res[nf++] = d->resolution;
    }
  ck_assert_uint_gt (nf, 0);
  qsort (res, nf, sizeof *res, cmp_double);
  double tol = fmax (1, fabs (c)) * res[nf / 2];
  free (res);
  return tol;
}

gc_result *
gct_check_ok (const gc_model *m, const float *x, const gc_options *o)
{
  gc_result *r = NULL;
  gc_status st = gc_check (m, x, o, &r);
  ck_assert_msg (st == GC_OK, "gc_check: %s (%s)", gc_strerror (st),
                 r ? r->detail : "");
  return r;
}

int
gct_tanh_mutant (const char *name)
{
  int k = gcm_mutant_index (gcm_find ("tanh-gemm"), name);
  ck_assert_msg (k > 0, "tanh-gemm has no mutant %s", name);
  return k;
}
