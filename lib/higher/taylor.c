/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* taylor.c -- the Taylor test (manual: "The Taylor test"): the remainders
   r1 = |L(x + eps v) - L(x) - eps <g, v>| and r2 = |r1's signed value -
   eps^2 / 2 <v, H v>| of the reference forward at eps_0 2^-k, their rates
   on the levels above the rounding floors, and the verdicts; and its
   reports.  */

#include "higher/higher.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Manual: "The Taylor test": the rate windows, the floor factor.  */
#define FLOOR_FACTOR 16
static const double low1 = 1.5, low2 = 2.5;

static gc_status
stop (gc_taylor *t, gc_status st, int code, const char *what)
{
  if (t->status == GC_OK)
    {
      t->status = st;
      t->callback_code = code;
      snprintf (t->detail, sizeof t->detail, "%s", what ? what
                : gc_strerror (st));
    }
  return t->status;
}

/* The reference forward's evaluations: its kind, precision, and the
   buffers of one point.  */
typedef struct ref_eval
{
  gc_reference ref;
  mpfr_prec_t p;
  __mpfr_struct *xm;       /* n numbers (MPFR) */
  __mpfr_struct out[3];    /* the loss and two guards */
  double *xd;
  float *xf;
} ref_eval;

/* L at x + EPS v into VAL (at the reference's precision).  */
static gc_status
eval_at (gc_taylor *t, const gc_model *m, const gc__env *e, ref_eval *re,
         const float *x, const float *v, double eps, mpfr_ptr val)
{
  size_t n = m->n;
  char what[160];
  int code = 0;
  gc_status st = GC_OK;
  if (re->ref == GC_REF_MPFR)
    {
      for (size_t i = 0; i < n; i++)
        {
          mpfr_set_prec (re->xm + i, 320);
          mpfr_set_flt (re->xm + i, x[i], MPFR_RNDN);
          /* eps v_i is exact (a power of two times a float) */
          if (mpfr_add_d (re->xm + i, re->xm + i, eps * (double) v[i],
                          MPFR_RNDN) != 0)
            return stop (t, GC_ESTEP, 0, "x + eps v is not exact at 320 "
                         "bits");
        }
      for (int k = 1; k < 3; k++)
        mpfr_set_ui (re->out + k, 3, MPFR_RNDN);
      fesetenv (&e->model);
      int rc = m->loss_mpfr (m->ctx, re->xm, re->out);
      fesetenv (FE_DFL_ENV);
      if (rc)
        return stop (t, GC_ECALLBACK, rc, "loss_mpfr failed");
      for (int k = 1; k < 3; k++)
        if (mpfr_get_prec (re->out + k) != 2
            || mpfr_cmp_ui (re->out + k, 3) != 0)
          return stop (t, GC_EOVERRUN, 0, "loss_mpfr wrote past its one "
                       "number");
      for (size_t i = 0; i < n; i++)
        if (mpfr_cmp_d (re->xm + i, (double) x[i] + eps * (double) v[i]) != 0
            && mpfr_get_prec (re->xm + i) == 320)
          {
            /* compare exactly: x_i + eps v_i again at 320 bits */
            mpfr_t c;
            mpfr_init2 (c, 320);
            mpfr_set_flt (c, x[i], MPFR_RNDN);
            mpfr_add_d (c, c, eps * (double) v[i], MPFR_RNDN);
            int differ = mpfr_cmp (c, re->xm + i) != 0;
            mpfr_clear (c);
            if (differ)
              return stop (t, GC_EOVERRUN, 0, "loss_mpfr wrote into its "
                           "input x");
          }
      if (!mpfr_number_p (re->out))
        return stop (t, GC_ENONFINITE, 0, "loss_mpfr gave a non-finite "
                     "loss");
      mpfr_set (val, re->out, MPFR_RNDN);
    }
  else
    {
      bool f64 = re->ref == GC_REF_F64;
      for (size_t i = 0; i < n; i++)
        {
          double p = (double) x[i] + eps * (double) v[i];
          if (fma (eps, (double) v[i], (double) x[i] - p) != 0
              || (!f64 && (double) (float) p != p))
            return stop (t, GC_ESTEP, 0, "x + eps v is not exact in the "
                         "reference's format");
          re->xd[i] = p;
          re->xf[i] = (float) p;
        }
      if (f64)
        {
          double l;
          st = gc__call (m, e, GC_CALL_LOSS_F64, re->xd, NULL, e->round, &l,
                         &code, what, sizeof what);
          mpfr_set_d (val, l, MPFR_RNDN);
        }
      else
        {
          float l;
          st = gc__call (m, e, GC_CALL_LOSS_F32, re->xf, NULL, e->round, &l,
                         &code, what, sizeof what);
          mpfr_set_flt (val, l, MPFR_RNDN);
        }
      if (st != GC_OK)
        return stop (t, st, code, what);
    }
  return GC_OK;
}

/* <a, v> for floats A, V, at precision P (each product exact).  */
static double
dot_exact (mpfr_ptr acc, const float *a, const float *v, size_t n)
{
  mpfr_t prod;
  mpfr_init2 (prod, 64);
  mpfr_set_zero (acc, 1);
  for (size_t i = 0; i < n; i++)
    {
      mpfr_set_flt (prod, a[i], MPFR_RNDN);
      mpfr_mul_d (prod, prod, (double) v[i], MPFR_RNDN);
      mpfr_add (acc, acc, prod, MPFR_RNDN);
    }
  mpfr_clear (prod);
  return mpfr_get_d (acc, MPFR_RNDN);
}

/* Manual: "The Taylor test": the rates of R over the levels above FL, and
   the verdict on the last two judged rates: both at least LO (the
   expected rate within its window, or above it: the next coefficient
   vanishes along v), a pass; both below, a failure; else inconclusive;
   with the eps range of the run of consecutive judged rates of the same
   class that ends there.  */
static gc_verdict
rates (const gc_taylor *t, const double *r, const double *fl, double *rate,
       double lo_rate, double eps_d, double *lo, double *hi)
{
  size_t last = SIZE_MAX, prev = SIZE_MAX;
  for (size_t k = 0; k + 1 < t->n_levels; k++)
    {
      rate[k] = NAN;
      if (r[k] > fl[k] && r[k + 1] > fl[k + 1])
        {
          rate[k] = log2 (r[k] / r[k + 1]);
          prev = last;
          last = k;
        }
    }
  if (t->n_levels)
    rate[t->n_levels - 1] = NAN;
  *lo = *hi = 0;
  if (prev == SIZE_MAX)
    return GC_INCONCLUSIVE;
  bool ok = rate[last] >= lo_rate;
  if (ok != (rate[prev] >= lo_rate))
    return GC_INCONCLUSIVE;
  size_t first = last;
  while (first > 0 && !isnan (rate[first - 1])
         && (rate[first - 1] >= lo_rate) == ok)
    first--;
  *hi = t->eps[first];
  *lo = t->eps[last + 1];
  /* Manual: "The Taylor test", a step too large for the function: a rate
     below the window on levels that all lie above the first step derived
     from x's scale, EPS_D, is the function's nonlinearity as much as a
     gradient's error (a saturated tanh's remainder is eps |<g, v>|, rate
     1): inconclusive, the range kept for the report */
  if (!ok && *lo > eps_d)
    return GC_INCONCLUSIVE;
  return ok ? GC_PASS : GC_FAIL;
}

/* The arguments' checks: the status of the first bad one, else GC_OK with
   *REF the reference forward to use.  */
static gc_status
validate (gc_taylor *t, const gc_model *m, const float *x,
          const gc_options *o, unsigned levels, gc_reference *ref_out)
{
  size_t n = m->n;
  if (!gc__model_abi_known (m->abi))
    return stop (t, GC_EABI, 0, NULL);
  if (n == 0)
    return stop (t, GC_EEMPTY, 0, NULL);
  if (levels > GC_TAYLOR_MAX_LEVELS || levels == 1
      || !(o->false_alarm > 0 && o->false_alarm < 1)
      || !(o->step >= 0) || !isfinite (o->step)
      || !(o->timeout >= 0) || !isfinite (o->timeout)
      || !gc__blocks_valid (m->blocks, m->n_blocks, n))
    return stop (t, GC_EINVAL, 0, NULL);
  if (o->directions == GC_DIR_SCREEN)   /* one direction: none to screen */
    return stop (t, GC_EINVAL, 0, NULL);
  if (o->directions == GC_DIR_LIST
      && (!o->indices || !o->n_indices || o->indices[0] >= n))
    return stop (t, GC_EDIRECTION, 0, NULL);
  if (o->precision != 0 && !gc__precision_usable (o->precision))
    return stop (t, GC_EPREC, 0, NULL);
  gc_reference ref = o->reference;
  if (ref == GC_REF_AUTO)
    ref = m->loss_mpfr ? GC_REF_MPFR : m->loss_f64 ? GC_REF_F64 : GC_REF_F32;
  if ((ref == GC_REF_MPFR && !m->loss_mpfr)
      || (ref == GC_REF_F64 && !m->loss_f64))
    return stop (t, GC_ENOREF, 0, "the model lacks the reference forward "
                 "asked for");
  char what[160];
  /* declared depths with d u >= 1 leave gamma_d undefined (manual: "The
     worst case") */
  const size_t depths[] = { m->backward_depth, m->hvp_depth };
  static const char *const names[] = { "backward_depth", "hvp_depth" };
  for (int k = 0; k < 2; k++)
    if (depths[k] && ldexp ((double) depths[k], -24) >= 1)
      {
        snprintf (what, sizeof what, "%s %zu: %zu*u >= 1 (u = 2^-24), "
                  "gamma_d undefined", names[k], depths[k], depths[k]);
        return stop (t, GC_EINVAL, 0, what);
      }
  if (n > SIZE_MAX / 64)
    return stop (t, GC_ENOMEM, 0, NULL);
  gc_status st = gc__point_finite (x, n, m->blocks, m->n_blocks, what,
                                   sizeof what);
  if (st != GC_OK)
    return stop (t, st, 0, what);
  *ref_out = ref;
  return GC_OK;
}

/* One test's buffers: the direction, the f32 gradient and HVP, the twin's
   gradient, scratch, the reference's point, and the MPFR accumulators.  */
typedef struct work
{
  size_t n;
  float *v, *g, *y;
  double *gd, *mag, *g64, *xd0;
  ref_eval re;
  mpfr_t l0, l1, acc, slope, slope2, curv, tmp;
} work;

static void
work_free (work *w)
{
  free (w->v); free (w->g); free (w->y); free (w->gd); free (w->mag);
  free (w->g64); free (w->xd0); free (w->re.xd); free (w->re.xf);
  free (w->re.xm);
}

/* Allocates and initialises W; GC_ENOMEM (W freed) if it cannot.  */
static gc_status
work_open (work *w, const gc_taylor *t, const gc_model *m,
           const gc_options *o, gc_reference ref)
{
  size_t n = m->n;
  w->n = n;
  w->v = calloc (n, sizeof *w->v);
  w->g = malloc (n * sizeof *w->g);
  w->y = malloc (n * sizeof *w->y);
  w->gd = malloc (n * sizeof *w->gd);
  w->mag = malloc (n * sizeof *w->mag);
  w->g64 = m->grad_f64 && !o->no_twin ? malloc (n * sizeof *w->g64) : NULL;
  w->xd0 = w->g64 ? malloc (n * sizeof *w->xd0) : NULL;
  w->re = (ref_eval) { ref, t->precision, NULL, { { 0 } }, NULL, NULL };
  w->re.xd = malloc (n * sizeof *w->re.xd);
  w->re.xf = malloc (n * sizeof *w->re.xf);
  if (ref == GC_REF_MPFR && gc__fits ((double) n * gc__mpfr_bytes (320)))
    w->re.xm = malloc (n * sizeof *w->re.xm);
  if (!w->v || !w->g || !w->y || !w->gd || !w->mag
      || (m->grad_f64 && !o->no_twin && (!w->g64 || !w->xd0))
      || !w->re.xd || !w->re.xf || (ref == GC_REF_MPFR && !w->re.xm))
    {
      work_free (w);
      return GC_ENOMEM;
    }
  if (w->re.xm)
    for (size_t i = 0; i < n; i++)
      mpfr_init2 (w->re.xm + i, 320);
  mpfr_prec_t pw = (t->precision ? t->precision : 53) + 64;
  for (int k = 0; k < 3; k++)
    mpfr_init2 (w->re.out + k, k ? 2 : (t->precision ? t->precision : 53));
  mpfr_inits2 (pw, w->l0, w->l1, w->acc, w->slope, w->slope2, w->curv,
               w->tmp, (mpfr_ptr) 0);
  return GC_OK;
}

static void
work_close (work *w)
{
  mpfr_clears (w->l0, w->l1, w->acc, w->slope, w->slope2, w->curv, w->tmp,
               (mpfr_ptr) 0);
  for (int k = 0; k < 3; k++)
    mpfr_clear (w->re.out + k);
  if (w->re.xm)
    for (size_t i = 0; i < w->n; i++)
      mpfr_clear (w->re.xm + i);
  work_free (w);
}

/* The model's derivatives at X: the f32 gradient, the HVP along v (if the
   model has one), the twin's gradient (if asked), the loss magnitude.  */
static void
derivatives (gc_taylor *t, const gc_model *m, const gc__env *e,
             const float *x, work *w, bool hvp, float *lmag)
{
  size_t n = m->n;
  char what[160];
  int code = 0;
  gc_status st = gc__call (m, e, GC_CALL_GRAD_F32, x, NULL, e->round, w->g,
                           &code, what, sizeof what);
  if (st != GC_OK)
    stop (t, st, code, what);
  if (t->status == GC_OK && hvp
      && (st = gc__call (m, e, GC_CALL_HVP, x, w->v, e->round, w->y, &code,
                         what, sizeof what)) != GC_OK)
    stop (t, st, code, what);
  if (t->status == GC_OK && w->g64)
    {
      for (size_t i = 0; i < n; i++)
        w->xd0[i] = x[i];
      if ((st = gc__call (m, e, GC_CALL_GRAD_F64, w->xd0, NULL, e->round,
                          w->g64, &code, what, sizeof what)) != GC_OK)
        stop (t, st, code, what);
    }
  if (t->status == GC_OK && m->loss_magnitude_f32
      && (st = gc__call (m, e, GC_CALL_LOSS_MAG, x, NULL, e->round, lmag,
                         &code, what, sizeof what)) != GC_OK)
    stop (t, st, code, what);
}

/* The slopes <g, v> (and the twin's, for r2) and the curvature <v, H v>,
   with their rounding bars; returns the bar of r2's slope.  */
static double
slopes (gc_taylor *t, const gc_model *m, work *w, bool hvp, double lb,
        size_t db, double lh, size_t dh)
{
  size_t n = m->n;
  /* Manual: "Adjoint rounding" along v, default magnitudes */
  double wm = 0, w1 = 0;
  for (size_t i = 0; i < n; i++)
    w->gd[i] = w->g[i];
  gc__block_max (m, w->gd, w->mag);
  for (size_t i = 0; i < n; i++)
    {
      wm += fabs ((double) w->v[i]) * w->mag[i];
      w1 += fabs ((double) w->v[i]);
    }
  gc_term term;
  t->adjoint = gc__term_adjoint (&term, lb, db, wm, w1, 0);
  t->adjoint = term.value;
  t->slope = dot_exact (w->slope, w->g, w->v, n);
  double a2 = t->adjoint;
  mpfr_set (w->slope2, w->slope, MPFR_RNDN);
  if (w->g64)
    {
      /* r2 takes the twin's gradient: its rounding A_64 in the floor */
      mpfr_set_zero (w->slope2, 1);
      for (size_t i = 0; i < n; i++)
        {
          mpfr_set_d (w->tmp, w->g64[i], MPFR_RNDN);
          mpfr_mul_d (w->tmp, w->tmp, (double) w->v[i], MPFR_RNDN);
          mpfr_add (w->slope2, w->slope2, w->tmp, MPFR_RNDN);
        }
      gc__term_adjoint_f64 (&term, db, wm, w1, 0, true);
      a2 = term.value;
    }
  t->curvature = t->adjoint_hvp = NAN;
  if (hvp)
    {
      t->curvature = dot_exact (w->curv, w->y, w->v, n);
      for (size_t i = 0; i < n; i++)
        w->gd[i] = w->y[i];
      gc__block_max (m, w->gd, w->mag);
      double hm = 0;
      for (size_t i = 0; i < n; i++)
        hm += fabs ((double) w->v[i]) * w->mag[i];
      t->adjoint_hvp = fmin (lh * sqrt ((double) dh),
                             gc__gamma_over_u (dh, 24))
                       * (GC_U32 * hm + 0x1p-150 * w1);
    }
  return a2;
}

/* eps_0 = 2^(floor(log2 s) - 2), or the caller's step */
static double
first_step (const gc_taylor *t, const gc_model *m, const float *x,
            const gc_options *o, work *w)
{
  double eps0 = o->step;
  if (!(eps0 > 0))
    {
      int ex;
      if (t->direction != SIZE_MAX)
        gc__scales (m, x, w->mag);     /* mag is free here: scratch */
      frexp (t->direction != SIZE_MAX ? w->mag[t->direction]
             : gc__support_norm (x, w->v, 0, m->n), &ex);
      eps0 = ldexp (1, ex - 3);
    }
  return eps0;
}

/* The remainders r1 (and r2 with an HVP) and their floors on the levels
   eps_0 2^-k.  */
static void
remainders (gc_taylor *t, const gc_model *m, const gc__env *e,
            const float *x, work *w, bool hvp, double eps0, double a2)
{
  for (size_t k = 0; k < t->n_levels && t->status == GC_OK; k++)
    {
      double eps = ldexp (eps0, -(int) k);
      t->eps[k] = eps;
      if (eval_at (t, m, e, &w->re, x, w->v, eps, w->l1) != GC_OK)
        break;
      mpfr_sub (w->acc, w->l1, w->l0, MPFR_RNDN);
      mpfr_mul_d (w->tmp, w->slope, eps, MPFR_RNDN);
      mpfr_sub (w->tmp, w->acc, w->tmp, MPFR_RNDN);
      t->r1[k] = fabs (mpfr_get_d (w->tmp, MPFR_RNDN));
      t->floor1[k] = FLOOR_FACTOR * (2 * t->eval_error + eps * t->adjoint);
      t->r2[k] = t->floor2[k] = NAN;
      if (hvp)
        {
          mpfr_mul_d (w->tmp, w->slope2, eps, MPFR_RNDN);
          mpfr_sub (w->tmp, w->acc, w->tmp, MPFR_RNDN);
          mpfr_mul_d (w->l1, w->curv, eps * eps / 2, MPFR_RNDN);
          mpfr_sub (w->tmp, w->tmp, w->l1, MPFR_RNDN);
          t->r2[k] = fabs (mpfr_get_d (w->tmp, MPFR_RNDN));
          t->floor2[k] = FLOOR_FACTOR * (2 * t->eval_error + eps * a2
                                         + eps * eps / 2 * t->adjoint_hvp);
        }
    }
}

/* The bars, L(x) and its error, and the remainders, once the derivatives
   are in.  */
static void
measure (gc_taylor *t, const gc_model *m, const gc__env *e, const float *x,
         const gc_options *o, work *w, bool hvp, float lmag)
{
  size_t n = m->n;
  size_t fd = m->forward_depth ? m->forward_depth : n;
  size_t db = m->backward_depth ? m->backward_depth : n;
  size_t dh = m->hvp_depth ? m->hvp_depth : fd + db;
  size_t nb = 2 * t->n_levels;
  double lf = gc__lambda (o->false_alarm, nb, fd);
  double lb = gc__lambda (o->false_alarm, nb, db);
  double lh = gc__lambda (o->false_alarm, nb, dh);
  double a2 = slopes (t, m, w, hvp, lb, db, lh, dh);
  double eps0 = first_step (t, m, x, o, w);
  if (eval_at (t, m, e, &w->re, x, w->v, 0, w->l0) == GC_OK)
    {
      double ml = fmax (fabs (mpfr_get_d (w->l0, MPFR_RNDN)), lmag);
      gc_term er;
      gc__term_reference (&er, t->reference, t->precision, lf, fd, ml, 1, 0,
                          0, 0);
      t->eval_error = er.value;
    }
  remainders (t, m, e, x, w, hvp, eps0, a2);
}

static gc_status
taylor (gc_taylor *t, const gc_model *m, const float *x, const gc_options *o,
        unsigned levels)
{
  size_t n = m->n;
  gc_reference ref;
  if (validate (t, m, x, o, levels, &ref) != GC_OK)
    return t->status;
  t->reference = ref;
  t->precision = ref == GC_REF_MPFR ? (o->precision ? o->precision
                                       : gc__default_precision ()) : 0;
  t->n_levels = levels ? levels : 24;
  t->direction = o->directions == GC_DIR_LIST ? o->indices[0] : SIZE_MAX;

  work w;
  if (work_open (&w, t, m, o, ref) != GC_OK)
    return stop (t, GC_ENOMEM, 0, NULL);
  if (t->direction != SIZE_MAX)
    w.v[t->direction] = 1;
  else
    gc__draw_direction (o->seed, n, 0, n, 0, w.v, NULL);
  gc__env e;
  gc__env_enter (&e, o);
  bool hvp = m->hvp_f32 != NULL;
  float lmag = 0;
  derivatives (t, m, &e, x, &w, hvp, &lmag);
  if (t->status == GC_OK)
    measure (t, m, &e, x, o, &w, hvp, lmag);
  gc__env_leave (&e);
  if (t->status == GC_OK)
    {
      /* the first step the test derives from x's scale, whatever the
         caller's step */
      gc_options od = *o;
      od.step = 0;
      double eps_d = first_step (t, m, x, &od, &w);
      t->verdict = rates (t, t->r1, t->floor1, t->rate1, low1, eps_d,
                          &t->range1_lo, &t->range1_hi);
      t->verdict_hvp = hvp ? rates (t, t->r2, t->floor2, t->rate2, low2,
                                    eps_d, &t->range2_lo, &t->range2_hi)
                           : GC_ERROR;
      for (size_t k = 0; k < t->n_levels && !hvp; k++)
        t->rate2[k] = NAN;
    }
  work_close (&w);
  mpfr_free_cache2 (MPFR_FREE_LOCAL_CACHE);
  return t->status;
}

gc_status
gc_taylor_test (const gc_model *m0, const float *x, const gc_options *opts,
                unsigned levels, gc_taylor **out)
{
  if (!out)
    return GC_EINVAL;
  *out = NULL;
  if (!m0 || !x)
    return GC_EINVAL;
  gc_taylor *t = calloc (1, sizeof *t);
  if (!(*out = t))
    return GC_ENOMEM;
  gc_options defaults;
  gc_options_init (&defaults);
  const gc_options *o = opts ? opts : &defaults;
  gc_model copy;
  const gc_model *m = gc__model_by_abi (m0, &copy);
  snprintf (t->model_name, sizeof t->model_name, "%s",
            m->name ? m->name : "model");
  t->n = m->n;
  t->seed = o->seed;
  t->direction = SIZE_MAX;
  t->verdict = t->verdict_hvp = GC_ERROR;
  t->slope = t->curvature = t->adjoint = t->adjoint_hvp = NAN;
  return taylor (t, m, x, o, levels);
}
