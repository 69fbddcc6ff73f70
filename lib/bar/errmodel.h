/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* errmodel.h -- what lib/bar/errmodel.c (the pass bar's terms) and
   lib/bar/errmodel_random.c (the random direction's adjoint term) share.
   Internal.  */

#ifndef GC_ERRMODEL_H
#define GC_ERRMODEL_H

#include "base/internal.h"

/* The adjoint term of a random direction where the draw's bound is the
   smaller (manual: "Directional checks"): formula and section.  */
extern const char *const gc__random_texts[2];

/* Input NAME (one of the input names gc__known_name knows) of term T,
   value V.  */
static inline void
add_input (gc_term *t, const char *name, double v)
{
  if (t->n_inputs < GC_TERM_MAX_INPUTS)
    {
      t->inputs[t->n_inputs].name = name;
      t->inputs[t->n_inputs].value = v;
      t->n_inputs++;
    }
}

#endif
