/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* forward.c -- the forward oracle: the model's f32 outputs against its MPFR
   reference outputs, element by element (manual: "The forward oracle").  */

#include "base/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static gc_status
validate (const gc_model *m, const float *x, const gc_options *o)
{
  if (!gc__model_abi_known (m->abi))
    return GC_EABI;
  if (m->n == 0)
    return GC_EEMPTY;
  if (!m->outputs_f32 || !m->outputs_mpfr || m->n_outputs == 0)
    return GC_ENOREF;
  if (o->precision != 0 && !gc__precision_usable (o->precision))
    return GC_EPREC;
  if (!(o->false_alarm > 0 && o->false_alarm < 1))
    return GC_EINVAL;
  if (!gc__blocks_valid (m->output_blocks, m->n_output_blocks, m->n_outputs))
    return GC_EINVAL;
  if (m->n_constants && !m->constants)
    return GC_EINVAL;
  if (!(o->timeout >= 0) || !isfinite (o->timeout))
    return GC_EINVAL;
  /* sizes whose arrays cannot even be sized (see check.c)  */
  if (m->n > SIZE_MAX / 64 || m->n_outputs > SIZE_MAX / 64)
    return GC_ENOMEM;
  (void) x;     /* read once its arrays exist: gc__point_finite */
  return GC_OK;
}

/* Guard numbers after the MPFR outputs: a callback writing OUT + n_outputs
   or further changes their value (manual: "What is isolated").  */
#define OUT_GUARDS 4
#define OUT_GUARD_VALUE 3

static bool
out_guards_intact (mpfr_srcptr g)
{
  for (int k = 0; k < OUT_GUARDS; k++)
    if (mpfr_get_prec (g + k) != 2 || !mpfr_number_p (g + k)
        || mpfr_cmp_ui (g + k, OUT_GUARD_VALUE) != 0)
      return false;
  return true;
}

static gc_status
stop (gc_result *r, gc_status st, int code, const char *what)
{
  if (r->status != GC_OK)
    return r->status;
  r->status = st;
  r->callback_code = code;
  snprintf (r->detail, sizeof r->detail, "%s", what);
  return st;
}

/* The time limit (gc_options.timeout) reached after the call of NAME
   stops the check.  */
static void
in_time (gc_result *r, const gc_options *o, double deadline,
         const char *name)
{
  if (r->status == GC_OK && deadline > 0 && gc__now () > deadline)
    {
      char what[160];
      snprintf (what, sizeof what, "%g s, reached after a call of %s",
                o->timeout, name);
      stop (r, GC_ETIMEOUT, 0, what);
    }
}

/* The f32 outputs at X into OF and their magnitudes into MAG: the model's
   (outputs_magnitude_f32), else the largest |output| of each output
   tensor; each callback's failure stops R.  */
static void
f32_outputs (gc_result *r, const gc_model *m, const float *x,
             const gc_options *o, const fenv_t *model_env, double deadline,
             float *of, float *mag)
{
  size_t no = m->n_outputs;
  /* the model's environment around each callback, the library's after
     it (manual: "Floating-point environment") */
  fesetenv (model_env);
  int rc = m->outputs_f32 (m->ctx, x, of);
  fesetenv (FE_DFL_ENV);
  if (rc)
    stop (r, GC_ECALLBACK, rc, "outputs_f32 failed");
  if (!gc__guarded_intact (of, no * sizeof *of))
    stop (r, GC_EOVERRUN, 0, "outputs_f32 wrote outside its n_outputs floats");
  in_time (r, o, deadline, "outputs_f32");
  for (size_t k = 0; k < no && r->status == GC_OK; k++)
    if (!isfinite (of[k]))
      stop (r, GC_ENONFINITE, 0, "outputs_f32 gave a non-finite output");
  if (r->status == GC_OK && m->outputs_magnitude_f32)
    {
      fesetenv (model_env);
      rc = m->outputs_magnitude_f32 (m->ctx, x, mag);
      fesetenv (FE_DFL_ENV);
      if (rc)
        stop (r, GC_ECALLBACK, rc, "outputs_magnitude_f32 failed");
      if (!gc__guarded_intact (mag, no * sizeof *mag))
        stop (r, GC_EOVERRUN, 0, "outputs_magnitude_f32 wrote outside its "
              "n_outputs floats");
      in_time (r, o, deadline, "outputs_magnitude_f32");
      for (size_t k = 0; k < no && r->status == GC_OK; k++)
        if (!isfinite (mag[k]))
          stop (r, GC_ENONFINITE, 0,
                "outputs_magnitude_f32 gave a non-finite value");
    }
  else if (r->status == GC_OK)
    {
      /* The largest |output| of the tensor holding k ("The forward
         oracle", as for "Adjoint rounding").  */
      size_t nb = m->n_output_blocks ? m->n_output_blocks : 1;
      for (size_t b = 0; b < nb; b++)
        {
          size_t off = m->n_output_blocks ? m->output_blocks[b].offset : 0;
          size_t cnt = m->n_output_blocks ? m->output_blocks[b].count : no;
          float mx = 0;
          for (size_t k = off; k < off + cnt; k++)
            mx = fmaxf (mx, fabsf (of[k]));
          for (size_t k = off; k < off + cnt; k++)
            mag[k] = mx;
        }
    }
}

/* The MPFR outputs at X (XM, at 24 bits) into OM at P bits, followed by
   OUT_GUARDS guard numbers; each callback's failure stops R.  */
static void
mpfr_outputs (gc_result *r, const gc_model *m, const float *x,
              const gc_options *o, const fenv_t *model_env, double deadline,
              __mpfr_struct *xm, __mpfr_struct *om, mpfr_prec_t p)
{
  size_t n = m->n, no = m->n_outputs;
  int rc;
  for (size_t i = 0; i < n; i++)
    {
      mpfr_init2 (xm + i, 24);
      mpfr_set_flt (xm + i, x[i], MPFR_RNDN);
    }
  for (size_t k = 0; k < no; k++)
    mpfr_init2 (om + k, p);
  for (size_t k = no; k < no + OUT_GUARDS; k++)
    {
      mpfr_init2 (om + k, 2);
      mpfr_set_ui (om + k, OUT_GUARD_VALUE, MPFR_RNDN);
    }
  if (r->status == GC_OK)
    {
      fesetenv (model_env);
      rc = m->outputs_mpfr (m->ctx, xm, om);
      fesetenv (FE_DFL_ENV);
      if (rc)
        stop (r, GC_ECALLBACK, rc, "outputs_mpfr failed");
      if (!out_guards_intact (om + no))
        stop (r, GC_EOVERRUN, 0, "outputs_mpfr wrote past its n_outputs "
              "numbers");
      in_time (r, o, deadline, "outputs_mpfr");
      for (size_t k = 0; k < no && r->status == GC_OK; k++)
        if (!mpfr_number_p (om + k))
          stop (r, GC_ENONFINITE, 0, "outputs_mpfr gave a non-finite output");
    }
}

/* Each output k of R judged: the f32 output OF[k] against the reference
   OM[k], at the magnitude max(|MAG[k]|, |reference|) (manual: "The forward
   oracle").  */
static void
judge_outputs (gc_result *r, const float *of, const float *mag,
               __mpfr_struct *om, mpfr_prec_t p)
{
  size_t no = r->n;
  for (size_t k = 0; k < no && r->status == GC_OK; k++)
    {
      gc_direction *d = &r->dirs[k];
      d->id = d->index = k;
      gc__direction_no_twin (d);   /* the oracle has no twin */
      d->analytic = of[k];
      d->reference = mpfr_get_d (om + k, MPFR_RNDN);
      d->forward_error_ulps = -1;
      double mk = fmax (fabs ((double) mag[k]), fabs (d->reference));
      gc__terms_output (d->terms, r->lambda_forward, r->forward_depth, p, mk,
                        d->reference);
      gc__precision_output (r, &d->terms[GC_TERM_OUTPUT], r->lambda_forward,
                            mk);
      d->jump_next = d->bar_worst_case = NAN;   /* gradient checks only */
      gc__judge (d, 0);
    }
}

/* The fields of R the options O and the model M set before validation.  */
static void
result_head (gc_result *r, const gc_model *m, const gc_options *o)
{
  r->kind = GC_CHECK_FORWARD;
  r->verdict = GC_ERROR;
  r->worst = SIZE_MAX;
  r->reference = GC_REF_MPFR;
  r->false_alarm = o->false_alarm;
  r->shard_count = 1;
  r->forward_error_ulps = -1;
  r->depth_implied_at = SIZE_MAX;    /* manual: "JSON report": none */
  snprintf (r->model_name, sizeof r->model_name, "%s",
            m->name ? m->name : "model");
}

/* R's outputs, precision P, depth and confidence factor (manual: "The
   forward oracle").  */
static void
plan (gc_result *r, const gc_model *m, const gc_options *o, mpfr_prec_t p)
{
  size_t n = m->n, no = m->n_outputs;
  r->n = no;
  r->precision = p;
  r->n_total = r->n_directions = no;
  r->forward_depth = m->output_depth ? m->output_depth
                     : m->forward_depth ? m->forward_depth : n;
  r->backward_depth = r->forward_depth;
  /* Two bounds per element: the f32 output's and the reference's.  */
  r->lambda_forward = r->lambda_backward
    = gc__lambda (o->false_alarm, 2 * no, r->forward_depth);
}

static gc_status
forward_check (const gc_model *m, const float *x, const gc_options *opts,
               gc_result **out, const fenv_t *model_env)
{
  if (!out)
    return GC_EINVAL;
  *out = NULL;
  if (!m || !x)
    return GC_EINVAL;
  gc_options defaults;
  gc_options_init (&defaults);
  const gc_options *o = opts ? opts : &defaults;
  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return GC_ENOMEM;
  *out = r;
  result_head (r, m, o);
  gc_status st = validate (m, x, o);
  if (st == GC_ENOREF && m && (m->n_outputs == 0 || !m->outputs_f32))
    return stop (r, st, 0, "the model declares no outputs for the oracle "
                 "to compare (n_outputs, outputs_f32, outputs_mpfr); "
                 "gradcheck run checks its gradient");
  if (st == GC_ENOREF && m)
    return stop (r, st, 0, "the model has f32 outputs but no MPFR outputs "
                 "(outputs_mpfr) to compare them with");
  if (st != GC_OK)
    return stop (r, st, 0, gc_strerror (st));
  size_t n = m->n, no = m->n_outputs;
  mpfr_prec_t p = o->precision ? o->precision : gc__default_precision ();
  plan (r, m, o, p);
  /* Manual: "Rounding classes": the forward's classes, one more bound
     per element each  */
  char why[sizeof r->detail];
  if ((st = gc__precision_validate (m, why, sizeof why)) != GC_OK)
    return stop (r, st, 0, why);
  if (!gc__precision_copy (r, m))
    return stop (r, GC_ENOMEM, 0, gc_strerror (GC_ENOMEM));
  if (gc__precision_forward_count (r))
    r->lambda_forward = r->lambda_backward
      = gc__lambda (o->false_alarm,
                    (2 + gc__precision_forward_count (r)) * m->n_outputs,
                    r->forward_depth);
  if ((st = gc__copy_blocks (r, m->output_blocks, m->n_output_blocks))
      != GC_OK
      || (st = gc__copy_constants (r, m->constants, m->n_constants)) != GC_OK)
    return stop (r, st, 0, gc_strerror (st));

  /* The MPFR numbers, estimated and tried first (manual: "Memory"): the
     point at 24 bits, the outputs at p, the model's copy of the point at
     p (an estimate of the reference's own work).  */
  double bytes = (double) n * (gc__mpfr_bytes (24) + gc__mpfr_bytes (p))
                 + (double) (no + OUT_GUARDS) * gc__mpfr_bytes (p);
  if (!gc__fits (bytes))
    {
      r->n_directions = 0;
      char what[160];
      snprintf (what, sizeof what, "the MPFR working set, about %.3g MiB "
                "(%zu inputs, %zu outputs at %ld bits), cannot be allocated",
                bytes / 1048576.0, n, no, (long) p);
      return stop (r, GC_ENOMEM, 0, what);
    }
  float *of = gc__guarded_alloc (no * sizeof *of);
  float *mag = gc__guarded_alloc (no * sizeof *mag);
  __mpfr_struct *xm = malloc (n * sizeof *xm);
  __mpfr_struct *om = malloc ((no + OUT_GUARDS) * sizeof *om);
  r->dirs = gc__within_memory ((double) no * sizeof *r->dirs)
            ? calloc (no, sizeof *r->dirs) : NULL;
  if (!of || !mag || !xm || !om || !r->dirs)
    {
      gc__guarded_free (of);
      gc__guarded_free (mag);
      free (xm);
      free (om);
      /* No half result: a result without its directions has none.  */
      free (r->dirs);
      r->dirs = NULL;
      r->n_directions = 0;
      return stop (r, GC_ENOMEM, 0, gc_strerror (GC_ENOMEM));
    }
  char what[160];
  /* the input's blocks name the element where they are valid (this check
     reads them nowhere else, so it does not refuse them)  */
  bool named = gc__blocks_valid (m->blocks, m->n_blocks, n);
  if ((st = gc__point_finite (x, n, named ? m->blocks : NULL,
                              named ? m->n_blocks : 0, what, sizeof what))
      != GC_OK)
    {
      gc__guarded_free (of);
      gc__guarded_free (mag);
      free (xm);
      free (om);
      r->n_directions = 0;
      return stop (r, st, 0, what);
    }
  /* x is read once its n floats are known to fit.  */
  gc__identity_set (r, x, n, o);   /* manual: "Merging shards" */
  double deadline = gc__deadline (o->timeout);
  f32_outputs (r, m, x, o, model_env, deadline, of, mag);
  mpfr_outputs (r, m, x, o, model_env, deadline, xm, om, p);
  judge_outputs (r, of, mag, om, p);
  for (size_t i = 0; i < n; i++)
    mpfr_clear (xm + i);
  for (size_t k = 0; k < no + OUT_GUARDS; k++)
    mpfr_clear (om + k);
  free (xm);
  free (om);
  gc__guarded_free (of);
  gc__guarded_free (mag);
  mpfr_free_cache2 (MPFR_FREE_LOCAL_CACHE);
  if (r->status != GC_OK)
    r->n_directions = 0;
  gc__summarise (r);
  if (r->status == GC_OK)
    gc__diagnose (r);
  return r->status;
}

/* The floating-point environments as in gc_check.  */
gc_status
gc_forward_check (const gc_model *m, const float *x, const gc_options *opts,
                  gc_result **out)
{
  fenv_t caller, model;
  feholdexcept (&caller);
  fegetenv (&model);
  fesetenv (FE_DFL_ENV);
  gc_status st = forward_check (m, x, opts, out, &model);
  fesetenv (&caller);
  return st;
}
