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
/* Where a direction lies.  */

/* The block holding coordinate INDEX (blocks partition [0, n) in order), or
   SIZE_MAX.  */
static size_t
block_index_of (const gc_result *r, size_t index)
{
  size_t lo = 0, hi = r->n_blocks;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      const gc_block *b = &r->blocks[mid];
      if (index < b->offset)
        hi = mid;
      else if (index >= b->offset + b->count)
        lo = mid + 1;
      else
        return mid;
    }
  return SIZE_MAX;
}

size_t
gc__direction_block (const gc_result *r, const gc_direction *d)
{
  if (d->index != SIZE_MAX)
    return block_index_of (r, d->index);
  if (r->random_per_block && r->n_blocks)
    {
      size_t b = d->id / r->random_per_block;
      return b < r->n_blocks ? b : SIZE_MAX;
    }
  return SIZE_MAX;
}

/* ---------------------------------------------------------------------- */
/* Per-tensor, per-axis summary (manual: "Diagnosis", "Tensors").  */

/* Append to OUT the index set {j : in[j]} of an axis of length N as at most
   MAXR ranges "0-22, 24"; false when it needs more.  */
static bool
ranges (const unsigned char *in, size_t n, size_t maxr, char *out,
        size_t size)
{
  size_t nr = 0, len = 0;
  out[0] = 0;
  for (size_t j = 0; j < n;)
    {
      if (!in[j])
        {
          j++;
          continue;
        }
      size_t e = j;
      while (e + 1 < n && in[e + 1])
        e++;
      if (++nr > maxr)
        return false;
      int w = e == j ? snprintf (out + len, size - len, "%s%zu",
                                 len ? ", " : "", j)
                     : snprintf (out + len, size - len, "%s%zu-%zu",
                                 len ? ", " : "", j, e);
      if (w < 0 || (size_t) w >= size - len)
        return false;
      len += (size_t) w;
      j = e + 1;
    }
  return true;
}

/* The exact structure of the failures of block B along each axis, from the
   per-element STATE (0 unchecked or non-smooth, 1 pass, 2 fail):
   "axis 0: 0-22 fail, 23 passes".  An axis is reported when some of its
   indices hold failures and others hold checked elements that all pass.
   False when memory runs out.  */
static bool
axis_structure (const gc_block *b, const unsigned char *state, char *out,
                size_t size)
{
  out[0] = 0;
  size_t nd = b->ndim ? b->ndim : 1;
  size_t len = 0, stride = 1;
  size_t shape[GC_MAX_DIMS];
  for (size_t a = 0; a < nd; a++)
    shape[a] = b->ndim ? b->shape[a] : b->count;
  for (size_t a = nd; a-- > 0;)
    {
      size_t dim = shape[a];
      if (dim < 2)
        {
          stride *= dim ? dim : 1;
          continue;
        }
      size_t *chk = calloc (dim, sizeof *chk), *fl = calloc (dim, sizeof *fl);
      unsigned char *fs = calloc (dim, 1), *ps = calloc (dim, 1);
      if (!chk || !fl || !fs || !ps)
        {
          free (chk);
          free (fl);
          free (fs);
          free (ps);
          return false;
        }
        {
          for (size_t e = 0; e < b->count; e++)
            {
              size_t j = (e / stride) % dim;
              chk[j] += state[e] != 0;
              fl[j] += state[e] == 2;
            }
          size_t nfail = 0, npass = 0;
          bool whole = true;   /* every checked element of a failing index */
          for (size_t j = 0; j < dim; j++)
            {
              fs[j] = fl[j] > 0;
              ps[j] = chk[j] > 0 && fl[j] == 0;
              nfail += fs[j];
              npass += ps[j];
              if (fl[j] && fl[j] != chk[j])
                whole = false;
            }
          char f[80], p[80];
          if (nfail && npass)
            {
              bool okf = ranges (fs, dim, 3, f, sizeof f);
              bool okp = ranges (ps, dim, 3, p, sizeof p);
              int w = -1;
              if (okf && okp)
                w = snprintf (out + len, size - len, "%saxis %zu: %s %s, %s "
                              "%s", len ? "; " : "", a, f,
                              whole ? (nfail == 1 ? "fails" : "fail")
                              : nfail == 1 ? "holds the failures"
                                           : "hold the failures", p,
                              npass == 1 ? "passes" : "pass");
              else if (okf)
                w = snprintf (out + len, size - len, "%saxis %zu: failures "
                              "only in %s (of 0-%zu)", len ? "; " : "", a, f,
                              dim - 1);
              else if (okp)
                w = snprintf (out + len, size - len, "%saxis %zu: only %s "
                              "%s (of 0-%zu)", len ? "; " : "", a, p,
                              npass == 1 ? "passes" : "pass", dim - 1);
              if (w >= 0 && (size_t) w < size - len)
                len += (size_t) w;
              else
                out[len] = 0;
            }
        }
      free (chk);
      free (fl);
      free (fs);
      free (ps);
      stride *= dim;
    }
  return true;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

gc_status
gc__tensors (const gc_result *r, gc__tensor **out, size_t *count)
{
  *out = NULL;
  *count = 0;
  bool coords = r->direction_kind != GC_DIR_RANDOM;
  bool per_block = r->n_blocks && (coords || r->random_per_block);
  size_t nt = per_block ? r->n_blocks : 1;
  gc__tensor *t = calloc (nt, sizeof *t);
  double *res = malloc ((r->n_directions ? r->n_directions : 1) * sizeof *res);
  unsigned char *state = NULL;
  size_t *bidx = malloc ((r->n_directions ? r->n_directions : 1)
                         * sizeof *bidx);
  if (!t || !res || !bidx)
    goto oom;
  for (size_t k = 0; k < nt; k++)
    {
      t[k].name = per_block ? r->blocks[k].name
                  : coords ? "x" : "random directions";
      t[k].block = per_block ? k : SIZE_MAX;
    }
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      bidx[k] = per_block ? gc__direction_block (r, d) : 0;
      if (bidx[k] == SIZE_MAX || d->verdict == GC_ERROR)
        continue;
      gc__tensor *e = &t[bidx[k]];
      e->checked++;
      e->failed += d->verdict == GC_FAIL;
      e->nonsmooth += d->verdict == GC_NONSMOOTH;
      if (e->checked == 1 || d->nu > e->worst_nu)
        e->worst_nu = d->nu;
    }
  for (size_t b = 0; b < nt; b++)
    {
      size_t nr = 0;
      for (size_t k = 0; k < r->n_directions; k++)
        if (bidx[k] == b && r->dirs[k].verdict != GC_ERROR
            && isfinite (r->dirs[k].resolution))
          res[nr++] = r->dirs[k].resolution;
      if (nr)
        {
          qsort (res, nr, sizeof *res, cmp_double);
          t[b].resolution = res[nr / 2];
        }
      else
        t[b].resolution = NAN;
      if (!t[b].failed || !coords)
        continue;
      gc_block whole = { "x", 0, r->n, 1, { r->n } };
      const gc_block *bl = per_block ? &r->blocks[b] : &whole;
      if (t[b].failed == t[b].checked)
        {
          snprintf (t[b].structure, sizeof t[b].structure,
                    "every checked element fails");
          continue;
        }
      state = calloc (bl->count ? bl->count : 1, 1);
      if (!state)
        goto oom;
      for (size_t k = 0; k < r->n_directions; k++)
        {
          const gc_direction *d = &r->dirs[k];
          if (bidx[k] != b || d->index == SIZE_MAX)
            continue;
          size_t e = d->index - bl->offset;
          if (d->verdict == GC_FAIL)
            state[e] = 2;
          else if (d->verdict == GC_PASS && state[e] != 2)
            state[e] = 1;
        }
      bool ok = axis_structure (bl, state, t[b].structure,
                                sizeof t[b].structure);
      free (state);
      state = NULL;
      if (!ok)
        goto oom;
      state = NULL;
    }
  free (res);
  free (bidx);
  *out = t;
  *count = nt;
  return GC_OK;
oom:
  free (t);
  free (res);
  free (bidx);
  free (state);
  return GC_ENOMEM;
}

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
   constants, e in {1, -1, 1/2, -1/2}: the one candidate within TOL of C.
   False when none or several of distinct value lie within TOL (the ratios
   cannot tell them apart).  On a tie of values (M = 4 makes M^0.5 = 2)
   the simpler name wins.  */
static bool
closed_form (double c, double tol, const gc_result *m, char *out, size_t size)
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
            return false;
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
              return false;
            if (!found)
              snprintf (out, size, exps[e].fmt, sign < 0 ? "-" : "",
                        bases[b].name);
            found = true;
            value = v;
          }
    }
  if (!found)
    out[0] = 0;
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

/* The failing tensors other than the diagnosed one and the passing ones,
   by name, as far as they fit.  */
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
  append (dg, "; %s", nfail == 1 ? "one other tensor fails too:" : "others fail too:");
  for (int pass = 0; pass < 2; pass++)
    {
      if (pass && npass)
        append (dg, "; %s:", npass == 1 ? "passes" : "pass");
      size_t shown = 0;
      for (size_t k = 0; k < nt; k++)
        {
          if (k == diagnosed || !t[k].checked || (t[k].failed == 0) != pass)
            continue;
          char item[96];
          if (pass)
            snprintf (item, sizeof item, "%s %s", shown ? "," : "",
                      t[k].name);
          else
            snprintf (item, sizeof item, "%s %s (%zu/%zu)", shown ? "," : "",
                      t[k].name, t[k].failed, t[k].checked);
          if (strlen (dg->text) + strlen (item) + 16 >= sizeof dg->text)
            {
              append (dg, " ...");
              break;
            }
          append (dg, "%s", item);
          shown++;
        }
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

  /* The failures considered: those in the tensor of the worst failing
     direction.  */
  const gc_direction *worst = NULL;
  for (size_t k = 0; k < r->n_directions; k++)
    if (r->dirs[k].verdict == GC_FAIL
        && (!worst || r->dirs[k].nu > worst->nu))
      worst = &r->dirs[k];
  size_t bw = gc__direction_block (r, worst);
  const gc_block *blk = bw != SIZE_MAX ? &r->blocks[bw] : NULL;
  size_t tw = ntens > 1 ? bw : 0;
  size_t nf = 0;
  double *ratios = malloc (r->n_failed * sizeof *ratios);
  const gc_direction **fails = malloc (r->n_failed * sizeof *fails);
  if (!ratios || !fails)
    {
      free (ratios);
      free (fails);
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
      fails[nf] = d;
      ratios[nf] = d->reference != 0 ? d->analytic / d->reference : NAN;
      nf++;
      if (d->index != SIZE_MAX)
        {
          dg->first = d->index < dg->first ? d->index : dg->first;
          dg->last = d->index > dg->last ? d->index : dg->last;
        }
    }
  if (blk)
    snprintf (dg->block, sizeof dg->block, "%s", blk->name);
  const char *an = r->kind == GC_CHECK_FORWARD ? "f32 output" : "analytic";
  const char *what = r->kind == GC_CHECK_FORWARD ? "f32 outputs"
                     : "analytic gradient";
  char where[200] = "";
  if (dg->first != SIZE_MAX)
    describe_range (r, dg->first, dg->last, where, sizeof where);
  else if (blk)
    snprintf (where, sizeof where, "%zu random directions within %s", nf,
              blk->name);
  else
    snprintf (where, sizeof where, "%zu random directions", nf);
  size_t checked = tens[tw < ntens ? tw : 0].checked;
  const char *elts = dg->first != SIZE_MAX ? "element(s)" : "direction(s)";

  /* Rounding class first: every failure lies within the deterministic
     worst-case rounding bound (gamma_d instead of lambda*sqrt(d)*u in the
     f32 rounding term: the adjoint's, or the f32 output's in a forward
     check).  A forward check keeps d_o and its lambda in the backward
     fields.  */
  {
    int rt = r->kind == GC_CHECK_FORWARD ? GC_TERM_OUTPUT : GC_TERM_ADJOINT;
    double db = (double) r->backward_depth;
    double gamma = db * GC_U32 / (1 - db * GC_U32);
    double prob = r->lambda_backward * sqrt (db) * GC_U32;
    bool all = db * GC_U32 < 1 && prob > 0;
    double numax = 0;
    for (size_t k = 0; k < nf && all; k++)
      {
        const gc_direction *d = fails[k];
        double f32 = d->terms[rt].value;
        /* the direction's worst-case bar where it has one (manual: "The
           worst case"), else the f32 term scaled to gamma_d */
        all = !isnan (d->bar_worst_case) ? d->nu_worst_case <= 1
              : d->diff <= d->bar - f32 + f32 / prob * gamma;
        numax = fmax (numax, d->nu);
      }
    if (all)
      {
        dg->kind = GC_DIAG_ONE_ULP;
        snprintf (dg->text, sizeof dg->text,
                  "rounding class: the %zu failure(s) of %zu checked (%s, "
                  "worst nu %.3g) lie within the worst-case rounding bound "
                  "gamma_d: aligned rounding errors of a correct backward "
                  "explain them, as would a depth declared too small or a "
                  "bug no larger than that bound", nf, checked, where,
                  numax);
        goto done;
      }
  }

  if (nf < GC__EVIDENCE_MIN)
    {
      double rw = worst->reference != 0 ? worst->analytic / worst->reference
                                        : NAN;
      dg->kind = GC_DIAG_LOGIC;
      char rt[40];
      snprintf (dg->text, sizeof dg->text,
                "logic error: %zu failure(s) of %zu checked (%s) beyond the "
                "worst-case rounding bound, %s / reference = %s at the "
                "worst; too few to establish a factor, shift or zero region "
                "(that needs %d consistent failures)", nf, checked, where, an,
                gc__ratio_text (rt, sizeof rt, rw, 4), GC__EVIDENCE_MIN);
      goto done;
    }

  /* Zero region: the analytic value is within its bar of zero while the
     reference is not, on every failure.  */
  {
    size_t zeros = 0;
    for (size_t k = 0; k < nf; k++)
      if (fabs (fails[k]->analytic) <= fails[k]->bar
          && fabs (fails[k]->reference) > fails[k]->bar)
        zeros++;
    if (zeros == nf)
      {
        dg->kind = GC_DIAG_ZERO_REGION;
        dg->factor = 0;
        snprintf (dg->text, sizeof dg->text,
                  "zero region: the %s is zero (within its bar) on all %zu "
                  "failing %s of %zu checked (%s) where the "
                  "reference is not", what, nf, elts, checked, where);
        goto done;
      }
  }

  /* Constant factor: one c explains every failure within its bar
     (|a_k - c r_k| <= bar_k, c the median ratio).  The factor is reported
     with the interval the bars allow; a closed form is named only within
     the ratios' own spread (manual: "Diagnosis").  */
  {
    double *sorted = malloc (nf * sizeof *sorted);
    size_t nr = 0;
    if (sorted)
      for (size_t k = 0; k < nf; k++)
        if (isfinite (ratios[k]))
          sorted[nr++] = ratios[k];
    if (sorted && nr == nf)
      {
        qsort (sorted, nr, sizeof *sorted, cmp_double);
        double c = sorted[nr / 2];
        bool all = true;
        double lo = -INFINITY, hi = INFINITY, mean = 0, ss = 0;
        for (size_t k = 0; k < nf && all; k++)
          {
            const gc_direction *d = fails[k];
            all = fabs (d->analytic - c * d->reference) <= d->bar;
            double s = d->bar / fabs (d->reference);
            lo = fmax (lo, ratios[k] - s);
            hi = fmin (hi, ratios[k] + s);
            mean += ratios[k];
          }
        if (all && lo <= hi)
          {
            mean /= (double) nf;
            for (size_t k = 0; k < nf; k++)
              ss += (ratios[k] - mean) * (ratios[k] - mean);
            double sd = sqrt (ss / (double) (nf - 1));
            double half = (sorted[nr - 1] - sorted[0]) / 2;
            /* The naming tolerance: three standard errors of the mean
               ratio (sd / sqrt(n), from the ratios' own spread), at least
               the rounding of one f32 value, sqrt(d_b) u |c| (ratios that
               agree to the last bits are exact up to it), and a few units
               of double rounding.  */
            double tol = fmax (3 * sd / sqrt ((double) nf),
                               sqrt ((double) r->backward_depth) * GC_U32
                               * fabs (mean));
            tol = fmax (tol, 4 * GC_U64 * fabs (mean));
            double unc = fmax ((hi - lo) / 2, half);
            dg->factor = mean;
            closed_form (mean, tol, r, dg->closed_form,
                         sizeof dg->closed_form);
            char num[32];
            snprintf (num, sizeof num, "%.5g", mean);
            bool named = dg->closed_form[0] != 0;
            bool same = named && strcmp (num, dg->closed_form) == 0;
            if (named && strcmp (dg->closed_form, "-1") == 0)
              {
                dg->kind = GC_DIAG_SIGN_FLIP;
                snprintf (dg->text, sizeof dg->text,
                          "sign flip: %s = -reference on all %zu failing "
                          "%s of %zu checked (%s); ratios %.6g to "
                          "%.6g", an, nf, elts, checked, where, sorted[0],
                          sorted[nr - 1]);
              }
            else if (named)
              {
                dg->kind = GC_DIAG_CONSTANT_FACTOR;
                snprintf (dg->text, sizeof dg->text,
                          "constant factor: %s / reference = %.5g%s%s on all "
                          "%zu failing %s of %zu checked (%s); ratios "
                          "%.6g to %.6g", an, mean, same ? "" : " = ",
                          same ? "" : dg->closed_form, nf, elts, checked, where,
                          sorted[0], sorted[nr - 1]);
              }
            else
              {
                dg->kind = GC_DIAG_CONSTANT_FACTOR;
                char mt[40];
                snprintf (dg->text, sizeof dg->text,
                          "constant factor: %s / reference = %s +- %.2g on "
                          "all %zu failing %s of %zu checked (%s); no "
                          "simple closed form within the ratios' spread "
                          "(%.6g to %.6g)", an,
                          gc__ratio_text (mt, sizeof mt, mean, 5), unc, nf,
                          elts, checked, where, sorted[0], sorted[nr - 1]);
              }
            free (sorted);
            goto done;
          }
      }
    free (sorted);
  }

  /* Shifted window: analytic_i matches reference_{i+k} for one k among the
     block's strides (one step along any axis), in both senses, on every
     failure, where the matched reference is itself resolved (a partner
     within its bars of zero would match any small value).  Needs the
     reference at i+k, i.e. a check of every coordinate.  */
  if (blk && r->direction_kind == GC_DIR_ALL && r->shard_count == 1
      && r->n_directions == r->n)
    {
      size_t stride = 1;
      for (size_t ax = blk->ndim ? blk->ndim : 1; ax-- > 0;)
        {
          for (int sgn = -1; sgn <= 1; sgn += 2)
            {
              long k = sgn * (long) stride;
              bool all = true;
              size_t inside = 0;
              for (size_t q = 0; q < nf && all; q++)
                {
                  long j = (long) fails[q]->index + k;
                  if (j < (long) blk->offset
                      || j >= (long) (blk->offset + blk->count))
                    {
                      /* outside the block the shifted value is zero */
                      all = fabs (fails[q]->analytic) <= fails[q]->bar;
                      continue;
                    }
                  const gc_direction *o = &r->dirs[j];
                  double tolq = fails[q]->bar + o->bar;
                  all = o->index == (size_t) j
                        && fabs (fails[q]->analytic - o->reference) <= tolq
                        && fabs (o->reference) > tolq;
                  inside++;
                }
              if (all && inside >= GC__EVIDENCE_MIN)
                {
                  dg->kind = GC_DIAG_SHIFTED;
                  dg->shift = k;
                  snprintf (dg->text, sizeof dg->text,
                            "shifted window: the %s matches the reference "
                            "%ld place(s) %s (one step along axis %zu of %s) "
                            "on all %zu failing %s of %zu checked "
                            "(%s)", what, labs (k), k > 0 ? "on" : "back",
                            ax, blk->name, nf, elts, checked, where);
                  goto done;
                }
            }
          if (blk->ndim)
            stride *= blk->shape[ax];
        }
    }

  {
    double rmin = INFINITY, rmax = -INFINITY;
    size_t zeros = 0;
    for (size_t k = 0; k < nf; k++)
      {
        if (isfinite (ratios[k]))
          {
            rmin = fmin (rmin, ratios[k]);
            rmax = fmax (rmax, ratios[k]);
          }
        zeros += fabs (fails[k]->analytic) <= fails[k]->bar;
      }
    dg->kind = GC_DIAG_LOGIC;
    snprintf (dg->text, sizeof dg->text,
              "logic error: %zu failure(s) of %zu checked (%s); no constant "
              "factor (%s / reference from %.4g to %.4g), sign flip, zero "
              "region (%zu of %zu zero) or shift explains them all", nf,
              checked, where, an, rmin, rmax, zeros, nf);
  }

done:
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
  if (tw < ntens && tens[tw].structure[0]
      && dg->kind != GC_DIAG_ONE_ULP)
    append (dg, "; %s", tens[tw].structure);
  if (ntens > 1 && blk)
    other_tensors (dg, tens, ntens, tw);
  free (tens);
  free (ratios);
  free (fails);
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
