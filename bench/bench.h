/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* bench.h -- what the bench programs share: a model instance (instance.c)
   and the higher-order falsify matrix (higher.c), which bench.c calls.  */

#ifndef GC_BENCH_H
#define GC_BENCH_H

#include "gradcheck.h"
#include "models.h"

#include <stdint.h>

gcm_instance *make (const char *model, const char *shape, uint64_t seed,
                    int mutant);
int falsify_higher (const char *model, int seeds, int mutant_seeds);
int summarize_higher (const char *file);

#endif
