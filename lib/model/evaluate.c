/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* evaluate.c -- one call of the model's forward (f32, f64, MPFR) at a
   worker's point: its status, the canaries after its output, the time
   limit and the finiteness of its value; and whether it left its input
   alone.  */

#include "model/check-internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void
gc__fail (worker *w, gc_status st, int cb, const char *fmt, ...)
{
  if (w->st != GC_OK)
    return;
  w->st = st;
  w->cb = cb;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (w->detail, sizeof w->detail, fmt, ap);
  va_end (ap);
}

void
gc__fpenv_model (const shared *sh)
{
  fesetenv (&sh->model_env);
}

void
gc__fpenv_reset (const shared *sh)
{
  (void) sh;
  fesetenv (FE_DFL_ENV);
}

/* Manual: "Where the time goes".  Both in the check's floating-point
   environment, never the model's: a callback may leave traps enabled
   there, and the time's arithmetic would trap (fuzz_fpenv).  */
double
gc__call_start (void)
{
  return gc__now ();
}

void
gc__call_count (worker *w, int kind, double t0)
{
  w->n_calls[kind]++;
  w->call_seconds[kind] += gc__now () - t0;
}

/* ---------------------------------------------------------------------- */
/* Evaluations.  Each returns false after recording a failure.  */

/* The time limit, checked after every callback (gc_options.timeout).  */
bool
gc__in_time (worker *w, const char *name)
{
  if (w->sh->deadline > 0 && gc__now () > w->sh->deadline)
    {
      gc__fail (w, GC_ETIMEOUT, 0, "%g s, reached after a call of %s",
                w->sh->o->timeout, name);
      return false;
    }
  return true;
}

/* One call of the backward, grad_f64 (IS64) or grad_f32, at worker W's
   point in that type into a new guarded array of n elements, in the
   model's floating-point environment under rounding MODE (-1: the
   model's own); with PASS >= 0 the array holds that pass's fill pattern
   first (manual: "Unwritten elements").  NULL where memory ran out
   (*NOMEM), or after recording on W an overrun, the time limit or the
   callback's error code (W's status tells them apart; each caller has
   its policy for a callback's code).  WHAT ends the messages
   (" under rounding upward").  */
void *
gc__grad_call (worker *w, bool is64, int mode, const char *what,
               bool *nomem, int pass)
{
  shared *sh = w->sh;
  const gc_model *m = sh->m;
  size_t bytes = sh->n * (is64 ? sizeof (double) : sizeof (float));
  void *g = gc__guarded_alloc (bytes);
  *nomem = !g;
  if (!g)
    return NULL;
  if (pass >= 0)
    gc__unwritten_fill (g, sh->n, is64, pass);
  double tc = gc__call_start ();
  gc__fpenv_model (sh);
  if (mode >= 0)
    fesetround (mode);
  int rc = is64 ? m->grad_f64 (m->ctx, w->xd, g)
                : m->grad_f32 (m->ctx, w->xf, g);
  gc__fpenv_reset (sh);
  gc__call_count (w, GC_CALL_KIND_BACKWARD, tc);
  const char *name = is64 ? "grad_f64" : "grad_f32";
  if (!gc__guarded_intact (g, bytes))
    {
      gc__guarded_free (g);
      gc__fail (w, GC_EOVERRUN, 0, "%s wrote outside its n = %zu %s%s",
                name, sh->n, is64 ? "doubles" : "floats", what);
      return NULL;
    }
  if (!gc__in_time (w, name))
    {
      gc__guarded_free (g);
      return NULL;
    }
  if (rc)
    {
      gc__guarded_free (g);
      gc__fail (w, GC_ECALLBACK, rc, "%s returned %d%s", name, rc, what);
      return NULL;
    }
  return g;
}

/* A callback's outcome: its status, its output buffer's canaries (INTACT),
   the time limit, then the finiteness of its value.  */
static bool
accept_guarded (worker *w, int rc, bool intact, bool finite, const char *name)
{
  if (rc)
    {
      gc__fail (w, GC_ECALLBACK, rc, "%s returned %d", name, rc);
      return false;
    }
  if (!intact)
    {
      gc__fail (w, GC_EOVERRUN, 0, "%s wrote past its output (one loss value)",
                name);
      return false;
    }
  if (!gc__in_time (w, name))
    return false;
  if (!finite)
    {
      gc__fail (w, GC_ENONFINITE, 0, "%s gave a non-finite loss", name);
      return false;
    }
  return true;
}

bool
gc__eval_f32 (worker *w, const float *x, double *val)
{
  union { float v; unsigned char b[sizeof (float) + LOSS_GUARD]; } l;
  gc__guard_fill (l.b + sizeof (float), LOSS_GUARD);
  l.v = 0;
  double t0 = gc__call_start ();
  gc__fpenv_model (w->sh);
  int rc = w->sh->m->loss_f32 (w->sh->m->ctx, x, &l.v);
  gc__fpenv_reset (w->sh);
  gc__call_count (w, GC_CALL_KIND_F32, t0);
  *val = l.v;
  return accept_guarded (w, rc,
                         gc__guard_intact (l.b + sizeof (float), LOSS_GUARD),
                         isfinite (l.v), "loss_f32");
}

bool
gc__eval_f64 (worker *w, const double *x, double *val)
{
  union { double v; unsigned char b[sizeof (double) + LOSS_GUARD]; } l;
  gc__guard_fill (l.b + sizeof (double), LOSS_GUARD);
  l.v = 0;
  double t0 = gc__call_start ();
  gc__fpenv_model (w->sh);
  int rc = w->sh->m->loss_f64 (w->sh->m->ctx, x, &l.v);
  gc__fpenv_reset (w->sh);
  gc__call_count (w, GC_CALL_KIND_F64, t0);
  *val = l.v;
  return accept_guarded (w, rc,
                         gc__guard_intact (l.b + sizeof (double), LOSS_GUARD),
                         isfinite (l.v), "loss_f64");
}

bool
gc__eval_mpfr (worker *w, mpfr_ptr out)
{
  mpfr_ptr l = w->lout;
  w->mpfr_called = true;
  double t0 = gc__call_start ();
  gc__fpenv_model (w->sh);
  int rc = w->sh->m->loss_mpfr (w->sh->m->ctx, w->xm, l);
  gc__fpenv_reset (w->sh);
  gc__call_count (w, GC_CALL_KIND_MPFR, t0);
  bool intact = true;
  for (int k = 1; k < 3; k++)
    intact = intact && mpfr_get_prec (l + k) == 2 && mpfr_number_p (l + k)
             && mpfr_cmp_ui (l + k, 3) == 0;
  /* OUT has the working precision, as l: the copy is exact  */
  mpfr_set (out, l, MPFR_RNDN);
  return accept_guarded (w, rc, intact, mpfr_number_p (l), "loss_mpfr");
}

/* The worker's copies of the point are as given once a direction's
   points are restored: a callback that wrote into its input (through a
   cast) would otherwise shift every later evaluation.  */
bool
gc__inputs_intact (worker *w)
{
  const shared *sh = w->sh;
  for (size_t j = 0; j < sh->n; j++)
    {
      bool same = memcmp (&w->xf[j], &sh->x[j], sizeof (float)) == 0
                  && w->xd[j] == (double) sh->x[j];
      if (same && w->xm && w->mpfr_called)
        same = mpfr_number_p (w->xm + j)
               && mpfr_cmp_d (w->xm + j, (double) sh->x[j]) == 0;
      if (!same)
        {
          char at[128];
          gc__fail (w, GC_EOVERRUN, 0, "a callback wrote into its input x, at "
                    "%s", gc__param_at (sh->r, j, at, sizeof at));
          return false;
        }
    }
  w->mpfr_called = false;
  return true;
}
