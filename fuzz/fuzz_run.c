/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* fuzz_run.c -- libFuzzer target: the option set of gradcheck run at its
   extremes against a small model (tanh-gemm, at most 3x3x3, or the
   forward oracle of kda at its smallest): reference, precision (24 bits to
   MPFR_PREC_MAX), step (subnormal to DBL_MAX, NaN, negative), directions
   (all, random from 1 to SIZE_MAX, lists out of range), shards (0 of 0 to
   SIZE_MAX of SIZE_MAX), threads, false-alarm probability, time limit and
   seed, each either set directly or parsed from a fuzzed string by the
   command's own parsers.  Every report of the result is rendered.  Beyond
   the sanitizers, a finding is a result that contradicts itself: a status
   other than the one returned, an error without GC_ERROR, directions
   counted but missing, a finished check with a direction left unjudged,
   more failures than directions, a report that cannot be rendered.  */

#include "cli.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The library's allocation failures are part of what is fuzzed: under
   AddressSanitizer they must return NULL as malloc does.  */
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "allocator_may_return_null=1";
}

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

/* A short string of the input's bytes, for the command's parsers.  */
static void
take_string (bytes *b, char *s, size_t size)
{
  size_t len = take (b, (unsigned) size);
  size_t k = 0;
  for (; k < len && b->n; k++)
    s[k] = (char) take (b, 256);
  s[k] = 0;
}

static const mpfr_prec_t precs[] = {
  0, 1, 23, 24, 25, 26, 53, 64, 128, 200, 1000, 20000,
  /* beyond the machine's memory: refused before any number is made  */
  (mpfr_prec_t) 1 << 40, (mpfr_prec_t) 1 << 50, MPFR_PREC_MAX / 4,
  MPFR_PREC_MAX / 4 + 1, MPFR_PREC_MAX };

static const double steps[] = {
  0, 0x1p-1074, 0x1p-1022, 1e-300, 1e-45, 1e-30, 1e-8, 1e-3, 0.5, 1, 3,
  1e10, 1e30, 3.4e38, 1e39, 1e300, DBL_MAX / 4, DBL_MAX / 2, DBL_MAX,
  -1, -0.0 };

static const size_t counts[] = {
  0, 1, 2, 3, 5, 17, 64, (size_t) 1 << 32, (size_t) 1 << 40,
  SIZE_MAX / 2, SIZE_MAX - 1, SIZE_MAX };

static void
invariants (gc_status st, const gc_result *r)
{
  if (!r)
    {
      if (st != GC_ENOMEM && st != GC_EINVAL)
        abort ();
      return;
    }
  if (r->status != st)
    abort ();
  if (st != GC_OK && r->verdict != GC_ERROR)
    abort ();
  if (r->n_directions && !r->dirs)
    abort ();
  if (r->n_failed + r->n_nonsmooth > r->n_directions)
    abort ();
  if (st == GC_OK)
    for (size_t k = 0; k < r->n_directions; k++)
      if (r->dirs[k].verdict == GC_ERROR)
        abort ();
  if (st == GC_OK && r->n_directions
      && (r->worst == SIZE_MAX || r->worst >= r->n_directions))
    abort ();
  for (int f = GC_FMT_TEXT; f <= GC_FMT_TAP; f++)
    {
      char *text = gc_report (r, (gc_format) f);
      if (!text)
        abort ();
      free (text);
    }
  for (size_t k = 0; k < r->n_directions && k < 2; k++)
    free (gc_derivation (r, k, GC_FMT_MARKDOWN));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  bytes b = { data, size };
  static gcm_instance *models[2][27];
  bool forward = take (&b, 8) == 0;
  unsigned shape = take (&b, 27);
  unsigned which = forward ? 1 : 0;
  gcm_instance **mi = &models[which][forward ? 0 : shape];
  if (!*mi)
    {
      /* built once per shape and kept: the models are deterministic  */
      const gcm_spec *spec = gcm_find (forward ? "kda" : "tanh-gemm");
      long v[GCM_MAX_KEYS];
      char err[200];
      char sh[64];
      if (forward)
        snprintf (sh, sizeof sh, "T=2,H=1,HV=1,K=2,V=2,BT=2");
      else
        snprintf (sh, sizeof sh, "M=%u,K=%u,N=%u", 1 + shape % 3,
                  1 + shape / 3 % 3, 1 + shape / 9);
      if (!spec || gcm_parse_shape (spec, sh, v, err, sizeof err) != GC_OK
          || gcm_create (spec, v, 1, 0, mi) != GC_OK)
        abort ();
    }
  const gc_model *m = &(*mi)->model;
  const float *x = (*mi)->x;

  gc_options o;
  gc_options_init (&o);
  size_t *indices = NULL;
  char s[48];
  o.reference = (gc_reference) take (&b, 4);
  if (take (&b, 4) == 0)
    {
      uint64_t u;
      take_string (&b, s, sizeof s);
      /* the command's --prec: 25 to 10^6 bits  */
      if (cli_parse_u64 (s, &u) && u >= 25 && u <= 1000000)
        o.precision = (mpfr_prec_t) u;
    }
  else
    o.precision = precs[take (&b, sizeof precs / sizeof precs[0])];
  if (take (&b, 4) == 0)
    {
      take_string (&b, s, sizeof s);
      cli_parse_open (s, 0, INFINITY, &o.step);
    }
  else
    o.step = steps[take (&b, sizeof steps / sizeof steps[0])];
  if (take (&b, 8) == 0)
    o.step = take (&b, 2) ? NAN : INFINITY;
  size_t list[4];
  switch (take (&b, 4))
    {
    case 0:
      o.directions = GC_DIR_ALL;
      break;
    case 1:
      o.directions = GC_DIR_RANDOM;
      o.n_random = counts[take (&b, sizeof counts / sizeof counts[0])];
      break;
    case 2:
      o.directions = GC_DIR_LIST;
      o.n_indices = take (&b, 5);
      for (size_t k = 0; k < 4; k++)
        list[k] = take (&b, 8) ? take (&b, (unsigned) m->n + 2)
                               : counts[take (&b, 12)];
      o.indices = take (&b, 8) ? list : NULL;
      break;
    default:
      take_string (&b, s, sizeof s);
      cli_parse_directions (s, &o, &indices);
      /* the command caps random:K at 10^8; so does this target's budget */
      if (o.directions == GC_DIR_RANDOM && o.n_random > 64
          && o.n_random < ((size_t) 1 << 32))
        o.n_random = 64;
      if (o.directions == GC_DIR_LIST && o.n_indices > 64)
        o.n_indices = 64;
      break;
    }
  if (take (&b, 4) == 0)
    {
      take_string (&b, s, sizeof s);
      cli_parse_shard (s, &o);
    }
  else
    {
      o.shard_count = counts[take (&b, sizeof counts / sizeof counts[0])];
      o.shard_index = take (&b, 2) ? take (&b, 4)
                      : counts[take (&b, sizeof counts / sizeof counts[0])];
    }
  static const unsigned threads[] = { 0, 1, 2, 3, 64, 1024, UINT32_MAX };
  o.threads = threads[take (&b, 7)];
  static const double alphas[] = { 1e-6, 0, 1e-300, 0x1p-1074, 0.5,
                                   1 - 1e-16, 1, -1, NAN };
  o.false_alarm = alphas[take (&b, 9)];
  static const double timeouts[] = { 0, 0, 1e-9, 1e-3, 60, -1, NAN,
                                     INFINITY, 1e300 };
  o.timeout = timeouts[take (&b, 9)];
  o.seed = take (&b, 256) | (uint64_t) take (&b, 256) << 56;

  /* A check of many directions that fits in memory is not hostile, only
     long: this target runs at most 64 of them, and those beyond twice
     the machine's memory, which the library must refuse untried.  */
  size_t total = o.directions == GC_DIR_RANDOM ? o.n_random
                 : o.directions == GC_DIR_LIST ? o.n_indices : m->n;
  size_t sc = o.shard_count > 1 ? o.shard_count : 1;
  size_t mine = total / sc + (o.shard_index < total % sc ? 1 : 0);
  double memory = (double) sysconf (_SC_PHYS_PAGES)
                  * (double) sysconf (_SC_PAGESIZE);
  if (!forward && mine > 64
      && (double) mine * sizeof (gc_direction) <= 2 * memory)
    {
      free (indices);
      return 0;
    }
  gc_result *r = NULL;
  gc_status st = forward ? gc_forward_check (m, x, &o, &r)
                         : gc_check (m, x, &o, &r);
  invariants (st, r);
  gc_result_free (r);
  free (indices);
  return 0;
}
