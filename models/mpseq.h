/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* mpseq.h -- MPFR reference forwards over independent recurrent sequences,
   evaluated incrementally.

   A central difference perturbs a few parameters; in a recurrence they
   enter at one step of one sequence.  The loss is then the base point's,
   up to that step, plus a rerun from there.  This helper keeps, per MPFR
   precision, the base trajectory (the state before every step and the loss
   accumulated so far, for every sequence), built once under a lock and
   read-only afterwards, so that concurrent callbacks share it.  */

#ifndef GCM_MPSEQ_H
#define GCM_MPSEQ_H

#include <mpfr.h>
#include <pthread.h>
#include <stddef.h>

typedef struct gcm_mpseq_ops
{
  size_t n_seq;         /* independent sequences */
  size_t steps;         /* steps per sequence */
  size_t state_size;    /* MPFR numbers in one sequence's state */
  /* Whether sequence S's initial state, or a parameter all its steps
     share, differs at X from the base point (the rerun then starts at
     step 0).  */
  int (*initial_differs) (const void *ctx, mpfr_srcptr x, size_t s);
  /* Scratch of one evaluation at precision P, holding the state.  */
  void *(*work_new) (const void *ctx, mpfr_prec_t p);
  void (*work_free) (const void *ctx, void *work);
  mpfr_t *(*state) (void *work);
  void (*init_state) (const void *ctx, mpfr_srcptr x, size_t s, void *work);
  /* A step's inputs, prepared from X (normalised, gated, exponentiated:
     the transcendental work of a step): INPUT_SIZE numbers.  The base
     trajectory keeps them, so that a rerun prepares only the steps whose
     raw inputs differ from the base point's (INPUTS_DIFFER).  */
  size_t input_size;
  void (*prepare) (const void *ctx, mpfr_srcptr x, size_t s, size_t t,
                   void *work, mpfr_t *in);
  int (*inputs_differ) (const void *ctx, mpfr_srcptr x, size_t s, size_t t);
  /* One step T of sequence S from its prepared inputs IN: update the
     state, add the step's loss contribution to ACC.  */
  void (*step) (const void *ctx, size_t s, size_t t, mpfr_t *in, void *work,
                mpfr_ptr acc);
  /* The final-state term of sequence S, added to ACC.  */
  void (*final) (const void *ctx, size_t s, void *work, mpfr_ptr acc);
  /* For gcm_mpseq_outputs: STEP_OUTPUTS outputs per step.  STEP_OUT is
     STEP without the loss: it updates the state and writes step T's
     outputs of sequence S into the model's step outputs, which start at
     O (the callback places them in its own layout).  */
  size_t step_outputs;
  void (*step_out) (const void *ctx, size_t s, size_t t, mpfr_t *in,
                    void *work, mpfr_ptr o);
} gcm_mpseq_ops;

typedef struct gcm_mpseq
{
  pthread_mutex_t lock;                     /* taken to build a cache */
  struct gcm_mpseq_cache *_Atomic caches;   /* built ones, read freely */
} gcm_mpseq;

void gcm_mpseq_init (gcm_mpseq *c);
void gcm_mpseq_clear (gcm_mpseq *c);

/* The loss at X (n parameters, exact MPFR) at the precision of LOSS, with
   X0 (n floats) the base point.  0 on success, -1 when memory runs out.  */
int gcm_mpseq_loss (gcm_mpseq *c, const gcm_mpseq_ops *ops, const void *ctx,
                    const float *x0, size_t n, mpfr_srcptr x, mpfr_ptr loss);

/* The reference outputs at X, at the precision of OUT, for the oracle:
   every sequence run in full from its initial state.  OUT holds the
   steps' outputs (n_seq * steps * step_outputs numbers, placed by
   STEP_OUT), then each sequence's final state (state_size numbers a
   sequence, in sequence order).  0 on success, -1 when memory runs
   out.  */
int gcm_mpseq_outputs (const gcm_mpseq_ops *ops, const void *ctx,
                       mpfr_srcptr x, mpfr_ptr out);

#endif
