/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* liar_plugin.c -- a plugin that lies, as its ARGS says: "abi" (another
   plugin ABI), "model-abi", "n" (n larger than its point), "null" (NULL
   callbacks), "none" (no description), "nullx"; anything else: honest.
   The command must refuse each lie with exit 2, never crash.
   Hostile ones (tests/hostile.sh): "nmax" (n = x_count = SIZE_MAX),
   "xcount" (n = x_count = 2^28 over a point of 4 floats); callbacks that
   misbehave: "overrun" / "overrun2" (the backward writes 16 / 2 floats
   past n), "nan" (the f64 forward gives NaN), "exit0" (the backward calls
   exit (0)), "hang" (the f64 forward never returns past the centre),
   "slow" (each f64 forward takes 50 ms); descriptions only --dump reads:
   "nullname" (a block without a name), "collide" (blocks a.b and a_b),
   "gradq" (blocks q and grad_q), "ndim" (an output block of 1000
   dimensions), "outcount" (an output block of 10^6 elements over 4
   outputs), "outputs" (honest outputs), "sigint" (the outputs, which
   only --dump computes, raise SIGINT), "nanx" (a NaN in the point),
   "mpfrbig" (an MPFR forward whose numbers cannot be allocated: GMP's
   allocation failure), "unwritten" (the backward never writes g[2]).
   "traps": honest, but its set-up function and its backward enable the
   FP traps FE_INVALID, FE_DIVBYZERO, FE_OVERFLOW and leave them on.
   The environment variable LIAR_CONSTRUCTOR makes the plugin's ELF
   constructor misbehave while the plugin loads: "exit0" (exit (0)),
   "traps" (the traps above).
   "die:SIG" (ILL, SEGV, ABRT, BUS) is honest but its backward raises SIG,
   and "die:SIG@CORE" only when OPENBLAS_CORETYPE is CORE: a model that
   dies under one kernel, for gradcheck sweep's rule (SIGILL: unsupported;
   any other death: a crash, and the sweep fails; tests/outcomes.sh).  */

#define _GNU_SOURCE   /* feenableexcept */
#include <gradcheck.h>

#include <fenv.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *lie = "";
static int die_signal;   /* raised by the backward; 0: none */

static float x[4];

static int
loss (void *ctx, const float *p, float *l)
{
  (void) ctx;
  *l = p[0] * p[0] + p[1] * p[2] + p[3];
  return 0;
}

static int
grad (void *ctx, const float *p, float *g)
{
  (void) ctx;
  if (die_signal)
    raise (die_signal);
  g[0] = 2 * p[0];
  g[1] = p[2];
  if (strcmp (lie, "unwritten") != 0)   /* "unwritten": g[2] left */
    g[2] = p[1];
  g[3] = 1;
  int past = !strcmp (lie, "overrun") ? 16 : !strcmp (lie, "overrun2") ? 2
             : 0;
  for (int k = 0; k < past; k++)
    g[4 + k] = 0;
  if (!strcmp (lie, "exit0"))
    exit (0);
  if (!strcmp (lie, "traps"))
    feenableexcept (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
  return 0;
}

__attribute__ ((constructor)) static void
misbehave_while_loading (void)
{
  const char *what = getenv ("LIAR_CONSTRUCTOR");
  if (what && !strcmp (what, "exit0"))
    exit (0);
  if (what && !strcmp (what, "traps"))
    feenableexcept (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
}

static int calls64;

static int
loss64 (void *ctx, const double *p, double *l)
{
  (void) ctx;
  *l = p[0] * p[0] + p[1] * p[2] + p[3];
  if (!strcmp (lie, "nan"))
    *l = strtod ("nan", NULL);
  if (!strcmp (lie, "hang") && ++calls64 > 1)
    for (;;)
      pause ();
  if (!strcmp (lie, "slow"))
    {
      struct timespec ts = { 0, 50000000 };
      nanosleep (&ts, NULL);
    }
  return 0;
}

static int
outputs (void *ctx, const float *p, float *o)
{
  (void) ctx;
  for (int k = 0; k < 4; k++)
    o[k] = p[k] * p[k];
  /* only --dump calls the outputs during gradcheck run  */
  if (!strcmp (lie, "sigint"))
    raise (SIGINT);
  return 0;
}

static int
lossmp (void *ctx, mpfr_srcptr p, mpfr_ptr l)
{
  (void) ctx;
  mpfr_t big;
  /* 2^40 bits: 128 GiB of limbs, which GMP cannot get  */
  mpfr_init2 (big, (mpfr_prec_t) 1 << 40);
  mpfr_set (big, p, MPFR_RNDN);
  mpfr_set (l, big, MPFR_RNDN);
  mpfr_clear (big);
  return 0;
}

static gc_block blocks[2];
static gc_block out_block;

static gc_model model;
static gc_plugin plugin;

const gc_plugin *
gradcheck_plugin (const char *args)
{
  lie = args ? args : "";
  static const float x0[4] = { 0.5f, -0.25f, 1.0f, 2.0f };
  memcpy (x, x0, sizeof x);
  if (!strcmp (lie, "nanx"))
    x[1] = strtof ("nan", NULL);
  model = (gc_model) { .abi = GC_MODEL_ABI, .name = "liar", .n = 4,
                       .loss_f32 = loss, .grad_f32 = grad,
                       .loss_f64 = loss64, .forward_depth = 3,
                       .backward_depth = 1 };
  plugin = (gc_plugin) { GC_PLUGIN_ABI, "liar", &model, x, 4 };
  if (!strcmp (lie, "none"))
    return NULL;
  if (!strcmp (lie, "abi"))
    plugin.abi = GC_PLUGIN_ABI + 7;
  if (!strcmp (lie, "model-abi"))
    model.abi = GC_MODEL_ABI + 7;
  if (!strcmp (lie, "n"))
    model.n = 1000000;
  if (!strcmp (lie, "null"))
    model.grad_f32 = NULL;
  if (!strcmp (lie, "nullx"))
    plugin.x = NULL;
  if (!strcmp (lie, "mpfrbig"))
    model.loss_mpfr = lossmp;
  die_signal = 0;
  if (!strncmp (lie, "die:", 4))
    {
      static const struct { const char *name; int sig; } t[] = {
        { "ILL", SIGILL }, { "SEGV", SIGSEGV }, { "ABRT", SIGABRT },
        { "BUS", SIGBUS } };
      const char *at = strchr (lie, '@');
      const char *core = getenv ("OPENBLAS_CORETYPE");
      size_t len = at ? (size_t) (at - lie - 4) : strlen (lie + 4);
      for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
        if (strlen (t[k].name) == len && !strncmp (lie + 4, t[k].name, len)
            && (!at || (core && !strcmp (core, at + 1))))
          die_signal = t[k].sig;
    }
  if (!strcmp (lie, "traps"))
    feenableexcept (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
  if (!strcmp (lie, "nmax"))
    model.n = plugin.x_count = SIZE_MAX;
  if (!strcmp (lie, "xcount"))
    model.n = plugin.x_count = (size_t) 1 << 28;
  static const char *const pair[][2] = {
    { "nullname", NULL }, { "collide", "a.b" }, { "gradq", "q" } };
  static const char *const second[] = { "b", "a_b", "grad_q" };
  for (int k = 0; k < 3; k++)
    if (!strcmp (lie, pair[k][0]))
      {
        blocks[0] = (gc_block) { pair[k][1], 0, 2, 1, { 2 } };
        blocks[1] = (gc_block) { second[k], 2, 2, 1, { 2 } };
        model.n_blocks = 2;
        model.blocks = blocks;
      }
  if (!strcmp (lie, "ndim") || !strcmp (lie, "outcount")
      || !strcmp (lie, "outputs") || !strcmp (lie, "sigint"))
    {
      out_block = (gc_block) { "o", 0, 4, 1, { 4 } };
      if (!strcmp (lie, "ndim"))
        out_block.ndim = 1000;
      if (!strcmp (lie, "outcount"))
        out_block.count = out_block.shape[0] = 1000000;
      model.n_outputs = 4;
      model.outputs_f32 = outputs;
      model.n_output_blocks = 1;
      model.output_blocks = &out_block;
    }
  return &plugin;
}
