/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* fuzz_model.c -- libFuzzer target: model descriptions, as a plugin hands
   them over.  The input's bytes choose every field of a gc_plugin and its
   gc_model (ABI versions, n, missing callbacks, blocks, constants, output
   tensors) and of the options; callbacks that a real plugin would get
   wrong are stood in for by honest ones over a buffer of the declared
   size.  The command's plugin check runs first, as in gradcheck run
   --plugin; what it lets through goes to gc_check and gc_forward_check.
   Nothing may crash, leak, or read out of bounds.  */

#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

typedef struct bytes
{
  const uint8_t *p;
  size_t n;
} bytes;

static unsigned
take (bytes *b, unsigned limit)
{
  if (!b->n || !limit)
    return 0;
  unsigned v = *b->p++;
  b->n--;
  return v % limit;
}

static size_t model_n;

static int
loss (void *ctx, const float *x, float *l)
{
  (void) ctx;
  float s = 0;
  for (size_t i = 0; i < model_n; i++)
    s += x[i] * x[i] * (float) (i % 3 + 1) + sinf (x[i]);
  *l = s;
  return 0;
}

static int
grad (void *ctx, const float *x, float *g)
{
  (void) ctx;
  for (size_t i = 0; i < model_n; i++)
    g[i] = 2 * x[i] * (float) (i % 3 + 1) + cosf (x[i]);
  return 0;
}

static int
loss64 (void *ctx, const double *x, double *l)
{
  (void) ctx;
  double s = 0;
  for (size_t i = 0; i < model_n; i++)
    s += x[i] * x[i] * (double) (i % 3 + 1) + sin (x[i]);
  *l = s;
  return 0;
}

static int
lossmp (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  (void) ctx;
  mpfr_t t;
  mpfr_init2 (t, mpfr_get_prec (l));
  mpfr_set_zero (l, 1);
  for (size_t i = 0; i < model_n; i++)
    {
      mpfr_sqr (t, x + i, MPFR_RNDN);
      mpfr_mul_ui (t, t, (unsigned long) (i % 3 + 1), MPFR_RNDN);
      mpfr_add (l, l, t, MPFR_RNDN);
      mpfr_sin (t, x + i, MPFR_RNDN);
      mpfr_add (l, l, t, MPFR_RNDN);
    }
  mpfr_clear (t);
  return 0;
}

static int
out32 (void *ctx, const float *x, float *o)
{
  (void) ctx;
  for (size_t i = 0; i < model_n; i++)
    o[i] = x[i] * x[i];
  return 0;
}

static int
outmp (void *ctx, mpfr_srcptr x, mpfr_ptr o)
{
  (void) ctx;
  for (size_t i = 0; i < model_n; i++)
    mpfr_sqr (o + i, x + i, MPFR_RNDN);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  bytes b = { data, size };
  enum { XMAX = 24 };
  static float x[XMAX];
  gc_model m;
  memset (&m, 0, sizeof m);
  gc_plugin pl = { GC_PLUGIN_ABI, "fuzz", &m, x, 0 };
  unsigned flags = take (&b, 256);
  pl.abi = flags & 1 ? GC_PLUGIN_ABI + 1 : GC_PLUGIN_ABI;
  m.abi = flags & 2 ? GC_MODEL_ABI + 1 : GC_MODEL_ABI;
  model_n = take (&b, XMAX + 1);
  m.n = flags & 4 ? model_n + take (&b, 100) : model_n;   /* a lying n */
  pl.x_count = model_n;
  for (size_t i = 0; i < model_n; i++)
    x[i] = (float) ((int) take (&b, 256) - 128) / (float) (1 + take (&b, 64));
  if (flags & 8)
    x[take (&b, XMAX)] = flags & 16 ? NAN : INFINITY;
  m.loss_f32 = flags & 32 ? NULL : loss;
  m.grad_f32 = flags & 64 ? NULL : grad;
  m.loss_f64 = take (&b, 2) ? loss64 : NULL;
  m.loss_mpfr = take (&b, 4) ? lossmp : NULL;
  m.forward_depth = take (&b, 50);
  m.backward_depth = take (&b, 50);
  /* blocks, possibly inconsistent */
  gc_block blocks[4];
  m.n_blocks = take (&b, 5);
  size_t off = 0;
  for (size_t k = 0; k < m.n_blocks; k++)
    {
      blocks[k].name = "b";
      blocks[k].offset = take (&b, 8) ? off : take (&b, 30);
      blocks[k].count = take (&b, 12);
      blocks[k].ndim = take (&b, GC_MAX_DIMS + 2);
      for (size_t a = 0; a < GC_MAX_DIMS; a++)
        blocks[k].shape[a] = take (&b, 5);
      if (take (&b, 2) && blocks[k].ndim)
        {
          /* a consistent shape */
          blocks[k].ndim = 1;
          blocks[k].shape[0] = blocks[k].count;
        }
      off = blocks[k].offset + blocks[k].count;
    }
  m.blocks = take (&b, 8) ? blocks : NULL;
  gc_constant consts[2] = { { "K", take (&b, 16) }, { "V", 0.5 } };
  m.n_constants = take (&b, 3);
  m.constants = take (&b, 8) ? consts : NULL;
  if (take (&b, 2))
    {
      m.n_outputs = model_n;
      m.outputs_f32 = out32;
      m.outputs_mpfr = outmp;
    }
  if (cli_plugin_refusal (&pl) || model_n == 0)
    return 0;

  gc_options o;
  gc_options_init (&o);
  o.reference = (gc_reference) take (&b, 4);
  unsigned pr = take (&b, 4);
  o.precision = pr == 0 ? 0 : pr == 1 ? 10 : pr == 2 ? 30 : 200;
  o.step = take (&b, 3) ? 0 : ldexp (1.0, -(int) take (&b, 140));
  o.directions = (gc_direction_kind) take (&b, 4);
  o.n_random = take (&b, 4);
  size_t idx[3] = { take (&b, 30), take (&b, 30), take (&b, 30) };
  o.indices = take (&b, 4) ? idx : NULL;
  o.n_indices = take (&b, 4);
  o.false_alarm = take (&b, 8) ? 1e-6 : (double) take (&b, 3) - 0.5;
  o.shard_count = take (&b, 4);
  o.shard_index = take (&b, 4);
  o.threads = 1 + take (&b, 2);
  gc_result *r = NULL;
  gc_check (&m, x, &o, &r);
  if (r)
    {
      free (gc_report (r, GC_FMT_TEXT));
      free (gc_report (r, GC_FMT_JSON));
    }
  gc_result_free (r);
  r = NULL;
  gc_forward_check (&m, x, &o, &r);
  gc_result_free (r);
  return 0;
}
