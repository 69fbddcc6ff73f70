/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* limits.c -- the limits a check runs under: its time limit
   (gc_options.timeout) and the memory its MPFR numbers need, estimated and
   tried before any of them is made (manual: "Memory"), because GMP aborts
   the process when an allocation fails and no library can catch that.  */

#include "base/internal.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double
gc__now (void)
{
  struct timespec ts;
  if (clock_gettime (CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

double
gc__deadline (double timeout)
{
  return timeout > 0 ? gc__now () + timeout : 0;
}

double
gc__mpfr_bytes (mpfr_prec_t p)
{
  /* the struct, and the limbs of the significand, rounded up */
  double limb_bits = (double) sizeof (mp_limb_t) * 8;
  return (double) sizeof (__mpfr_struct)
         + ceil ((double) p / limb_bits) * (double) sizeof (mp_limb_t);
}

bool
gc__within_memory (double bytes)
{
  if (!(bytes >= 0) || bytes > (double) (SIZE_MAX / 4))
    return false;
  /* More than the machine's memory cannot be worked on, even where the
     system would promise it (overcommit): refused without trying.  */
  long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
  return pages <= 0 || page <= 0 || bytes <= (double) pages * (double) page;
}

bool
gc__fits (double bytes)
{
  if (!gc__within_memory (bytes))
    return false;
  /* One block of the whole size: an address-space limit (ulimit -v) or a
     heap too fragmented refuses it here, where the check can still say so;
     the working set itself is made of many small blocks.  */
  void *p = malloc ((size_t) bytes + 1);
  if (!p)
    return false;
  free (p);
  return true;
}
