/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* guard.c -- canaries around the buffers a model callback writes: a
   callback that writes past its n values (or before the first) changes a
   canary, which the check sees after the call and reports as GC_EOVERRUN
   instead of passing silently or corrupting the heap (manual: "What is
   isolated").  A write further than the canaries reach is not seen.  */

#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* A byte pattern that no run of equal bytes or small integers matches, so
   that a callback that zero-fills or memsets past its buffer is seen.  */
static unsigned char
pattern (size_t k)
{
  return (unsigned char) (0xa5u ^ (unsigned) (k * 0x3bu) ^ (unsigned) (k >> 8));
}

void
gc__guard_fill (void *p, size_t len)
{
  unsigned char *b = p;
  for (size_t k = 0; k < len; k++)
    b[k] = pattern (k);
}

bool
gc__guard_intact (const void *p, size_t len)
{
  const unsigned char *b = p;
  for (size_t k = 0; k < len; k++)
    if (b[k] != pattern (k))
      return false;
  return true;
}

void *
gc__guarded_alloc (size_t bytes)
{
  if (bytes > SIZE_MAX - 2 * GC_GUARD_BYTES)
    return NULL;
  unsigned char *b = malloc (bytes + 2 * GC_GUARD_BYTES);
  if (!b)
    return NULL;
  gc__guard_fill (b, GC_GUARD_BYTES);
  gc__guard_fill (b + GC_GUARD_BYTES + bytes, GC_GUARD_BYTES);
  return b + GC_GUARD_BYTES;
}

bool
gc__guarded_intact (const void *p, size_t bytes)
{
  const unsigned char *b = p;
  return gc__guard_intact (b - GC_GUARD_BYTES, GC_GUARD_BYTES)
         && gc__guard_intact (b + bytes, GC_GUARD_BYTES);
}

void
gc__guarded_free (void *p)
{
  if (p)
    free ((unsigned char *) p - GC_GUARD_BYTES);
}
