/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check.c -- gc_check: options, validation, the centre (the gradient,
   magnitudes, scales and the reference's centre value), and the
   orchestration of the workers (worker.c) over the directions, which
   stencil.c evaluates and judges.  */

#include "check-internal.h"

#include <float.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void
gc_options_init (gc_options *o)
{
  if (!o)
    return;
  memset (o, 0, sizeof *o);
  o->reference = GC_REF_AUTO;   /* manual: "The tiered reference" */
  o->directions = GC_DIR_ALL;
  o->seed = 1;
  o->false_alarm = 1e-6;
  o->threads = 1;
}

/* ---------------------------------------------------------------------- */
/* Set-up.  */

/* Validate the model and options; a refusal that needs explaining writes
   its reason into DETAIL.  The point x is read only later, once arrays of
   n values exist (a lying n fails to allocate before x is read).  */
static gc_status
validate (const gc_model *m, const float *x, const gc_options *o,
          char *detail, size_t size)
{
  if (!m || !x || !o)
    return GC_EINVAL;
  if (!gc__model_abi_known (m->abi))
    return GC_EABI;
  if (!m->loss_f32 || !m->grad_f32)
    return GC_EINVAL;
  if (m->n == 0)
    return GC_EEMPTY;
  /* Per parameter the check keeps at least a gradient, a magnitude, a
     scale and a worker's point (4 + 8 + 8 + 4 + 8 bytes): an n whose
     arrays cannot even be sized is refused before any is made.  */
  if (m->n > SIZE_MAX / 64)
    {
      snprintf (detail, size, "n = %zu parameters: their arrays cannot be "
                "allocated", m->n);
      return GC_ENOMEM;
    }
  if ((o->reference == GC_REF_MPFR || o->reference == GC_REF_AUTO)
      && !m->loss_mpfr)
    return GC_ENOREF;
  if (o->reference == GC_REF_F64 && !m->loss_f64)
    return GC_ENOREF;
  if (o->reference != GC_REF_MPFR && o->reference != GC_REF_F32
      && o->reference != GC_REF_F64 && o->reference != GC_REF_AUTO)
    return GC_EINVAL;
  if (o->precision != 0 && !gc__precision_usable (o->precision))
    return GC_EPREC;
  if (o->step < 0 || !isfinite (o->step))
    return GC_EINVAL;
  /* The stencil reaches x +- 2h and divides by 4h, in double.  */
  if (o->step > DBL_MAX / 4)
    {
      snprintf (detail, size, "the step %g overflows: 4h exceeds the "
                "largest double", o->step);
      return GC_ESTEP;
    }
  if (!(o->timeout >= 0) || !isfinite (o->timeout))
    return GC_EINVAL;
  if (!(o->false_alarm > 0 && o->false_alarm < 1))
    return GC_EINVAL;
  if (o->directions == GC_DIR_RANDOM && o->n_random == 0)
    return GC_EINVAL;
  if (o->directions == GC_DIR_LIST)
    {
      if (!o->indices || o->n_indices == 0)
        return GC_EINVAL;
      for (size_t k = 0; k < o->n_indices; k++)
        if (o->indices[k] >= m->n)
          {
            snprintf (detail, size, "direction index %zu is out of range: "
                      "the model's parameters are 0 to %zu", o->indices[k],
                      m->n - 1);
            return GC_EDIRECTION;
          }
    }
  else if (o->directions != GC_DIR_ALL && o->directions != GC_DIR_RANDOM)
    return GC_EINVAL;
  if (o->shard_count > 1 && o->shard_index >= o->shard_count)
    return GC_EINVAL;
  if (o->shard_count <= 1 && o->shard_index != 0)
    return GC_EINVAL;
  if (!gc__blocks_valid (m->blocks, m->n_blocks, m->n))
    return GC_EINVAL;
  if (m->n_constants && !m->constants)
    return GC_EINVAL;
  /* A declared depth d with d u >= 1 leaves gamma_d undefined (manual:
     "The worst case"): no bar of it bounds anything (a 1% bug passed with
     every direction blind).  The backward runs in f32; the forward in
     the reference's coarsest format.  */
  if (m->backward_depth && ldexp ((double) m->backward_depth, -24) >= 1)
    {
      snprintf (detail, size, "backward_depth %zu: %zu*u >= 1 (u = 2^-24), "
                "gamma_d undefined", m->backward_depth, m->backward_depth);
      return GC_EINVAL;
    }
  int fbits = o->reference == GC_REF_F32 ? 24
              : o->reference == GC_REF_F64
                || (o->reference == GC_REF_AUTO && m->loss_f64) ? 53
              : (int) (o->precision ? o->precision
                                    : gc__default_precision ());
  if (m->forward_depth && ldexp ((double) m->forward_depth, -fbits) >= 1)
    {
      snprintf (detail, size, "forward_depth %zu: %zu*u >= 1 (u = 2^-%d, "
                "the reference's), gamma_d undefined", m->forward_depth,
                m->forward_depth, fbits);
      return GC_EINVAL;
    }
  return GC_OK;
}

/* Scales: s_i = max(|x_i|, rms of x over i's block), 1 where both vanish;
   magnitudes: the model's, or the largest |g_j| in i's block ("Adjoint
   rounding"), each at least |g_i|; g is the twin's gradient where the
   model has one (manual: "The f64 twin": a bug of the f32 path must not
   raise the bound it is judged by), else the f32 one.  */
static void
scales_and_magnitudes (shared *sh, const float *mag_model)
{
  const gc_model *m = sh->m;
  gc__scales (m, sh->x, sh->scale);     /* scales.c */
  sh->scale_random = gc__support_norm (sh->x, NULL, 0, sh->n);
  for (size_t i = 0; i < sh->n; i++)
    sh->mag[i] = mag_model ? fabs ((double) mag_model[i])
                 : fabs (sh->g64 ? sh->g64[i] : (double) sh->g[i]);
  if (!mag_model)
    gc__block_max (m, sh->mag, sh->mag);
  for (size_t i = 0; i < sh->n; i++)
    {
      /* A magnitude bounds its value: |x|^T|y| >= |x^T y| ("What the
         bar assumes").  Below half of it is no rounding: counted.  */
      double gi = fabs (sh->g64 ? sh->g64[i] : (double) sh->g[i]);
      if (sh->mag[i] < gi / 2)
        sh->r->n_magnitude_low++;
      sh->mag[i] = fmax (sh->mag[i], gi);
    }
}

/* The model's M_L (loss_magnitude_f32) at the centre into SH->mag_loss,
   each of its failures caught.  */
static gc_status
loss_magnitude (shared *sh, worker *w0)
{
  const gc_model *m = sh->m;
  int rc;
  union { float v; unsigned char b[sizeof (float) + LOSS_GUARD]; } l;
  gc__guard_fill (l.b + sizeof (float), LOSS_GUARD);
  l.v = 0;
  gc__fpenv_model (sh);
  rc = m->loss_magnitude_f32 (m->ctx, w0->xf, &l.v);
  gc__fpenv_reset (sh);
  float ml = l.v;
  if (rc)
    {
      gc__fail (w0, GC_ECALLBACK, rc, "loss_magnitude_f32 returned %d",
                rc);
      return w0->st;
    }
  if (!gc__guard_intact (l.b + sizeof (float), LOSS_GUARD))
    {
      gc__fail (w0, GC_EOVERRUN, 0, "loss_magnitude_f32 wrote past its "
                "output (one value)");
      return w0->st;
    }
  if (!gc__in_time (w0, "loss_magnitude_f32"))
    return w0->st;
  if (!isfinite (ml))
    {
      gc__fail (w0, GC_ENONFINITE, 0, "loss_magnitude_f32 gave a "
                "non-finite value");
      return w0->st;
    }
  sh->mag_loss = fabs ((double) ml);
  return GC_OK;
}

/* The f32 gradient at the centre into SH->g, its failures caught, and a
   second call that must give the same ("Determinism and reentrancy").  */
static gc_status
gradient (shared *sh, worker *w0)
{
  const gc_model *m = sh->m;
  gc_result *r = sh->r;
  int rc;
  gc__fpenv_model (sh);
  rc = m->grad_f32 (m->ctx, w0->xf, sh->g);
  gc__fpenv_reset (sh);
  if (rc)
    {
      gc__fail (w0, GC_ECALLBACK, rc, "grad_f32 returned %d", rc);
      return w0->st;
    }
  if (!gc__guarded_intact (sh->g, sh->n * sizeof *sh->g))
    {
      gc__fail (w0, GC_EOVERRUN, 0, "grad_f32 wrote outside its n = %zu "
                "floats", sh->n);
      return w0->st;
    }
  if (!gc__in_time (w0, "grad_f32"))
    return w0->st;
  for (size_t i = 0; i < sh->n; i++)
    if (!isfinite (sh->g[i]))
      {
        gc__fail (w0, GC_ENONFINITE, 0,
                  "grad_f32 gave a non-finite value at parameter %zu", i);
        return w0->st;
      }
  /* guarded like the first call's buffer (manual: "What is isolated") */
  float *g2 = gc__guarded_alloc (sh->n * sizeof *g2);
  if (!g2)
    return GC_ENOMEM;
  gc__fpenv_model (sh);
  rc = m->grad_f32 (m->ctx, w0->xf, g2);
  gc__fpenv_reset (sh);
  if (rc)
    {
      gc__guarded_free (g2);
      gc__fail (w0, GC_ECALLBACK, rc, "grad_f32 returned %d", rc);
      return w0->st;
    }
  if (!gc__guarded_intact (g2, sh->n * sizeof *g2))
    {
      gc__guarded_free (g2);
      gc__fail (w0, GC_EOVERRUN, 0, "grad_f32 wrote outside its n = %zu "
                "floats (second call)", sh->n);
      return w0->st;
    }
  size_t at = gc__float_spread (sh->g, g2, sh->n);
  if (at != SIZE_MAX)
    {
      char nm[96];
      gc_param_name (r, at, nm, sizeof nm);
      double a = sh->g[at], b = g2[at];
      double big = fmax (fabs (a), fabs (b));
      gc__note_nondeterminism (r, GC_ND_GRAD, at, a, b,
                               "grad_f32 gave %s = %.9g, then %.9g at the "
                               "same point (%.3g relative)", nm, a, b,
                               big > 0 ? fabs (a - b) / big : 0.0);
    }
  gc__guarded_free (g2);
  return GC_OK;
}

/* The model's magnitudes (grad_magnitude_f32) into a new guarded *MAG, its
   failures caught.  */
static gc_status
magnitudes (shared *sh, worker *w0, float **out)
{
  const gc_model *m = sh->m;
  int rc;
  float *mag = gc__guarded_alloc (sh->n * sizeof *mag);
  if (!mag)
    return GC_ENOMEM;
  gc__fpenv_model (sh);
  rc = m->grad_magnitude_f32 (m->ctx, w0->xf, mag);
  gc__fpenv_reset (sh);
  if (rc)
    {
      gc__guarded_free (mag);
      gc__fail (w0, GC_ECALLBACK, rc, "grad_magnitude_f32 returned %d",
                rc);
      return w0->st;
    }
  if (!gc__guarded_intact (mag, sh->n * sizeof *mag))
    {
      gc__guarded_free (mag);
      gc__fail (w0, GC_EOVERRUN, 0, "grad_magnitude_f32 wrote outside its "
                "n = %zu floats", sh->n);
      return w0->st;
    }
  if (!gc__in_time (w0, "grad_magnitude_f32"))
    {
      gc__guarded_free (mag);
      return w0->st;
    }
  for (size_t i = 0; i < sh->n; i++)
    if (!isfinite (mag[i]))
      {
        gc__guarded_free (mag);
        gc__fail (w0, GC_ENONFINITE, 0,
                  "grad_magnitude_f32 gave a non-finite value at "
                  "parameter %zu", i);
        return w0->st;
      }
  *out = mag;
  return GC_OK;
}

/* The tiered reference's f64 centre value, for its J (manual: "The
   tiered reference"), and whether f64 may decide.  */
static gc_status
tier_centre (shared *sh, worker *w0)
{
  gc_result *r = sh->r;
  double again;
  if (!gc__eval_f64 (w0, w0->xd, &sh->f0_64))
    return w0->st;
  if (!gc__eval_f64 (w0, w0->xd, &again))
    return w0->st;
  if (memcmp (&again, &sh->f0_64, sizeof again) != 0)
    gc__note_nondeterminism (r, GC_ND_REFERENCE, SIZE_MAX, sh->f0_64,
                             again, "loss_f64 gave %.17g, then %.17g at "
                             "the same point", sh->f0_64, again);
  /* f64 judges only when the two forwards agree at x within both
     evaluation bounds: else they are not one function (or f64 errs
     beyond its term), and MPFR decides every direction.  */
  double ml = fmax (fmax (sh->mag_loss, fabs (sh->f0)), fabs (sh->f0_64));
  sh->tier_f64 = fabs (sh->f0_64 - sh->f0)
                 <= gc__eval_error (GC_REF_F64, 53, r->lambda_forward,
                                    r->forward_depth, ml)
                    + fmax (gc__eval_error (GC_REF_MPFR, sh->p,
                                            r->lambda_forward,
                                            r->forward_depth, ml),
                            gc__gamma_over_step (sh->p, r->forward_depth,
                                                 ml, 1, 0));
  return GC_OK;
}

/* The centre value of the best forward (for J; SH->f0), each reference
   forward called twice ("Determinism and reentrancy"), and the tier's.  */
static gc_status
reference_centre (shared *sh, worker *w0, double lf32)
{
  gc_result *r = sh->r;
  double again;
  switch (sh->best)
    {
    case GC_REF_MPFR:
      mpfr_init2 (sh->f0_mpfr, sh->p);
      sh->have_f0_mpfr = true;
      if (!gc__eval_mpfr (w0, sh->f0_mpfr))
        return w0->st;
      sh->f0 = mpfr_get_d (sh->f0_mpfr, MPFR_RNDN);
      if (!gc__eval_mpfr (w0, w0->lv))
        return w0->st;
      if (!mpfr_equal_p (w0->lv, sh->f0_mpfr))
        gc__note_nondeterminism (r, GC_ND_REFERENCE, SIZE_MAX, sh->f0,
                                 mpfr_get_d (w0->lv, MPFR_RNDN),
                                 "loss_mpfr gave two values at the same point "
                                 "(%.17g, then %.17g)", sh->f0,
                                 mpfr_get_d (w0->lv, MPFR_RNDN));
      break;
    case GC_REF_F64:
      if (!gc__eval_f64 (w0, w0->xd, &sh->f0))
        return w0->st;
      if (!gc__eval_f64 (w0, w0->xd, &again))
        return w0->st;
      if (memcmp (&again, &sh->f0, sizeof again) != 0)
        gc__note_nondeterminism (r, GC_ND_REFERENCE, SIZE_MAX, sh->f0, again,
                                 "loss_f64 gave %.17g, then %.17g at the same "
                                 "point", sh->f0, again);
      break;
    case GC_REF_F32:
    case GC_REF_AUTO:   /* never the best forward */
      sh->f0 = lf32;
      break;
    }
  if (sh->ref == GC_REF_AUTO)
    return tier_centre (sh, w0);
  return GC_OK;
}

/* Manual: "Determinism and reentrancy", "Adjoint rounding", "The f64
   twin", "The tiered reference", "Measured rounding sensitivity": the
   model at the centre x, each callback called twice: the f32 loss and its
   magnitude M_L, the gradient, the magnitudes and scales (after the
   twin's gradient), the reference forwards' centre values, the rounding
   measurement, and the f32 forward's measured error.  */
static gc_status
centre (shared *sh, worker *w0)
{
  const gc_model *m = sh->m;
  gc_result *r = sh->r;
  double lf32, again;
  /* Callbacks read the worker's copy of x, never the caller's buffer: a
     callback that writes into its input is seen (gc__inputs_intact).  */
  if (!gc__eval_f32 (w0, w0->xf, &lf32))
    return w0->st;
  r->loss_f32 = lf32;
  /* Each callback twice at the centre ("Determinism and reentrancy").  */
  if (!gc__eval_f32 (w0, w0->xf, &again))
    return w0->st;
  if (memcmp (&lf32, &again, sizeof lf32) != 0)
    gc__note_nondeterminism (r, GC_ND_LOSS, SIZE_MAX, lf32, again,
                             "loss_f32 gave %.9g, then %.9g at the same point",
                             lf32, again);
  gc_status st;
  if (m->loss_magnitude_f32 && (st = loss_magnitude (sh, w0)) != GC_OK)
    return st;
  /* M_L is validated as the magnitudes are ("Adjoint rounding"): it
     bounds |L|, so one below half of it (0 included) is no rounding's
     magnitude; it is raised to |L|, and the report says so.  */
  if (m->loss_magnitude_f32)
    {
      r->loss_magnitude_declared = sh->mag_loss;
      r->loss_magnitude_low = sh->mag_loss < fabs (lf32) / 2;
    }
  r->loss_magnitude = fmax (sh->mag_loss, fabs (lf32));
  if ((st = gradient (sh, w0)) != GC_OK)
    return st;
  float *mag = NULL;
  if (m->grad_magnitude_f32 && (st = magnitudes (sh, w0, &mag)) != GC_OK)
    return st;
  /* Manual: "The f64 twin": the twin before the magnitudes, which it
     sets where they are defaulted or raised (the f32 gradient under test
     must not set the scale it is judged at) */
  if (m->grad_f64 && !sh->o->no_twin)
    {
      gc_status ts = gc__twin_centre (sh, w0);
      if (ts != GC_OK)
        {
          gc__guarded_free (mag);
          return ts;
        }
    }
  scales_and_magnitudes (sh, mag);
  gc__guarded_free (mag);

  if ((st = reference_centre (sh, w0, lf32)) != GC_OK)
    return st;
  /* Manual: "Measured rounding sensitivity": the float reference forward
     measured is f32's, f64's (the best forward whenever it is the
     reference), or the tiered check's f64 tier.  */
  gc_status ms = gc__measure_rounding (sh, w0,
                                       sh->ref == GC_REF_F32 ? lf32
                                       : sh->ref == GC_REF_AUTO ? sh->f0_64
                                       : sh->f0);
  if (ms == GC_OK)
    ms = gc__rounding_ratios (sh);
  if (ms != GC_OK)
    return ms;
  if (!gc__inputs_intact (w0))
    return w0->st;
  r->loss_reference = sh->f0;
  r->forward_budget_ulps = r->lambda_forward * sqrt ((double) r->forward_depth);
  /* Manual: "Rounding classes": the model's budget, not f32's  */
  if (r->n_precisions)
    r->forward_budget_ulps += gc__precision_forward_ulps (r);
  if (sh->best != GC_REF_F32)
    {
      double ulp = gc__ulp (r->loss_magnitude, 24);
      r->forward_error_ulps = ulp > 0 ? fabs (lf32 - sh->f0) / ulp : 0;
    }
  else
    r->forward_error_ulps = -1;
  return GC_OK;
}

/* The fields of R the options O and the model M set before validation.  */
static void
result_head (gc_result *r, const gc_model *m, const gc_options *o)
{
  r->worst = SIZE_MAX;
  r->verdict = GC_ERROR;
  r->n = m->n;
  /* The tiered reference is MPFR alone for a model without an f64
     forward (manual: "The tiered reference").  */
  r->reference = o->reference == GC_REF_AUTO && !m->loss_f64 ? GC_REF_MPFR
                 : o->reference;
  r->seed = o->seed;
  r->direction_kind = o->directions;
  r->false_alarm = o->false_alarm;
  r->shard_index = o->shard_index;
  r->shard_count = o->shard_count > 1 ? o->shard_count : 1;
  r->forward_error_ulps = -1;
  snprintf (r->model_name, sizeof r->model_name, "%s",
            m->name ? m->name : "model");
}

/* What the workers of the check share, from M, X, O and R: the reference,
   the forward behind the truncation term, the precision and the steps.  */
static void
shared_init (shared *sh, const gc_model *m, const float *x,
             const gc_options *o, gc_result *r)
{
  memset (sh, 0, sizeof *sh);
  sh->m = m;
  sh->x = x;
  sh->o = o;
  sh->r = r;
  sh->n = m->n;
  sh->ref = r->reference;
  sh->p = o->precision ? o->precision : gc__default_precision ();
  /* The forward behind the truncation term and J ("Truncation"): the
     reference itself in MPFR and f64 modes; in f32 mode a more precise one,
     f64 first (its noise is 2^-29 of f32's, and it costs far less than
     MPFR), else MPFR, else f32 itself.  */
  sh->best = sh->ref;
  if (sh->ref == GC_REF_F32)
    sh->best = m->loss_f64 ? GC_REF_F64
               : m->loss_mpfr ? GC_REF_MPFR : GC_REF_F32;
  /* Tiered: MPFR's centre value and working set; each reference's own
     truncation and J (manual: "The tiered reference").  */
  if (sh->ref == GC_REF_AUTO)
    sh->best = GC_REF_MPFR;
  sh->user_step = o->step > 0;
  sh->h_user = o->step;
  sh->err_pos = SIZE_MAX;
  sh->deadline = gc__deadline (o->timeout);
  atomic_init (&sh->done, 0);
  atomic_init (&sh->stop, 0);
  r->precision = (sh->ref == GC_REF_MPFR || sh->best == GC_REF_MPFR)
                 ? sh->p : 0;
  /* tiered: MPFR, the centre's forward (each direction's truncation is
     its deciding reference's: manual "The tiered reference") */
  r->truncation_source = sh->best;
  r->step_exponent = gc__default_step_exponent (sh->ref, sh->p);
  sh->step_exponent_64 = gc__default_step_exponent (GC_REF_F64, sh->p);
  /* h_mpfr / h_f64 (manual: "The tiered reference")  */
  sh->tier_rho = sh->user_step ? 1
                : ldexp (1.0, (int) r->step_exponent - sh->step_exponent_64);
}

/* Manual: "The confidence factor", "Directional checks": the directions
   of the whole check (*TOTAL) and this shard's part (*MINE), the depths
   and the confidence factors.  GC_OK, or GC_EINVAL in R.  */
static gc_status
plan (gc_result *r, const gc_model *m, const gc_options *o, size_t *total_out,
      size_t *mine_out)
{
  /* Directions of the whole check, then this shard's part.  */
  if (o->directions == GC_DIR_RANDOM && o->random_per_block && m->n_blocks)
    {
      if (o->n_random > SIZE_MAX / m->n_blocks)
        {
          r->status = GC_EINVAL;
          snprintf (r->detail, sizeof r->detail, "%zu random directions in "
                    "each of %zu blocks are too many", o->n_random,
                    m->n_blocks);
          return r->status;
        }
      r->random_per_block = o->n_random;
    }
  size_t total = o->directions == GC_DIR_ALL ? m->n
                 : r->random_per_block ? o->n_random * m->n_blocks
                 : o->directions == GC_DIR_RANDOM ? o->n_random
                 : o->n_indices;
  size_t sc = r->shard_count;
  size_t mine = total / sc + (o->shard_index < total % sc ? 1 : 0);
  r->n_total = total;
  r->n_directions = mine;
  r->forward_depth = m->forward_depth ? m->forward_depth : m->n;
  r->backward_depth = m->backward_depth ? m->backward_depth : m->n;
  r->defaulted = (m->forward_depth ? 0 : GC_DEFAULTED_FORWARD_DEPTH)
                 | (m->backward_depth ? 0 : GC_DEFAULTED_BACKWARD_DEPTH)
                 | (m->grad_magnitude_f32 ? 0 : GC_DEFAULTED_MAGNITUDES)
                 | (m->loss_magnitude_f32 ? 0 : GC_DEFAULTED_LOSS_MAGNITUDE);
  /* Two probabilistic bounds per direction (reference and adjoint).  */
  r->lambda_forward = gc__lambda (o->false_alarm, 2 * total, r->forward_depth);
  /* Manual: "Rounding classes": each declared backward class is one more
     bound per direction.  */
  r->lambda_backward
    = gc__lambda (o->false_alarm,
                  (2 + gc__precision_backward_count (r)) * total,
                  r->backward_depth);
  /* A rate too small to share among the check's bounds (each takes
     alpha / 2M of it, a random direction's parts a quarter of that:
     manual "The confidence factor", "Directional checks") would make
     every bar infinite, and an infinite bar passes anything.  */
  if (!isfinite (r->lambda_forward) || !isfinite (r->lambda_backward)
      || !(o->false_alarm / (8.0 * (double) (total ? total : 1)) >= DBL_MIN))
    {
      r->status = GC_EINVAL;
      snprintf (r->detail, sizeof r->detail, "the false-alarm probability "
                "%g is too small to share among the %zu directions' bounds "
                "(each needs a normal double)", o->false_alarm, total);
      r->n_directions = 0;   /* none made: a result has the directions it
                                counts */
      return r->status;
    }
  *total_out = total;
  *mine_out = mine;
  return GC_OK;
}

/* R's MINE directions and the check's gradient, magnitudes and scales,
   and X known finite.  GC_OK, or the status in R with nothing left
   allocated but R's.  */
static gc_status
allocate (shared *sh, gc_result *r, const gc_model *m, const float *x,
          size_t mine)
{
  r->dirs = gc__within_memory ((double) mine * sizeof *r->dirs)
            ? calloc (mine ? mine : 1, sizeof *r->dirs) : NULL;
  sh->g = gc__guarded_alloc (m->n * sizeof *sh->g);
  sh->mag = malloc (m->n * sizeof *sh->mag);
  sh->scale = malloc (m->n * sizeof *sh->scale);
  if (!r->dirs || !sh->g || !sh->mag || !sh->scale
      || pthread_mutex_init (&sh->lock, NULL) != 0)
    {
      gc__guarded_free (sh->g);
      free (sh->mag);
      free (sh->scale);
      /* No half result: a result without its directions has none.  */
      bool no_dirs = !r->dirs;
      free (r->dirs);
      r->dirs = NULL;
      r->n_directions = 0;
      r->status = GC_ENOMEM;
      if (no_dirs)
        snprintf (r->detail, sizeof r->detail, "the %zu directions of this "
                  "check cannot be allocated", mine);
      else
        snprintf (r->detail, sizeof r->detail, "%s", gc_strerror (r->status));
      return r->status;
    }
  if ((r->status = gc__point_finite (x, m->n, r->detail, sizeof r->detail))
      != GC_OK)
    {
      gc__guarded_free (sh->g);
      free (sh->mag);
      free (sh->scale);
      pthread_mutex_destroy (&sh->lock);
      r->n_directions = 0;
      return r->status;
    }
  return r->status;
}

/* Each of R's MINE directions: its id in the whole check, the judge's
   defaults, and its coordinate (REF: the check's reference).  */
static void
directions_init (gc_result *r, const gc_options *o, gc_reference ref,
                 size_t mine)
{
  size_t sc = r->shard_count;
  for (size_t k = o->shard_index, pos = 0; pos < mine; k += sc)
    {
      gc_direction *d = &r->dirs[pos++];
      d->id = k;
      d->verdict = GC_ERROR;
      d->decided_by = ref == GC_REF_AUTO ? GC_REF_MPFR : ref;
      d->analytic_f64 = d->bar_f64 = d->nu_f64 = d->resolution_f64 = NAN;
      d->richardson = NAN;
      d->arith_diff = d->arith_bar = d->nu_arith = NAN;
      d->verdict_algorithm = GC_ERROR;
      d->arith = GC_ARITH_NONE;
      d->index = o->directions == GC_DIR_ALL ? k
                 : o->directions == GC_DIR_LIST ? o->indices[k] : SIZE_MAX;
    }
}

/* Whether the MPFR working set of NT workers fits (manual: "Memory").
   GC_OK or GC_ENOMEM, said in the result.  */
static gc_status
mpfr_room (shared *sh, unsigned nt)
{
  const gc_model *m = sh->m;
  gc_result *r = sh->r;
  gc_status st = GC_OK;
  if (sh->ref == GC_REF_MPFR || sh->best == GC_REF_MPFR)
    {
      double per = (double) m->n * (gc__mpfr_bytes (128)
                                    + gc__mpfr_bytes (sh->p))
                   + 9 * gc__mpfr_bytes (2 * sh->p);
      double bytes = nt * per + gc__mpfr_bytes (sh->p);
      if (!gc__fits (bytes))
        {
          st = GC_ENOMEM;
          r->n_directions = 0;      /* none was checked */
          snprintf (r->detail, sizeof r->detail, "the MPFR working set, about "
                    "%.3g MiB (%zu parameters at %ld bits, %u worker%s), "
                    "cannot be allocated", bytes / 1048576.0, m->n,
                    (long) sh->p, nt, nt > 1 ? "s" : "");
        }
    }
  return st;
}

/* The NT workers WS over the directions, worker 0 on this thread; with
   more than one, a serial recheck (manual: "Determinism and
   reentrancy").  */
static gc_status
run_workers (shared *sh, worker *ws, unsigned nt)
{
  gc_result *r = sh->r;
  gc_status st = GC_OK;
  pthread_t *tids = calloc (nt, sizeof *tids);
  unsigned started = 0;
  if (!tids)
    st = GC_ENOMEM;
  else
    {
      for (unsigned t = 1; t < nt; t++, started++)
        if (pthread_create (&tids[t], NULL, gc__worker_run, &ws[t]) != 0)
          break;
      gc__worker_run (&ws[0]);
      for (unsigned t = 1; t <= started; t++)
        pthread_join (tids[t], NULL);
      if (started + 1 < nt)
        {
          /* Directions of the threads that could not start.  */
          for (unsigned t = started + 1; t < nt; t++)
            gc__worker_run (&ws[t]);
        }
      free (tids);
    }
  if (st == GC_OK)
    st = r->status;
  if (st == GC_OK && nt > 1 && !gc__recheck_serial (sh, &ws[0]))
    {
      st = ws[0].st;
      r->callback_code = ws[0].cb;
      snprintf (r->detail, sizeof r->detail, "%s", ws[0].detail);
    }
  return st;
}

/* Start the NT workers, measure the centre on the first, run them all,
   free them.  A worker that fails to start cleans up after itself: only
   the ready ones are freed.  */
static gc_status
work (shared *sh, unsigned nt)
{
  gc_result *r = sh->r;
  worker *ws = calloc (nt, sizeof *ws);
  unsigned ready = 0;
  gc_status st = ws ? GC_OK : GC_ENOMEM;
  while (st == GC_OK && ready < nt)
    if (gc__worker_init (&ws[ready], sh, ready, nt))
      ready++;
    else
      st = GC_ENOMEM;
  if (st == GC_OK)
    st = centre (sh, &ws[0]);
  if (st == GC_OK)
    st = run_workers (sh, ws, nt);
  else if (ws && ready > 0 && ws[0].st != GC_OK)
    {
      r->callback_code = ws[0].cb;
      snprintf (r->detail, sizeof r->detail, "%s", ws[0].detail);
    }
  if (ws)
    {
      for (unsigned t = 0; t < ready; t++)
        gc__worker_free (&ws[t]);
      free (ws);
    }
  return st;
}

/* Free what SH holds.  */
static void
shared_free (shared *sh)
{
  gc__twin_free (sh);
  if (sh->have_f0_mpfr)
    mpfr_clear (sh->f0_mpfr);
  pthread_mutex_destroy (&sh->lock);
  gc__guarded_free (sh->g);
  for (int k = 0; k < GC_N_MODES; k++)
    gc__guarded_free (sh->gm[k]);
  free (sh->mag);
  free (sh->scale);
  mpfr_free_cache2 (MPFR_FREE_LOCAL_CACHE);
}

static gc_status
check (const gc_model *m, const float *x, const gc_options *opts,
       gc_result **out, const fenv_t *model_env, int model_round)
{
  if (!out)
    return GC_EINVAL;
  *out = NULL;
  gc_options defaults;
  gc_options_init (&defaults);
  const gc_options *o = opts ? opts : &defaults;
  if (!m || !x)
    return GC_EINVAL;
  /* A model of ABI version 1 ends before grad_f64: read as one without a
     twin; one of version 2 before the rounding classes and the tangents
     (abi.c).  */
  gc_model v2;
  m = gc__model_by_abi (m, &v2);

  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return GC_ENOMEM;
  *out = r;
  result_head (r, m, o);

  r->truncation_source = r->reference;
  r->status = validate (m, x, o, r->detail, sizeof r->detail);
  if (r->status != GC_OK)
    {
      if (!r->detail[0])
        gc__detail_status (r, m, o);
      return r->status;
    }
  /* Manual: "Rounding classes" */
  if ((r->status = gc__precision_validate (m, r->detail, sizeof r->detail))
      != GC_OK)
    return r->status;
  if (!gc__precision_copy (r, m))
    return r->status = GC_ENOMEM;
  if (o->reference == GC_REF_F32 && gc__precision_forward_count (r))
    {
      snprintf (r->detail, sizeof r->detail, "an f32 reference of a model "
                "with forward rounding classes: its forward is not f32's "
                "(manual: \"Rounding classes\")");
      return r->status = GC_EINVAL;
    }
  if ((r->status = gc__copy_blocks (r, m->blocks, m->n_blocks)) != GC_OK
      || (r->status = gc__copy_constants (r, m->constants, m->n_constants))
         != GC_OK)
    return r->status;

  shared sh;
  shared_init (&sh, m, x, o, r);
  sh.model_env = *model_env;
  sh.model_round = model_round;

  size_t total, mine;
  if (plan (r, m, o, &total, &mine) != GC_OK)
    return r->status;

  if (allocate (&sh, r, m, x, mine) != GC_OK)
    return r->status;
  /* Read x only once its n floats are known to fit (a lying n must not
     make the digest read past it).  */
  /* the twin is part of what the check is (manual: "The f64 twin") */
  r->twin = m->grad_f64 && !o->no_twin;
  gc__identity_set (r, x, m->n, o);   /* manual: "Merging shards" */
  /* This shard's ids only: a check of SIZE_MAX directions over as many
     shards has a few, and must not walk the others.  */
  directions_init (r, o, sh.ref, mine);

  unsigned nt = o->threads > 1 ? o->threads : 1;
  if (nt > mine && mine > 0)
    nt = (unsigned) mine;
  /* The MPFR numbers of the check, estimated and tried before any is made:
     GMP aborts when an allocation fails (manual: "Memory").  Per worker:
     the point (n numbers of up to 128 bits once a step is added), the
     model's copy of it at p (an estimate of the reference forward's own
     work, which only the model knows), nine of the stencil at 2p.  */
  gc_status st = mpfr_room (&sh, nt);
  if (st == GC_OK)
    st = work (&sh, nt);
  shared_free (&sh);

  r->status = st;
  if (st != GC_OK && !r->detail[0])
    snprintf (r->detail, sizeof r->detail, "%s", gc_strerror (st));
  gc__summarise (r);
  /* A model that is not a function gets no failure diagnosis
     ("Determinism and reentrancy").  */
  if (st == GC_OK && !r->nondeterministic)
    {
      gc__diagnose (r);
      gc__twin_findings (r);   /* manual: "Two verdicts, one report" */
      gc__predict_f64 (r, m->loss_f64 != NULL, sh.user_step);
    }
  return st;
}

/* The floating-point environment (manual: "Floating-point environment"):
   the model runs in the caller's without its traps (feholdexcept: flags
   cleared, the rounding mode and flush-to-zero kept), the check's own
   arithmetic in the default one, whatever the caller or a callback
   enabled; the caller's is set back whole on return.  */
gc_status
gc_check (const gc_model *m, const float *x, const gc_options *opts,
          gc_result **out)
{
  fenv_t caller, model;
  feholdexcept (&caller);
  fegetenv (&model);
  int round = fegetround ();
  fesetenv (FE_DFL_ENV);
  gc_status st = check (m, x, opts, out, &model, round);
  fesetenv (&caller);
  return st;
}
