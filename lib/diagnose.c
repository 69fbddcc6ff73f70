/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* diagnose.c -- what kind of wrong a failing check is, and where (manual:
   "Diagnosis").  A diagnosis must never be wrong: each pattern is claimed
   only on the evidence the text states (how many failures, how consistent),
   the rounding class is tested before any pattern, a factor, shift or zero
   region needs GC__EVIDENCE_MIN consistent failures, and a closed form is
   named only when the measured ratios match it within their own spread.  */

#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The fewest failures that establish a pattern (manual: "Diagnosis"): one
   or two failures agree with almost any pattern.  */
#define GC__EVIDENCE_MIN 3

/* ---------------------------------------------------------------------- */
/* The forward's agreement at the centre (manual: "Forward disagreement").  */

int
gc__forward_disagreement (const gc_result *r, double *worst_ulps)
{
  *worst_ulps = 0;
  if (r->kind != GC_CHECK_GRADIENT || r->status != GC_OK
      || !(r->forward_error_ulps > r->forward_budget_ulps))
    return 0;
  /* The deterministic worst case of d_f roundings: gamma_{d_f} M_L,
     expressed in ulps of M_L ("The accumulation factor").  */
  double df = (double) r->forward_depth;
  double ulp = gc__ulp (r->loss_magnitude, 24);
  if (df * GC_U32 >= 1 || ulp <= 0)
    return 1;
  double gamma = df * GC_U32 / (1 - df * GC_U32);
  *worst_ulps = gamma * r->loss_magnitude / ulp;
  if (r->forward_error_ulps <= *worst_ulps)
    return 1;
  /* Beyond the worst case for M_L.  When M_L is only |L| (the model
     declares no larger magnitude), a loss that cancels errs by more: the
     bound is not known to hold.  */
  return r->loss_magnitude > fabs (r->loss_f32) ? 2 : 3;
}

/* ---------------------------------------------------------------------- */
/* The diagnosis.  */

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

static void
describe_range (const gc_result *r, size_t first, size_t last, char *out,
                size_t size)
{
  char a[96], b[96];
  gc_param_name (r, first, a, sizeof a);
  gc_param_name (r, last, b, sizeof b);
  if (first == last)
    snprintf (out, size, "%s", a);
  else
    snprintf (out, size, "%s .. %s", a, b);
}

/* Append the printf-formatted text to the diagnosis, as far as it fits.  */
static void
append (gc_diagnosis *dg, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
static void
append (gc_diagnosis *dg, const char *fmt, ...)
{
  size_t l = strlen (dg->text);
  if (l + 1 >= sizeof dg->text)
    return;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (dg->text + l, sizeof dg->text - l, fmt, ap);
  va_end (ap);
}

/* The state the patterns share: the failures considered (those of the lead
   tensor) with their ratios, and the words of the text.  */
typedef struct diag
{
  gc_result *r;
  gc_diagnosis *dg;
  const gc_block *blk;          /* the lead tensor's block, or NULL */
  const gc_direction **fails;   /* its failures, in index order */
  double *ratios;               /* analytic / reference; NaN where it is 0 */
  size_t nf, checked;
  const gc_direction *worst;    /* its worst failure */
  const char *an, *what, *elts;
  char where[200];
} diag;

/* Whether the check holds every coordinate of R in order (dirs[j] is
   coordinate j): the shift and offset patterns compare an element with
   its neighbours, passing or failing.  */
static bool
all_coordinates (const gc_result *r)
{
  return r->direction_kind == GC_DIR_ALL && r->shard_count == 1
         && r->n_directions == r->n;
}

/* 1. Rounding class: every failure lies within the deterministic
   worst-case rounding bound (gamma_d instead of lambda*sqrt(d)*u in the
   f32 rounding term: the adjoint's, or the f32 output's in a forward
   check).  A forward check keeps d_o and its lambda in the backward
   fields.  Where only the reference's own worst case (a coarse f32
   reference) takes a failure inside the bound, the check is undecided
   and says that rather than blame the backward's roundings.  */
static bool
rounding_class (diag *g)
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
static bool
too_few (diag *g)
{
  if (g->nf >= GC__EVIDENCE_MIN)
    return false;
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
static bool
zero_region (diag *g)
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
static bool
constant_factor (diag *g)
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
  double lo = -INFINITY, hi = INFINITY, mean = 0, ss = 0;
  for (size_t k = 0; k < nf; k++)
    {
      const gc_direction *d = g->fails[k];
      if (!(fabs (d->analytic - c * d->reference) <= d->bar))
        {
          free (sorted);
          return false;
        }
      double s = d->bar / fabs (d->reference);
      lo = fmax (lo, ratios[k] - s);
      hi = fmin (hi, ratios[k] + s);
      mean += ratios[k];
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
  if (named && strcmp (dg->closed_form, "-1") == 0)
    {
      dg->kind = GC_DIAG_SIGN_FLIP;
      snprintf (dg->text, sizeof dg->text,
                "sign flip: %s = -reference on all %zu failing %s of %zu "
                "checked (%s); ratios %.6g to %.6g", g->an, nf, g->elts,
                g->checked, g->where, sorted[0], sorted[nr - 1]);
    }
  else if (named)
    {
      dg->kind = GC_DIAG_CONSTANT_FACTOR;
      snprintf (dg->text, sizeof dg->text,
                "constant factor: %s / reference = %.5g%s%s on all %zu "
                "failing %s of %zu checked (%s); ratios %.6g to %.6g", g->an,
                mean, same ? "" : " = ", same ? "" : dg->closed_form, nf,
                g->elts, g->checked, g->where, sorted[0], sorted[nr - 1]);
    }
  else
    {
      dg->kind = GC_DIAG_CONSTANT_FACTOR;
      char mt[40];
      snprintf (dg->text, sizeof dg->text,
                "constant factor: %s / reference = %s +- %.2g on all %zu "
                "failing %s of %zu checked (%s); no simple closed form "
                "within the ratios' spread (%.6g to %.6g)", g->an,
                gc__ratio_text (mt, sizeof mt, mean, 5), unc, nf, g->elts,
                g->checked, g->where, sorted[0], sorted[nr - 1]);
    }
  free (sorted);
  return true;
}

/* The fewest usable failures an approximate shift is judged on: it
   compares two robust spreads (median absolute deviations), which a few
   values cannot estimate.  */
#define GC__SHIFT_MIN 8

/* How well reading the reference K places on (K one stride of the lead
   tensor, either way) explains its failures.  EXACT: those it explains
   within the two bars against a resolved partner (outside the block the
   shifted value is zero).  USED: those with a resolved partner inside the
   block whose own difference |a_q - r_q| is at least four times the two
   bars (at a coarse resolution a partner within the bars proves nothing:
   no failure is used).  Over them the ratios to the shifted reference,
   rho_q = a_q / r_{q+K}, and to the own one, a_q / r_q: their medians
   MK, M0 and median absolute deviations SK, S0.  FIT: the used ones with
   |rho_q - MK| <= 4 SK, their range RMIN .. RMAX; the others, and the
   failures with no usable partner, break it: NBREAK of them, the four
   farthest from MK (no usable partner first) in BREAKERS.  */
typedef struct shift_fit
{
  size_t exact, used, fit, inside, nbreak;
  double mk, sk, m0, s0;
  size_t breakers[4];
  double score[4];
  double rmin, rmax;
} shift_fit;

/* Keep INDEX with SCORE among F's four worst breakers.  */
static void
add_breaker (shift_fit *f, size_t index, double score)
{
  f->nbreak++;
  size_t n = f->nbreak < 4 ? f->nbreak : 4, at = n - 1;
  if (f->nbreak > 4 && !(score > f->score[3]))
    return;
  while (at > 0 && score > f->score[at - 1])
    {
      f->breakers[at] = f->breakers[at - 1];
      f->score[at] = f->score[at - 1];
      at--;
    }
  f->breakers[at] = index;
  f->score[at] = score;
}

/* The median of the N values V (sorted in place) and the median of their
   absolute deviations from it (in W, N values of scratch).  */
static void
median_mad (double *v, double *w, size_t n, double *med, double *mad)
{
  qsort (v, n, sizeof *v, gc__cmp_double);
  *med = v[n / 2];
  for (size_t i = 0; i < n; i++)
    w[i] = fabs (v[i] - *med);
  qsort (w, n, sizeof *w, gc__cmp_double);
  *mad = w[n / 2];
}

/* False when memory runs out.  */
static bool
fit_shift (const diag *g, long k, shift_fit *f)
{
  const gc_result *r = g->r;
  const gc_block *blk = g->blk;
  memset (f, 0, sizeof *f);
  f->rmin = INFINITY;
  f->rmax = -INFINITY;
  double *rk = malloc (4 * g->nf * sizeof *rk);
  if (!rk)
    return false;
  double *r0 = rk + g->nf, *tmp = rk + 2 * g->nf, *rho = rk + 3 * g->nf;
  for (size_t q = 0; q < g->nf; q++)
    {
      const gc_direction *d = g->fails[q];
      long j = (long) d->index + k;
      rho[q] = NAN;
      if (j < (long) blk->offset || j >= (long) (blk->offset + blk->count))
        {
          f->exact += fabs (d->analytic) <= d->bar;
          continue;
        }
      const gc_direction *o = &r->dirs[j];
      double tolq = d->bar + o->bar;
      double s = fabs (d->analytic - o->reference);
      bool resolved = o->index == (size_t) j
                      && (o->verdict == GC_PASS || o->verdict == GC_FAIL)
                      && fabs (o->reference) > tolq && d->reference != 0;
      f->inside++;
      f->exact += resolved && s <= tolq;
      if (!resolved || !(d->diff >= 4 * tolq))
        continue;
      rho[q] = d->analytic / o->reference;
      rk[f->used] = rho[q];
      r0[f->used] = d->analytic / d->reference;
      f->used++;
    }
  if (f->used)
    {
      median_mad (rk, tmp, f->used, &f->mk, &f->sk);
      median_mad (r0, tmp, f->used, &f->m0, &f->s0);
    }
  for (size_t q = 0; q < g->nf; q++)
    {
      double dev = fabs (rho[q] - f->mk);
      if (!isnan (rho[q]) && dev <= 4 * f->sk)
        {
          f->fit++;
          f->rmin = fmin (f->rmin, rho[q]);
          f->rmax = fmax (f->rmax, rho[q]);
        }
      else
        add_breaker (f, g->fails[q]->index, isnan (rho[q]) ? INFINITY : dev);
    }
  free (rk);
  return true;
}

/* 5. Shifted window: analytic_i matches reference_{i+k} for one k among
   the block's strides (one step along any axis), in both senses, on every
   failure, where the matched reference is itself resolved (a partner
   within its bars of zero would match any small value).  Needs the
   reference at i+k, i.e. a check of every coordinate.  */
static bool
exact_shift (diag *g)
{
  const gc_block *blk = g->blk;
  if (!blk || !all_coordinates (g->r))
    return false;
  size_t stride = 1;
  for (size_t ax = blk->ndim ? blk->ndim : 1; ax-- > 0;)
    {
      for (int sgn = -1; sgn <= 1; sgn += 2)
        {
          long k = sgn * (long) stride;
          shift_fit f;
          if (!fit_shift (g, k, &f))
            return false;
          if (f.exact == g->nf && f.inside >= GC__EVIDENCE_MIN)
            {
              g->dg->kind = GC_DIAG_SHIFTED;
              g->dg->shift = k;
              snprintf (g->dg->text, sizeof g->dg->text,
                        "shifted window: the %s matches the reference %ld "
                        "place(s) %s (one step along axis %zu of %s) on all "
                        "%zu failing %s of %zu checked (%s)", g->what,
                        labs (k), k > 0 ? "on" : "back", ax, blk->name,
                        g->nf, g->elts, g->checked, g->where);
              return true;
            }
        }
      if (blk->ndim)
        stride *= blk->shape[ax];
    }
  return false;
}

/* 6. Offset constant along an axis: analytic - reference is one constant
   per index set of the other axes (per row, for a matrix constant along
   its axis 1), on every checked element of the lead tensor, passing or
   failing, within the two bars of the element and of the median (the
   whole tensor first, then each axis from the last), at least half the
   nonzero offsets beyond four bars (a coarse resolution claims nothing):
   a dropped or extra
   term that does not vary along that axis, such as LayerNorm's mean term.
   At least GC__EVIDENCE_MIN failures (the caller's minimum) carry it.  */
static bool
axis_offset (diag *g)
{
  const gc_result *r = g->r;
  const gc_block *blk = g->blk;
  if (!blk || !all_coordinates (r) || blk->count < 2)
    return false;
  size_t nd = blk->ndim ? blk->ndim : 1;
  size_t shape[GC_MAX_DIMS];
  for (size_t a = 0; a < nd; a++)
    shape[a] = blk->ndim ? blk->shape[a] : blk->count;
  double *dl = malloc (blk->count * sizeof *dl);
  double *bars = malloc (blk->count * sizeof *bars);
  if (!dl || !bars)
    {
      free (dl);
      free (bars);
      return false;
    }
  bool found = false;
  /* cand nd: the whole tensor; a < nd: constant along axis a */
  for (size_t cand = nd + 1; cand-- > 0 && !found;)
    {
      size_t dim = blk->count, stride = 1;
      if (cand < nd)
        {
          dim = shape[cand];
          for (size_t a = cand + 1; a < nd; a++)
            stride *= shape[a];
          if (dim < 2 || dim == blk->count)
            continue;   /* one element per set, or the whole tensor */
        }
      size_t ngroups = blk->count / dim, nonzero = 0, sharp = 0;
      double cmin = INFINITY, cmax = -INFINITY;
      bool all = true;
      for (size_t gi = 0; gi < ngroups && all; gi++)
        {
          size_t outer = gi / stride, inner = gi % stride, m = 0;
          for (size_t j = 0; j < dim; j++)
            {
              size_t e = blk->offset + outer * stride * dim + j * stride
                         + inner;
              const gc_direction *d = &r->dirs[e];
              if (d->verdict != GC_PASS && d->verdict != GC_FAIL)
                continue;
              dl[m] = d->analytic - d->reference;
              bars[m] = d->bar;
              m++;
            }
          if (m < 2)
            continue;
          double *sd = malloc (m * sizeof *sd), *sb = malloc (m * sizeof *sb);
          if (!sd || !sb)
            {
              free (sd);
              free (sb);
              all = false;
              break;
            }
          memcpy (sd, dl, m * sizeof *sd);
          memcpy (sb, bars, m * sizeof *sb);
          qsort (sd, m, sizeof *sd, gc__cmp_double);
          qsort (sb, m, sizeof *sb, gc__cmp_double);
          double c = sd[m / 2], bm = sb[m / 2];
          free (sd);
          free (sb);
          for (size_t j = 0; j < m && all; j++)
            all = fabs (dl[j] - c) <= bars[j] + bm;
          if (fabs (c) > bm)
            {
              nonzero++;
              sharp += fabs (c) > 4 * bm;
              cmin = fmin (cmin, c);
              cmax = fmax (cmax, c);
            }
        }
      /* Constancy within a tolerance (two bars) comparable to the offset
         itself says nothing: at least half the offsets must exceed four
         median bars, so that the tolerance is at most half of them.  */
      if (!all || !nonzero || 2 * sharp < nonzero)
        continue;
      found = true;
      gc_diagnosis *dg = g->dg;
      dg->kind = GC_DIAG_AXIS_OFFSET;
      if (cand == nd)
        snprintf (dg->text, sizeof dg->text,
                  "constant offset: %s - reference = %.4g on every checked "
                  "element of %s (within the bars), %zu failing %s of %zu "
                  "checked (%s): a term constant over the tensor is missing "
                  "or extra", g->an, cmin, blk->name, g->nf, g->elts,
                  g->checked, g->where);
      else
        snprintf (dg->text, sizeof dg->text,
                  "per-axis offset: %s - reference is constant along axis "
                  "%zu of %s, one offset per index of the other axes (%zu of "
                  "%zu offsets beyond their bars, %.4g to %.4g), on all %zu "
                  "failing %s of %zu checked (%s): a dropped or extra term "
                  "that does not vary along axis %zu (a mean or sum over "
                  "it, say)", g->an, cand, blk->name, nonzero, ngroups, cmin,
                  cmax, g->nf, g->elts, g->checked, g->where, cand);
    }
  free (dl);
  free (bars);
  return found;
}

/* 7. Approximate shift: the ratios of the analytic values to the
   reference one stride away are far more consistent than to their own
   reference (fit_shift): at least GC__SHIFT_MIN failures, and 3/4 of
   them, are used, and the median absolute deviation of a_q / r_{q+K} is
   at most a quarter of that of a_q / r_q.  An index off by one: most
   elements follow the shifted reference at a nearly constant ratio
   (0.99 to 1.03), and the boundary elements, whose shifted read falls
   outside or misses a term, break it.  The best stride (the smallest
   spread relative to the unshifted one) is named, with the ratios where
   it fits and the elements that break it most.  */
static bool
approximate_shift (diag *g)
{
  const gc_block *blk = g->blk;
  const gc_result *r = g->r;
  if (!blk || !all_coordinates (r))
    return false;
  shift_fit best;
  bool have = false;
  long bk = 0;
  size_t bax = 0, stride = 1;
  for (size_t ax = blk->ndim ? blk->ndim : 1; ax-- > 0;)
    {
      for (int sgn = -1; sgn <= 1; sgn += 2)
        {
          long k = sgn * (long) stride;
          shift_fit f;
          if (!fit_shift (g, k, &f))
            return false;
          if (f.used < GC__SHIFT_MIN || 4 * f.used < 3 * g->nf
              || !(4 * f.sk <= f.s0) || f.fit < GC__EVIDENCE_MIN)
            continue;
          if (!have || f.sk * best.s0 < best.sk * f.s0)
            {
              best = f;
              bk = k;
              bax = ax;
              have = true;
            }
        }
      if (blk->ndim)
        stride *= blk->shape[ax];
    }
  if (!have)
    return false;
  gc_diagnosis *dg = g->dg;
  dg->kind = GC_DIAG_APPROX_SHIFT;
  dg->shift = bk;
  char brk[200] = "";
  size_t len = 0;
  for (size_t q = 0; q < best.nbreak && q < 4; q++)
    {
      char nm[96];
      gc_param_name (r, best.breakers[q], nm, sizeof nm);
      int w = snprintf (brk + len, sizeof brk - len, "%s%s", q ? ", " : "",
                        nm);
      if (w < 0 || (size_t) w >= sizeof brk - len)
        break;
      len += (size_t) w;
    }
  snprintf (dg->text, sizeof dg->text,
            "approximate shift: the %s follows the reference %ld place(s) "
            "%s (one step along axis %zu of %s), an index off by one: %zu "
            "of the %zu failing %s of %zu checked (%s) have %s / shifted "
            "reference %.4g to %.4g (spread %.2g, against %.2g unshifted); "
            "%zu break%s it%s%s%s (boundary terms the shifted read misses "
            "or adds)", g->what, labs (bk), bk > 0 ? "on" : "back", bax,
            blk->name, best.fit, g->nf, g->elts, g->checked, g->where, g->an,
            best.rmin, best.rmax, best.sk, best.s0, best.nbreak,
            best.nbreak == 1 ? "s" : "", best.nbreak ? ", most: " : "", brk,
            best.nbreak > 4 ? ", ..." : "");
  return true;
}

/* 8. Nothing explains them all.  Over whole-vector random directions of
   a model with several tensors, a factor confined to one tensor reads as
   varying ratios (each direction mixes every tensor): that is said, and
   no logic error is claimed.  */
static bool
unexplained (diag *g)
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
  char rt[96];
  if (rmin <= rmax)
    snprintf (rt, sizeof rt, "%s / reference from %.4g to %.4g%s", g->an,
              rmin, rmax, refzero ? ", reference 0 on the others" : "");
  else
    snprintf (rt, sizeof rt, "reference 0 on every failure");
  g->dg->kind = GC_DIAG_LOGIC;
  bool mixed = r->direction_kind == GC_DIR_RANDOM && !r->random_per_block
               && r->n_blocks > 1;
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

/* The patterns, in the order they are tried (manual: "Diagnosis"): the
   rounding class before any pattern, so that a correct backward is never
   given one; the evidence minimum; then the exact patterns from the most
   specific (zeros) to the least, and the approximate ones after the exact
   ones, so that an exact explanation is never reported as approximate.
   The last always applies.  */
static bool (*const patterns[]) (diag *) = {
  rounding_class, too_few, zero_region, constant_factor, exact_shift,
  axis_offset, approximate_shift, unexplained };

/* The order in which the failing tensors are named (manual: "Diagnosis"):
   the largest share of checked elements failing first (a tensor that
   fails wholly is nearer the bug than one that fails in part), then the
   latest in the model's block order, read as forward order: a bug
   corrupts the gradients of every tensor the forward uses before it, so
   among tensors that fail alike the last one used is nearest the bug (the
   first whose gradient the backward gets wrong).  A GELU derivative's bug
   fails gamma, beta, W1 and b1 wholly: b1 is named first, beside the
   passing W2 and b2.  The worst nu, used before, favours the most finely
   resolved tensor; the relative error does not tell the nearest either
   (it named beta or b1 by the seed).  */
static int
lead_before (const gc__tensor *a, const gc__tensor *b)
{
  /* failed / checked, compared without rounding */
  double sa = (double) a->failed * (double) b->checked;
  double sb = (double) b->failed * (double) a->checked;
  if (sa != sb)
    return sa > sb;
  return a->block > b->block;
}

/* The failing tensors other than the diagnosed one, in lead order, and
   the passing ones, by name, as far as they fit.  */
static void
other_tensors (gc_diagnosis *dg, const gc__tensor *t, size_t nt,
               size_t diagnosed)
{
  size_t nfail = 0, npass = 0;
  for (size_t k = 0; k < nt; k++)
    if (k != diagnosed && t[k].checked)
      {
        nfail += t[k].failed > 0;
        npass += t[k].failed == 0;
      }
  if (!nfail)
    {
      if (npass)
        append (dg, "; every other tensor passes");
      return;
    }
  append (dg, "; %s", nfail == 1 ? "one other tensor fails too, a weaker "
          "lead (less complete, or earlier in block order):"
          : "others fail too, weaker leads in order (less complete, or "
            "earlier in block order):");
  /* the failing ones in lead order: a selection by rank, nt is small */
  unsigned char *named = calloc (nt ? nt : 1, 1);
  size_t shown = 0;
  bool cut = false;
  for (size_t n = 0; n < nfail && !cut; n++)
    {
      /* without memory for the marks, block order: the n-th failing */
      size_t best = SIZE_MAX, seen = 0;
      for (size_t k = 0; k < nt; k++)
        if (k != diagnosed && t[k].checked && t[k].failed
            && (named ? !named[k]
                        && (best == SIZE_MAX
                            || lead_before (&t[k], &t[best]))
                      : seen++ == n))
          best = k;
      if (best == SIZE_MAX)
        break;
      if (named)
        named[best] = 1;
      char item[96];
      snprintf (item, sizeof item, "%s %s (%zu/%zu)", shown ? "," : "",
                t[best].name, t[best].failed, t[best].checked);
      if (strlen (dg->text) + strlen (item) + 16 >= sizeof dg->text)
        {
          append (dg, " ...");
          cut = true;
          break;
        }
      append (dg, "%s", item);
      shown++;
    }
  free (named);
  if (!npass || cut)
    return;
  append (dg, "; %s:", npass == 1 ? "passes" : "pass");
  shown = 0;
  for (size_t k = 0; k < nt; k++)
    {
      if (k == diagnosed || !t[k].checked || t[k].failed)
        continue;
      char item[96];
      snprintf (item, sizeof item, "%s %s", shown ? "," : "", t[k].name);
      if (strlen (dg->text) + strlen (item) + 16 >= sizeof dg->text)
        {
          append (dg, " ...");
          break;
        }
      append (dg, "%s", item);
      shown++;
    }
}

void
gc__diagnose (gc_result *r)
{
  gc_diagnosis *dg = &r->diagnosis;
  memset (dg, 0, sizeof *dg);
  dg->kind = GC_DIAG_NONE;
  if (r->n_failed == 0)
    {
      if (r->n_nonsmooth)
        {
          dg->kind = GC_DIAG_NONSMOOTH;
          snprintf (dg->text, sizeof dg->text,
                    "%zu direction(s) straddle a kink of the loss: the "
                    "one-sided derivatives differ by more than the bar",
                    r->n_nonsmooth);
        }
      return;
    }

  /* Forward disagreement first: a backward cannot be judged against a
     reference forward that computes another function.  */
  double worst_ulps;
  if (gc__forward_disagreement (r, &worst_ulps) == 2)
    {
      dg->kind = GC_DIAG_FORWARD_MISMATCH;
      snprintf (dg->text, sizeof dg->text,
                "the f32 forward and the %s reference forward compute "
                "different functions: L = %.4g vs %.4g (%.3g ulp of M_L "
                "apart, beyond the worst case of %.3g ulp for depth %zu) -- "
                "a gradient check cannot judge the backward against a "
                "different function; the forward oracle (gradcheck oracle) "
                "compares them element by element",
                gc_reference_name (r->truncation_source), r->loss_f32,
                r->loss_reference, r->forward_error_ulps, worst_ulps,
                r->forward_depth);
      return;
    }

  gc__tensor *tens = NULL;
  size_t ntens = 0;
  if (gc__tensors (r, &tens, &ntens) != GC_OK)
    {
      dg->kind = GC_DIAG_LOGIC;
      snprintf (dg->text, sizeof dg->text, "(diagnosis skipped: out of memory)");
      return;
    }

  /* The failures considered: those of the lead tensor (lead_before) when
     the directions are placed in tensors, else all of them (within the
     block of the worst failing direction, where it has one).  */
  const gc_direction *worst = NULL;
  for (size_t k = 0; k < r->n_directions; k++)
    if (r->dirs[k].verdict == GC_FAIL
        && (!worst || r->dirs[k].nu > worst->nu))
      worst = &r->dirs[k];
  size_t bw = gc__direction_block (r, worst);
  size_t tw = 0;
  if (ntens > 1)
    {
      tw = SIZE_MAX;
      for (size_t k = 0; k < ntens; k++)
        if (tens[k].failed
            && (tw == SIZE_MAX || lead_before (&tens[k], &tens[tw])))
          tw = k;
      bw = tens[tw].block;
    }
  const gc_block *blk = bw != SIZE_MAX ? &r->blocks[bw] : NULL;
  diag g;
  memset (&g, 0, sizeof g);
  g.r = r;
  g.dg = dg;
  g.blk = blk;
  g.ratios = malloc (r->n_failed * sizeof *g.ratios);
  g.fails = malloc (r->n_failed * sizeof *g.fails);
  if (!g.ratios || !g.fails)
    {
      free (g.ratios);
      free (g.fails);
      free (tens);
      dg->kind = GC_DIAG_LOGIC;
      snprintf (dg->text, sizeof dg->text, "(diagnosis skipped: out of memory)");
      return;
    }
  dg->first = SIZE_MAX;
  dg->last = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_FAIL || (blk && gc__direction_block (r, d) != bw))
        continue;
      g.fails[g.nf] = d;
      g.ratios[g.nf] = d->reference != 0 ? d->analytic / d->reference : NAN;
      if (!g.worst || d->nu > g.worst->nu)
        g.worst = d;
      g.nf++;
      if (d->index != SIZE_MAX)
        {
          dg->first = d->index < dg->first ? d->index : dg->first;
          dg->last = d->index > dg->last ? d->index : dg->last;
        }
    }
  if (blk)
    snprintf (dg->block, sizeof dg->block, "%s", blk->name);
  g.an = r->kind == GC_CHECK_FORWARD ? "f32 output" : "analytic";
  g.what = r->kind == GC_CHECK_FORWARD ? "f32 outputs" : "analytic gradient";
  if (dg->first != SIZE_MAX)
    describe_range (r, dg->first, dg->last, g.where, sizeof g.where);
  else if (blk)
    snprintf (g.where, sizeof g.where, "%zu random directions within %s",
              g.nf, blk->name);
  else
    snprintf (g.where, sizeof g.where, "%zu random directions", g.nf);
  g.checked = tens[tw < ntens ? tw : 0].checked;
  g.elts = dg->first != SIZE_MAX ? "element(s)" : "direction(s)";

  for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++)
    if (patterns[p] (&g))
      break;

  if (gc__forward_disagreement (r, &worst_ulps) == 3)
    {
      /* Said first: the forwards may differ, which no pattern explains.  */
      char tail[sizeof dg->text];
      snprintf (tail, sizeof tail, "%s", dg->text);
      snprintf (dg->text, sizeof dg->text,
                "first: the f32 and reference losses differ by %.3g ulp of "
                "|L| at x, beyond the worst case %.3g for magnitude |L|: "
                "different functions, or a cancelling loss (declare "
                "loss_magnitude_f32); if the forwards agree: ",
                r->forward_error_ulps, worst_ulps);
      append (dg, "%s", tail);
    }
  if (tw < ntens && tens[tw].structure[0] && dg->kind != GC_DIAG_ONE_ULP)
    append (dg, "; %s", tens[tw].structure);
  if (ntens > 1 && blk)
    other_tensors (dg, tens, ntens, tw);
  free (tens);
  free (g.ratios);
  free (g.fails);
}

/* ---------------------------------------------------------------------- */
/* Would f64 do?  (manual: "Would f64 do?")  */

void
gc__predict_f64 (gc_result *r, bool has_f64, bool user_step)
{
  r->f64_same_verdict = 0;
  r->f64_term_ratio = 0;
  if (!has_f64 || r->reference != GC_REF_MPFR || r->status != GC_OK
      || r->kind != GC_CHECK_GRADIENT || r->n_directions == 0)
    return;
  /* f64's default step is 2^(e64 - e) times the MPFR one (both from the
     same scale); a user's step is the same for both.  */
  double hr = user_step ? 1
              : ldexp (1.0, gc__default_step_exponent (GC_REF_F64, 53)
                            - (int) r->step_exponent);
  bool same = true;
  double ratio = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict == GC_NONSMOOTH)
        {
          same = false;
          continue;
        }
      const gc_term *tr = &d->terms[GC_TERM_REFERENCE];
      double ml = r->loss_magnitude;
      for (size_t i = 0; i < tr->n_inputs; i++)
        if (strcmp (tr->inputs[i].name, "M_L") == 0)
          ml = tr->inputs[i].value;
      double h64 = d->step * hr;
      /* The f64 reference's own terms: truncation ~ h^2 scaled from the
         measured one (an overestimate where MPFR rounding dominates it),
         and f64 rounding ("Reference rounding" at p = 53).  */
      double e64 = d->terms[GC_TERM_TRUNCATION].value * hr * hr
                   + gc__eval_error (GC_REF_F64, 53, r->lambda_forward,
                                     r->forward_depth, ml) / h64
                   + GC_U64 * fabs (d->reference);
      double adj = d->terms[GC_TERM_ADJOINT].value;
      double mp = d->terms[GC_TERM_TRUNCATION].value
                  + d->terms[GC_TERM_REFERENCE].value;
      ratio = fmax (ratio, adj > 0 ? e64 / adj : INFINITY);
      /* |D64 - D_mpfr| <= e64 + mp, and f64's own bar lies between
         adj + e64 (its Richardson term at least the truncation) and
         adj + e64 + 1.5 (its rounding in that term) + e64: a pass stays
         one when diff + e64 + mp <= adj + e64, a failure when
         diff - e64 - mp > adj + 3.5 e64 (4 e64 taken).  */
      if (d->verdict == GC_PASS)
        same = same && d->diff + mp <= adj;
      else
        same = same && d->diff - mp > adj + 4 * e64;
    }
  r->f64_same_verdict = same ? 1 : -1;
  r->f64_term_ratio = ratio;
}

/* ---------------------------------------------------------------------- */
/* Refusals that say what would work.  */

void
gc__detail_status (gc_result *r, const gc_model *m, const gc_options *o)
{
  snprintf (r->detail, sizeof r->detail, "%s", gc_strerror (r->status));
  if (r->status != GC_ENOREF || !m)
    return;
  const char *want = o->reference == GC_REF_F64 ? "f64 forward (loss_f64)"
                     : "MPFR forward (loss_mpfr)";
  bool f64 = m->loss_f64 && o->reference != GC_REF_F64;
  bool mp = m->loss_mpfr && o->reference != GC_REF_MPFR;
  snprintf (r->detail, sizeof r->detail,
            "the model has no %s; it has %s%s an f32 forward: select %s "
            "(gc_options.reference)", want,
            mp ? "an MPFR, " : "", f64 ? "an f64 and" : mp ? "and" : "only",
            mp && f64 ? "one with --ref mpfr, --ref f64 or --ref f32"
            : mp ? "one with --ref mpfr or --ref f32"
            : f64 ? "one with --ref f64 or --ref f32"
            : "it with --ref f32");
}

/* ---------------------------------------------------------------------- */
/* Manual: "Two verdicts, one report": the diagnosis of a check with a
   twin reads each failing direction through the question that failed it:
   the algorithm's (g64 against its reference, under bar_64) or the
   arithmetic's (g32 against g64, under its bound).  A view swaps those
   numbers into the directions for gc__diagnose, and back.  */

typedef struct saved
{
  size_t k;
  gc_verdict verdict;
  double analytic, reference, diff, bar, nu, resolution, bar_wc, nu_wc;
  gc_term terms[GC_N_TERMS];
} saved;

/* Put direction K of R into the view as the question that found it (or,
   with ARITH, the arithmetic's), marked failed; its own values in S.  */
static void
view_in (gc_result *r, size_t k, bool arith, saved *s)
{
  gc_direction *d = &r->dirs[k];
  *s = (saved) { k, d->verdict, d->analytic, d->reference, d->diff, d->bar,
                 d->nu, d->resolution, d->bar_worst_case, d->nu_worst_case,
                 { d->terms[0], d->terms[1], d->terms[2] } };
  if (arith || d->verdict_algorithm != GC_FAIL)
    {
      d->reference = d->analytic_f64;
      d->diff = d->arith_diff;
      /* a pattern is fitted to g32 within its own rounding too: the f32
         worst case at |g32|, which a scaled-up g32 exceeds the twin's
         magnitudes by */
      d->bar = d->bar_worst_case
        = d->arith_bar + gc__gamma_over_u (r->backward_depth, 24) * GC_U32
                         * fabs (d->analytic);
      d->nu = d->nu_worst_case = d->nu_arith;
    }
  else
    {
      d->analytic = d->analytic_f64;
      if (d->richardson_used)
        {
          d->reference = d->richardson;
          d->terms[GC_TERM_TRUNCATION] = d->richardson_terms[0];
          d->terms[GC_TERM_REFERENCE] = d->richardson_terms[1];
        }
      d->terms[GC_TERM_ADJOINT] = d->adjoint_f64;
      d->diff = fabs (d->analytic - d->reference);
      d->bar = d->bar_worst_case = d->bar_f64;
      d->nu = d->nu_worst_case = d->nu_f64;
    }
  d->resolution = d->reference != 0 ? d->bar / fabs (d->reference)
                                     : INFINITY;
  d->verdict = GC_FAIL;
}

static void
view_out (gc_result *r, const saved *s)
{
  gc_direction *d = &r->dirs[s->k];
  d->verdict = s->verdict;
  d->analytic = s->analytic;
  d->reference = s->reference;
  d->diff = s->diff;
  d->bar = s->bar;
  d->nu = s->nu;
  d->resolution = s->resolution;
  d->bar_worst_case = s->bar_wc;
  d->nu_worst_case = s->nu_wc;
  for (int t = 0; t < GC_N_TERMS; t++)
    d->terms[t] = s->terms[t];
}

/* Diagnose R through a view of the directions WHICH selects (in block B,
   or anywhere with SIZE_MAX), each as its question's failure (ARITH: the
   arithmetic's); every other direction passes in the view.  The
   diagnosis is left in R; false when memory runs out.  */
static bool
diagnose_view (gc_result *r, bool (*which) (const gc_direction *), size_t b,
               bool arith)
{
  size_t n = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    n += which (&r->dirs[k])
         && (b == SIZE_MAX || gc__direction_block (r, &r->dirs[k]) == b);
  saved *s = malloc ((n ? n : 1) * sizeof *s);
  gc_verdict *v = malloc ((r->n_directions ? r->n_directions : 1)
                          * sizeof *v);
  if (!s || !v)
    {
      free (s);
      free (v);
      return false;
    }
  size_t m = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      gc_direction *d = &r->dirs[k];
      v[k] = d->verdict;
      if (which (d) && (b == SIZE_MAX || gc__direction_block (r, d) == b))
        view_in (r, k, arith, &s[m++]);
      else if (d->verdict != GC_ERROR)
        d->verdict = GC_PASS;
    }
  size_t nf = r->n_failed;
  r->n_failed = m;
  gc__diagnose (r);
  r->n_failed = nf;
  for (size_t q = 0; q < m; q++)
    view_out (r, &s[q]);
  for (size_t k = 0; k < r->n_directions; k++)
    r->dirs[k].verdict = v[k];
  free (s);
  free (v);
  return true;
}

static bool
is_precision (const gc_direction *d)
{
  return d->verdict == GC_PRECISION;
}

static bool
is_failure (const gc_direction *d)
{
  return d->verdict == GC_FAIL;
}

/* A pattern only a logic error makes (rounding errors scatter).  */
static bool
structured (gc_diagnosis_kind k)
{
  return k == GC_DIAG_CONSTANT_FACTOR || k == GC_DIAG_SIGN_FLIP
         || k == GC_DIAG_ZERO_REGION || k == GC_DIAG_SHIFTED
         || k == GC_DIAG_AXIS_OFFSET || k == GC_DIAG_APPROX_SHIFT;
}

void
gc__twin_findings (gc_result *r)
{
  if (!r->twin || r->status != GC_OK || r->nondeterministic)
    return;
  /* Manual: "The f64 twin": precision findings with the structure of a
     logic error (a constant factor, a sign, a zero region, a shift, an
     offset along an axis, between g32 and g64) are the f32 path's bug,
     not its precision: beyond any rounding, a failure.  Tensor by
     tensor.  */
  size_t nb = r->n_blocks ? r->n_blocks : 1;
  bool changed = false;
  for (size_t b = 0; r->n_precision && b < nb; b++)
    {
      size_t bb = r->n_blocks ? b : SIZE_MAX;
      size_t here = 0;
      for (size_t k = 0; k < r->n_directions; k++)
        here += r->dirs[k].verdict == GC_PRECISION
                && (bb == SIZE_MAX
                    || gc__direction_block (r, &r->dirs[k]) == bb);
      if (!here || !diagnose_view (r, is_precision, bb, true))
        continue;
      if (!structured (r->diagnosis.kind))
        continue;
      for (size_t k = 0; k < r->n_directions; k++)
        {
          gc_direction *d = &r->dirs[k];
          if (d->verdict == GC_PRECISION
              && (bb == SIZE_MAX || gc__direction_block (r, d) == bb))
            {
              d->arith = GC_ARITH_MISMATCH;
              d->verdict = GC_FAIL;
              changed = true;
            }
        }
    }
  if (changed)
    gc__summarise (r);
  /* The report's diagnosis: of the failures, each through its question;
     of the precision findings where nothing failed.  */
  memset (&r->diagnosis, 0, sizeof r->diagnosis);
  if (r->n_failed)
    diagnose_view (r, is_failure, SIZE_MAX, false);
  else if (r->n_precision)
    {
      diagnose_view (r, is_precision, SIZE_MAX, true);
      /* unexplained differences are what a precision loss leaves: say
         so, not "logic error" */
      const char *t = r->diagnosis.text;
      bool unexplained = strncmp (t, "logic error: ", 13) == 0;
      char text[sizeof r->diagnosis.text];
      snprintf (text, sizeof text, "precision, g32 against its twin g64: %s%s",
                unexplained ? "no pattern of a logic error, the scatter of "
                              "a precision loss: " : "",
                unexplained ? t + 13 : t);
      snprintf (r->diagnosis.text, sizeof r->diagnosis.text, "%s", text);
    }
}
