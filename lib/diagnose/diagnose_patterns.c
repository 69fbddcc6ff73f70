/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* diagnose_patterns.c -- the diagnosis patterns that read the ratios and
   the bars of the failures one by one (manual: "Diagnosis"): the rounding
   class, too few failures, a zero region, a constant factor (with its
   closed form), and what is left unexplained.  The shifts are in
   diagnose_shift.c; the order they are all tried in, in diagnose.c.  */

#include "diagnose/diagnose-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Name C as a simple closed form +-k^e, k in {2, 3} and the model's
   constants, e in {1, -1, 1/2, -1/2}: the one candidate within TOL of C,
   its value in *VAL.
   False when none or several of distinct value lie within TOL (the ratios
   cannot tell them apart).  On a tie of values (M = 4 makes M^0.5 = 2)
   the simpler name wins.  */
static bool
closed_form (double c, double tol, const gc_result *m, char *out, size_t size,
             double *val)
{
  struct { const char *name; double v; } bases[18];
  size_t nb = 0;
  bases[nb].name = "2";
  bases[nb++].v = 2;
  bases[nb].name = "3";
  bases[nb++].v = 3;
  for (size_t k = 0; k < m->n_constants && nb < 18; k++)
    if (m->constants[k].value > 0 && m->constants[k].value != 1
        && isfinite (m->constants[k].value))
      {
        bases[nb].name = m->constants[k].name;
        bases[nb].v = m->constants[k].value;
        nb++;
      }
  static const struct { double e; const char *fmt; } exps[] = {
    { 1, "%s%s" }, { -1, "%s1/%s" }, { 0.5, "%s%s^0.5" },
    { -0.5, "%s%s^-0.5" } };
  bool found = false;
  double value = 0;
  for (int sign = 1; sign >= -1; sign -= 2)
    {
      /* c = 1 cannot fail; -1 is the sign flip.  */
      if (sign < 0 && fabs (c + 1) <= tol)
        {
          if (found && value != -1)
            {
              out[0] = 0;
              return false;
            }
          if (!found)
            snprintf (out, size, "-1");
          found = true;
          value = -1;
        }
      for (size_t b = 0; b < nb; b++)
        for (size_t e = 0; e < sizeof exps / sizeof exps[0]; e++)
          {
            double v = sign * pow (bases[b].v, exps[e].e);
            if (fabs (c - v) > tol)
              continue;
            if (found && fabs (v - value) > 4 * GC_U64 * fabs (v))
              {
                out[0] = 0;
                return false;
              }
            if (!found)
              snprintf (out, size, exps[e].fmt, sign < 0 ? "-" : "",
                        bases[b].name);
            found = true;
            value = v;
          }
    }
  if (!found)
    out[0] = 0;
  *val = value;
  return found;
}
/* The tolerance of a factor C on direction D: the bar with its
   reference terms (truncation and reference rounding, the error of the
   reference itself) scaled by max(1, |C|): a = C r_true and r = r_true +
   e leave a - C r = -C e.  */
static double
factor_tolerance (const gc_direction *d, double c)
{
  double ref = d->terms[GC_TERM_TRUNCATION].value
               + d->terms[GC_TERM_REFERENCE].value;
  if (!(ref > 0) || !(fabs (c) > 1))
    return d->bar;
  return d->bar + (fabs (c) - 1) * ref;
}

/* The factors that fit every failure of G within its tolerance at the
   factor C (factor_tolerance): [*LO, *HI], empty when *LO > *HI.  A
   failure a = c r_true, r = r_true + e (e within the reference's terms)
   has a - c r = -c e, the reference's error scaled by |c|: with a twin's
   bar of f64 terms an exact x14 is otherwise missed.  */
static void
factor_interval (const diag *g, double c, double *lo, double *hi)
{
  *lo = -INFINITY;
  *hi = INFINITY;
  for (size_t k = 0; k < g->nf; k++)
    {
      double s = factor_tolerance (g->fails[k], c)
                 / fabs (g->fails[k]->reference);
      *lo = fmax (*lo, g->ratios[k] - s);
      *hi = fmin (*hi, g->ratios[k] + s);
    }
}

/* 1. Rounding class: every failure lies within the deterministic
   worst-case rounding bound (gamma_d instead of lambda*sqrt(d)*u in the
   f32 rounding term: the adjoint's, or the f32 output's in a forward
   check).  A forward check keeps d_o and its lambda in the backward
   fields.  Where only the reference's own worst case (a coarse f32
   reference) takes a failure inside the bound, the check is undecided
   and says that rather than blame the backward's roundings.  */
bool
gc__diag_rounding_class (diag *g)
{
  const gc_result *r = g->r;
  int rt = r->kind == GC_CHECK_FORWARD ? GC_TERM_OUTPUT : GC_TERM_ADJOINT;
  double db = (double) r->backward_depth;
  double gamma = db * GC_U32 / (1 - db * GC_U32);
  double prob = r->lambda_backward * sqrt (db) * GC_U32;
  bool all = db * GC_U32 < 1 && prob > 0, backward = all;
  /* BACKWARD: every failure within the bar with only the f32 term at its
     worst case, so that the backward's own roundings can explain it.  */
  double numax = 0;
  for (size_t k = 0; k < g->nf && all; k++)
    {
      const gc_direction *d = g->fails[k];
      double f32 = d->terms[rt].value;
      /* the f32 term scaled to gamma_d: the backward's roundings aligned */
      bool b = d->diff <= d->bar - f32 + f32 / prob * gamma;
      /* the direction's worst-case bar where it has one (manual: "The
         worst case"): every term at its worst */
      all = !isnan (d->bar_worst_case) ? d->nu_worst_case <= 1 : b;
      backward = backward && b;
      numax = fmax (numax, d->nu);
    }
  if (!all)
    return false;
  gc_diagnosis *dg = g->dg;
  dg->kind = GC_DIAG_ONE_ULP;
  const char *finer = r->reference == GC_REF_F32
                      ? "; a finer reference (--ref f64 or --ref mpfr) can "
                        "tell them apart" : "";
  if (backward)
    snprintf (dg->text, sizeof dg->text,
              "rounding class: the %zu failure(s) of %zu checked (%s, worst "
              "nu %.3g) lie within the worst-case rounding bound gamma_d: "
              "aligned rounding errors of a correct backward could explain "
              "them, as could a depth declared too small or a bug no larger "
              "than that bound%s", g->nf, g->checked, g->where, numax, finer);
  else
    snprintf (dg->text, sizeof dg->text,
              "undecided at this resolution: the %zu failure(s) of %zu "
              "checked (%s, worst nu %.3g) lie within the worst-case bound "
              "of the reference's own rounding: its aligned roundings "
              "could explain them, as could a bug no larger than that "
              "bound; no pattern is named%s", g->nf, g->checked, g->where,
              numax, finer);
  return true;
}

/* 2. Too few failures: one or two agree with almost any pattern.  */
bool
gc__diag_too_few (diag *g)
{
  if (g->nf >= GC__EVIDENCE_MIN)
    return false;
  /* Issue 36: a sign flip is recognised on one element too (a
     one-element tensor can show no more), with the caveat: a = -r within
     each failure's tolerance, every reference resolved (beyond its bar),
     and the failures every checked element of the lead tensor (one or two
     elements of a larger tensor that pass elsewhere are no flip of it).  */
  bool flip = g->nf == g->checked && g->blk;
  for (size_t k = 0; k < g->nf && flip; k++)
    {
      const gc_direction *d = g->fails[k];
      flip = fabs (d->reference) > d->bar
             && fabs (d->analytic + d->reference) <= factor_tolerance (d, -1);
    }
  if (flip)
    {
      char range[96];
      double lo = INFINITY, hi = -INFINITY;
      for (size_t k = 0; k < g->nf; k++)
        {
          lo = fmin (lo, g->ratios[k]);
          hi = fmax (hi, g->ratios[k]);
        }
      g->dg->kind = GC_DIAG_SIGN_FLIP;
      g->dg->factor = -1;
      snprintf (g->dg->closed_form, sizeof g->dg->closed_form, "-1");
      snprintf (g->dg->text, sizeof g->dg->text,
                "sign flip: %s = -reference on %s failing %s%s of %zu "
                "checked (%s; ratio%s %s) -- on %s only: %s agrees with a "
                "sign flip within its bar, and too few failures establish a "
                "pattern in general (that needs %d)", g->an,
                g->nf == 1 ? "the one" : "both",
                g->elts[0] == 'e' ? "element" : "direction",
                g->nf == 1 ? "" : "s", g->checked,
                g->where, g->nf == 1 ? "" : "s",
                g->nf == 1 ? gc__ratio_text (range, sizeof range, lo, 6)
                           : gc__range_text (range, sizeof range, lo, hi),
                g->nf == 1 ? "one element" : "two elements",
                g->nf == 1 ? "it" : "each", GC__EVIDENCE_MIN);
      return true;
    }
  const gc_direction *w = g->worst;
  g->dg->kind = GC_DIAG_LOGIC;
  char rt[48];
  if (w->reference != 0)
    {
      char num[40];
      snprintf (rt, sizeof rt, "%s / reference = %s", g->an,
                gc__ratio_text (num, sizeof num, w->analytic / w->reference,
                                4));
    }
  else
    snprintf (rt, sizeof rt, "reference 0, %s %.4g", g->an, w->analytic);
  snprintf (g->dg->text, sizeof g->dg->text,
            "logic error: %zu failure(s) of %zu checked (%s) beyond the "
            "worst-case rounding bound, %s at the worst; too few to "
            "establish a factor, shift, offset or zero region (that needs "
            "%d consistent failures)", g->nf, g->checked, g->where, rt,
            GC__EVIDENCE_MIN);
  return true;
}

/* 3. Zero region: the analytic value is within its bar of zero while the
   reference is not, on every failure.  */
bool
gc__diag_zero_region (diag *g)
{
  for (size_t k = 0; k < g->nf; k++)
    if (!(fabs (g->fails[k]->analytic) <= g->fails[k]->bar
          && fabs (g->fails[k]->reference) > g->fails[k]->bar))
      return false;
  g->dg->kind = GC_DIAG_ZERO_REGION;
  g->dg->factor = 0;
  snprintf (g->dg->text, sizeof g->dg->text,
            "zero region: the %s is zero (within its bar) on all %zu "
            "failing %s of %zu checked (%s) where the reference is not",
            g->what, g->nf, g->elts, g->checked, g->where);
  return true;
}

/* 4. Constant factor: one c explains every failure within its bar
   (|a_k - c r_k| <= bar_k, c the median ratio).  The factor is reported
   with the interval the bars allow; a closed form is named only within
   the ratios' own spread, inside every failure's interval, and when the
   ratios are tight (manual: "Diagnosis").  */
bool
gc__diag_constant_factor (diag *g)
{
  const gc_result *r = g->r;
  size_t nf = g->nf;
  const double *ratios = g->ratios;
  double *sorted = malloc (nf * sizeof *sorted);
  if (!sorted)
    return false;
  size_t nr = 0;
  for (size_t k = 0; k < nf; k++)
    if (isfinite (ratios[k]))
      sorted[nr++] = ratios[k];
  if (nr != nf)
    {
      free (sorted);
      return false;
    }
  qsort (sorted, nr, sizeof *sorted, gc__cmp_double);
  double c = sorted[nr / 2];
  double lo, hi, mean = 0, ss = 0;
  for (size_t k = 0; k < nf; k++)
    mean += ratios[k];
  factor_interval (g, c, &lo, &hi);
  /* one c in every failure's interval (the median's, when it fits
     them all, is one; where the reference's own errors put the median
     at the edge of its interval another c may fit where it does not) */
  if (lo <= hi && !(c >= lo && c <= hi))
    {
      c = (lo + hi) / 2;
      factor_interval (g, c, &lo, &hi);
    }
  if (!(lo <= hi))
    {
      free (sorted);
      return false;
    }
  gc_diagnosis *dg = g->dg;
  mean /= (double) nf;
  for (size_t k = 0; k < nf; k++)
    ss += (ratios[k] - mean) * (ratios[k] - mean);
  double sd = sqrt (ss / (double) (nf - 1));
  double half = (sorted[nr - 1] - sorted[0]) / 2;
  /* The naming tolerance: three standard errors of the mean ratio (sd /
     sqrt(n), from the ratios' own spread), at least the rounding of one
     f32 value, sqrt(d_b) u |c| (ratios that agree to the last bits are
     exact up to it), and a few units of double rounding.  */
  double fround = sqrt ((double) r->backward_depth) * GC_U32 * fabs (mean);
  double tol = fmax (3 * sd / sqrt ((double) nf), fround);
  tol = fmax (tol, 4 * GC_U64 * fabs (mean));
  double unc = fmax ((hi - lo) / 2, half);
  /* A factor within its own uncertainty of 1 is no factor: c = 1 fits
     the failures as well (manual: "Diagnosis", constant factor).  */
  if (fabs (mean - 1) <= unc)
    {
      free (sorted);
      return false;
    }
  dg->factor = mean;
  double v = 0;
  closed_form (mean, tol, r, dg->closed_form, sizeof dg->closed_form, &v);
  /* A closed form needs tight ratios too: all of one sign, their half
     range within 1/16 of the value (a spread wider than that cannot tell
     neighbouring forms such as 3 and 8^0.5 apart, however many failures
     shrink the standard error), and the value inside every failure's
     interval (its ratio +- bar / |reference|), up to the factor's own
     f32 rounding.  A mean of -0.045 from ratios -0.35 to 0.10 names
     nothing.  */
  if (dg->closed_form[0]
      && !(sorted[0] * v > 0 && sorted[nr - 1] * v > 0
           && half <= fabs (v) / 16 && v >= lo - fround && v <= hi + fround))
    dg->closed_form[0] = 0;
  char num[32];
  snprintf (num, sizeof num, "%.5g", mean);
  bool named = dg->closed_form[0] != 0;
  bool same = named && strcmp (num, dg->closed_form) == 0;
  char range[96];
  gc__range_text (range, sizeof range, sorted[0], sorted[nr - 1]);
  if (named && strcmp (dg->closed_form, "-1") == 0)
    {
      dg->kind = GC_DIAG_SIGN_FLIP;
      snprintf (dg->text, sizeof dg->text,
                "sign flip: %s = -reference on all %zu failing %s of %zu "
                "checked (%s); ratios %s", g->an, nf, g->elts,
                g->checked, g->where, range);
    }
  else if (named)
    {
      dg->kind = GC_DIAG_CONSTANT_FACTOR;
      snprintf (dg->text, sizeof dg->text,
                "constant factor: %s / reference = %.5g%s%s on all %zu "
                "failing %s of %zu checked (%s); ratios %s", g->an,
                mean, same ? "" : " = ", same ? "" : dg->closed_form, nf,
                g->elts, g->checked, g->where, range);
    }
  else
    {
      dg->kind = GC_DIAG_CONSTANT_FACTOR;
      char mt[40];
      snprintf (dg->text, sizeof dg->text,
                "constant factor: %s / reference = %s +- %.2g on all %zu "
                "failing %s of %zu checked (%s); no simple closed form "
                "within the ratios' spread (%s)", g->an,
                gc__ratio_text (mt, sizeof mt, mean, 5), unc, nf, g->elts,
                g->checked, g->where, range);
    }
  free (sorted);
  return true;
}

/* 7b. Suspected rounding (issue 36): without a twin, failures that no
   pattern explains and that scatter about the reference like rounding:
   both signs of a - r, each on at least a quarter of the failures, and
   relative errors |a - r| / max(|r|, sum |w_i| m_i) at most 2^-6 (a few
   roundings of bf16's 2^-8; a logic error's are larger or of one sign).
   The largest estimates the unit roundoff; the format named is the one
   whose roundoff lies within a factor 4 of it.  The text says what
   settles it: the class declared, or an f64 twin.  RT: the ratios' range
   in words.  */
static bool
suspected_rounding (diag *g, const char *rt)
{
  const gc_result *r = g->r;
  size_t above = 0, below = 0;
  double umax = 0;
  for (size_t k = 0; k < g->nf; k++)
    {
      const gc_direction *d = g->fails[k];
      double m = gc__term_input (&d->terms[GC_TERM_ADJOINT],
                                 "sum |w_i| m_i", 0);
      double scale = fmax (fabs (d->reference), m);
      if (!(scale > 0) || !isfinite (d->analytic))
        return false;
      double e = (d->analytic - d->reference) / scale;
      above += e > 0;
      below += e < 0;
      umax = fmax (umax, fabs (e));
    }
  if (!(umax > 0 && umax <= 0x1p-6) || 4 * above < g->nf
      || 4 * below < g->nf)
    return false;
  const char *fmt = umax > 0x1p-10 ? "2^-8 (like bf16)"
                    : umax > 0x1p-13 ? "2^-11 (like fp16 or TF32)"
                    : NULL;
  const char *decl = umax > 0x1p-10 ? "GC_U_BF16" : "GC_U_FP16 or GC_U_TF32";
  char est[64], todo[160];
  if (fmt)
    snprintf (est, sizeof est, "%s", fmt);
  else
    snprintf (est, sizeof est, "about 2^%.0f, a narrower format or an "
              "approximation", floor (log2 (umax)));
  if (r->n_precisions)
    snprintf (todo, sizeof todo, "the declared classes' depths may be too "
              "small: raise them");
  else
    snprintf (todo, sizeof todo, "declare the class (gc_model.precisions, "
              "unit_roundoff %s, its depths)", fmt ? decl
              : "the estimate");
  g->dg->kind = GC_DIAG_ROUNDING_SUSPECTED;
  snprintf (g->dg->text, sizeof g->dg->text,
            "suspected rounding: %zu failure(s) of %zu checked (%s) scatter "
            "about the reference on both sides (%zu above, %zu below; %s), "
            "relative errors up to %.3g = 2^%.1f: what rounding to a unit "
            "roundoff of %s leaves, not a logic error's structure; %s -- "
            "or add an f64 twin (grad_f64), which settles it", g->nf,
            g->checked, g->where, above, below, rt, umax, log2 (umax), est,
            todo);
  return true;
}

/* 8. Nothing explains them all.  Over whole-vector random directions of
   a model with several tensors, a factor confined to one tensor reads as
   varying ratios (each direction mixes every tensor): that is said, and
   no logic error is claimed.  */
bool
gc__diag_unexplained (diag *g)
{
  const gc_result *r = g->r;
  double rmin = INFINITY, rmax = -INFINITY;
  size_t zeros = 0, refzero = 0;
  for (size_t k = 0; k < g->nf; k++)
    {
      if (isfinite (g->ratios[k]))
        {
          rmin = fmin (rmin, g->ratios[k]);
          rmax = fmax (rmax, g->ratios[k]);
        }
      else
        refzero++;
      zeros += fabs (g->fails[k]->analytic) <= g->fails[k]->bar;
    }
  char rt[200], range[96];
  if (rmin <= rmax)
    snprintf (rt, sizeof rt, "%s / reference from %s%s", g->an,
              gc__range_text (range, sizeof range, rmin, rmax),
              refzero ? ", reference 0 on the others" : "");
  else
    snprintf (rt, sizeof rt, "reference 0 on every failure");
  g->dg->kind = GC_DIAG_LOGIC;
  bool mixed = r->direction_kind == GC_DIR_RANDOM && !r->random_per_block
               && r->n_blocks > 1;
  /* whole-vector random directions mix a factor on one tensor into a
     scatter too: not read as rounding */
  if (!r->twin && !mixed && suspected_rounding (g, rt))
    return true;
  if (mixed)
    snprintf (g->dg->text, sizeof g->dg->text,
              "unexplained over whole-vector random directions: %zu "
              "failure(s) of %zu checked; no constant factor (%s), sign "
              "flip or zero region (%zu of %zu zero) explains them all -- "
              "each direction mixes every tensor, so a factor confined to "
              "one tensor reads here as varying ratios: --directions "
              "random-per-block:K or all locates it", g->nf, g->checked, rt,
              zeros, g->nf);
  else
    snprintf (g->dg->text, sizeof g->dg->text,
              "logic error: %zu failure(s) of %zu checked (%s); no constant "
              "factor (%s), sign flip, zero region (%zu of %zu zero), "
              "offset or shift explains them all", g->nf, g->checked,
              g->where, rt, zeros, g->nf);
  return true;
}

/* Manual: "Two verdicts, one report": a constant factor within
   gamma_d(u) of 1, d the larger of the declared and the measured depth,
   is what rounding at that depth makes, not a logic error's structure;
   with backward classes declared, nor is one below O(1) on at most half
   of the tensor's CHECKED directions (its FOUND findings: the tails of
   the classes' scatter, read at their own bars).  */
bool
gc__rounding_factor (const gc_result *r, size_t found, size_t checked,
                     size_t bb)
{
  if (r->diagnosis.kind != GC_DIAG_CONSTANT_FACTOR)
    return false;
  /* nor is a factor its findings' ratios g32 / g64 scatter about by more
     than a quarter of its distance from 1 (half their range above
     |c - 1| / 4): a logic error's factor holds on every element to the
     last few bits; an undeclared bf16 rounding's "factor" 1.0005 read
     from ratios 1.0002 to 1.001 is the scatter of its unit roundoff */
  double lo = INFINITY, hi = -INFINITY;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_PRECISION || !(d->analytic_f64 != 0)
          || (bb != SIZE_MAX && gc__direction_block (r, d) != bb))
        continue;
      double q = d->analytic / d->analytic_f64;
      lo = fmin (lo, q);
      hi = fmax (hi, q);
    }
  if (lo <= hi
      && (hi - lo) / 2 > fabs (r->diagnosis.factor - 1) / GC_FACTOR_SCATTER)
    return true;
  if (gc__precision_backward_count (r) > 0 && 2 * found <= checked
      && fabs (r->diagnosis.factor - 1) < 0.5)
    return true;
  double d = fmax ((double) r->backward_depth, r->depth_implied);
  if (!(d < 0x1p40))
    return false;
  double g = gc__gamma_over_u ((size_t) ceil (d), 24) * GC_U32;
  return fabs (r->diagnosis.factor - 1) <= g;
}
