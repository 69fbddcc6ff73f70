/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* jvp.c -- the JVP check (manual: "The JVP check"): the model's
   forward-mode tangent jvp_f32 (x, w) against the gradient check's own
   central difference along w, its truncation and reference rounding terms
   unchanged, the tangent rounding term in place of the adjoint's.  The
   gradient check runs whole (stencil, confirmation, tiers); this file then
   replaces each direction's analytic side and third term and judges it
   again.  */

#include "higher/higher.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The direction w the stencil of D applied: e_index, or the random
   direction id drawn as gc_check draws it (exact in MPFR mode).  */
static void
direction_vector (const gc_result *r, const gc_model *m,
                  const gc_direction *d, float *v)
{
  size_t n = m->n;
  if (d->index != SIZE_MAX)
    {
      memset (v, 0, n * sizeof *v);
      v[d->index] = 1;
      return;
    }
  size_t lo = 0, hi = n, k = r->random_per_block;
  if (k && m->blocks && d->id / k < m->n_blocks)
    {
      lo = m->blocks[d->id / k].offset;
      hi = lo + m->blocks[d->id / k].count;
    }
  gc__draw_direction (r->seed, n, lo, hi, d->id, v, NULL);
}

/* Manual: "The JVP check": the magnitude of the tangent's computation,
   from the gradient check's adjoint term of D: sum_i |w_i| m_i and
   sum_i |w_i| (*WM, *W1) of its worst-case form, or the random
   direction's sum_i |v_i| (u m_i + 2^-150) (*QV, NAN otherwise).  */
static void
tangent_base (const gc_direction *d, double *wm, double *w1, double *qv)
{
  const gc_term *a = &d->terms[GC_TERM_ADJOINT];
  *qv = gc__term_input (a, "sum |v_i| (u m_i + 2^-150)", NAN);
  *wm = gc__term_input (a, "sum |w_i| m_i", 0);
  *w1 = gc__term_input (a, "sum |w_i|", 0);
}

/* Judge D again with its new analytic value and third term: a direction
   the gradient check found non-smooth, or whose reference it could not
   confirm (level -1, inconclusive), stays so.  */
static void
judge_again (gc_direction *d)
{
  gc_verdict before = d->verdict;
  d->bar_worst_case = NAN;     /* E's worst case is not kept */
  gc__judge (d, INFINITY);
  if (before == GC_NONSMOOTH || (before == GC_INCONCLUSIVE && d->level < 0))
    d->verdict = before;
  else
    gc__judge_resolution (d);
}

/* The tangent of every direction of R, its spread under the other
   rounding modes, and the verdicts.  */
static gc_status
tangents (gc_result *r, const gc_model *m, const float *x,
          const gc_options *o, double deadline)
{
  size_t n = m->n;
  size_t dt = m->tangent_depth ? m->tangent_depth : 2 * r->forward_depth;
  r->backward_depth = dt;
  r->defaulted = (r->defaulted & ~(unsigned) GC_DEFAULTED_BACKWARD_DEPTH)
                 | (m->tangent_depth ? 0 : GC_DEFAULTED_BACKWARD_DEPTH);
  r->lambda_backward = gc__lambda (r->false_alarm,
                                   2 * gc__bounds_count (r), dt);
  float *v = malloc (n * sizeof *v);
  if (!v)
    return gc__refuse (r, GC_ENOMEM, NULL);
  gc__env e;
  gc__env_enter (&e, o);
  e.deadline = deadline;     /* the whole check's, gradient pass included */
  int modes[GC_N_MODES];
  int nm = gc__other_modes (e.round, modes);
  unsigned dropped = 0;
  /* the header's measured depth becomes the tangent's own (manual: "The
     JVP check"); the reference forward's S_L and forward depth stay, the
     JVP check's reference being the gradient check's */
  r->depth_implied = 0;
  r->depth_implied_at = SIZE_MAX;
  char what[160];
  int code = 0;
  gc_status st = GC_OK;
  for (size_t q = 0; q < r->n_directions && st == GC_OK; q++)
    {
      gc_direction *d = &r->dirs[q];
      if (d->verdict == GC_ERROR)
        continue;
      direction_vector (r, m, d, v);
      float t, t2;
      st = gc__call (m, &e, GC_CALL_JVP, x, v, e.round, &t, &code, what,
                     sizeof what);
      if (st == GC_OK)
        st = gc__call (m, &e, GC_CALL_JVP, x, v, e.round, &t2, &code, what,
                       sizeof what);
      if (st != GC_OK)
        break;
      /* manual: "Determinism and reentrancy" */
      if (memcmp (&t, &t2, sizeof t) != 0)
        gc__note_nondeterminism (r, GC_ND_GRAD, d->index, t, t2,
                                 "jvp_f32 gave %.9g, then %.9g, for "
                                 "direction %zu", t, t2, d->id);
      /* manual: "Measured rounding sensitivity", for the tangent */
      double spread = 0;
      for (int j = 0; j < nm; j++)
        {
          float tm;
          char ignore[160];
          int c2;
          if (dropped & (1u << j))
            continue;
          if (gc__call (m, &e, GC_CALL_JVP, x, v, modes[j], &tm, &c2, ignore,
                        sizeof ignore) != GC_OK)
            {
              dropped |= 1u << j;
              continue;
            }
          spread = fmax (spread, fabs ((double) tm - t));
        }
      double wm, w1, qv;
      tangent_base (d, &wm, &w1, &qv);
      gc__term_tangent (&d->terms[GC_TERM_ADJOINT], r->lambda_backward, dt,
                        wm, w1, qv, spread);
      /* manual: "The JVP check", the tangent's measured rounding: the
         depth its spread implies, S_w / (2 (u M_t + 2^-150 |w|_1)) */
      double base = isnan (qv) ? GC_U32 * wm + 0x1p-150 * w1 : qv;
      double q = base > 0 ? spread / (2 * base)
                 : spread > 0 ? INFINITY : 0;
      /* per coordinate, as the backward's is per element: a random
         direction's spread cancels across its terms and implies no
         depth (it marks n: SIZE_MAX is "every spread 0") */
      if (d->index == SIZE_MAX)
        {
          if (spread > 0 && r->depth_implied_at == SIZE_MAX)
            r->depth_implied_at = n;
        }
      else if (q > r->depth_implied)
        {
          r->depth_implied = q;
          r->depth_implied_at = d->index;
        }
      d->analytic = t;
      d->analytic_f64 = NAN;
      judge_again (d);
    }
  gc__env_leave (&e);
  free (v);
  /* a mode the tangent failed under is said in the detail-free note only
     when the backward's were all measured */
  unsigned tdrop = 0;
  for (int j = 0; j < nm; j++)
    tdrop += (dropped >> j) & 1;
  if (tdrop && !r->rounding_note[0])
    snprintf (r->rounding_note, sizeof r->rounding_note, "jvp_f32 failed "
              "under %u other rounding mode(s): its spread is measured "
              "under the rest", tdrop);
  if (st != GC_OK)
    {
      r->callback_code = code;
      return gc__refuse (r, st, what);
    }
  return GC_OK;
}

gc_status
gc_jvp_check (const gc_model *m0, const float *x, const gc_options *opts,
              gc_result **out)
{
  if (!out)
    return GC_EINVAL;
  *out = NULL;
  if (!m0 || !x)
    return GC_EINVAL;
  gc_options defaults;
  gc_options_init (&defaults);
  const gc_options *o = opts ? opts : &defaults;
  gc_model copy;
  const gc_model *m = gc__model_by_abi (m0, &copy);
  if (gc__model_abi_known (m->abi) && !m->jvp_f32)
    {
      gc_result *r = gc__higher_result (GC_CHECK_JVP, m, o);
      if (!(*out = r))
        return GC_ENOMEM;
      return gc__refuse (r, GC_ENOREF, "the model gives no forward-mode "
                         "tangent (jvp_f32) to check");
    }
  /* a declared tangent depth with d u >= 1 leaves gamma_d undefined, as
     a backward's does (manual: "The worst case"; setup.c) */
  if (gc__model_abi_known (m->abi) && m->tangent_depth
      && ldexp ((double) m->tangent_depth, -24) >= 1)
    {
      gc_result *r = gc__higher_result (GC_CHECK_JVP, m, o);
      if (!(*out = r))
        return GC_ENOMEM;
      char what[160];
      snprintf (what, sizeof what, "tangent_depth %zu: %zu*u >= 1 (u = "
                "2^-24), gamma_d undefined", m->tangent_depth,
                m->tangent_depth);
      return gc__refuse (r, GC_EINVAL, what);
    }
  gc_options o2 = *o;
  o2.no_twin = 1;        /* the twin is the backward's, not the tangent's */
  gc_result *r = NULL;
  double deadline = gc__deadline (o->timeout);
  gc_status st = gc_check (m, x, &o2, &r);
  if (!r)
    return st;
  *out = r;
  r->kind = GC_CHECK_JVP;
  r->twin_unused = 0;    /* no_twin above is the check's, not the caller's */
  if (st == GC_OK && (r->direction_kind == GC_DIR_RANDOM
                      || r->direction_kind == GC_DIR_SCREEN)
      && (r->reference == GC_REF_F32 || r->reference == GC_REF_F64))
    st = gc__refuse (r, GC_EINVAL, "random directions are applied rounded "
                     "in f32 and f64 mode, the tangent along the exact one: "
                     "the JVP check takes them in MPFR or auto mode");
  if (st == GC_OK)
    st = tangents (r, m, x, o, deadline);
  gc__summarise (r);
  if (st == GC_OK && !r->nondeterministic)
    gc__diagnose (r);
  r->identity.digest = gc__identity_digest (r);
  return r->status;
}
