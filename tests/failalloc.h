/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* failalloc.h -- a failing-allocation hook for the tests.

   The test helper library defines malloc, calloc and realloc, forwarding
   to glibc's __libc_* functions, and fails the Nth call after
   gct_failalloc_arm (N).  GMP (and so MPFR) aborts when an allocation
   fails, by design; its memory functions are pointed at allocators that
   bypass the hook, so that only gradcheck's own (and the models')
   allocations fail.  The hook is absent under AddressSanitizer, which
   owns malloc; gct_failalloc_active () says whether it works.  */

#ifndef GCTEST_FAILALLOC_H
#define GCTEST_FAILALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* Fail the Nth allocation from now (1: the next); 0 disarms.  */
void gct_failalloc_arm (size_t n);
/* Allocations counted since the last arm.  */
size_t gct_failalloc_count (void);
/* Whether the hook is in effect in this process.  */
bool gct_failalloc_active (void);

#endif
