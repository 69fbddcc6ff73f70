/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* abi.c -- a model description of an older ABI version read as one of the
   current version, the fields it does not have zero.  */

#include "base/internal.h"

#include <stddef.h>
#include <string.h>

/* Where each known version's description ends.  */
static size_t
abi_size (int abi)
{
  switch (abi)
    {
    case 1: return offsetof (gc_model, grad_f64);
    case 2: return offsetof (gc_model, n_precisions);
    default: return sizeof (gc_model);
    }
}

const gc_model *
gc__model_by_abi (const gc_model *m, gc_model *copy)
{
  if (!m || m->abi == GC_MODEL_ABI || !gc__model_abi_known (m->abi))
    return m;
  memset (copy, 0, sizeof *copy);
  memcpy (copy, m, abi_size (m->abi));
  copy->abi = GC_MODEL_ABI;
  return copy;
}
