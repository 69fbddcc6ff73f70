/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check-internal.h -- what the files of gc_check share: the check's
   shared state, a worker's state, and the functions one file of the check
   calls in another.  Not installed; every name is gc__ or file-local (the
   export list keeps only gc_).

   The data flow, each file calling only those below it:
     check.c      gc_check: options, orchestration
     setup.c      validation, allocation, the plan of directions
     centre.c     the centre: gradient, magnitudes, scales, reference
     worker.c     the workers: set-up, the loop over directions, the serial
                  recheck
     tier.c       which reference judges a direction (the tiered
                  reference: f64, then MPFR where f64 is not enough)
     twin.c       the f64 twin of the backward: its gradient at the centre,
                  and per judged direction its value and adjoint term
     stencil.c    one direction: the stencil points per reference, its
                  terms and verdict, confirmation, raised precision
     directions.c which directions and their steps
     evaluate.c   one call of the model's forward, guarded
   noise.c measures the model at the centre (determinism, rounding
   sensitivity) through evaluate.c; and below them errmodel.c (terms), judge.c (verdicts), noise.c,
   result.c (lifetime and names).  */

#ifndef GC_CHECK_INTERNAL_H
#define GC_CHECK_INTERNAL_H

#include "base/internal.h"
#include "model/scales.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct shared
{
  const gc_model *m;
  const float *x;
  const gc_options *o;
  gc_result *r;
  size_t n;
  gc_reference ref;      /* the reference of the check */
  gc_reference best;     /* forward for truncation and J */
  mpfr_prec_t p;
  float *g;              /* analytic gradient at x */
  double *mag;           /* m_i of the adjoint term */
  double *scale;         /* s_i of the default step */
  double scale_random;   /* scale of the default step along a random v */
  double mag_loss;       /* M_L: the model's loss magnitude at x, or 0 */
  bool user_step;
  double h_user;
  size_t *pos_id;        /* shard position -> direction id */
  mpfr_t f0_mpfr;        /* centre value of the best forward, MPFR */
  bool have_f0_mpfr;
  double f0;             /* centre value of the best forward */
  atomic_size_t done;
  size_t first;            /* the first direction of the round the workers
                              take (manual: "Screening"); 0 otherwise */
  atomic_int stop;
  pthread_mutex_t lock;
  size_t err_pos;        /* smallest failing position */
  double deadline;       /* gc__now () past which the check stops; 0: none */
  /* Manual: "Measured rounding sensitivity": the backward at x under the
     other rounding modes (NULL: not run, or left out), and the float
     reference forward's spread S_L at x (0 in MPFR mode).  */
  float *gm[GC_N_MODES];
  double spread_loss, spread_loss_f32;
  unsigned modes_dropped;   /* of FE_TONEAREST, UPWARD, DOWNWARD, TOWARDZERO */
  /* The tiered reference (GC_REF_AUTO; manual: "The tiered reference"):
     whether f64 may decide (its centre value agrees with MPFR's), the f64
     centre value, the f64 default step's exponent, and h_mpfr / h_f64.  */
  bool tier_f64;
  double f0_64;
  int step_exponent_64;
  double tier_rho;
  /* Manual: "The f64 twin": the twin's gradient at x (NULL: no twin) and
     under the other rounding modes (NULL: not measured).  */
  double *g64;
  double *g64m[GC_N_MODES];
  /* Manual: "The measured floor": the twin's gradient at the kept
     perturbed points (n_floor of them, NULL beyond).  */
  double *g64f[GC_FLOOR_DRAWS];
  unsigned n_floor;
  /* Manual: "Floating-point environment".  The model's: the caller's
     rounding mode and flush-to-zero, no trap enabled (set before every
     callback, gc__fpenv_model), and its rounding mode.  The library's own
     arithmetic runs in the default environment (gc__fpenv_reset).  */
  fenv_t model_env;
  int model_round;
} shared;

typedef struct worker
{
  shared *sh;
  unsigned id, count;
  float *xf;
  double *xd;
  __mpfr_struct *xm;     /* n MPFR numbers, or NULL */
  float *v;              /* random direction */
  double vnorm;          /* N: the norm its draws were divided by */
  double *dp, *dm;       /* applied deltas at +-h (float modes, random) */
  /* the last joint quantile computed and its arguments (manual:
     "Directional checks"): random directions of one check share them */
  double jq_p, jq_c;
  size_t jq_d, jq_k;
  mpfr_t lv, t1, t2, t3, prod;
  /* loss_mpfr writes lout[0]; lout[1], lout[2] are guards (2 bits, value
     3) that a write past the one number changes.  */
  __mpfr_struct lout[3];
  mpfr_t f[4];           /* stencil values, MPFR mode */
  mpfr_prec_t wp;        /* working precision: p, or raised ("Raising the
                            precision") */
  mpfr_t f0w;            /* centre value at a raised precision */
  /* loss_mpfr was called since the worker's point was last checked (only
     it receives xm; gc__inputs_intact checks xm then).  */
  bool mpfr_called;
  /* the noise of the last MPFR stencil's J (manual: "Non-smooth points"),
     for "A failure beyond doubt"  */
  double noise_j;
  /* the tiered reference's prediction P >= T_mpfr + E_mpfr of the
     direction f64 last decided (manual: "The tiered reference"), for the
     twin's verdicts; NAN where MPFR decided  */
  double tier_p;
  /* the f64 values at x -+ h, x -+ 2h of the last f64 stencil on a
     coordinate (STENCIL_INDEX, SIZE_MAX: none), in the order
     x + h, x - h, x + 2h, x - 2h, and its step; for Richardson's
     flatness test (manual: "Richardson's stencil")  */
  double stencil_f[4], stencil_h;
  size_t stencil_index;
  /* Manual: "Where the time goes": this worker's callbacks by kind
     (GC_CALL_KIND_*) and their seconds, summed into the result.  */
  size_t n_calls[4];
  double call_seconds[4];
  gc_status st;
  int cb;
  char detail[160];
} worker;

/* (evaluate.c) Record a worker's first failure: status, callback code and
   a sentence; later ones are ignored.  */
void gc__fail (worker *w, gc_status st, int cb, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));
/* (evaluate.c) The time limit, checked after every callback
   (gc_options.timeout): false, with GC_ETIMEOUT recorded, once passed.  */
bool gc__in_time (worker *w, const char *name);
/* Manual: "Floating-point environment".  Before every call of model code:
   the model's environment (the caller's, without traps); after it, the
   library's (the default: to nearest, no trap, no flush-to-zero), whatever
   the callback enabled, changed or raised.  */
void gc__fpenv_model (const shared *sh);
void gc__fpenv_reset (const shared *sh);
/* The loss is written into a value followed by canaries, so that a
   callback writing past its one value is seen instead of smashing the
   stack.  */
#define LOSS_GUARD 64

/* (evaluate.c) One call of a forward at the worker's point, guarded: each
   returns false after recording a failure.  */
bool gc__eval_f32 (worker *w, const float *x, double *val);
bool gc__eval_f64 (worker *w, const double *x, double *val);
bool gc__eval_mpfr (worker *w, mpfr_ptr out);
/* (evaluate.c) Whether the worker's copies of the point are still as
   given (a callback wrote into its input, else: GC_EOVERRUN).  */
bool gc__inputs_intact (worker *w);
/* (evaluate.c) Manual: "Where the time goes": start timing a callback of
   kind KIND (GC_CALL_KIND_*); count it and its seconds since T0.  */
double gc__call_start (void);
void gc__call_count (worker *w, int kind, double t0);

/* (directions.c) The step of direction INDEX (SIZE_MAX: random direction
   ID) as HM * 2^HE; the random direction ID into V.  */
void gc__step_scaled (const shared *sh, size_t index, size_t id, double *hm,
                      long *he);
void gc__make_random (const shared *sh, size_t id, float *v,
                      double *norm_out);

/* (stencil.c) Evaluate and judge direction D in MPFR mode, or in a float
   mode (f32, f64); false after recording a failure.  */
/* What an f64 stencil on the same line at the longer step h / RHO told
   of MPFR's: its truncation term T_64, its kink estimate J_64 and that
   estimate's noise (manual: "Skipping the 2h pair").  */
typedef struct gc__prediction
{
  double t64, jump64, noise_j64, rho;
} gc__prediction;
/* PR, when not NULL, lets the first MPFR stencil skip its +-2h pair where
   the prediction proves MPFR's verdict.  */
bool gc__direction_mpfr (worker *w, gc_direction *d,
                         const gc__prediction *pr);
bool gc__direction_float (worker *w, gc_direction *d);
/* (stencil.c) A float-mode stencil of reference REF (f32 or f64), with
   truncation and J from the forward BEST, whose centre value is F0, at
   the default step of exponent STEP_EXPONENT (unless the user gave one).
   *NOISE_J: the noise of J the verdict allowed (manual: "Non-smooth
   points").  gc__direction_float is this with the check's own.  */
typedef struct gc__float_ref
{
  gc_reference ref, best;
  double f0;
  int step_exponent;
} gc__float_ref;
bool gc__direction_float_as (worker *w, gc_direction *d,
                             const gc__float_ref *fr, double *noise_j);

/* (tier.c) Evaluate and judge direction D with the check's reference
   (the tiered one: f64, then MPFR where f64 is not enough), recording in
   D which reference decided; false after recording a failure.  */
bool gc__direction (worker *w, gc_direction *d);

/* (noise.c) Manual: "Measured rounding sensitivity": the backward (and
   the reference forward, whose centre value to nearest is F_RN) under the
   other rounding modes; then, once the magnitudes are known, the
   declarations' check (the ratios rho_i).  */
gc_status gc__measure_rounding (shared *sh, worker *w0, double f_rn);
gc_status gc__rounding_ratios (shared *sh);

/* (twin.c) Manual: "The f64 twin": the twin at the centre (twice, and
   under the other rounding modes), and its release; per direction, once
   the direction is judged against its reference, Richardson's stencil
   where f64 judged a coordinate, the twin's analytic value and adjoint
   term and the two verdicts (judge.c); false after recording a failure.  */
gc_status gc__twin_centre (shared *sh, worker *w0);
void gc__twin_free (shared *sh);
/* (twin.c) one call of grad_f64 at W's point (twin_call), and the weight
   of element J in D's applied direction.  */
double *gc__twin_call (worker *w, int mode, const char *what, bool *nomem,
                       int pass);
double gc__twin_weight (const worker *w, const gc_direction *d, size_t j);
/* (twin_floor.c) Manual: "The measured floor": the twin at the perturbed
   points (after gc__twin_centre's calls; an error only where the model
   breaks a rule: overrun, time, memory), their release, and direction
   D's floor and bar: *B, the arithmetic's bound before the twin's term
   (classes included), B32 its f32 part at the declared depth.  */
gc_status gc__twin_floor_centre (shared *sh, worker *w0);
void gc__twin_floor_free (shared *sh);
/* (evaluate.c) grad_f64 (IS64) or grad_f32 at W's point under rounding
   MODE (-1: the model's), guarded, the fill pattern of PASS first (PASS
   < 0: none): NULL where memory ran out (*NOMEM) or after recording an
   overrun, the time limit or the callback's code on W; WHAT ends the
   messages.  */
void *gc__grad_call (worker *w, bool is64, int mode, const char *what,
                     bool *nomem, int pass);
/* (twin_factor.c) Manual: "A factor the point does not move": after the
   directions are judged, g32 and g64 at points moved by GC_FACTOR_STEP
   for the coordinate precision findings far beyond their bars, and the
   factor that held, if one did; W0's point left at x.  */
gc_status gc__twin_factor (shared *sh, worker *w0);
void gc__twin_floor_bar (const worker *w, gc_direction *d, double b32,
                         double *b);
bool gc__twin_direction (worker *w, gc_direction *d);

/* (worker.c) A worker's state for worker ID of COUNT (false when memory
   runs out, nothing left to free); its release; its share of the
   directions (a pthread start routine); after a parallel run, a few
   directions again on the calling thread ("Determinism and
   reentrancy").  */
bool gc__worker_init (worker *w, shared *sh, unsigned id, unsigned count);
void gc__worker_free (worker *w);
void *gc__worker_run (void *arg);
bool gc__recheck_serial (shared *sh, worker *w);

/* (setup.c) gc_check's set-up, the one place it reads the model M
   (manual: "Directional checks", "Memory", "Inside gradcheck"): R's head
   from M and O, M and O validated (a refusal says why in R's detail),
   the rounding classes, blocks and constants copied into R, the state
   SH the workers share (with the model's floating-point environment
   MODEL_ENV and rounding MODEL_ROUND), the plan of directions (this
   shard's in *MINE), what the check holds, the twin, R's identity and
   its directions.  GC_OK, or R's status.  Whether the MPFR working set
   of NT workers fits; the release of what SH holds.  */
/* (setup.c) Direction D's defaults before it is judged, REF the check's
   reference.  */
void gc__direction_fresh (gc_direction *d, gc_reference ref);
gc_status gc__setup (const gc_model *m, const float *x, const gc_options *o,
                     gc_result *r, shared *sh, const fenv_t *model_env,
                     int model_round, size_t *mine);
gc_status gc__mpfr_room (shared *sh, unsigned nt);
void gc__shared_free (shared *sh);
/* (centre.c) The centre, on worker W0 before any direction (manual:
   "Determinism and reentrancy", "Adjoint rounding").  */
gc_status gc__centre (shared *sh, worker *w0);

#endif
