/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* args.c -- parsers of the command's option strings, apart so that the
   fuzzer (fuzz/fuzz_args.c) exercises the very code the command runs.  */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1     /* process_vm_readv */
#endif
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* Whether LEN bytes at P can be read, asked of the kernel instead of
   touched (a lying plugin's buffer must not crash the command): copied
   through process_vm_readv in chunks, where an unreadable page gives
   EFAULT; where that call is not allowed, whether every page is mapped
   (mincore).  A readable range can still be past the plugin's own array,
   inside another object: that the command cannot see.  */
static bool
readable (const void *p, size_t len)
{
  static char scratch[1 << 16];
  uintptr_t a = (uintptr_t) p;
  if (len == 0)
    return true;
  if (a + len < a)
    return false;
  bool allowed = true;
  for (size_t off = 0; off < len && allowed; off += sizeof scratch)
    {
      size_t n = len - off < sizeof scratch ? len - off : sizeof scratch;
      struct iovec local = { scratch, n };
      struct iovec remote = { (void *) (a + off), n };
      ssize_t got = process_vm_readv (getpid (), &local, 1, &remote, 1, 0);
      if (got == (ssize_t) n)
        continue;
      if (got < 0 && (errno == ENOSYS || errno == EPERM))
        allowed = false;  /* not allowed here: ask mincore instead */
      else
        return false;
    }
  if (allowed)
    return true;
  long page = sysconf (_SC_PAGESIZE);
  if (page <= 0)
    return false;
  uintptr_t lo = a / (uintptr_t) page * (uintptr_t) page;
  size_t span = (size_t) (a + len - lo);
  unsigned char vec[256];
  for (size_t off = 0; off < span; off += sizeof vec * (size_t) page)
    {
      size_t n = span - off < sizeof vec * (size_t) page
                 ? span - off : sizeof vec * (size_t) page;
      if (mincore ((void *) (lo + off), n, vec) != 0)
        return false;
    }
  return true;
}

bool
cli_parse_open (const char *s, double lo, double hi, double *out)
{
  char *end;
  errno = 0;
  if (!s)
    return false;
  double v = strtod (s, &end);
  if (errno || *end || end == s || !isfinite (v) || !(v > lo && v < hi))
    return false;
  *out = v;
  return true;
}

bool
cli_parse_u64 (const char *s, uint64_t *out)
{
  char *end;
  errno = 0;
  if (!s || *s < '0' || *s > '9')
    return false;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || *end)
    return false;
  *out = v;
  return true;
}

/* The K of "PREFIX:K" in S (1 to 10^8, the CLI's limit on random
   directions), in *K; false where S has another prefix or K is out of
   range.  */
static bool
count_after (const char *s, const char *prefix, size_t *k)
{
  size_t len = strlen (prefix);
  uint64_t v;
  if (strncmp (s, prefix, len) != 0 || !cli_parse_u64 (s + len, &v)
      || v == 0 || v > 100000000)
    return false;
  *k = (size_t) v;
  return true;
}

bool
cli_parse_directions (const char *s, gc_options *o, size_t **indices)
{
  if (strcmp (s, "all") == 0)
    {
      o->directions = GC_DIR_ALL;
      return true;
    }
  /* random-per-block:K, screen:K (manual: "Screening"), random:K */
  static const struct { const char *prefix; gc_direction_kind kind;
                        int per_block; } kinds[] = {
    { "random-per-block:", GC_DIR_RANDOM, 1 },
    { "screen:", GC_DIR_SCREEN, 0 },
    { "random:", GC_DIR_RANDOM, 0 } };
  for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++)
    if (strncmp (s, kinds[j].prefix, strlen (kinds[j].prefix)) == 0)
      {
        if (!count_after (s, kinds[j].prefix, &o->n_random))
          return false;
        o->directions = kinds[j].kind;
        o->random_per_block = kinds[j].per_block;
        return true;
      }
  size_t count = 1;
  for (const char *p = s; *p; p++)
    count += *p == ',';
  free (*indices);
  *indices = malloc (count * sizeof **indices);
  if (!*indices)
    return false;
  const char *p = s;
  for (size_t k = 0; k < count; k++)
    {
      char *end;
      errno = 0;
      if (*p < '0' || *p > '9')
        return false;
      unsigned long long v = strtoull (p, &end, 10);
      if (errno || (*end != ',' && *end != 0))
        return false;
      (*indices)[k] = (size_t) v;
      p = *end ? end + 1 : end;
    }
  o->directions = GC_DIR_LIST;
  o->indices = *indices;
  o->n_indices = count;
  return true;
}

bool
cli_parse_format (const char *s, gc_format *f)
{
  static const struct { const char *name; gc_format f; } fm[] = {
    { "text", GC_FMT_TEXT }, { "json", GC_FMT_JSON },
    { "md", GC_FMT_MARKDOWN }, { "markdown", GC_FMT_MARKDOWN },
    { "tap", GC_FMT_TAP } };
  for (size_t k = 0; k < sizeof fm / sizeof fm[0]; k++)
    if (strcmp (s, fm[k].name) == 0)
      {
        *f = fm[k].f;
        return true;
      }
  return false;
}

bool
cli_parse_shard (const char *s, gc_options *o)
{
  /* Digits, '/', digits, nothing else: no sign and no space on either
     side of the slash (sscanf's %llu took " 2" after it, not before).  */
  char *end;
  if (!s || *s < '0' || *s > '9')
    return false;
  errno = 0;
  unsigned long long i = strtoull (s, &end, 10);
  if (errno || *end != '/' || end[1] < '0' || end[1] > '9')
    return false;
  unsigned long long n = strtoull (end + 1, &end, 10);
  if (errno || *end || n == 0 || i >= n || n > 1000000)
    return false;
  o->shard_index = (size_t) i;
  o->shard_count = (size_t) n;
  return true;
}

const char *
cli_plugin_refusal (const gc_plugin *pl)
{
  if (!pl)
    return "it returned no description (its arguments were rejected?)";
  if (pl->abi != GC_PLUGIN_ABI)
    return "its description has another plugin ABI version";
  if (!pl->model)
    return "its description has no model";
  if (pl->model->abi < GC_MODEL_ABI_OLDEST || pl->model->abi > GC_MODEL_ABI)
    return "its model has another model ABI version";
  if (!pl->x)
    return "its description has no point x";
  if (pl->x_count < pl->model->n)
    return "its model's n exceeds the point's buffer (x_count)";
  /* the library's own limit (check.c): arrays of n values must be
     sizeable, and the outputs likewise  */
  if (pl->model->n > SIZE_MAX / 64 || pl->model->n_outputs > SIZE_MAX / 64)
    return "its model's n (or n_outputs) is too large to allocate";
  if (!readable (pl->x, pl->model->n * sizeof *pl->x))
    return "its point x cannot be read for n floats (x_count lies?)";
  if (!pl->model->loss_f32 || !pl->model->grad_f32)
    return "its model lacks loss_f32 or grad_f32";
  return NULL;
}
