/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* liar_plugin.c -- a plugin that lies, as its ARGS says: "abi" (another
   plugin ABI), "model-abi", "n" (n larger than its point), "null" (NULL
   callbacks), "none" (no description), "nullx"; anything else: honest.
   The command must refuse each lie with exit 2, never crash.
   "die:SIG" (ILL, SEGV, ABRT, BUS) is honest but its backward raises SIG,
   and "die:SIG@CORE" only when OPENBLAS_CORETYPE is CORE: a model that
   dies under one kernel, for gradcheck sweep's rule (SIGILL: unsupported;
   any other death: a crash, and the sweep fails).  */

#include <gradcheck.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static int die_signal;   /* raised by the backward; 0: none */

static float x[4] = { 0.5f, -0.25f, 1.0f, 2.0f };

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
  g[2] = p[1];
  g[3] = 1;
  return 0;
}

static int
loss64 (void *ctx, const double *p, double *l)
{
  (void) ctx;
  *l = p[0] * p[0] + p[1] * p[2] + p[3];
  return 0;
}

static gc_model model;
static gc_plugin plugin;

const gc_plugin *
gradcheck_plugin (const char *args)
{
  const char *lie = args ? args : "";
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
  return &plugin;
}
