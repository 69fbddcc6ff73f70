/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* instance.c -- a built-in model instance for the bench programs, or exit
   2 with the reason.  Below bench.c and higher.c (bench.h).  */

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

/* MODEL at SHAPE, seed SEED, mutant MUTANT (0: the correct backward).  */
gcm_instance *
make (const char *model, const char *shape, uint64_t seed, int mutant)
{
  const gcm_spec *spec = gcm_find (model);
  long v[GCM_MAX_KEYS];
  char err[256];
  if (!spec || gcm_parse_shape (spec, shape, v, err, sizeof err) != GC_OK)
    {
      fprintf (stderr, "bench: %s %s: %s\n", model, shape, err);
      exit (2);
    }
  gcm_instance *inst = NULL;
  if (gcm_create (spec, v, seed, mutant, &inst) != GC_OK)
    exit (2);
  return inst;
}
