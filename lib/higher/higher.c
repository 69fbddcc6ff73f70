/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* higher.c -- what the checks beyond the gradient share (manual: "Beyond
   the gradient"): the names of their kinds, one guarded call of a model's
   vector callback (jvp_f32, hvp_f32, grad_f32, grad_f64) under a chosen
   rounding mode, a refused result, and the default magnitudes and scales
   of a vector.  */

#include "higher/higher.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[GC_N_KINDS] = {
  "gradient", "forward", "jvp", "hvp" };
static const char *const kind_labels[GC_N_KINDS] = {
  "", "forward oracle, ", "JVP check, ", "HVP check, " };

const char *
gc__kind_name (gc_check_kind kind)
{
  return (unsigned) kind < GC_N_KINDS ? kind_names[kind] : "gradient";
}

const char *
gc__kind_label (gc_check_kind kind)
{
  return (unsigned) kind < GC_N_KINDS ? kind_labels[kind] : "";
}

void
gc__kind_depths (gc_check_kind kind, const char *name[2],
                 const char *dflt[2])
{
  static const char *const names[GC_N_KINDS][2] = {
    { "d_f", "d_b" }, { "d_f", "d_b" }, { "d_f", "d_t" }, { "d_b", "d_H" } };
  static const char *const dflts[GC_N_KINDS][2] = {
    { "n", "n" }, { "n", "n" }, { "n", "2 d_f" }, { "n", "d_f + d_b" } };
  unsigned k = (unsigned) kind < GC_N_KINDS ? (unsigned) kind : 0;
  for (int j = 0; j < 2; j++)
    {
      name[j] = names[k][j];
      dflt[j] = dflts[k][j];
    }
}

void
gc__env_enter (gc__env *e, const gc_options *o)
{
  feholdexcept (&e->caller);
  fegetenv (&e->model);
  e->round = fegetround ();
  fesetenv (FE_DFL_ENV);
  e->deadline = gc__deadline (o->timeout);
  e->timeout = o->timeout;
}

void
gc__env_leave (gc__env *e)
{
  fesetenv (&e->caller);
}

/* What the callback kinds take and give.  */
static const char *const call_names[] = { "jvp_f32", "hvp_f32", "grad_f32",
                                          "grad_f64", "loss_f32", "loss_f64",
                                          "loss_magnitude_f32", "hvp_f64" };

/* One call of callback WHICH under rounding MODE in the model's
   environment.  */
static int
invoke (const gc_model *m, const gc__env *e, gc__callee which, int mode,
        void *xc, void *vc, void *oc)
{
  fesetenv (&e->model);
  fesetround (mode);
  int rc = 0;
  switch (which)
    {
    case GC_CALL_JVP: rc = m->jvp_f32 (m->ctx, xc, vc, oc); break;
    case GC_CALL_HVP: rc = m->hvp_f32 (m->ctx, xc, vc, oc); break;
    case GC_CALL_GRAD_F32: rc = m->grad_f32 (m->ctx, xc, oc); break;
    case GC_CALL_GRAD_F64: rc = m->grad_f64 (m->ctx, xc, oc); break;
    case GC_CALL_LOSS_F32: rc = m->loss_f32 (m->ctx, xc, oc); break;
    case GC_CALL_LOSS_F64: rc = m->loss_f64 (m->ctx, xc, oc); break;
    case GC_CALL_LOSS_MAG: rc = m->loss_magnitude_f32 (m->ctx, xc, oc); break;
    case GC_CALL_HVP_F64: rc = m->hvp_f64 (m->ctx, xc, vc, oc); break;
    }
  fesetenv (FE_DFL_ENV);
  return rc;
}

gc_status
gc__call (const gc_model *m, const gc__env *e, gc__callee which,
          const void *x, const void *v, int mode, void *out,
          int *code, char *what, size_t size)
{
  size_t n = m->n;
  bool dbl = which == GC_CALL_GRAD_F64 || which == GC_CALL_LOSS_F64
             || which == GC_CALL_HVP_F64;
  size_t in_bytes = n * (dbl ? sizeof (double) : sizeof (float));
  size_t out_count = which == GC_CALL_JVP || (which >= GC_CALL_LOSS_F32
                                              && which <= GC_CALL_LOSS_MAG)
                     ? 1 : n;
  size_t out_bytes = out_count * (dbl ? sizeof (double) : sizeof (float));
  void *xc = gc__guarded_alloc (in_bytes);
  void *vc = v ? gc__guarded_alloc (in_bytes) : NULL;
  void *oc = gc__guarded_alloc (out_bytes);
  const char *name = call_names[which];
  *code = 0;
  if (!xc || (v && !vc) || !oc)
    {
      gc__guarded_free (xc);
      gc__guarded_free (vc);
      gc__guarded_free (oc);
      snprintf (what, size, "%s", gc_strerror (GC_ENOMEM));
      return GC_ENOMEM;
    }
  memcpy (xc, x, in_bytes);
  if (v)
    memcpy (vc, v, in_bytes);
  /* Manual: "Unwritten elements": the output holds a fill pattern, not
     zeros, so that an element the callback leaves is seen */
  gc__unwritten_fill (oc, out_count, dbl, 0);
  int rc = invoke (m, e, which, mode, xc, vc, oc);
  gc_status st = GC_OK;
  void *o2 = NULL;
  if (!rc && gc__unwritten_any (oc, out_count, dbl))
    {
      /* a second call with the other pattern: an element that holds
         each call's own was written by neither */
      o2 = gc__guarded_alloc (out_bytes);
      if (!o2)
        rc = 0, st = GC_ENOMEM;
      else
        {
          memcpy (o2, oc, out_bytes);
          gc__unwritten_fill (oc, out_count, dbl, 1);
          rc = invoke (m, e, which, mode, xc, vc, oc);
          if (!rc && gc__unwritten_list (NULL, o2, oc, out_count, dbl, name,
                                         what, size))
            st = GC_EUNWRITTEN;
        }
    }
  if (st != GC_OK)
    {
      if (st == GC_ENOMEM)
        snprintf (what, size, "%s", gc_strerror (GC_ENOMEM));
    }
  else if (rc)
    {
      st = GC_ECALLBACK;
      *code = rc;
      snprintf (what, size, "%s failed (returned %d)", name, rc);
    }
  else if (!gc__guarded_intact (oc, out_bytes)
           || !gc__guarded_intact (xc, in_bytes)
           || memcmp (xc, x, in_bytes) != 0
           || (v && (!gc__guarded_intact (vc, in_bytes)
                     || memcmp (vc, v, in_bytes) != 0)))
    {
      st = GC_EOVERRUN;
      snprintf (what, size, "%s wrote outside its output or into its "
                "inputs", name);
    }
  else if (e->deadline > 0 && gc__now () > e->deadline)
    {
      st = GC_ETIMEOUT;
      snprintf (what, size, "%g s, reached after a call of %s", e->timeout,
                name);
    }
  else
    {
      for (size_t k = 0; k < out_count && st == GC_OK; k++)
        if (!isfinite (dbl ? ((double *) oc)[k] : ((float *) oc)[k]))
          {
            st = GC_ENONFINITE;
            snprintf (what, size, "%s gave a non-finite value (element "
                      "%zu)", name, k);
          }
      if (st == GC_OK)
        memcpy (out, oc, out_bytes);
    }
  gc__guarded_free (xc);
  gc__guarded_free (vc);
  gc__guarded_free (oc);
  gc__guarded_free (o2);
  return st;
}

gc_result *
gc__higher_result (gc_check_kind kind, const gc_model *m,
                   const gc_options *o)
{
  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return NULL;
  r->kind = kind;
  r->verdict = GC_ERROR;
  r->worst = SIZE_MAX;
  r->blindest = SIZE_MAX;
  r->worst_arith = r->worst_f64 = SIZE_MAX;
  gc__result_options (r, o);
  r->forward_error_ulps = -1;
  snprintf (r->model_name, sizeof r->model_name, "%s",
            m && m->name ? m->name : "model");
  r->n = m ? m->n : 0;
  return r;
}

gc_status
gc__refuse (gc_result *r, gc_status st, const char *what)
{
  r->status = st;
  r->verdict = GC_ERROR;
  r->n_directions = 0;
  snprintf (r->detail, sizeof r->detail, "%s", what ? what : gc_strerror (st));
  return st;
}
