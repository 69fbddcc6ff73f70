/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* fuzz_fpenv.c -- libFuzzer target: the floating-point environment a
   model may leave, and merge identities (issue 26).  The input's bytes
   choose the caller's environment (traps enabled, rounding mode, flags
   raised, flush-to-zero and denormals-are-zero) and, per callback, what a
   small model's callbacks leave behind after they computed (traps, a
   rounding mode, flags, FTZ/DAZ), and two model identity strings.
   The check runs twice as shards 0 and 1 of 2, each with its own
   identity, and once with honest callbacks under the same caller
   environment.  A finding, beyond a SIGFPE or the sanitizers: a caller
   environment (traps, rounding, flags, MXCSR) not given back whole by
   gc_check, gc_report, gc_result_parse_json or gc_result_merge; a verdict
   that the callbacks' leftovers changed; shards whose JSON does not read
   back; shards that merge although their identity strings differ, or
   that do not merge although they are equal.  */

#define _GNU_SOURCE   /* feenableexcept */
#include "gradcheck.h"

#include <fenv.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined (__SSE2__)
# include <xmmintrin.h>
#endif

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

static const int excepts[] = { FE_INVALID, FE_DIVBYZERO, FE_OVERFLOW,
                               FE_UNDERFLOW, FE_INEXACT };
static const int modes[] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD,
                             FE_TOWARDZERO };

static int
except_set (unsigned bits)
{
  int e = 0;
  for (int k = 0; k < 5; k++)
    if (bits & (1u << k))
      e |= excepts[k];
  return e;
}

/* What one callback leaves behind after it computed.  */
typedef struct leftover
{
  int traps, mode, flags;
  unsigned csr;   /* bits of MXCSR's FTZ (0x8000) and DAZ (0x40) */
} leftover;

#define N 3
typedef struct model_ctx
{
  leftover left[8];   /* per call, cyclically */
  unsigned calls;
  bool honest;
} model_ctx;

static const double coef[N] = { 1, -2, 0.5 };

static void
leave (model_ctx *c)
{
  if (c->honest)
    return;
  const leftover *l = &c->left[c->calls++ % 8];
#if defined (__SSE2__)
  _mm_setcsr ((_mm_getcsr () & ~0x8040u) | l->csr);
#endif
  fesetround (l->mode);
  feraiseexcept (l->flags & ~l->traps);   /* a trapped flag would fire */
  feenableexcept (l->traps);
}

static int
loss (void *ctx, const float *x, float *l)
{
  float v = 0;
  for (int i = 0; i < N; i++)
    v += (float) coef[i] * x[i] * x[i];
  *l = v;
  leave (ctx);
  return 0;
}

static int
loss64 (void *ctx, const double *x, double *l)
{
  double v = 0;
  for (int i = 0; i < N; i++)
    v += coef[i] * x[i] * x[i];
  *l = v;
  leave (ctx);
  return 0;
}

static int
grad (void *ctx, const float *x, float *g)
{
  for (int i = 0; i < N; i++)
    g[i] = 2 * (float) coef[i] * x[i];
  leave (ctx);
  return 0;
}

static int
lossmp (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  mpfr_t t;
  mpfr_init2 (t, mpfr_get_prec (l) + 8);
  mpfr_set_zero (l, 1);
  for (int i = 0; i < N; i++)
    {
      mpfr_sqr (t, x + i, MPFR_RNDN);
      mpfr_mul_d (t, t, coef[i], MPFR_RNDN);
      mpfr_add (l, l, t, MPFR_RNDN);
    }
  mpfr_clear (t);
  leave (ctx);
  return 0;
}

/* The caller's environment as the target compares it.  */
typedef struct seen
{
  int traps, mode, flags;
  unsigned csr;
} seen;

static seen
look (void)
{
  seen s = { fegetexcept (), fegetround (), fetestexcept (FE_ALL_EXCEPT), 0 };
#if defined (__SSE2__)
  s.csr = _mm_getcsr ();
#endif
  return s;
}

static bool
same (seen a, seen b)
{
  return a.traps == b.traps && a.mode == b.mode && a.flags == b.flags
         && a.csr == b.csr;
}

/* gc_check as shard I of 2 under identity ID; its JSON read back.  */
static gc_result *
shard (const gc_model *m, const float *x, gc_options *o, size_t i,
       const char *id, seen caller)
{
  o->shard_index = i;
  o->shard_count = 2;
  o->model_identity = id;
  gc_result *r = NULL;
  gc_status st = gc_check (m, x, o, &r);
  if (!same (look (), caller))
    abort ();     /* gc_check did not give the environment back */
  if (st != GC_OK)
    {
      gc_result_free (r);
      return NULL;
    }
  char *json = gc_report (r, GC_FMT_JSON);
  gc_result_free (r);
  if (!json)
    return NULL;
  gc_result *back = NULL;
  if (gc_result_parse_json (json, strlen (json), &back) != GC_OK)
    abort ();     /* the writer emitted what the reader refuses */
  free (json);
  if (!same (look (), caller))
    abort ();
  return back;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  bytes b = { data, size };
  model_ctx ctx;
  memset (&ctx, 0, sizeof ctx);
  for (int k = 0; k < 8; k++)
    {
      ctx.left[k].traps = except_set (take (&b, 32));
      ctx.left[k].mode = modes[take (&b, 4)];
      ctx.left[k].flags = except_set (take (&b, 32));
      unsigned c = take (&b, 4);
      ctx.left[k].csr = (c & 1 ? 0x8000u : 0) | (c & 2 ? 0x40u : 0);
    }
  float x[N];
  static const float points[] = { 0.75f, -1.5f, 0.25f, 0, 1e-40f, 3e38f,
                                  1e-20f, 2 };
  for (int i = 0; i < N; i++)
    x[i] = points[take (&b, 8)];
  gc_model m = { .abi = GC_MODEL_ABI, .name = "fpenv", .n = N,
                 .loss_f32 = loss, .grad_f32 = grad, .loss_f64 = loss64,
                 .loss_mpfr = lossmp, .ctx = &ctx, .forward_depth = 2 * N,
                 .backward_depth = 2 };
  gc_options o;
  gc_options_init (&o);
  o.reference = (gc_reference) take (&b, 4);
  /* two identity strings: equal, or of the input's bytes */
  char id[2][16];
  for (int s = 0; s < 2; s++)
    {
      size_t len = take (&b, sizeof id[s]);
      for (size_t k = 0; k < len; k++)
        id[s][k] = (char) (1 + take (&b, 255));
      id[s][len] = 0;
    }
  if (take (&b, 2))
    memcpy (id[1], id[0], sizeof id[0]);
  bool null_id = take (&b, 4) == 0 && !id[0][0] && !id[1][0];

  /* the caller's environment, last: the fuzzer's own code runs without
     traps */
  int traps = except_set (take (&b, 32));
  int mode = modes[take (&b, 4)];
  int flags = except_set (take (&b, 32)) & ~traps;
  unsigned csr = take (&b, 4);
  feclearexcept (FE_ALL_EXCEPT);
  fesetround (mode);
#if defined (__SSE2__)
  _mm_setcsr ((_mm_getcsr () & ~0x8040u) | (csr & 1 ? 0x8000u : 0)
              | (csr & 2 ? 0x40u : 0));
#endif
  feraiseexcept (flags);
  feenableexcept (traps);
  seen caller = look ();

  /* the check with honest callbacks, under the same environment */
  ctx.honest = true;
  o.model_identity = NULL;
  gc_result *plain = NULL;
  gc_status pst = gc_check (&m, x, &o, &plain);
  if (!same (look (), caller))
    abort ();
  ctx.honest = false;
  ctx.calls = 0;
  gc_result *s0 = shard (&m, x, &o, 0, null_id ? NULL : id[0], caller);
  gc_result *s1 = shard (&m, x, &o, 1, null_id ? NULL : id[1], caller);
  gc_result *merged = NULL;
  gc_status mst = GC_EINVAL;
  if (s0 && s1)
    {
      gc_result *both[2] = { s0, s1 };
      mst = gc_result_merge (both, 2, &merged);
      if (!same (look (), caller))
        abort ();
      bool equal = strcmp (id[0], id[1]) == 0;
      if (equal != (mst == GC_OK))
        abort ();   /* the identity did not tell the models apart, or
                       told one model from itself */
      /* what the callbacks left behind changed no verdict */
      if (mst == GC_OK && pst == GC_OK && merged->verdict != plain->verdict)
        abort ();
    }
  char *text = plain ? gc_report (plain, GC_FMT_TEXT) : NULL;
  if (!same (look (), caller))
    abort ();
  free (text);
  fedisableexcept (FE_ALL_EXCEPT);
  fesetenv (FE_DFL_ENV);
  gc_result_free (merged);
  gc_result_free (s1);
  gc_result_free (s0);
  gc_result_free (plain);
  return 0;
}
