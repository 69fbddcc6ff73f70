/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* hostile_plugin.c -- a plugin whose model, block and constant names try
   to forge the structure of the reports, as its ARGS says: "tap" (a new
   line and a TAP test point, a "# TODO" directive), "esc" (terminal escape
   sequences), "bytes" (a C1 control, bytes that are not UTF-8), "xml" (markup for
   the SVG of gradcheck steps, a path for its default file name).  ARGS
   ending in "-bug" gives the backward a bug (block "a" three times too
   large), so that failing test points and a diagnosis carry the names.
   ARGS "traps" enables the FP traps FE_INVALID, FE_DIVBYZERO and
   FE_OVERFLOW and leaves them on (for gradcheck steps: an MPFR model).  */

#define _GNU_SOURCE   /* feenableexcept */
#include <gradcheck.h>

#include <fenv.h>
#include <string.h>

static float x[4] = { 0.5f, -0.25f, 1.0f, 2.0f };
static int bug;

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
  g[0] = 2 * p[0] * (bug ? 3 : 1);
  g[1] = p[2] * (bug ? 3 : 1);
  g[2] = p[1];
  g[3] = 1;
  return 0;
}

static int
loss_mpfr (void *ctx, mpfr_srcptr p, mpfr_ptr l)
{
  (void) ctx;
  mpfr_t t;
  mpfr_init2 (t, mpfr_get_prec (l));
  mpfr_sqr (l, p + 0, MPFR_RNDN);
  mpfr_mul (t, p + 1, p + 2, MPFR_RNDN);
  mpfr_add (l, l, t, MPFR_RNDN);
  mpfr_add (l, l, p + 3, MPFR_RNDN);
  mpfr_clear (t);
  return 0;
}

static gc_block blocks[2];
static gc_constant constants[1];
static gc_model model;
static gc_plugin plugin;

const gc_plugin *
gradcheck_plugin (const char *args)
{
  const char *mode = args ? args : "";
  if (!strcmp (mode, "traps"))
    feenableexcept (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
  bug = strlen (mode) > 4 && !strcmp (mode + strlen (mode) - 4, "-bug");
  const char *name = "hostile", *block = "a", *constant = "K";
  if (!strncmp (mode, "tap", 3))
    {
      name = "hostile\nok 98 - forged model";
      block = "a\nok 99 - forged block # TODO";
      constant = "K\nok 97 - forged constant";
    }
  else if (!strncmp (mode, "esc", 3))
    {
      name = "hostile\033[2J\033]0;pwned\007";
      block = "a\033[31m";
      constant = "K\033[0m";
    }
  else if (!strncmp (mode, "bytes", 5))
    {
      name = "hostile\302\233[2J";
      block = "a\377\300\200";
    }
  else if (!strncmp (mode, "xml", 3))
    {
      name = "R&D <model>/../x";
      block = "a<b>&\"'";
      constant = "K</text>";
    }
  blocks[0] = (gc_block) { block, 0, 2, 1, { 2 } };
  blocks[1] = (gc_block) { "b", 2, 2, 1, { 2 } };
  constants[0] = (gc_constant) { constant, 3 };
  model = (gc_model) { .abi = GC_MODEL_ABI, .name = name, .n = 4,
                       .loss_f32 = loss, .grad_f32 = grad,
                       .loss_mpfr = loss_mpfr, .forward_depth = 3,
                       .backward_depth = 1, .n_blocks = 2, .blocks = blocks,
                       .n_constants = 1, .constants = constants };
  plugin = (gc_plugin) { GC_PLUGIN_ABI, "hostile", &model, x, 4 };
  return &plugin;
}
