/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* failalloc.c -- see failalloc.h.  */

#include "failalloc.h"

#include <gmp.h>
#include <stdlib.h>
#include <string.h>

#if defined (__SANITIZE_ADDRESS__)
# define GCT_HOOK 0
#elif defined (__has_feature)
# if __has_feature (address_sanitizer)
#  define GCT_HOOK 0
# endif
#endif
#ifndef GCT_HOOK
# define GCT_HOOK 1
#endif

/* Single-threaded tests arm the hook; the counters need no locking
   there, and a multi-threaded check is not run armed.  */
static size_t countdown, counted;

#if GCT_HOOK
extern void *__libc_malloc (size_t);
extern void *__libc_calloc (size_t, size_t);
extern void *__libc_realloc (void *, size_t);
extern void __libc_free (void *);

static bool
fails (void)
{
  if (!countdown)
    return false;
  counted++;
  if (--countdown == 0)
    return true;
  return false;
}

void *
malloc (size_t n)
{
  return fails () ? NULL : __libc_malloc (n);
}

void *
calloc (size_t a, size_t b)
{
  return fails () ? NULL : __libc_calloc (a, b);
}

void *
realloc (void *p, size_t n)
{
  return fails () ? NULL : __libc_realloc (p, n);
}

static void *
gmp_alloc (size_t n)
{
  void *p = __libc_malloc (n);
  if (!p)
    abort ();
  return p;
}

static void *
gmp_realloc (void *p, size_t old, size_t n)
{
  (void) old;
  void *q = __libc_realloc (p, n);
  if (!q)
    abort ();
  return q;
}

static void
gmp_free (void *p, size_t n)
{
  (void) n;
  __libc_free (p);
}
#endif

void
gct_failalloc_arm (size_t n)
{
#if GCT_HOOK
  static bool gmp_set;
  if (!gmp_set)
    {
      mp_set_memory_functions (gmp_alloc, gmp_realloc, gmp_free);
      gmp_set = true;
    }
#endif
  counted = 0;
  countdown = n;
}

size_t
gct_failalloc_count (void)
{
  return counted;
}

bool
gct_failalloc_active (void)
{
  /* Through a volatile pointer: the compiler may not fold the probe, and
     a tool that replaces malloc (valgrind without
     --soname-synonyms=somalloc=nouserintercepts) shows as absent.  */
  void *(*volatile probe) (size_t) = malloc;
  gct_failalloc_arm (1);
  void *p = probe (16);
  gct_failalloc_arm (0);
  free (p);
  return p == NULL;
}
