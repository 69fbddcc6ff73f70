/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* higher.h -- what jvp.c, hvp.c and taylor.c share (higher.c).  Not
   installed.  */

#ifndef GC_HIGHER_H
#define GC_HIGHER_H

#include "base/internal.h"
#include "model/scales.h"

/* The floating-point environments (manual: "Floating-point environment"):
   the caller's, set back on leave; the model's (the caller's without
   traps) for every callback; the deadline of gc_options.timeout.  */
typedef struct gc__env
{
  fenv_t caller, model;
  int round;
  double deadline, timeout;
} gc__env;

void gc__env_enter (gc__env *e, const gc_options *o);
void gc__env_leave (gc__env *e);

typedef enum gc__callee
{
  GC_CALL_JVP, GC_CALL_HVP, GC_CALL_GRAD_F32, GC_CALL_GRAD_F64,
  GC_CALL_LOSS_F32, GC_CALL_LOSS_F64, GC_CALL_LOSS_MAG, GC_CALL_HVP_F64
} gc__callee;

/* One call of MODEL's callback WHICH at X (n floats, n doubles for
   grad_f64, loss_f64 and hvp_f64) and, for jvp_f32 and hvp_f32, V (n
   floats; n doubles for hvp_f64), in
   the model's environment with rounding mode MODE, on guarded copies of
   its inputs: the output (one float for jvp_f32, loss_f32 and
   loss_magnitude_f32, one double for loss_f64, n floats, n doubles for
   grad_f64 and hvp_f64)
   into OUT only when the call succeeded and every value is finite.  On
   failure: GC_ECALLBACK (its code in *CODE), GC_EOVERRUN (a write outside
   the output or into an input), GC_ETIMEOUT, GC_ENONFINITE or GC_ENOMEM,
   with a sentence in WHAT.  */
gc_status gc__call (const gc_model *m, const gc__env *e, gc__callee which,
                    const void *x, const void *v, int mode, void *out,
                    int *code, char *what, size_t size);

/* A new result of KIND for MODEL (may be NULL) and OPTS: no directions,
   status GC_OK, verdict GC_ERROR until judged; NULL when memory runs
   out.  */
gc_result *gc__higher_result (gc_check_kind kind, const gc_model *m,
                              const gc_options *o);
/* R stopped with ST and the sentence WHAT (NULL: gc_strerror); returns
   ST.  */
gc_status gc__refuse (gc_result *r, gc_status st, const char *what);

#endif
