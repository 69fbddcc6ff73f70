/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* noise.c -- measurements of the model itself that the bar rests on:
   whether its callbacks are functions of x (manual: "Determinism and
   reentrancy"), and how much its results move under the other IEEE
   rounding modes (manual: "Measured rounding sensitivity").  */

#include "model/check-internal.h"

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t
gc__float_spread (const float *a, const float *b, size_t n)
{
  size_t at = SIZE_MAX;
  double worst = -1;
  for (size_t i = 0; i < n; i++)
    {
      if (memcmp (&a[i], &b[i], sizeof a[i]) == 0)
        continue;
      double d = fabs ((double) a[i] - (double) b[i]);
      double m = fmax (fabs ((double) a[i]), fabs ((double) b[i]));
      double rel = m > 0 ? d / m : d;
      if (isnan (rel))
        rel = INFINITY;
      if (rel > worst)
        {
          worst = rel;
          at = i;
        }
    }
  return at;
}

void
gc__note_nondeterminism (gc_result *r, unsigned what, size_t index,
                         double first, double second, const char *fmt, ...)
{
  bool first_note = r->nondeterministic == 0;
  r->nondeterministic |= what;
  if (!first_note)
    return;
  r->nd_index = index;
  r->nd_first = first;
  r->nd_second = second;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (r->nd_detail, sizeof r->nd_detail, fmt, ap);
  va_end (ap);
}

/* Manual: "Measured rounding sensitivity".  The rounding modes other than
   CURRENT (the caller's, normally to nearest), in the order the measured
   arrays hold them: three of the four IEEE modes.  */
int
gc__other_modes (int current, int modes[GC_N_MODES])
{
  static const int all[4] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD,
                              FE_TOWARDZERO };
  int k = 0;
  for (int j = 0; j < 4 && k < GC_N_MODES; j++)
    if (all[j] != current)
      modes[k++] = all[j];
  return k;
}

const char *
gc__mode_name (int mode)
{
  switch (mode)
    {
    case FE_TONEAREST: return "to nearest";
    case FE_UPWARD: return "toward +inf";
    case FE_DOWNWARD: return "toward -inf";
    case FE_TOWARDZERO: return "toward zero";
    default: return "unknown";
    }
}

/* Manual: "Measured rounding sensitivity".  S_i: the spread of element I
   over the backward to nearest (G) and the modes whose arrays GM holds
   (NULL: a mode left out).  Every value is finite (the measurement leaves
   out a mode that gave a non-finite one).  */
double
gc__spread_at (const float *g, float *const gm[GC_N_MODES], size_t i)
{
  double lo = g[i], hi = g[i];
  for (int m = 0; m < GC_N_MODES; m++)
    if (gm[m])
      {
        lo = fmin (lo, (double) gm[m][i]);
        hi = fmax (hi, (double) gm[m][i]);
      }
  return hi - lo;
}

/* Manual: "Measured rounding sensitivity".  S_w along the direction V (N
   floats): max - min of <g_m, v> over the four modes, formed as
   <g_m - g, v>, whose terms are exact in double (a difference of two
   floats times a float), summed with Neumaier's compensation.  */
double
gc__spread_along (const float *g, float *const gm[GC_N_MODES],
                  const float *v, size_t n)
{
  double lo = 0, hi = 0;
  for (int m = 0; m < GC_N_MODES; m++)
    {
      if (!gm[m])
        continue;
      double s = 0, c = 0;
      for (size_t i = 0; i < n; i++)
        {
          double t = ((double) gm[m][i] - (double) g[i]) * (double) v[i];
          double u = s + t;
          c += fabs (s) >= fabs (t) ? (s - u) + t : (t - u) + s;
          s = u;
        }
      s += c;
      lo = fmin (lo, s);
      hi = fmax (hi, s);
    }
  return hi - lo;
}

/* Record that MODE is left out of the measurement, with why (the first
   reason is kept).  A mode is counted once, whether the backward, the
   forward or both left it out (counted twice, a report said 4 of 3 modes
   left out and did not read back).  */
static void
drop_mode (shared *sh, int mode, const char *what, const char *why)
{
  gc_result *r = sh->r;
  unsigned bit = mode == FE_TONEAREST ? 1u : mode == FE_UPWARD ? 2u
                 : mode == FE_DOWNWARD ? 4u : 8u;
  if (!(sh->modes_dropped & bit))
    r->rounding_dropped++;
  sh->modes_dropped |= bit;
  if (r->rounding_note[0] == '\0')
    snprintf (r->rounding_note, sizeof r->rounding_note,
              "%s %s under rounding %s", what, why, gc__mode_name (mode));
}

/* One call of the reference forward (f32 or f64, as the check's
   reference; the f32 forward where F32) at the centre under MODE: 1 and the value in *VAL when it
   gave a finite one, 0 when the mode is to be left out (a non-finite
   value), -1 after a failure that stops the check (recorded on W).  */
static int
loss_under (worker *w, int mode, bool f32, double *val)
{
  const gc_model *m = w->sh->m;
  bool is64 = !f32 && (w->sh->ref == GC_REF_F64
                       || w->sh->ref == GC_REF_AUTO);
  union { double d; float f; unsigned char b[sizeof (double) + LOSS_GUARD]; }
    l;
  size_t sz = is64 ? sizeof (double) : sizeof (float);
  if (is64)
    l.d = 0;
  else
    l.f = 0;
  gc__guard_fill (l.b + sz, LOSS_GUARD);
  double tc = gc__call_start ();
  gc__fpenv_model (w->sh);
  fesetround (mode);
  int rc = is64 ? m->loss_f64 (m->ctx, w->xd, &l.d)
                : m->loss_f32 (m->ctx, w->xf, &l.f);
  gc__fpenv_reset (w->sh);
  gc__call_count (w, is64 ? GC_CALL_KIND_F64 : GC_CALL_KIND_F32, tc);
  const char *name = is64 ? "loss_f64" : "loss_f32";
  if (!gc__guard_intact (l.b + sz, LOSS_GUARD))
    {
      gc__fail (w, GC_EOVERRUN, 0, "%s wrote past its output (one loss "
                "value) under rounding %s", name, gc__mode_name (mode));
      return -1;
    }
  if (!gc__in_time (w, name))
    return -1;
  *val = is64 ? l.d : (double) l.f;
  if (rc)
    {
      gc__fail (w, GC_ECALLBACK, rc, "%s returned %d under rounding %s", name,
                rc, gc__mode_name (mode));
      return -1;
    }
  if (isfinite (*val))
    return 1;
  drop_mode (w->sh, mode, name, "gave a non-finite value");
  return 0;
}

/* Manual: "Measured rounding sensitivity".  The backward (and, in f32 and
   f64 modes, the reference forward) at the centre under each other IEEE
   rounding mode: sh->gm[k] holds mode k's gradient (NULL where the mode
   was left out), sh->spread_loss the forward's spread S_L.  F_RN is the
   reference forward's centre value to nearest.  */
gc_status
gc__measure_rounding (shared *sh, worker *w0, double f_rn)
{
  gc_result *r = sh->r;
  int cur = sh->model_round;
  int modes[GC_N_MODES];
  /* Manual: "Device arithmetic": the modes are the host's; on a device
     they would measure nothing but its run-to-run noise */
  int k = r->device[0] ? 0 : gc__other_modes (cur, modes);
  for (int j = 0; j < k; j++)
    {
      char what[48];
      bool nomem;
      snprintf (what, sizeof what, " under rounding %s",
                gc__mode_name (modes[j]));
      float *g = gc__grad_call (w0, false, modes[j], what, &nomem, -1);
      if (!g)
        return nomem ? GC_ENOMEM : w0->st;
      char why[160] = "", at[128];
      for (size_t i = 0; i < sh->n; i++)
        if (!isfinite (g[i]))
          {
            snprintf (why, sizeof why, "gave a non-finite value at %s",
                      gc__param_at (r, i, at, sizeof at));
            break;
          }
      if (why[0])
        {
          drop_mode (sh, modes[j], "grad_f32", why);
          gc__guarded_free (g);
          continue;
        }
      sh->gm[j] = g;
      r->rounding_modes++;
    }
  sh->spread_loss = 0;
  if (sh->ref != GC_REF_MPFR)
    {
      double lo = f_rn, hi = f_rn;
      for (int j = 0; j < k; j++)
        {
          double v;
          int got = loss_under (w0, modes[j], false, &v);
          if (got < 0)
            return w0->st;
          if (got)
            {
              lo = fmin (lo, v);
              hi = fmax (hi, v);
            }
        }
      sh->spread_loss = hi - lo;
    }
  r->spread_loss = sh->spread_loss;
  /* Manual: "The loss magnitude": the f32 forward's own spread S_32 (in
     f32 mode it is the reference's, just measured)  */
  sh->spread_loss_f32 = sh->ref == GC_REF_F32 && k > 0 ? sh->spread_loss
                        : NAN;
  if (sh->ref != GC_REF_F32 && k > 0)
    {
      double lo = r->loss_f32, hi = lo;
      int measured = 0;
      for (int j = 0; j < k; j++)
        {
          double v;
          int got = loss_under (w0, modes[j], true, &v);
          if (got < 0)
            return w0->st;
          if (got)
            {
              lo = fmin (lo, v);
              hi = fmax (hi, v);
              measured++;
            }
        }
      if (measured)
        sh->spread_loss_f32 = hi - lo;
    }
  r->spread_loss_f32 = sh->spread_loss_f32;
  return GC_OK;
}

/* Manual: "Measured rounding sensitivity", the declarations' check.  To
   first order the spread of element i between the modes is at most
   sum_k |c_k| ulp_k <= 2 d u m_i for a computation of depth d and
   magnitude m_i: each spread implies a depth of at least S_i / (2 u m_i).
   The largest, and where; the forward's from S_L and M_L.  */
gc_status
gc__rounding_ratios (shared *sh)
{
  gc_result *r = sh->r;
  r->depth_implied = 0;
  r->depth_implied_at = SIZE_MAX;
  for (size_t i = 0; r->rounding_modes && i < sh->n; i++)
    {
      double s = gc__spread_at (sh->g, sh->gm, i);
      double q = sh->mag[i] > 0 ? s / (2 * GC_U32 * sh->mag[i])
                 : s > 0 ? INFINITY : 0;
      if (q > r->depth_implied)
        {
          r->depth_implied = q;
          r->depth_implied_at = i;
        }
    }
  double ml = r->loss_magnitude;
  int bits = sh->ref == GC_REF_F64 || sh->ref == GC_REF_AUTO ? 53 : 24;
  /* Manual: "The loss magnitude": the spread of d_f roundings of a
     magnitude M is at most 2 d_f u M to first order, so a measured S_L
     shows M_L >= S_L / (2 d_f u); a defaulted M_L (|L|) below that (a
     small difference of large terms) is raised to it.  */
  if ((r->defaulted & GC_DEFAULTED_LOSS_MAGNITUDE) && sh->spread_loss > 0
      && r->forward_depth > 0)
    {
      double need = sh->spread_loss
                    / (2 * (double) r->forward_depth * ldexp (1, -bits));
      if (need > ml)
        {
          sh->mag_loss = ml = r->loss_magnitude = need;
          r->loss_magnitude_raised = 1;
        }
    }
  /* ... and the f32 forward's spread S_32 the same, at f32's u: the two
     forwards compute one loss, of one magnitude */
  if ((r->defaulted & GC_DEFAULTED_LOSS_MAGNITUDE) && sh->spread_loss_f32 > 0
      && r->forward_depth > 0)
    {
      double need = sh->spread_loss_f32
                    / (2 * (double) r->forward_depth * GC_U32);
      if (need > ml)
        {
          sh->mag_loss = ml = r->loss_magnitude = need;
          r->loss_magnitude_raised = 2;
        }
    }
  r->forward_depth_implied = sh->spread_loss > 0 && ml > 0
                             ? sh->spread_loss / (2 * ldexp (ml, -bits)) : 0;
  return GC_OK;
}
