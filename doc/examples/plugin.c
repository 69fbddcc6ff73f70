/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* plugin.c -- an example gradcheck plugin: a model the gradcheck command
   checks without being recompiled.

     cc -shared -fPIC -o libexample.so plugin.c $(pkg-config --cflags --libs gradcheck)
     gradcheck run --plugin ./libexample.so --shape 24

   The model: L(w) = sum_i softplus(a_i . w) with fixed rows a_i, a small
   logistic-regression-like loss with f32 forward and backward, an f64 and an
   MPFR forward.  ARGS (the --shape string) is the number of weights.  */

#include <gradcheck.h>
#include <gradcheck-mp.h>

#include <math.h>
#include <stdlib.h>

enum { ROWS = 16, MAXW = 256 };

static size_t nw = 8;
static float a[ROWS][MAXW];
static float w[MAXW];

static int
loss_f32 (void *ctx, const float *x, float *loss)
{
  (void) ctx;
  float s = 0;
  for (int r = 0; r < ROWS; r++)
    {
      float z = 0;
      for (size_t i = 0; i < nw; i++)
        z += a[r][i] * x[i];
      s += log1pf (expf (z));
    }
  *loss = s;
  return 0;
}

static int
grad_f32 (void *ctx, const float *x, float *g)
{
  (void) ctx;
  for (size_t i = 0; i < nw; i++)
    g[i] = 0;
  for (int r = 0; r < ROWS; r++)
    {
      float z = 0;
      for (size_t i = 0; i < nw; i++)
        z += a[r][i] * x[i];
      float sg = 1.0f / (1.0f + expf (-z));
      for (size_t i = 0; i < nw; i++)
        g[i] += sg * a[r][i];
    }
  return 0;
}

static int
loss_f64 (void *ctx, const double *x, double *loss)
{
  (void) ctx;
  double s = 0;
  for (int r = 0; r < ROWS; r++)
    {
      double z = 0;
      for (size_t i = 0; i < nw; i++)
        z += a[r][i] * x[i];
      s += log1p (exp (z));
    }
  *loss = s;
  return 0;
}

/* The reference forward on the kit (gradcheck-mp.h): every intermediate
   at the precision of LOSS.  */
static int
loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  (void) ctx;
  mpfr_ptr z = gc_mp_array_new (ROWS, mpfr_get_prec (loss));
  if (!z)
    return 1;
  for (int r = 0; r < ROWS; r++)
    gc_mp_dot_f32 (z + r, x, a[r], nw);
  gc_mp_softplus (z, z, ROWS);
  gc_mp_sum (loss, z, ROWS);
  gc_mp_array_free (z, ROWS);
  return 0;
}

static gc_model model;
static gc_plugin plugin;

const gc_plugin *
gradcheck_plugin (const char *args)
{
  if (args)
    {
      char *end;
      long v = strtol (args, &end, 10);
      if (*end || v < 1 || v > MAXW)
        return NULL;
      nw = (size_t) v;
    }
  unsigned s = 12345;
  for (int r = 0; r < ROWS; r++)
    for (size_t i = 0; i < nw; i++)
      {
        s = s * 1103515245u + 12345u;
        a[r][i] = (float) ((int) (s >> 16 & 0x7fff) - 16384) / 16384.0f;
      }
  for (size_t i = 0; i < nw; i++)
    w[i] = 0.1f * (float) i - 0.3f;
  model.abi = GC_MODEL_ABI;
  model.name = "example-plugin";
  model.n = nw;
  model.loss_f32 = loss_f32;
  model.grad_f32 = grad_f32;
  model.loss_f64 = loss_f64;
  model.loss_mpfr = loss_mpfr;
  /* depths: the nw-term sum, exp, log1p, the ROWS-term sum (forward); the
     same to reach z, the sigmoid (3), the ROWS-term sum (backward)  */
  model.forward_depth = nw + 2 + ROWS;
  model.backward_depth = nw + 3 + ROWS;
  plugin.abi = GC_PLUGIN_ABI;
  plugin.name = "example";
  plugin.model = &model;
  plugin.x = w;
  plugin.x_count = nw;
  return &plugin;
}
