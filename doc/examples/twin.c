/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* twin.c -- an example plugin whose backward is written once and compiled
   twice: as grad_f32, the backward under test, and as grad_f64, its f64
   twin (manual: "The f64 twin", "Writing a twin").  The file includes
   itself once per element type; the part under "#else" is the backward.

     cc -shared -fPIC -o libtwin.so twin.c $(pkg-config --cflags --libs gradcheck)
     gradcheck run --plugin ./libtwin.so --shape 24          # PASS
     gradcheck run --plugin ./libtwin.so --shape 24,bf16     # PRECISION, exit 6

   The model: L(w) = sum_r softplus(a_r . w) with fixed rows a_r.  ARGS is
   the number of weights, and ",bf16" keeps the f32 backward's partial sums
   in bfloat16 (rounded by bit operations, as much CPU code does): a
   precision loss of the f32 path that the twin, summing in double, does
   not share.  */

#ifndef TWIN_REAL

#include <gradcheck.h>
#include <gradcheck-mp.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 16, MAXW = 256 };

static size_t nw = 8;
static int bf16_sums;
static float a[ROWS][MAXW];
static float w[MAXW];

/* X rounded to bfloat16, ties to even, by integer operations.  */
static float
bf16 (float x)
{
  uint32_t u;
  memcpy (&u, &x, sizeof u);
  if ((u & 0x7f800000u) != 0x7f800000u)
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  memcpy (&x, &u, sizeof x);
  return x;
}

/* The backward, once per type: the lines under #else below.  */
#define TWIN_REAL float
#define TWIN_(name) name##_f32
#define TWIN_EXP expf
#define TWIN_LOWP(x) (bf16_sums ? bf16 (x) : (x))
#include __FILE__
#undef TWIN_REAL
#undef TWIN_
#undef TWIN_EXP
#undef TWIN_LOWP
#define TWIN_REAL double
#define TWIN_(name) name##_f64
#define TWIN_EXP exp
#define TWIN_LOWP(x) (x)   /* a storage choice of the f32 path only */
#include __FILE__

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
      if (v < 1 || v > MAXW || (*end && strcmp (end, ",bf16") != 0))
        return NULL;
      nw = (size_t) v;
      bf16_sums = *end != 0;
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
  model.name = bf16_sums ? "twin-example/bf16" : "twin-example";
  model.n = nw;
  model.loss_f32 = loss_f32;
  model.grad_f32 = grad_f32;
  model.grad_f64 = grad_f64;    /* the twin */
  model.loss_f64 = loss_f64;
  model.loss_mpfr = loss_mpfr;
  model.forward_depth = nw + 2 + ROWS;
  model.backward_depth = nw + 3 + ROWS;
  plugin.abi = GC_PLUGIN_ABI;
  plugin.name = "twin-example";
  plugin.model = &model;
  plugin.x = w;
  plugin.x_count = nw;
  return &plugin;
}

#else /* TWIN_REAL: the backward, written once */

static int
TWIN_ (grad) (void *ctx, const TWIN_REAL *x, TWIN_REAL *g)
{
  (void) ctx;
  for (size_t i = 0; i < nw; i++)
    g[i] = 0;
  for (int r = 0; r < ROWS; r++)
    {
      TWIN_REAL z = 0;
      for (size_t i = 0; i < nw; i++)
        z += a[r][i] * x[i];
      TWIN_REAL sg = 1 / (1 + TWIN_EXP (-z));
      for (size_t i = 0; i < nw; i++)
        g[i] = TWIN_LOWP (g[i] + sg * a[r][i]);
    }
  return 0;
}

#endif
