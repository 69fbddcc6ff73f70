/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* twin_factor.c -- a factor the point does not move (manual: "A factor
   the point does not move"): for the coordinate directions whose
   arithmetic is a precision finding far beyond its bar, g32 and g64 at
   points each parameter moved by a fraction of itself, and whether one
   factor explains the discrepancy at all of them (the f32 path's logic
   error) or the discrepancy moves as rounding does; where the points do
   not move the twin (a gradient independent of x), whether the rounding
   modes moved it.  */

#include "model/check-internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The points' step sizes and signs, from the check's seed (an odd
   constant of its own keeps them apart from the floor's and the random
   directions').  */
#define FACTOR_SEED_MIX 0xd1b54a32d192ed03ull

/* Whether direction D is one the rule tests: a coordinate, judged with
   the twin and the measured floor, no kink, a confirmed reference, and
   its arithmetic a precision finding with |g32 - g64| at least
   GC_FACTOR_NU times its bar.  */
static bool
candidate (const gc_direction *d)
{
  return d->index != SIZE_MAX && d->verdict != GC_ERROR
         && d->verdict != GC_NONSMOOTH && d->level >= 0
         && !isnan (d->analytic_f64) && d->arith_floor >= 0
         && d->arith == GC_ARITH_PRECISION && d->analytic_f64 != 0
         && !gc__factor_within (d);
}

/* Manual: "A factor the point does not move", "Within the bound": a
   coordinate direction within the arithmetic's bound (arith OK), or
   beyond it by less than a candidate's GC_FACTOR_NU bars, whose
   discrepancy is still at least GC_FACTOR_NU times what the rounding
   modes measured there, beta = GC_FACTOR_BAND (S_w + u |g64|) (the f32
   value's spread over the modes and one rounding of it, with room for
   its rounding at the moved points): on the host, two or more other
   modes measured and S_w > 0 (the modes reached the element), no
   backward class declared.  Its band beta, or 0 where it is none.  */
static double
within_band (const gc_result *r, const gc_direction *d)
{
  if (d->index == SIZE_MAX || d->verdict == GC_ERROR
      || d->verdict == GC_NONSMOOTH || d->level < 0
      || !(d->arith_floor >= 0)
      || (d->arith != GC_ARITH_OK && d->arith != GC_ARITH_PRECISION)
      || !isfinite (d->analytic_f64) || d->analytic_f64 == 0
      || !isfinite (d->analytic) || r->device[0] || r->rounding_modes < 2
      || gc__precision_backward_count (r) > 0)
    return 0;
  double sw = gc__term_input (&d->terms[GC_TERM_ADJOINT], "S_w", 0);
  double beta = gc__factor_band_within (d);
  return sw > 0 && fabs (d->analytic - d->analytic_f64) >= GC_FACTOR_NU * beta
         ? beta : 0;
}

/* The band of direction D in the rule: its arithmetic's bar where it is
   a candidate (a precision finding), within_band's beta where that is
   one, else 0 (not tested).  */
static double
factor_band (const gc_result *r, const gc_direction *d)
{
  return candidate (d) ? d->arith_bar : within_band (r, d);
}

/* Whether the values G32, G64 of K points (the centre's first) share one
   factor c within each point's bar, beta_k = BAR max(1, |b_k / b_0|):
   1, with c in *C; 0 where none does (the discrepancy moved with the
   point, g64's value moving or not: a rounding the points redrew); -1
   where one does but a point left g64 within BAR of its centre value
   (the points re-rounded nothing either path shows: the modes decide);
   2 where a value is not finite (no factor can be read: untested); 3
   where g64 is 0 at a moved point (the move took the element out of the
   gradient's support: an argmin, a sort's order), or where none held and
   g64 jumped at a point by GC_FACTOR_JUMP or more from its value at x
   (a rank swapped: top-k's weights): untested at these points.  */
static int
one_factor (const double *g32, const double *g64, unsigned k, double bar,
            double *c)
{
  for (unsigned q = 0; q < k; q++)
    if (!isfinite (g32[q]) || !isfinite (g64[q]))
      return 2;
  for (unsigned q = 0; q < k; q++)
    if (g64[q] == 0)
      return q ? 3 : 2;
  bool jump = false;
  for (unsigned q = 1; q < k; q++)
    jump |= !(fabs (g64[q]) < GC_FACTOR_JUMP * fabs (g64[0])
              && fabs (g64[0]) < GC_FACTOR_JUMP * fabs (g64[q]));
  bool moved = true;
  for (unsigned q = 1; q < k; q++)
    moved &= fabs (g64[q] - g64[0]) > bar;
  double lo = -INFINITY, hi = INFINITY;
  for (unsigned q = 0; q < k; q++)
    {
      double a = g32[q], b = g64[q];
      double beta = bar * fmax (1, fabs (b / g64[0]));
      /* the discrepancy is there at every point, GC_FACTOR_AT bars or
         more: a point where g32 is within a few bars of g64 is one the
         move has shrunk the error at (a cancellation the move undid),
         and its band, wide against a small b, agrees with any factor */
      if (fabs (a - b) < GC_FACTOR_AT * beta)
        return jump ? 3 : 0;
      double x = (a - beta) / b, y = (a + beta) / b;
      lo = fmax (lo, fmin (x, y));
      hi = fmin (hi, fmax (x, y));
      if (!(lo <= hi))
        return jump ? 3 : 0;   /* g32's discrepancy moved, whether g64 did
                                  or not */
    }
  *c = (lo + hi) / 2;
  return moved ? 1 : -1;
}

/* Manual: "A term the point does not redraw": for the values G32, G64
   of K points (the centre's first) where no factor held, the largest
   relative drift of the discrepancy, max_k |(a_k - b_k) - (a_0 - b_0)| /
   |a_0 - b_0|; NaN where a point shows less than GC_FACTOR_AT bars of
   it (beta_k as one_factor's) or left g32 within BAR of its centre value
   (fixed data, the modes' question, or a rounding that kept its cell: no
   term).  g64 need not move: a g32 that moves where the gradient does
   not (a linear map's) moves by no rounding of fixed data.  */
static double
term_drift (const double *g32, const double *g64, unsigned k, double bar)
{
  double d0 = g32[0] - g64[0], worst = 0;
  for (unsigned q = 0; q < k; q++)
    {
      double e = g32[q] - g64[q];
      if (!isfinite (e) || g64[q] == 0
          || fabs (e) < GC_FACTOR_AT * bar * fmax (1, fabs (g64[q] / g64[0]))
          || (q && !(fabs (g32[q] - g32[0]) > bar)))
        return NAN;
      worst = fmax (worst, fabs (e - d0) / fabs (d0));
    }
  return worst;
}

/* Manual: "A factor the point does not move", where the point does not
   move the twin: whether direction D's discrepancy is one the rounding
   modes do not move either, on the host, with at least two other modes
   measured and no backward class declared (a class's rounding by integer
   operations is one no mode reaches): |a - b| >= GC_FACTOR_SPREAD S_w
   where S_w > 0; where S_w = 0 (exact in every mode: data moved, not
   rounded), |a - b| >= |b| / 2, no rounding of the value in any format
   with a significand.  */
static bool
modes_keep (const gc_result *r, const gc_direction *d)
{
  if (r->device[0] || r->rounding_modes < 2
      || gc__precision_backward_count (r) > 0)
    return false;
  double sw = gc__term_input (&d->terms[GC_TERM_ADJOINT], "S_w", 0);
  double e = fabs (d->analytic - d->analytic_f64);
  return sw > 0 ? e >= GC_FACTOR_SPREAD * sw
                : e >= fabs (d->analytic_f64) / 2;
}

/* Manual: "A factor the point does not move", where the modes decided:
   in each tensor, the directions the modes read as a factor
   (arith_factor_points 1) must share one factor c within their bars,
   |a - c b| <= arith_bar; factors that scatter across the tensor are a
   rounding of fixed data redrawn per element (a bf16 copy of a constant
   gradient), no logic error's one factor: none of them holds.  */
static void
modes_scatter (gc_result *r)
{
  size_t nb = r->n_blocks ? r->n_blocks : 1;
  for (size_t bb = 0; bb < nb; bb++)
    {
      double lo = -INFINITY, hi = INFINITY;
      size_t n = 0;
      for (size_t q = 0; q < r->n_directions; q++)
        {
          const gc_direction *d = &r->dirs[q];
          if (d->arith_factor_points != 1 || isnan (d->arith_factor)
              || (r->n_blocks && gc__direction_block (r, d) != bb))
            continue;
          double a = d->analytic, b = d->analytic_f64, e = d->arith_bar;
          lo = fmax (lo, fmin ((a - e) / b, (a + e) / b));
          hi = fmin (hi, fmax ((a - e) / b, (a + e) / b));
          n++;
        }
      if (n < 2 || lo <= hi)
        continue;
      for (size_t q = 0; q < r->n_directions; q++)
        {
          gc_direction *d = &r->dirs[q];
          if (d->arith_factor_points != 1 || isnan (d->arith_factor)
              || (r->n_blocks && gc__direction_block (r, d) != bb))
            continue;
          d->arith_factor = NAN;
          gc__judge_twin (d);
        }
    }
}

/* The K points of the rule (manual: "A factor the point does not
   move"), on worker W0: grad_f32 and grad_f64 at x_j (1 +- s_j), s_j in
   [STEP/2, STEP) from RNG, one s for every parameter where COMMON (a
   common positive factor keeps the parameters' order among themselves),
   into G32[k], G64[k]; *KEPT the points evaluated.  A callback's error
   code stops the points (untested; GC_OK); an overrun, the time limit or
   memory are the returned status.  Leaves W0's point at x.  */
static gc_status
factor_points (shared *sh, worker *w0, gc__rng *rng, unsigned K, bool common,
               float **g32, double **g64, unsigned *kept)
{
  gc_status st = GC_OK;
  *kept = 0;
  for (unsigned k = 0; k < K && st == GC_OK; k++)
    {
      double s = 0;
      for (size_t j = 0; j < sh->n; j++)
        {
          /* a random size in [STEP/2, STEP), not STEP itself: a dyadic
             factor keeps a short significand short (7/8 x 17/16 =
             119/128, as exact in bf16 as 7/8) and redraws no rounding */
          if (!common || j == 0)
            {
              uint64_t v = gc__rng_next (rng);
              s = GC_FACTOR_STEP * (0.5 + 0x1p-54 * (double) (v >> 11));
              if (v & 1)
                s = -s;
            }
          float x = (float) (sh->x[j] * (1 + s));
          if (!isfinite (x))
            x = sh->x[j];
          w0->xf[j] = x;
          w0->xd[j] = (double) x;
        }
      const char *what = common ? " at a point each parameter moved by one "
                                  "common 2^-5 to 2^-4"
                                : " at a point moved by 2^-5 to 2^-4";
      bool nomem;
      g32[k] = gc__grad_call (w0, false, -1, what, &nomem, -1);
      if (g32[k])
        g64[k] = gc__twin_call (w0, -1, what, &nomem, 0);
      if (nomem)
        st = GC_ENOMEM;
      else if (!g32[k] || !g64[k])
        {
          if (w0->st != GC_ECALLBACK)
            st = w0->st;
          else
            {
              /* a callback's error code: untested, as a draw of the
                 floor is left out */
              w0->st = GC_OK;
              w0->cb = 0;
              w0->detail[0] = 0;
            }
          break;
        }
      (*kept)++;
    }
  for (size_t j = 0; j < sh->n; j++)
    {
      w0->xf[j] = sh->x[j];
      w0->xd[j] = (double) sh->x[j];
    }
  return st;
}

/* Direction D's values at x and at the K points G32, G64 into A, B
   (A[0], B[0] the centre's).  */
static void
point_values (const gc_direction *d, float *const *g32, double *const *g64,
              unsigned K, double *a, double *b)
{
  a[0] = d->analytic;
  b[0] = d->analytic_f64;
  for (unsigned k = 0; k < K; k++)
    {
      a[k + 1] = g32[k][d->index];
      b[k + 1] = g64[k][d->index];
    }
}

/* One factor's outcome HELD (one_factor's 0, 1 or -1, on KF + 1 values)
   kept in direction D: its points, and its factor where one held or the
   modes keep it.  */
static void
keep_factor (const gc_result *r, gc_direction *d, int held, unsigned Kf,
             double c)
{
  d->arith_factor_points = held >= 0 ? Kf + 1 : 1;
  d->arith_factor = held > 0 ? c
                    : held < 0 && modes_keep (r, d)
                    ? d->analytic / d->analytic_f64 : NAN;
}

/* Manual: "A factor the point does not move", where a point moved the
   gradient's support: the directions of MOVED (N of them, each with the
   band BAND it was tested on) tested again at KF points where every
   parameter is moved by one common fraction, which keeps their order.
   The returned status as factor_points'.  */
static gc_status
support_moved (shared *sh, worker *w0, gc__rng *rng, unsigned Kf,
               const size_t *moved, const double *band, size_t n)
{
  gc_result *r = sh->r;
  float *g32[GC_FACTOR_POINTS_MAX] = { NULL };
  double *g64[GC_FACTOR_POINTS_MAX] = { NULL };
  unsigned kept;
  gc_status st = factor_points (sh, w0, rng, Kf, true, g32, g64, &kept);
  for (size_t q = 0; st == GC_OK && kept == Kf && q < n; q++)
    {
      gc_direction *d = &r->dirs[moved[q]];
      double a[GC_FACTOR_POINTS_MAX + 1], b[GC_FACTOR_POINTS_MAX + 1], c;
      point_values (d, g32, g64, Kf, a, b);
      int held = one_factor (a, b, Kf + 1, band[q], &c);
      if (held >= 2)
        continue;
      keep_factor (r, d, held, Kf, c);
      gc__judge_twin (d);
    }
  for (unsigned k = 0; k < GC_FACTOR_POINTS_MAX; k++)
    {
      gc__guarded_free (g32[k]);
      gc__guarded_free (g64[k]);
    }
  return st;
}

/* Manual: "A factor the point does not move".  After every direction of
   SH's result is judged, on worker W0 (whose point it sets and leaves at
   x): where a direction is a candidate, grad_f32 and grad_f64 at
   K points x_j (1 +- s_j) (K from GC_FACTOR_POINTS to
   GC_FACTOR_POINTS_MAX), s_j in [STEP/2, STEP), and for each
   candidate its factor and points, judged again (judge_twin.c turns a
   factor that held into a mismatch); a candidate whose element one of
   those points took out of the gradient's support, again at points
   moved by one common fraction (support_moved).  A point whose call
   returns an error code leaves every direction untested, and so does,
   for its own direction, a value that is not finite or a g64 of 0 at a
   point; an overrun, the time limit or memory stop the check (the
   returned status).  */
gc_status
gc__twin_factor (shared *sh, worker *w0)
{
  gc_result *r = sh->r;
  if (!sh->g64 || !sh->n_floor || r->nondeterministic)
    return GC_OK;
  size_t nc = 0;
  double nu_min = INFINITY;
  for (size_t q = 0; q < r->n_directions; q++)
    {
      const gc_direction *d = &r->dirs[q];
      double band = factor_band (r, d);
      if (band > 0)
        {
          nc++;
          nu_min = fmin (nu_min, fabs (d->analytic - d->analytic_f64) / band);
        }
    }
  if (!nc)
    return GC_OK;
  /* Manual: "Why it does not make a false failure": a rounding error
     scattered over +-nu bars lands within the band of one common factor
     at a point with a chance of at most 2 / nu, so K points align by
     chance with at most (2 / nu)^K; K is the least that makes this, for
     the least nu and summed over the candidates, at most the false-alarm
     rate (from GC_FACTOR_POINTS to GC_FACTOR_POINTS_MAX), and a
     candidate whose own bound exceeds it is not tested.  */
  double need = log ((double) nc / r->false_alarm);
  unsigned Kf = GC_FACTOR_POINTS;
  while (Kf < GC_FACTOR_POINTS_MAX && Kf * log (nu_min / 2) < need)
    Kf++;
  /* Manual: "A term the point does not redraw": the drift's points, the
     factor's first (the same draws), more where the drift's chance
     GC_TERM_DRIFT^K asks for them; only with no backward class declared
     (a narrow class's rounding of an aggregate the points barely move
     keeps its cell, and its error then moves as a smooth term)  */
  bool terms = gc__precision_backward_count (r) == 0;
  unsigned K = Kf;
  while (terms && K < GC_FACTOR_POINTS_MAX
         && K * log (1 / GC_TERM_DRIFT) < need)
    K++;
  terms = terms && K * log (1 / GC_TERM_DRIFT) >= need;
  float *g32[GC_FACTOR_POINTS_MAX] = { NULL };
  double *g64[GC_FACTOR_POINTS_MAX] = { NULL };
  size_t *moved = malloc (nc * sizeof *moved), n_moved = 0;
  double *moved_band = malloc (nc * sizeof *moved_band);
  if (!moved || !moved_band)
    {
      free (moved);
      free (moved_band);
      return GC_ENOMEM;
    }
  gc__rng rng;
  gc__rng_seed (&rng, r->seed ^ FACTOR_SEED_MIX);
  unsigned kept;
  gc_status st = factor_points (sh, w0, &rng, K, false, g32, g64, &kept);
  if (st == GC_OK && kept == K)
    for (size_t q = 0; q < r->n_directions; q++)
      {
        gc_direction *d = &r->dirs[q];
        double band = factor_band (r, d);
        if (!(band > 0))
          continue;
        bool within = !candidate (d);
        bool factor = Kf * log (fabs (d->analytic - d->analytic_f64)
                                / band / 2) >= need;
        if (!factor && (!terms || within))
          continue;
        double a[GC_FACTOR_POINTS_MAX + 1], b[GC_FACTOR_POINTS_MAX + 1];
        point_values (d, g32, g64, K, a, b);
        double c;
        int held = 0;
        if (factor)
          {
            held = one_factor (a, b, Kf + 1, band, &c);
            if (held == 2)
              continue;
            if (held == 3)      /* tested again at a common fraction */
              {
                moved[n_moved] = q;
                moved_band[n_moved++] = band;
              }
            else
              keep_factor (r, d, held, Kf, c);
          }
        /* Manual: "A term the point does not redraw": a redrawn
           rounding lands within the drift with a chance of at most
           GC_TERM_DRIFT per point, and K points make that, over the
           candidates, the false-alarm rate or less (no drift is read
           where g64 is 0 at a point)  */
        if (terms && (held == 0 || held == 3) && !within)
          d->arith_drift = term_drift (a, b, K + 1, d->arith_bar);
        gc__judge_twin (d);
      }
  for (unsigned k = 0; k < GC_FACTOR_POINTS_MAX; k++)
    {
      gc__guarded_free (g32[k]);
      gc__guarded_free (g64[k]);
    }
  if (st == GC_OK && kept == K && n_moved)
    st = support_moved (sh, w0, &rng, Kf, moved, moved_band, n_moved);
  free (moved);
  free (moved_band);
  if (st == GC_OK && kept == K)
    modes_scatter (r);
  return st;
}
