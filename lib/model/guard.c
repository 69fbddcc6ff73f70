/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* guard.c -- canaries around the buffers a model callback writes: a
   callback that writes past its n values (or before the first) changes a
   canary, which the check sees after the call and reports as GC_EOVERRUN
   instead of passing silently or corrupting the heap (manual: "What is
   isolated").  A write further than the canaries reach is not seen.  */

#include "base/internal.h"

#include <stdint.h>
#include <stdio.h>
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

/* Manual: "Unwritten elements": the two fill patterns of an output buffer,
   quiet NaNs whose payloads no arithmetic makes (a NaN computed from
   finite values carries the default payload), one per call, so that an
   element that holds the first after one call and the second after the
   other was not written by either: no value the callback computes equals
   both.  */
static const uint32_t fill32[2] = { 0x7fc5a5a5u, 0x7fe3c3c3u };
static const uint64_t fill64[2] = { 0x7ff8dead5a5a5a5aull,
                                    0x7ff8beef3c3c3c3cull };

void
gc__unwritten_fill (void *buf, size_t n, bool dbl, int pass)
{
  for (size_t i = 0; i < n; i++)
    if (dbl)
      memcpy ((unsigned char *) buf + i * 8, &fill64[pass & 1], 8);
    else
      memcpy ((unsigned char *) buf + i * 4, &fill32[pass & 1], 4);
}

bool
gc__unwritten_held (const void *buf, size_t i, bool dbl, int pass)
{
  if (dbl)
    {
      uint64_t u;
      memcpy (&u, (const unsigned char *) buf + i * 8, 8);
      return u == fill64[pass & 1];
    }
  uint32_t u;
  memcpy (&u, (const unsigned char *) buf + i * 4, 4);
  return u == fill32[pass & 1];
}

size_t
gc__unwritten_any (const void *buf, size_t n, bool dbl)
{
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    c += gc__unwritten_held (buf, i, dbl, 0);
  return c;
}

/* The elements B1 (after the call filled with pattern 0) and B2 (after
   the call filled with pattern 1) show unwritten, counted; WHAT gets
   "WHO did not write NAME, NAME and K more (C of N)", each NAME from R's
   parameter names (R NULL: "element I").  */
size_t
gc__unwritten_list (const gc_result *r, const void *b1, const void *b2,
                    size_t n, bool dbl, const char *who, char *what,
                    size_t size)
{
  size_t c = 0, named = 0;
  char names[96] = "";
  for (size_t i = 0; i < n; i++)
    if (gc__unwritten_held (b1, i, dbl, 0) && gc__unwritten_held (b2, i, dbl, 1))
      {
        c++;
        char nm[48];
        if (r)
          gc_param_name (r, i, nm, sizeof nm);
        else
          snprintf (nm, sizeof nm, "element %zu", i);
        size_t len = strlen (names);
        if (len + strlen (nm) + 3 < 64)
          {
            snprintf (names + len, sizeof names - len, "%s%s",
                      named ? ", " : "", nm);
            named++;
          }
      }
  if (c)
    {
      if (c > named)
        snprintf (what, size, "%s did not write %s and %zu more (%zu of %zu): "
                  "they held the buffer's prior content", who, names,
                  c - named, c, n);
      else
        snprintf (what, size, "%s did not write %s (%zu of %zu): they held "
                  "the buffer's prior content", who, names, c, n);
    }
  return c;
}
