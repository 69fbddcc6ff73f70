/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* hvp-internal.h -- what the HVP check (hvp.c) and its descent
   (hvp_confirm.c) share.  */

#ifndef GC_HVP_INTERNAL_H
#define GC_HVP_INTERNAL_H

#include "higher/higher.h"

/* The check's working arrays.  */
typedef struct hvp_work
{
  float *v, *y, *ym, *xf;
  double *xp, *g[4], *spread, *mag, *magh, *tmp, *scale;
  /* the HVP's twin (hvp_f64): x and v in double, its value, a second
     value, its spread, its magnitudes  */
  double *xd, *vd, *y64, *y64m, *spread64, *magh64;
} hvp_work;

/* The gradient at x + s h v, s = SIGN, into G (doubles): the twin's at
   the point in double, else grad_f32's at it in f32; GC_ESTEP when the
   point is not exact in that format.  */
gc_status gc__hvp_gradient_at (const gc_model *m, const gc__env *e,
                               const float *x, hvp_work *w, double sh,
                               bool twin, double *g, int *code, char *what,
                               size_t size);
/* Whether every stencil point x + s H v, s = +-1, +-2, is exact in the
   format of the gradient evaluated there.  */
bool gc__hvp_points_exact (const float *x, const float *v, double h,
                           bool twin, size_t n);
/* Element D's two verdicts with the twin (manual: "The HVP check").  */
void gc__hvp_twin_element (const gc_result *r, gc_direction *d,
                           const hvp_work *w, size_t i);
/* The descent of vector POS at step H (manual: "The HVP check").  */
gc_status gc__hvp_confirm_vector (gc_result *r, const gc_model *m,
                                  const gc__env *e, const float *x,
                                  hvp_work *w, size_t pos, double h,
                                  bool twin, size_t db, int *code,
                                  char *what, size_t size);

#endif
