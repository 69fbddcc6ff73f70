/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* centre.c -- gc_check's centre (manual: "Determinism and reentrancy",
   "Adjoint rounding"): the f32 gradient, the model's magnitudes, the
   default steps' scales, the reference's centre value and the noise
   measured there, before any direction.  */

#include "model/check-internal.h"

#include <float.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  /* Manual: "Unwritten elements": each call's buffer holds a fill
     pattern of its own */
  gc__unwritten_fill (sh->g, sh->n, false, 0);
  double tc = gc__call_start ();
  gc__fpenv_model (sh);
  rc = m->grad_f32 (m->ctx, w0->xf, sh->g);
  gc__fpenv_reset (sh);
  gc__call_count (w0, GC_CALL_KIND_BACKWARD, tc);
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
  /* an element still holding the pattern is judged after the second call
     (unwritten, or NaN) */
  bool held = gc__unwritten_any (sh->g, sh->n, false) > 0;
  for (size_t i = 0; i < sh->n && !held; i++)
    if (!isfinite (sh->g[i]))
      {
        char at[128];
        gc__fail (w0, GC_ENONFINITE, 0, "grad_f32 gave a non-finite value "
                  "at %s", gc__param_at (sh->r, i, at, sizeof at));
        return w0->st;
      }
  /* guarded like the first call's buffer (manual: "What is isolated") */
  float *g2 = gc__guarded_alloc (sh->n * sizeof *g2);
  if (!g2)
    return GC_ENOMEM;
  gc__unwritten_fill (g2, sh->n, false, 1);
  tc = gc__call_start ();
  gc__fpenv_model (sh);
  rc = m->grad_f32 (m->ctx, w0->xf, g2);
  gc__fpenv_reset (sh);
  gc__call_count (w0, GC_CALL_KIND_BACKWARD, tc);
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
  if (held)
    {
      char what[160];
      if (gc__unwritten_list (r, sh->g, g2, sh->n, false, "grad_f32", what,
                              sizeof what))
        {
          gc__guarded_free (g2);
          gc__fail (w0, GC_EUNWRITTEN, 0, "%s", what);
          return w0->st;
        }
      for (size_t i = 0; i < sh->n; i++)
        if (!isfinite (sh->g[i]))
          {
            char at[128];
            gc__guarded_free (g2);
            gc__fail (w0, GC_ENONFINITE, 0, "grad_f32 gave a non-finite "
                      "value at %s", gc__param_at (sh->r, i, at, sizeof at));
            return w0->st;
          }
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
        char at[128];
        gc__guarded_free (mag);
        gc__fail (w0, GC_ENONFINITE, 0,
                  "grad_magnitude_f32 gave a non-finite value at %s",
                  gc__param_at (sh->r, i, at, sizeof at));
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
gc_status
gc__centre (shared *sh, worker *w0)
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
