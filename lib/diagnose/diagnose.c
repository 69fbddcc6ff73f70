/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* diagnose.c -- what kind of wrong a failing check is, and where (manual:
   "Diagnosis").  A diagnosis must never be wrong: each pattern is claimed
   only on the evidence the text states (how many failures, how consistent),
   the rounding class is tested before any pattern, a factor, shift or zero
   region needs GC__EVIDENCE_MIN consistent failures, and a closed form is
   named only when the measured ratios match it within their own spread.
   This file is the driver: the lead tensor, the failures the patterns
   read, the order they are tried in, and the text around their finding;
   the patterns are in diagnose_patterns.c and diagnose_shift.c (the
   interface: diagnose-internal.h), the twin's two questions in
   diagnose_twin.c, the tensors failing together and the step where the
   error enters in diagnose_group.c.  */

#include "diagnose/diagnose-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* The diagnosis.  */

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

#define append gc__diag_append

/* The patterns, in the order they are tried (manual: "Diagnosis"): the
   rounding class before any pattern, so that a correct backward is never
   given one; the evidence minimum; then the exact patterns from the most
   specific (zeros) to the least, and the approximate ones after the exact
   ones, so that an exact explanation is never reported as approximate.
   The last always applies.  */
static bool (*const patterns[]) (diag *) = {
  gc__diag_rounding_class, gc__diag_too_few, gc__diag_zero_region,
  gc__diag_constant_factor, gc__diag_exact_shift, gc__diag_axis_offset,
  gc__diag_approximate_shift, gc__diag_unexplained };

/* Issue 36: steps spanning structure (manual: "Staircases").  A kink is
   a point: at a random x few stencils straddle one.  When at least half
   of the directions judged, and GC__EVIDENCE_MIN of them, straddle one,
   the kinks lie closer than the stencil's span: a forward piecewise
   constant or quantised finer than the step (floor, a rounding to a grid,
   a table), whose central differences average the stairs they span --
   or an x placed on a kink in each of those directions, said too.  The
   failures, if any, read the same stairs: no pattern is read on them.  */
static bool
staircase (gc_result *r)
{
  size_t judged = 0;
  double hmax = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    if (r->dirs[k].verdict != GC_ERROR)
      {
        judged++;
        hmax = fmax (hmax, fabs (r->dirs[k].step));
      }
  if (r->n_nonsmooth < GC__EVIDENCE_MIN || 2 * r->n_nonsmooth < judged)
    return false;
  gc_diagnosis *dg = &r->diagnosis;
  dg->kind = GC_DIAG_STAIRCASE;
  snprintf (dg->text, sizeof dg->text,
            "staircase (steps spanning structure): %zu of %zu direction(s) "
            "straddle a kink (one-sided derivatives that differ beyond "
            "the bar) -- kinks that dense at one x lie closer than the "
            "stencil's span (4h, h up to %.3g): a forward piecewise "
            "constant or quantised finer than the step (floor, a rounding "
            "to a grid, a table), whose central differences average the "
            "stairs they span, not a derivative (or an x placed on a kink "
            "in each); check the backward against the smooth function it "
            "differentiates, or at a step below the stairs' width",
            r->n_nonsmooth, judged, hmax);
  if (r->n_failed)
    {
      char tail[sizeof dg->text];
      snprintf (tail, sizeof tail, "%s", dg->text);
      size_t at = (size_t) (strstr (tail, " -- kinks") - tail);
      snprintf (dg->text, sizeof dg->text, "%.*s, and %zu fail, read on "
                "the same stairs (no pattern is read on them)%s",
                (int) at, tail, r->n_failed, tail + at);
    }
  return true;
}

/* The findings that come before any pattern: none failed (a kink, or
   nothing), or the forwards compute different functions.  True when one
   of them is the diagnosis (left in R).  */
static bool
before_patterns (gc_result *r)
{
  gc_diagnosis *dg = &r->diagnosis;
  double worst_ulps;
  int level = gc__forward_disagreement (r, &worst_ulps);
  if (r->n_failed == 0 && !r->n_nonsmooth && gc__forward_unjudged (r))
    {
      /* nothing failed, but no pass either (judge.c): say why */
      dg->kind = GC_DIAG_FORWARD_MISMATCH;
      snprintf (dg->text, sizeof dg->text,
                "inconclusive: the f32 forward and the %s reference "
                "forward compute different functions%s: L = %.4g vs %.4g "
                "(%.3g ulp of M_L apart, beyond the worst case of %.3g ulp "
                "for depth %zu); the backward agrees with the reference's "
                "derivative, which the production forward does not compute "
                "-- the forward oracle (gradcheck oracle) compares them",
                gc_reference_name (r->truncation_source),
                level != 3 ? ""
                : gc__forward_spread_measured (r)
                ? " (a loss that cancels shows in the f32 forward's spread "
                  "under the other rounding modes, and this one's raised "
                  "no M_L; declare loss_magnitude_f32 if it cancels)"
                : ", or the loss cancels by more than 2^16 "
                  "(declare loss_magnitude_f32)",
                r->loss_f32, r->loss_reference, r->forward_error_ulps,
                worst_ulps, r->forward_depth);
      return true;
    }
  if (staircase (r))
    return true;
  if (r->n_failed == 0)
    {
      if (r->n_nonsmooth)
        {
          dg->kind = GC_DIAG_NONSMOOTH;
          /* name the first (a new user's trial: only the tensors'
             table said where) */
          char nm[64] = "";
          for (size_t k = 0; k < r->n_directions && !nm[0]; k++)
            if (r->dirs[k].verdict == GC_NONSMOOTH)
              {
                if (r->dirs[k].index != SIZE_MAX)
                  gc_param_name (r, r->dirs[k].index, nm, sizeof nm);
                else
                  snprintf (nm, sizeof nm, "random direction %zu",
                            r->dirs[k].id);
              }
          snprintf (dg->text, sizeof dg->text,
                    "%zu direction(s) straddle a kink of the loss (first: "
                    "%s): the one-sided derivatives differ by more than "
                    "the bar", r->n_nonsmooth, nm);
        }
      return true;
    }

  /* Forward disagreement first: a backward cannot be judged against a
     reference forward that computes another function.  Issue 36: only
     where the worst case rests on a declared forward depth; beyond a
     defaulted one (n) a deeper forward may explain it, and the gradient's
     failures are diagnosed, the disagreement said first (after_patterns).  */
  if (level == 2 && !(r->defaulted & GC_DEFAULTED_FORWARD_DEPTH))
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
      return true;
    }
  return false;
}

/* The lead: the index in TENS (NTENS of them) of the tensor whose
   failures are diagnosed, in *TW, and its block, or SIZE_MAX.  Those of
   the lead tensor (lead_before) when the directions are placed in
   tensors, else all of them (within the block of the worst failing
   direction, where it has one).  */
static size_t
lead_block (const gc_result *r, const gc__tensor *tens, size_t ntens,
            size_t *tw)
{
  const gc_direction *worst = NULL;
  for (size_t k = 0; k < r->n_directions; k++)
    if (r->dirs[k].verdict == GC_FAIL
        && (!worst || r->dirs[k].nu > worst->nu))
      worst = &r->dirs[k];
  size_t bw = gc__direction_block (r, worst);
  *tw = 0;
  if (ntens > 1)
    {
      *tw = SIZE_MAX;
      for (size_t k = 0; k < ntens; k++)
        if (tens[k].failed
            && (*tw == SIZE_MAX || gc__lead_before (&tens[k], &tens[*tw])))
          *tw = k;
      bw = tens[*tw].block;
    }
  return bw;
}

/* Fill G (its r, dg, blk set, its arrays allocated) with the failures of
   block BW (every failure without a block) and the words of the text.  */
static void
gather (diag *g, size_t bw)
{
  gc_result *r = g->r;
  gc_diagnosis *dg = g->dg;
  const gc_block *blk = g->blk;
  dg->first = SIZE_MAX;
  dg->last = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_FAIL || (blk && gc__direction_block (r, d) != bw))
        continue;
      g->fails[g->nf] = d;
      g->ratios[g->nf] = d->reference != 0 ? d->analytic / d->reference : NAN;
      if (!g->worst || d->nu > g->worst->nu)
        g->worst = d;
      g->nf++;
      if (d->index != SIZE_MAX)
        {
          dg->first = d->index < dg->first ? d->index : dg->first;
          dg->last = d->index > dg->last ? d->index : dg->last;
        }
    }
  if (blk)
    snprintf (dg->block, sizeof dg->block, "%s", blk->name);
  g->an = r->kind == GC_CHECK_FORWARD ? "f32 output" : "analytic";
  g->what = r->kind == GC_CHECK_FORWARD ? "f32 outputs" : "analytic gradient";
  if (dg->first != SIZE_MAX)
    describe_range (r, dg->first, dg->last, g->where, sizeof g->where);
  else if (blk)
    snprintf (g->where, sizeof g->where, "%zu random directions within %s",
              g->nf, blk->name);
  else
    snprintf (g->where, sizeof g->where, "%zu random directions", g->nf);
  g->elts = dg->first != SIZE_MAX ? "element(s)" : "direction(s)";
}

/* The text around the pattern's finding: a forward disagreement that
   may explain it said first, the lead tensor's structure and the other
   tensors after (where the failures lie in block BLK).  */
/* Manual: "What the rounding modes reach": without a twin, a failure
   with no logic error's structure may be the rounding of a declared class
   the modes do not reach, whose depths nothing measured: said first,
   naming them.  */
static void
unmeasured_classes (gc_result *r)
{
  gc_diagnosis *dg = &r->diagnosis;
  /* a forward disagreement, said first already, comes before it */
  if (r->twin || (dg->kind != GC_DIAG_LOGIC && dg->kind != GC_DIAG_ONE_ULP)
      || !strncmp (dg->text, "first: ", 7)
      || !gc__precision_unreached_count (r))
    return;
  char tail[sizeof dg->text];
  snprintf (tail, sizeof tail, "%s", dg->text);
  dg->text[0] = '\0';
  size_t n = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    {
      const gc_precision *c = &r->precisions[k];
      if (c->mode_reached)
        continue;
      append (dg, n++ ? ", %s (d_b %zu)" : "first: the depths of %s (d_b %zu)",
              c->name, c->backward_depth);
    }
  append (dg, " are unmeasured without a twin (the rounding modes do not "
            "reach %s): if too small, this is %s rounding, and an f64 twin "
            "(grad_f64) decides; else: ", n == 1 ? "it" : "them",
            n == 1 ? "its" : "their");
  append (dg, "%s", tail);
}

static void
after_patterns (gc_result *r, const gc__tensor *tens, size_t ntens,
                size_t tw, const gc_block *blk)
{
  gc_diagnosis *dg = &r->diagnosis;
  /* the other tensors first: a group of tensors failing alike goes
     right after the finding's kind, before any "first: " said below */
  if (ntens > 1 && blk)
    gc__diag_other_tensors (dg, r, tens, ntens, tw);
  else if (tw < ntens && tens[tw].structure[0]
           && dg->kind != GC_DIAG_ONE_ULP)
    append (dg, "; %s", tens[tw].structure);
  double worst_ulps;
  int level = gc__forward_disagreement (r, &worst_ulps);
  if (level == 2 && (r->defaulted & GC_DEFAULTED_FORWARD_DEPTH))
    {
      /* Said first: beyond the worst case of a depth nobody declared.  */
      char tail[sizeof dg->text];
      snprintf (tail, sizeof tail, "%s", dg->text);
      snprintf (dg->text, sizeof dg->text,
                "first: the f32 and reference losses differ by %.3g ulp of "
                "M_L at x, beyond the worst case %.3g for the defaulted "
                "forward depth %zu: a deeper forward (declare forward_depth) "
                "or different functions (gradcheck oracle tells); if the "
                "forwards agree: ", r->forward_error_ulps, worst_ulps,
                r->forward_depth);
      append (dg, "%s", tail);
    }
  if (level == 3)
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
  unmeasured_classes (r);
}

void
gc__diagnose (gc_result *r)
{
  gc_diagnosis *dg = &r->diagnosis;
  memset (dg, 0, sizeof *dg);
  dg->kind = GC_DIAG_NONE;
  if (before_patterns (r))
    return;

  gc__tensor *tens = NULL;
  size_t ntens = 0;
  if (gc__tensors (r, &tens, &ntens) != GC_OK)
    {
      dg->kind = GC_DIAG_LOGIC;
      snprintf (dg->text, sizeof dg->text, "(diagnosis skipped: out of memory)");
      return;
    }
  size_t tw;
  size_t bw = lead_block (r, tens, ntens, &tw);
  diag g;
  memset (&g, 0, sizeof g);
  g.r = r;
  g.dg = dg;
  g.blk = bw != SIZE_MAX ? &r->blocks[bw] : NULL;
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
  gather (&g, bw);
  g.checked = tens[tw < ntens ? tw : 0].checked;

  for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++)
    if (patterns[p] (&g))
      break;

  after_patterns (r, tens, ntens, tw, g.blk);
  free (tens);
  free (g.ratios);
  free (g.fails);
}

/* ---------------------------------------------------------------------- */
/* Issue 36: a twin that is not the reference's algorithm (manual: "Two
   verdicts, one report").  Every failure is the algorithm's (g64 against
   the reference) while g32 agrees with the reference within its own bar
   (nu_32 <= 1).  Then either g32 also differs from g64 beyond any
   rounding on every failure (the arithmetic's mismatch): the twin
   computes something else, certainly; or every |g64 - r| is within
   4 u_32 of the element's magnitude (plus bar_64): the size of a
   constant rounded to f32 in the twin's f64 path (torch's float64
   hardsigmoid multiplies by float32(1/6)), which a bug that small in
   both paths would match too -- said so.  g32's agreement is evidence
   only where its bar sees: a blind direction (resolution >= 1: a bar
   above the reference itself) says nothing, and the certain reading
   needs every failure's g64 gap beyond g32's bar (had g32 carried g64's
   error, it would have failed).  */

void
gc__diag_twin_differs (gc_result *r)
{
  gc_diagnosis *dg = &r->diagnosis;
  if (!r->twin || !r->n_failed || dg->kind == GC_DIAG_NONE)
    return;
  size_t nf = 0, mismatch = 0, small = 0, seen = 0;
  double emax = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_FAIL)
        continue;
      if (d->verdict_algorithm != GC_FAIL || isnan (d->analytic_f64)
          || !(d->nu <= 1) || !(d->resolution < 1))
        return;
      nf++;
      mismatch += d->arith == GC_ARITH_MISMATCH;
      double ref = d->richardson_used ? d->richardson : d->reference;
      double m = gc__term_input (&d->adjoint_f64, "sum |w_i| m_i", 0);
      double scale = fmax (fabs (ref), m);
      double e = fabs (d->analytic_f64 - ref);
      small += e <= 4 * GC_U32 * scale + d->bar_f64;
      seen += e > d->bar;
      if (scale > 0)
        emax = fmax (emax, e / scale);
    }
  bool certain = mismatch == nf && seen == nf;
  if (!nf || (!certain && small < nf))
    return;
  char was[sizeof dg->text];
  snprintf (was, sizeof was, "%s", dg->text);
  dg->kind = GC_DIAG_TWIN_DIFFERS;
  if (certain)
    snprintf (dg->text, sizeof dg->text,
              "twin differs: g32 agrees with the reference within its bar "
              "on all %zu failure(s), g64 does not and differs from g32 "
              "beyond any rounding: the twin is not the reference's "
              "algorithm (fix the twin, not the op); g64 against the "
              "reference: ", nf);
  else
    snprintf (dg->text, sizeof dg->text,
              "twin differs: g32 agrees with the reference within its bar "
              "on all %zu failure(s); g64 misses it by at most %.2g of the "
              "elements' magnitude, a few f32 roundings (%.2g u_32): the "
              "size of a constant rounded to f32 in the twin's f64 path "
              "(torch's float64 hardsigmoid multiplies by float32(1/6)) -- "
              "the twin is then not the reference's algorithm; or both "
              "paths carry a bug that small, below f32's resolution; g64 "
              "against the reference: ", nf, emax, emax / GC_U32);
  append (dg, "%s", was);
}

/* Whether every failure of R is the f32 path's by structure alone (manual:
   "A factor the point does not move", "A term the point does not
   redraw"): within 2^16 of its bar, a factor or a smooth term the moved
   points kept, with no backward class declared.  Such a failure is also
   what data the points do not move, rounded to a narrower format, makes:
   the diagnosis names the remedy (diagnose_twin.c).  */
bool
gc__diag_by_structure (const gc_result *r)
{
  if (gc__precision_backward_count (r) > 0)
    return false;
  size_t n = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      if (d->verdict != GC_FAIL)
        continue;
      bool kept = (d->arith_factor_points > 0 && !isnan (d->arith_factor))
                  || d->arith_drift <= GC_TERM_DRIFT;
      if (d->arith != GC_ARITH_MISMATCH || !(d->nu_arith <= GC_PRECISION_CUT)
          || !kept)
        return false;
      n++;
    }
  return n > 0;
}

void
gc__diag_as_precision (gc_diagnosis *dg)
{
  static const char *const words[][2] = {
    { "failure(s)", "precision finding(s)" },
    { "analytic / reference", "g32 / g64" },
    { "others fail too, weaker leads in order (less complete, or earlier "
      "in block order):", "other tensors hold precision findings too:" },
    { "one other tensor fails too, a weaker lead (less complete, or "
      "earlier in block order):", "one other tensor holds precision "
      "findings too:" },
    { "every checked element fails", "every checked element differs" },
    { "tensors fail alike, wholly:", "tensors hold precision findings "
      "alike, wholly:" } };
  char out[sizeof dg->text];
  for (size_t w = 0; w < sizeof words / sizeof *words; w++)
    {
      size_t len = 0, fl = strlen (words[w][0]);
      const char *p = dg->text;
      out[0] = '\0';
      for (const char *q; (q = strstr (p, words[w][0]));)
        {
          len += (size_t) snprintf (out + len, len < sizeof out
                                               ? sizeof out - len : 0,
                                    "%.*s%s", (int) (q - p), p,
                                    words[w][1]);
          p = q + fl;
          if (len >= sizeof out)
            break;
        }
      if (len < sizeof out)
        snprintf (out + len, sizeof out - len, "%s", p);
      snprintf (dg->text, sizeof dg->text, "%s", out);
    }
}
