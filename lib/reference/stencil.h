/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* stencil.h -- what lib/reference/stencil.c (one direction; the float modes) and
   lib/reference/stencil_mpfr.c (the MPFR stencil and its confirmation) share.
   Internal.  */

#ifndef GC_STENCIL_H
#define GC_STENCIL_H

#include "model/check-internal.h"

/* Manual: "Domain edges".  Levels of a finer first step tried where a
   stencil point leaves the model's domain (MPFR: as many as confirmation
   descends; f32 and f64: two, their rounding growing 2^8-fold a level).  */
#define GC_EDGE_LEVELS_MPFR 8
#define GC_EDGE_LEVELS_FLOAT 2

/* Manual: "Directional checks": the sums of a random direction's adjoint
   term over its support (the elements where v_i != 0): their count K,
   sum (u m_i + 2^-150)^2, sum |v_i| (u m_i + 2^-150) and sum |w_i - v_i|
   (u m_i + 2^-150), w the applied direction.  */
typedef struct gc__random_sums
{
  size_t k;
  double q2, qv, qd;
} gc__random_sums;

/* Appends to W's detail where stencil point K (x + h, x - h, x + 2h,
   x - 2h) at step H of parameter INDEX (SIZE_MAX: a random direction)
   left the model's domain, when W's failure is GC_ENONFINITE.  */
void gc__stencil_note (worker *w, int k, double h, size_t index);
/* Manual: "Domain edges": whether a finer first step, level LEVEL + 1 of
   at most MAX, is left to try after W's failure (cleared if so).  */
bool gc__domain_retry (worker *w, int level, int max);
/* Resets W's MPFR point coordinate I to the centre x_i.  */
void gc__reset_mpfr (worker *w, size_t i);
/* The kink estimate J's noise from a rounded forward (manual: "Non-smooth
   points") and its coefficient for one-sided steps A1, B1, A2, B2.  */
double gc__jump_noise (const shared *sh, gc_reference ref, mpfr_prec_t p,
                       double lmax, double hm, long he, double coef);
double gc__jump_coef (double h, double a1, double b1, double a2, double b2);
/* Adds element j (applied WJ, drawn VJ, magnitude MAG) to RS.  */
void gc__random_add (gc__random_sums *rs, double wj, float vj, double mag);
/* The adjoint term of a random direction from RS (manual: "Directional
   checks"), WORST the worst-case term, SPREAD the measured sensitivity.  */
double gc__adjoint_terms (worker *w, gc_direction *d, const float *v,
                          double wm, double w1, gc__random_sums *rs);
double gc__random_term (worker *w, gc_direction *d, double worst,
                        const gc__random_sums *rs, double spread);

#endif
