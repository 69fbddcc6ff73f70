/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check.c -- gc_check: set up the directions, evaluate the stencils in
   parallel workers, judge each direction against its bar.

   Per direction v with step h the stencil is x +- h v and x +- 2h v.  The
   reference is D(h); D(2h) gives the truncation term ("Truncation") and,
   with the centre value, the kink estimate J ("Non-smooth points").  In MPFR
   mode the points are exact; in f32 and f64 modes they are rounded and the
   steps actually applied are used ("Applied steps").  */

#include "internal.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void
gc_options_init (gc_options *o)
{
  if (!o)
    return;
  memset (o, 0, sizeof *o);
  o->reference = GC_REF_MPFR;
  o->directions = GC_DIR_ALL;
  o->seed = 1;
  o->false_alarm = 1e-6;
  o->threads = 1;
}

/* ---------------------------------------------------------------------- */

typedef struct shared
{
  const gc_model *m;
  const float *x;
  const gc_options *o;
  gc_result *r;
  size_t n;
  gc_reference ref;      /* the reference of the check */
  gc_reference best;     /* forward for truncation and J */
  mpfr_prec_t p;
  float *g;              /* analytic gradient at x */
  double *mag;           /* m_i of the adjoint term */
  double *scale;         /* s_i of the default step */
  double scale_random;   /* scale of the default step along a random v */
  double mag_loss;       /* M_L: the model's loss magnitude at x, or 0 */
  bool user_step;
  double h_user;
  size_t *pos_id;        /* shard position -> direction id */
  mpfr_t f0_mpfr;        /* centre value of the best forward, MPFR */
  bool have_f0_mpfr;
  double f0;             /* centre value of the best forward */
  atomic_size_t done;
  atomic_int stop;
  pthread_mutex_t lock;
  size_t err_pos;        /* smallest failing position */
  double deadline;       /* gc__now () past which the check stops; 0: none */
} shared;

typedef struct worker
{
  shared *sh;
  unsigned id, count;
  float *xf;
  double *xd;
  __mpfr_struct *xm;     /* n MPFR numbers, or NULL */
  float *v;              /* random direction */
  double *dp, *dm;       /* applied deltas at +-h (float modes, random) */
  mpfr_t lv, t1, t2, t3, prod;
  /* loss_mpfr writes lout[0]; lout[1], lout[2] are guards (2 bits, value
     3) that a write past the one number changes.  */
  __mpfr_struct lout[3];
  mpfr_t f[4];           /* stencil values, MPFR mode */
  mpfr_prec_t wp;        /* working precision: p, or raised ("Raising the
                            precision") */
  mpfr_t f0w;            /* centre value at a raised precision */
  gc_status st;
  int cb;
  char detail[160];
} worker;

static void
fail (worker *w, gc_status st, int cb, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

static void
fail (worker *w, gc_status st, int cb, const char *fmt, ...)
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

/* ---------------------------------------------------------------------- */
/* Evaluations.  Each returns false after recording a failure.  */

/* The time limit, checked after every callback (gc_options.timeout).  */
static bool
in_time (worker *w, const char *name)
{
  if (w->sh->deadline > 0 && gc__now () > w->sh->deadline)
    {
      fail (w, GC_ETIMEOUT, 0, "%g s, reached after a call of %s",
            w->sh->o->timeout, name);
      return false;
    }
  return true;
}

/* A callback's outcome: its status, its output buffer's canaries (INTACT),
   the time limit, then the finiteness of its value.  */
static bool
accept_guarded (worker *w, int rc, bool intact, bool finite, const char *name)
{
  if (rc)
    {
      fail (w, GC_ECALLBACK, rc, "%s returned %d", name, rc);
      return false;
    }
  if (!intact)
    {
      fail (w, GC_EOVERRUN, 0, "%s wrote past its output (one loss value)",
            name);
      return false;
    }
  if (!in_time (w, name))
    return false;
  if (!finite)
    {
      fail (w, GC_ENONFINITE, 0, "%s gave a non-finite loss", name);
      return false;
    }
  return true;
}

static bool
accept (worker *w, int rc, bool finite, const char *name)
{
  return accept_guarded (w, rc, true, finite, name);
}

/* The loss is written into a value followed by canaries, so that a
   callback writing past its one value is seen instead of smashing the
   stack.  */
#define LOSS_GUARD 64

static bool
eval_f32 (worker *w, const float *x, double *val)
{
  union { float v; unsigned char b[sizeof (float) + LOSS_GUARD]; } l;
  gc__guard_fill (l.b + sizeof (float), LOSS_GUARD);
  l.v = 0;
  int rc = w->sh->m->loss_f32 (w->sh->m->ctx, x, &l.v);
  *val = l.v;
  return accept_guarded (w, rc,
                         gc__guard_intact (l.b + sizeof (float), LOSS_GUARD),
                         isfinite (l.v), "loss_f32");
}

static bool
eval_f64 (worker *w, const double *x, double *val)
{
  union { double v; unsigned char b[sizeof (double) + LOSS_GUARD]; } l;
  gc__guard_fill (l.b + sizeof (double), LOSS_GUARD);
  l.v = 0;
  int rc = w->sh->m->loss_f64 (w->sh->m->ctx, x, &l.v);
  *val = l.v;
  return accept_guarded (w, rc,
                         gc__guard_intact (l.b + sizeof (double), LOSS_GUARD),
                         isfinite (l.v), "loss_f64");
}

/* A non-finite loss at a stencil point when the centre's was finite: the
   step has likely left the model's domain; say where.  */
static void
stencil_note (worker *w, int k, double h, size_t index)
{
  if (w->st != GC_ENONFINITE)
    return;
  static const char *const at[4] = { "x + h", "x - h", "x + 2h", "x - 2h" };
  char was[sizeof w->detail];
  snprintf (was, sizeof was, "%s", w->detail);
  if (index == SIZE_MAX)
    snprintf (w->detail, sizeof w->detail, "%s at %s v (h = %g, a random "
              "direction), finite at x: is the step too large?", was, at[k],
              h);
  else
    snprintf (w->detail, sizeof w->detail, "%s at %s (h = %g, parameter "
              "%zu), finite at x: is the step too large?", was, at[k], h,
              index);
}

static bool
eval_mpfr (worker *w, mpfr_ptr out)
{
  mpfr_ptr l = w->lout;
  int rc = w->sh->m->loss_mpfr (w->sh->m->ctx, w->xm, l);
  bool intact = true;
  for (int k = 1; k < 3; k++)
    intact = intact && mpfr_get_prec (l + k) == 2 && mpfr_number_p (l + k)
             && mpfr_cmp_ui (l + k, 3) == 0;
  /* OUT has the working precision, as l: the copy is exact  */
  mpfr_set (out, l, MPFR_RNDN);
  return accept_guarded (w, rc, intact, mpfr_number_p (l), "loss_mpfr");
}

/* y = xi + t*2^te*vi exactly: the precision of y grows until the sum is
   exact (manual: "Applied steps"; the scale 2^te keeps a step below the
   doubles' range exact: "Default precision and step").  T1 is scratch.  */
static void
set_exact (mpfr_ptr y, float xi, double t, long te, float vi, mpfr_ptr t1)
{
  mpfr_set_d (t1, t, MPFR_RNDN);             /* t1 has 128 bits: exact */
  mpfr_mul_2si (t1, t1, te, MPFR_RNDN);      /* exact */
  mpfr_mul_d (t1, t1, (double) vi, MPFR_RNDN); /* 53 + 24 bits: exact */
  for (mpfr_prec_t prec = 64;; prec *= 2)
    {
      mpfr_set_prec (y, prec);
      mpfr_set_flt (y, xi, MPFR_RNDN);
      if (mpfr_add (y, y, t1, MPFR_RNDN) == 0)
        return;
    }
}

static void
reset_mpfr (worker *w, size_t i)
{
  mpfr_set_prec (w->xm + i, 24);
  mpfr_set_flt (w->xm + i, w->sh->x[i], MPFR_RNDN);
}

/* Evaluate the best forward at the float point XF (already set), for the
   truncation estimate in f32 / f64 modes.  */
static bool
eval_best_at_float (worker *w, const float *xf, const double *xd,
                    const size_t *idx, size_t nidx, double *val)
{
  shared *sh = w->sh;
  switch (sh->best)
    {
    case GC_REF_MPFR:
      for (size_t k = 0; k < nidx; k++)
        {
          size_t i = idx ? idx[k] : k;
          if (xd)
            {
              mpfr_set_prec (w->xm + i, 53);
              mpfr_set_d (w->xm + i, xd[i], MPFR_RNDN);
            }
          else
            {
              mpfr_set_prec (w->xm + i, 24);
              mpfr_set_flt (w->xm + i, xf[i], MPFR_RNDN);
            }
        }
      if (!eval_mpfr (w, w->lv))
        return false;
      for (size_t k = 0; k < nidx; k++)
        reset_mpfr (w, idx ? idx[k] : k);
      /* The difference of two such values is taken in double: the values
         are within a few ulp_53 of each other's rounding, which the
         reference term of the f64/f32 reference dwarfs.  */
      *val = mpfr_get_d (w->lv, MPFR_RNDN);
      return true;
    case GC_REF_F64:
      if (xd)
        return eval_f64 (w, xd, val);
      for (size_t k = 0; k < nidx; k++)
        {
          size_t i = idx ? idx[k] : k;
          w->xd[i] = xf[i];
        }
      {
        bool ok = eval_f64 (w, w->xd, val);
        for (size_t k = 0; k < nidx; k++)
          {
            size_t i = idx ? idx[k] : k;
            w->xd[i] = sh->x[i];
          }
        return ok;
      }
    case GC_REF_F32:
      return eval_f32 (w, xf, val);
    }
  return false;
}

/* The worker's copies of the point are as given once a direction's
   points are restored: a callback that wrote into its input (through a
   cast) would otherwise shift every later evaluation.  */
static bool
inputs_intact (worker *w)
{
  const shared *sh = w->sh;
  for (size_t j = 0; j < sh->n; j++)
    {
      bool same = memcmp (&w->xf[j], &sh->x[j], sizeof (float)) == 0
                  && w->xd[j] == (double) sh->x[j];
      if (same && w->xm)
        same = mpfr_number_p (w->xm + j)
               && mpfr_cmp_d (w->xm + j, (double) sh->x[j]) == 0;
      if (!same)
        {
          fail (w, GC_EOVERRUN, 0, "a callback wrote into its input x, at "
                "parameter %zu", j);
          return false;
        }
    }
  return true;
}

/* ---------------------------------------------------------------------- */
/* One direction.  */

/* Kink estimate from one-sided divided differences ("Non-smooth points"):
   Delta(s) = F(s) - B(s) is s f'' + O(s^3) where f is smooth and the jump
   of f' at a kink; J = 2 Delta(h) - Delta(2h) cancels the smooth part.  */
static double
jump_estimate (double fp1, double fm1, double fp2, double fm2, double f0,
               double a1, double b1, double a2, double b2)
{
  double d1 = (fp1 - f0) / a1 - (f0 - fm1) / b1;
  double d2 = (fp2 - f0) / a2 - (f0 - fm2) / b2;
  return 2 * d1 - d2;
}

/* The block a random direction ID is drawn in (random_per_block), or
   NULL for one over the whole vector.  */
static const gc_block *
random_block (const shared *sh, size_t id)
{
  size_t k = sh->r->random_per_block;
  return k ? &sh->m->blocks[id / k] : NULL;
}

/* The step of direction INDEX as HM * 2^HE ("Default precision and
   step"): the user's step, or 2^(floor(log2 s) + step exponent), never
   formed as a double in MPFR mode (at p = 3300 it is below 2^-1074).  */
static void
step_scaled (const shared *sh, size_t index, size_t id, double *hm,
             long *he)
{
  if (sh->user_step)
    {
      *hm = sh->h_user;
      *he = 0;
      return;
    }
  double s = index == SIZE_MAX ? sh->scale_random : sh->scale[index];
  const gc_block *b = index == SIZE_MAX ? random_block (sh, id) : NULL;
  if (b)
    {
      /* the norm of x over the block, as scale_random is over x */
      double sq = 0;
      for (size_t j = b->offset; j < b->offset + b->count; j++)
        sq += (double) sh->x[j] * sh->x[j];
      s = sq > 0 ? sqrt (sq) : 1.0;
    }
  int e;
  frexp (s, &e);     /* s in [2^(e-1), 2^e) */
  *hm = 1;
  *he = e - 1 + (long) sh->r->step_exponent;
}

static double
step_for (const shared *sh, size_t index, size_t id)
{
  double hm;
  long he;
  step_scaled (sh, index, id, &hm, &he);
  return ldexp (hm, (int) he);
}

static void
make_random (const shared *sh, size_t id, float *v)
{
  gc__rng rng;
  gc__rng_seed (&rng, sh->o->seed ^ (0xd1b54a32d192ed03u * (uint64_t) (id + 1)));
  /* Within one block (zero elsewhere) when drawn per block.  */
  const gc_block *b = random_block (sh, id);
  size_t lo = b ? b->offset : 0, hi = b ? b->offset + b->count : sh->n;
  double norm = 0;
  for (size_t i = 0; i < sh->n; i++)
    {
      double z = i >= lo && i < hi ? gc__rng_gaussian (&rng) : 0;
      v[i] = (float) z;
      norm += (double) v[i] * v[i];
    }
  norm = sqrt (norm);
  for (size_t i = lo; i < hi; i++)
    v[i] = (float) (v[i] / norm);
}

/* The noise of the kink estimate J when it comes from a rounded forward
   (manual: "Non-smooth points"): J is a combination of five evaluations,
   each erring by at most eps; COEF * eps / h bounds it, COEF = h times the
   sum of the absolute coefficients (8 for a symmetric stencil).  */
static double
jump_noise (const shared *sh, gc_reference ref, mpfr_prec_t p, double lmax,
            double hm, long he, double coef)
{
  return coef * gc__eval_error_over_step (ref, p, sh->r->lambda_forward,
                                          sh->r->forward_depth, lmax, hm, he);
}

/* COEF of jump_noise for one-sided steps A1, B1 (at h) and A2, B2 (at
   2h): J = 2 (f1+ - f0) / a1 - 2 (f0 - f1-) / b1 - (f2+ - f0) / a2
   + (f0 - f2-) / b2, whose coefficients sum in absolute value to
   2/a1 + 2/b1 + 1/a2 + 1/b2 + |2/a1 + 2/b1 - 1/a2 - 1/b2|.  */
static double
jump_coef (double h, double a1, double b1, double a2, double b2)
{
  double s1 = 2 / a1 + 2 / b1, s2 = 1 / a2 + 1 / b2;
  return h * (s1 + s2 + fabs (s1 - s2));
}

/* The MPFR stencil of direction D at the step h = HM * 2^HE: values, terms,
   verdict.  V is the random direction or NULL.  */
static bool
stencil_mpfr (worker *w, gc_direction *d, const float *v, double hm, long he)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  static const double mult[4] = { 1, -1, 2, -2 };
  mpfr_ptr f[4] = { w->f[0], w->f[1], w->f[2], w->f[3] };
  bool ok = true;
  for (int k = 0; k < 4 && ok; k++)
    {
      if (v)
        for (size_t j = 0; j < n; j++)
          set_exact (w->xm + j, sh->x[j], mult[k] * hm, he, v[j], w->t1);
      else
        set_exact (w->xm + i, sh->x[i], mult[k] * hm, he, 1.0f, w->t1);
      ok = eval_mpfr (w, f[k]);
      if (!ok)
        stencil_note (w, k, ldexp (hm, (int) he), i);
      if (v)
        for (size_t j = 0; j < n; j++)
          reset_mpfr (w, j);
      else
        reset_mpfr (w, i);
    }
  if (!ok)
    return false;
  /* D(h), D(2h) with differences at twice the working precision; the
     divisions by 2^he are exact.  */
  mpfr_sub (w->t2, f[0], f[1], MPFR_RNDN);
  mpfr_div_d (w->t2, w->t2, 2 * hm, MPFR_RNDN);
  mpfr_div_2si (w->t2, w->t2, he, MPFR_RNDN);
  d->reference = mpfr_get_d (w->t2, MPFR_RNDN);
  mpfr_sub (w->t3, f[2], f[3], MPFR_RNDN);
  mpfr_div_d (w->t3, w->t3, 4 * hm, MPFR_RNDN);
  mpfr_div_2si (w->t3, w->t3, he, MPFR_RNDN);
  d->d2h = mpfr_get_d (w->t3, MPFR_RNDN);
  mpfr_sub (w->t3, w->t3, w->t2, MPFR_RNDN);
  double tdiff = mpfr_get_d (w->t3, MPFR_RNDN);
  /* J = 2 Delta(h) - Delta(2h), Delta(s) = (f(x+s) - 2 f0 + f(x-s)) / s */
  mpfr_add (w->t2, f[0], f[1], MPFR_RNDN);
  mpfr_mul_2ui (w->t3, w->wp == sh->p ? sh->f0_mpfr : w->f0w, 1,
                MPFR_RNDN);
  mpfr_sub (w->t2, w->t2, w->t3, MPFR_RNDN);
  mpfr_div_d (w->t2, w->t2, hm, MPFR_RNDN);
  mpfr_div_2si (w->t2, w->t2, he, MPFR_RNDN);
  mpfr_mul_2ui (w->t2, w->t2, 1, MPFR_RNDN);
  mpfr_add (w->prod, f[2], f[3], MPFR_RNDN);
  mpfr_sub (w->prod, w->prod, w->t3, MPFR_RNDN);
  mpfr_div_d (w->prod, w->prod, 2 * hm, MPFR_RNDN);
  mpfr_div_2si (w->prod, w->prod, he, MPFR_RNDN);
  mpfr_sub (w->t2, w->t2, w->prod, MPFR_RNDN);
  d->jump = mpfr_get_d (w->t2, MPFR_RNDN);
  d->forward_error_ulps = -1;
  double lmax = fmax (fmax (fabs (mpfr_get_d (f[0], MPFR_RNDN)),
                            fabs (mpfr_get_d (f[1], MPFR_RNDN))),
                      sh->mag_loss);
  d->step = ldexp (hm, (int) (he < -4000 ? -4000 : he));
  gc__term_truncation (&d->terms[GC_TERM_TRUNCATION], d->reference,
                       d->d2h, tdiff, d->step);
  gc__term_reference (&d->terms[GC_TERM_REFERENCE], GC_REF_MPFR, w->wp,
                      sh->r->lambda_forward, sh->r->forward_depth, lmax, hm,
                      he, d->reference);
  /* analytic <g, v> and sum |v_i| m_i  */
  double wm = 0, w1 = 0;
  if (v)
    {
      mpfr_set_zero (w->t2, 1);
      for (size_t j = 0; j < n; j++)
        {
          mpfr_set_flt (w->prod, v[j], MPFR_RNDN);
          mpfr_mul_d (w->prod, w->prod, (double) sh->g[j], MPFR_RNDN);
          mpfr_add (w->t2, w->t2, w->prod, MPFR_RNDN);
          wm += fabs ((double) v[j]) * sh->mag[j];
          w1 += fabs ((double) v[j]);
        }
      d->analytic = mpfr_get_d (w->t2, MPFR_RNDN);
    }
  else
    {
      d->analytic = sh->g[i];
      wm = sh->mag[i];
      w1 = 1;
    }
  gc__term_adjoint (&d->terms[GC_TERM_ADJOINT], sh->r->lambda_backward,
                    sh->r->backward_depth, wm, w1);
  gc__judge (d, jump_noise (sh, GC_REF_MPFR, w->wp, lmax, hm, he,
                            jump_coef (1, 1, 1, 2, 2)));
  gc__judge_resolution (d);
  return true;
}

/* Manual: "Confirming a direction".  Level A is consistent with the next,
   finer level B when neither's truncation term exceeds the rest of its bar
   and their references differ by no more than both truncation and both
   rounding terms.  */
static bool
truncation_dominates (const gc_direction *a)
{
  return a->terms[GC_TERM_TRUNCATION].value
         > a->terms[GC_TERM_REFERENCE].value + a->terms[GC_TERM_ADJOINT].value;
}

static bool
levels_consistent (const gc_direction *a, const gc_direction *b)
{
  return !truncation_dominates (a) && !truncation_dominates (b)
         && fabs (a->reference - b->reference)
         <= a->terms[GC_TERM_TRUNCATION].value
            + b->terms[GC_TERM_TRUNCATION].value
            + a->terms[GC_TERM_REFERENCE].value
            + b->terms[GC_TERM_REFERENCE].value;
}

/* The worker's MPFR variables at working precision P; at a raised P also
   the centre value ("Raising the precision").  */
static bool
set_precision (worker *w, mpfr_prec_t p)
{
  shared *sh = w->sh;
  w->wp = p;
  mpfr_set_prec (w->lv, p);
  mpfr_set_prec (w->lout, p);   /* the loss the model writes (its guards
                                   after it keep their 2 bits) */
  for (int k = 0; k < 4; k++)
    mpfr_set_prec (w->f[k], p);
  mpfr_set_prec (w->t2, 2 * p);
  mpfr_set_prec (w->t3, 2 * p);
  mpfr_set_prec (w->prod, 2 * p > 256 ? 2 * p : 256);
  if (p == sh->p)
    return true;
  mpfr_set_prec (w->f0w, p);
  return eval_mpfr (w, w->f0w);
}

static bool confirm_mpfr (worker *w, gc_direction *d, const float *v,
                          double hm, long he);

static bool
direction_mpfr (worker *w, gc_direction *d)
{
  shared *sh = w->sh;
  const float *v = NULL;
  if (d->index == SIZE_MAX)
    {
      make_random (sh, d->id, w->v);
      v = w->v;
    }
  double hm;
  long he;
  step_scaled (sh, d->index, d->id, &hm, &he);
  d->level = 0;
  if (!stencil_mpfr (w, d, v, hm, he))
    return false;
  /* Manual: "Raising the precision".  A direction the check cannot judge
     because the reference's own rounding dominates its bar is evaluated
     again at 2p, 4p, 8p, 16p (the default step shrinking with p) until the
     rounding no longer dominates.  */
  bool ok = true;
  if (sh->o->exact_step)
    return true;   /* at this step and precision only (gc_options) */
  for (int up = 1; up <= 4 && d->verdict == GC_INCONCLUSIVE
       && d->terms[GC_TERM_REFERENCE].value > d->terms[GC_TERM_ADJOINT].value;
       up++)
    {
      mpfr_prec_t p2 = sh->p << up;
      if (!gc__precision_usable (p2))
        break;
      if (!(ok = set_precision (w, p2)))
        break;
      if (!sh->user_step)
        he -= (long) (p2 / 3) - (long) (p2 / 6);
      gc_direction e = *d;
      if (!(ok = stencil_mpfr (w, &e, v, hm, he)))
        break;
      *d = e;
    }
  if (ok)
    ok = confirm_mpfr (w, d, v, hm, he);
  if (w->wp != sh->p)
    set_precision (w, sh->p);
  return ok;
}

static bool
confirm_mpfr (worker *w, gc_direction *d, const float *v, double hm, long he)
{
  shared *sh = w->sh;
  /* Confirm a direction whose verdict could rest on a wrong truncation
     estimate ("Confirming a direction"): it fails, is non-smooth, or its
     truncation term exceeds the rest of its bar.  */
  if (d->verdict != GC_FAIL && d->verdict != GC_NONSMOOTH
      && !truncation_dominates (d))
    return true;
  /* Levels 0 .. k; level j is judged at when (j, j+1) and (j+1, j+2) are
     consistent, or, where the descent stops at k, when (k-1, k) is.  */
  gc_direction lv[9];
  lv[0] = *d;
  int k = 1;
  for (; k <= 8; k++)
    {
      long hk = he - 8L * k;
      /* stop before the reference rounding exceeds the adjoint term */
      double ek = gc__eval_error_over_step (GC_REF_MPFR, w->wp,
                                            sh->r->lambda_forward,
                                            sh->r->forward_depth,
                                            fmax (sh->mag_loss,
                                                  fabs (sh->f0)), hm, hk);
      if (ek > d->terms[GC_TERM_ADJOINT].value)
        break;
      lv[k] = *d;
      lv[k].level = k;
      if (!stencil_mpfr (w, &lv[k], v, hm, hk))
        return false;
      if (k >= 2 && levels_consistent (&lv[k - 2], &lv[k - 1])
          && levels_consistent (&lv[k - 1], &lv[k]))
        {
          *d = lv[k - 2];
          return true;
        }
    }
  int last = k - 1;     /* the finest level evaluated */
  /* No finer level possible: the first level's verdict stands,
     unconfirmed.  */
  if (last == 0)
    return true;
  if (levels_consistent (&lv[last - 1], &lv[last]))
    {
      *d = lv[last - 1];
      return true;
    }
  /* Levels but no consistent run of them: the reference is not
     trustworthy; the first level's values stay in the report.  */
  d->level = -1;
  d->verdict = GC_INCONCLUSIVE;
  return true;
}

/* Float modes (f32, f64): rounded points, applied steps.  */
static bool
direction_float (worker *w, gc_direction *d)
{
  shared *sh = w->sh;
  size_t n = sh->n, i = d->index;
  bool is64 = sh->ref == GC_REF_F64;
  double h = step_for (sh, i, d->id);
  const float *v = NULL;
  if (i == SIZE_MAX)
    {
      make_random (sh, d->id, w->v);
      v = w->v;
    }
  static const double mult[4] = { 1, -1, 2, -2 };
  double *dl[2] = { w->dp, w->dm };     /* the +-2h deltas are not used */
  double fr[4] = { 0 }, fb[4] = { 0 };   /* reference and best values */
  double step1[4] = { 0 };                 /* coordinate: applied delta */
  bool need_ref_level2 = sh->best == sh->ref;
  size_t nidx = v ? n : 1;
  const size_t *idx = v ? NULL : &d->index;

  for (int k = 0; k < 4; k++)
    {
      /* Set the rounded point; record the applied deltas.  */
      bool any = false;
      for (size_t kk = 0; kk < nidx; kk++)
        {
          size_t j = v ? kk : i;
          double vj = v ? v[j] : 1.0;
          double target = (double) sh->x[j] + mult[k] * h * vj;
          double applied;
          if (is64)
            w->xd[j] = target;
          else
            w->xf[j] = (float) target;
          if (!isfinite (is64 ? w->xd[j] : (double) w->xf[j]))
            {
              fail (w, GC_ESTEP, 0, "the step overflows at parameter %zu: "
                    "x %s %gh = %g is not finite in %s (h = %g)", j,
                    mult[k] > 0 ? "+" : "-", fabs (mult[k]), target,
                    is64 ? "f64" : "f32", h);
              for (size_t jj = 0; jj < n; jj++)
                {
                  w->xf[jj] = sh->x[jj];
                  w->xd[jj] = sh->x[jj];
                }
              return false;
            }
          applied = is64 ? w->xd[j] - (double) sh->x[j]
                         : (double) w->xf[j] - (double) sh->x[j];
          if (v && k < 2)
            dl[k][j] = applied;
          else
            step1[k] = applied;
          if (applied != 0)
            any = true;
        }
      if (!any)
        {
          if (v)
            fail (w, GC_ESTEP, 0, "the step vanished along random direction "
                  "%zu: x + h v rounds to x", d->id);
          else
            fail (w, GC_ESTEP, 0, "the step vanished at parameter %zu: "
                  "x %s %g rounds to x = %.9g in %s", i, k % 2 ? "-" : "+",
                  fabs (mult[k]) * h, (double) sh->x[i], is64 ? "f64" : "f32");
          return false;
        }
      bool ok = true;
      if (k < 2 || need_ref_level2)
        ok = is64 ? eval_f64 (w, w->xd, &fr[k]) : eval_f32 (w, w->xf, &fr[k]);
      if (ok && sh->best != sh->ref)
        ok = eval_best_at_float (w, w->xf, is64 ? w->xd : NULL, idx, nidx,
                                 &fb[k]);
      else
        fb[k] = fr[k];
      /* restore */
      for (size_t kk = 0; kk < nidx; kk++)
        {
          size_t j = v ? kk : i;
          w->xf[j] = sh->x[j];
          w->xd[j] = sh->x[j];
        }
      if (!ok)
        {
          stencil_note (w, k, h, i);
          return false;
        }
    }

  double wm = 0, w1 = 0;
  double a1, b1, a2, b2;   /* one-sided steps for J */
  if (v)
    {
      /* w = (delta+ - delta-) / 2h; analytic <g, w> with a compensated
         sum (Neumaier): its error is O(2^-106) of sum |g_i w_i|.  */
      double s = 0, c = 0;
      for (size_t j = 0; j < n; j++)
        {
          double wj = (w->dp[j] - w->dm[j]) / (2 * h);
          double t = (double) sh->g[j] * wj;
          double y = s + t;
          c += fabs (s) >= fabs (t) ? (s - y) + t : (t - y) + s;
          s = y;
          wm += fabs (wj) * sh->mag[j];
          w1 += fabs (wj);
        }
      d->analytic = s + c;
      d->reference = (fr[0] - fr[1]) / (2 * h);
      d->d2h = (fb[2] - fb[3]) / (4 * h);
      double dbest = (fb[0] - fb[1]) / (2 * h);
      gc__term_truncation (&d->terms[GC_TERM_TRUNCATION], dbest, d->d2h,
                           d->d2h - dbest, h);
      a1 = b1 = h;
      a2 = b2 = 2 * h;
      d->step = h;
    }
  else
    {
      double span1 = step1[0] - step1[1], span2 = step1[2] - step1[3];
      d->analytic = sh->g[i];
      d->reference = (fr[0] - fr[1]) / span1;
      double dbest = (fb[0] - fb[1]) / span1;
      d->d2h = (fb[2] - fb[3]) / span2;
      gc__term_truncation (&d->terms[GC_TERM_TRUNCATION], dbest, d->d2h,
                           d->d2h - dbest, span1 / 2);
      wm = sh->mag[i];
      w1 = 1;
      a1 = step1[0];
      b1 = -step1[1];
      a2 = step1[2];
      b2 = -step1[3];
      d->step = span1 / 2;
    }
  double lmax = fmax (fmax (fabs (fr[0]), fabs (fr[1])), sh->mag_loss);
  d->forward_error_ulps = -1;
  if (sh->best != sh->ref)
    {
      int bits = is64 ? 53 : 24;
      for (int k = 0; k < 2; k++)
        {
          double ulp = gc__ulp (fmax (fabs (fr[k]), sh->mag_loss), bits);
          if (ulp > 0)
            d->forward_error_ulps = fmax (d->forward_error_ulps,
                                          fabs (fr[k] - fb[k]) / ulp);
        }
    }
  gc__term_reference (&d->terms[GC_TERM_REFERENCE], sh->ref, sh->p,
                      sh->r->lambda_forward, sh->r->forward_depth, lmax,
                      d->step, 0, d->reference);
  gc__term_adjoint (&d->terms[GC_TERM_ADJOINT], sh->r->lambda_backward,
                    sh->r->backward_depth, wm, w1);
  d->jump = jump_estimate (fb[0], fb[1], fb[2], fb[3], sh->f0, a1, b1, a2, b2);
  gc__judge (d, jump_noise (sh, sh->best, sh->p, lmax, d->step, 0,
                            jump_coef (d->step, a1, b1, a2, b2)));
  gc__judge_resolution (d);
  return true;
}

/* ---------------------------------------------------------------------- */

static void
worker_free (worker *w)
{
  if (w->xm)
    {
      for (size_t j = 0; j < w->sh->n; j++)
        mpfr_clear (w->xm + j);
      free (w->xm);
      mpfr_clears (w->lv, w->t1, w->t2, w->t3, w->prod, w->f[0], w->f[1],
                   w->f[2], w->f[3], w->f0w, (mpfr_ptr) 0);
      for (int k = 0; k < 3; k++)
        mpfr_clear (w->lout + k);
    }
  free (w->xf);
  free (w->xd);
  free (w->v);
  free (w->dp);
  free (w->dm);
}

static bool
worker_init (worker *w, shared *sh, unsigned id, unsigned count)
{
  memset (w, 0, sizeof *w);
  w->sh = sh;
  w->id = id;
  w->count = count;
  size_t n = sh->n;
  w->xf = malloc (n * sizeof *w->xf);
  w->xd = malloc (n * sizeof *w->xd);
  bool random = sh->o->directions == GC_DIR_RANDOM;
  if (random)
    {
      w->v = malloc (n * sizeof *w->v);
      w->dp = malloc (n * sizeof (double));
      w->dm = malloc (n * sizeof (double));
    }
  bool need_mpfr = sh->ref == GC_REF_MPFR || sh->best == GC_REF_MPFR;
  if (need_mpfr)
    w->xm = malloc (n * sizeof *w->xm);
  if (!w->xf || !w->xd || (random && (!w->v || !w->dp || !w->dm))
      || (need_mpfr && !w->xm))
    {
      if (need_mpfr && w->xm)
        {
          free (w->xm);
          w->xm = NULL;
        }
      worker_free (w);
      return false;
    }
  for (size_t j = 0; j < n; j++)
    {
      w->xf[j] = sh->x[j];
      w->xd[j] = sh->x[j];
    }
  if (need_mpfr)
    {
      for (size_t j = 0; j < n; j++)
        {
          mpfr_init2 (w->xm + j, 24);
          mpfr_set_flt (w->xm + j, sh->x[j], MPFR_RNDN);
        }
      mpfr_init2 (w->lv, sh->p);
      mpfr_init2 (w->t1, 128);
      mpfr_init2 (w->t2, 2 * sh->p);
      mpfr_init2 (w->t3, 2 * sh->p);
      /* prod holds v_j * g_j exactly (24 + 24 bits) and the sums of
         D(2h)'s differences (2p); 256 covers the first with room.  */
      mpfr_init2 (w->prod, 2 * sh->p > 256 ? 2 * sh->p : 256);
      for (int k = 0; k < 4; k++)
        mpfr_init2 (w->f[k], sh->p);
      mpfr_init2 (w->lout, sh->p);
      for (int k = 1; k < 3; k++)
        {
          mpfr_init2 (w->lout + k, 2);
          mpfr_set_ui (w->lout + k, 3, MPFR_RNDN);
        }
      mpfr_init2 (w->f0w, sh->p);
      w->wp = sh->p;
    }
  return true;
}

static void *
worker_run (void *arg)
{
  worker *w = arg;
  shared *sh = w->sh;
  gc_result *r = sh->r;
  for (size_t pos = w->id; pos < r->n_directions; pos += w->count)
    {
      if (atomic_load (&sh->stop))
        break;
      gc_direction *d = &r->dirs[pos];
      bool ok = sh->ref == GC_REF_MPFR ? direction_mpfr (w, d)
                                       : direction_float (w, d);
      ok = ok && inputs_intact (w);
      if (!ok)
        {
          pthread_mutex_lock (&sh->lock);
          if (pos < sh->err_pos)
            {
              sh->err_pos = pos;
              r->status = w->st;
              r->callback_code = w->cb;
              snprintf (r->detail, sizeof r->detail, "%s", w->detail);
            }
          pthread_mutex_unlock (&sh->lock);
          atomic_store (&sh->stop, 1);
          break;
        }
      size_t done = atomic_fetch_add (&sh->done, 1) + 1;
      if (w->id == 0 && sh->o->progress)
        sh->o->progress (sh->o->progress_ctx, done, r->n_directions);
    }
  /* MPFR's constant caches are per thread: free this thread's.  */
  if (w->id != 0)
    mpfr_free_cache2 (MPFR_FREE_LOCAL_CACHE);
  return NULL;
}

/* After a parallel run: evaluate a few directions again on the calling
   thread and compare the bits ("Determinism and reentrancy"): the worst
   direction and the first, middle and last.  */
static bool
recheck_serial (shared *sh, worker *w)
{
  gc_result *r = sh->r;
  size_t mine = r->n_directions, worst = 0;
  if (mine == 0)
    return true;
  for (size_t k = 1; k < mine; k++)
    if (r->dirs[k].nu > r->dirs[worst].nu)
      worst = k;
  size_t pos[4] = { worst, 0, mine / 2, mine - 1 };
  for (int j = 0; j < 4; j++)
    {
      bool seen = false;
      for (int i = 0; i < j; i++)
        seen |= pos[i] == pos[j];
      if (seen)
        continue;
      const gc_direction *d = &r->dirs[pos[j]];
      gc_direction again = *d;
      bool ok = sh->ref == GC_REF_MPFR ? direction_mpfr (w, &again)
                                       : direction_float (w, &again);
      if (!ok)
        return false;
      if (memcmp (&again.reference, &d->reference, sizeof d->reference)
          || memcmp (&again.d2h, &d->d2h, sizeof d->d2h)
          || memcmp (&again.jump, &d->jump, sizeof d->jump))
        {
          char nm[96];
          if (d->index == SIZE_MAX)
            snprintf (nm, sizeof nm, "random direction %zu", d->id);
          else
            gc_param_name (r, d->index, nm, sizeof nm);
          gc__note_nondeterminism (r, GC_ND_THREADS, pos[j], d->reference,
                                   again.reference,
                                   "%s: D(h) = %.9g in parallel, %.9g "
                                   "serially: a callback is not reentrant",
                                   nm, d->reference, again.reference);
        }
    }
  return true;
}

/* ---------------------------------------------------------------------- */
/* Set-up.  */

/* Validate the model and options; a refusal that needs explaining writes
   its reason into DETAIL.  The point x is read only later, once arrays of
   n values exist (a lying n fails to allocate before x is read).  */
static gc_status
validate (const gc_model *m, const float *x, const gc_options *o,
          char *detail, size_t size)
{
  if (!m || !x || !o)
    return GC_EINVAL;
  if (m->abi != GC_MODEL_ABI)
    return GC_EABI;
  if (!m->loss_f32 || !m->grad_f32)
    return GC_EINVAL;
  if (m->n == 0)
    return GC_EEMPTY;
  /* Per parameter the check keeps at least a gradient, a magnitude, a
     scale and a worker's point (4 + 8 + 8 + 4 + 8 bytes): an n whose
     arrays cannot even be sized is refused before any is made.  */
  if (m->n > SIZE_MAX / 64)
    {
      snprintf (detail, size, "n = %zu parameters: their arrays cannot be "
                "allocated", m->n);
      return GC_ENOMEM;
    }
  if (o->reference == GC_REF_MPFR && !m->loss_mpfr)
    return GC_ENOREF;
  if (o->reference == GC_REF_F64 && !m->loss_f64)
    return GC_ENOREF;
  if (o->reference != GC_REF_MPFR && o->reference != GC_REF_F32
      && o->reference != GC_REF_F64)
    return GC_EINVAL;
  if (o->precision != 0 && !gc__precision_usable (o->precision))
    return GC_EPREC;
  if (o->step < 0 || !isfinite (o->step))
    return GC_EINVAL;
  /* The stencil reaches x +- 2h and divides by 4h, in double.  */
  if (o->step > DBL_MAX / 4)
    {
      snprintf (detail, size, "the step %g overflows: 4h exceeds the "
                "largest double", o->step);
      return GC_ESTEP;
    }
  if (!(o->timeout >= 0) || !isfinite (o->timeout))
    return GC_EINVAL;
  if (!(o->false_alarm > 0 && o->false_alarm < 1))
    return GC_EINVAL;
  if (o->directions == GC_DIR_RANDOM && o->n_random == 0)
    return GC_EINVAL;
  if (o->directions == GC_DIR_LIST)
    {
      if (!o->indices || o->n_indices == 0)
        return GC_EINVAL;
      for (size_t k = 0; k < o->n_indices; k++)
        if (o->indices[k] >= m->n)
          {
            snprintf (detail, size, "direction index %zu is out of range: "
                      "the model's parameters are 0 to %zu", o->indices[k],
                      m->n - 1);
            return GC_EDIRECTION;
          }
    }
  else if (o->directions != GC_DIR_ALL && o->directions != GC_DIR_RANDOM)
    return GC_EINVAL;
  if (o->shard_count > 1 && o->shard_index >= o->shard_count)
    return GC_EINVAL;
  if (o->shard_count <= 1 && o->shard_index != 0)
    return GC_EINVAL;
  if (!gc__blocks_valid (m->blocks, m->n_blocks, m->n))
    return GC_EINVAL;
  if (m->n_constants && !m->constants)
    return GC_EINVAL;
  return GC_OK;
}

/* The point must be finite: a NaN or Inf there is the caller's, not a
   callback's (GC_EPOINT).  */
gc_status
gc__point_finite (const float *x, size_t n, char *detail, size_t size)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite (x[i]))
      {
        snprintf (detail, size, "x[%zu] = %g: the point to check at must be "
                  "finite", i, (double) x[i]);
        return GC_EPOINT;
      }
  return GC_OK;
}

gc_status
gc__copy_blocks (gc_result *r, const gc_block *blocks, size_t nb)
{
  if (!nb)
    return GC_OK;
  size_t names = 0;
  for (size_t b = 0; b < nb; b++)
    names += strlen (blocks[b].name ? blocks[b].name : "x") + 1;
  r->blocks = malloc (nb * sizeof *r->blocks);
  r->block_names = malloc (names);
  if (!r->blocks || !r->block_names)
    return GC_ENOMEM;
  char *p = r->block_names;
  for (size_t b = 0; b < nb; b++)
    {
      r->blocks[b] = blocks[b];
      const char *nm = blocks[b].name ? blocks[b].name : "x";
      size_t l = strlen (nm) + 1;
      memcpy (p, nm, l);
      r->blocks[b].name = p;
      p += l;
    }
  r->n_blocks = nb;
  return GC_OK;
}

typedef struct kept
{
  struct kept *next;
  char s[];
} kept;

const char *
gc__keep_string (gc_result *r, const char *s)
{
  size_t l = strlen (s) + 1;
  kept *k = malloc (sizeof *k + l);
  if (!k)
    return NULL;
  memcpy (k->s, s, l);
  k->next = r->strings;
  r->strings = k;
  return k->s;
}

gc_status
gc__copy_constants (gc_result *r, const gc_constant *c, size_t n)
{
  if (!n)
    return GC_OK;
  r->constants = calloc (n, sizeof *r->constants);
  if (!r->constants)
    return GC_ENOMEM;
  for (size_t k = 0; k < n; k++)
    {
      r->constants[k].value = c[k].value;
      r->constants[k].name = gc__keep_string (r, c[k].name ? c[k].name : "c");
      if (!r->constants[k].name)
        return GC_ENOMEM;
      r->n_constants = k + 1;
    }
  return GC_OK;
}

/* Blocks must partition [0, n) in order, with consistent shapes.  */
bool
gc__blocks_valid (const gc_block *blocks, size_t nb, size_t n)
{
  if (!nb)
    return true;
  if (!blocks)
    return false;
  size_t next = 0;
  for (size_t b = 0; b < nb; b++)
    {
      const gc_block *bl = &blocks[b];
      if (bl->offset != next || bl->count == 0 || bl->ndim > GC_MAX_DIMS)
        return false;
      /* the shape's product is the count (checked without overflow)  */
      size_t prod = 1;
      for (size_t k = 0; k < bl->ndim; k++)
        {
          if (bl->shape[k] == 0 || prod > bl->count / bl->shape[k])
            return false;
          prod *= bl->shape[k];
        }
      if (bl->ndim && prod != bl->count)
        return false;
      next += bl->count;
    }
  return next == n;
}

char *
gc_param_name (const gc_result *r, size_t index, char *buf, size_t size)
{
  if (!buf || size == 0)
    return buf;
  buf[0] = 0;
  if (!r)
    return buf;
  if (index == SIZE_MAX)
    {
      snprintf (buf, size, "random direction");
      return buf;
    }
  for (size_t b = 0; b < r->n_blocks; b++)
    {
      const gc_block *bl = &r->blocks[b];
      if (index < bl->offset || index >= bl->offset + bl->count)
        continue;
      size_t rel = index - bl->offset;
      int len = snprintf (buf, size, "%s", bl->name);
      if (bl->ndim == 0)
        {
          snprintf (buf + (len < (int) size ? len : (int) size - 1),
                    size - (size_t) (len < (int) size ? len : (int) size - 1),
                    "[%zu]", rel);
          return buf;
        }
      size_t coord[GC_MAX_DIMS];
      for (size_t k = bl->ndim; k-- > 0;)
        {
          coord[k] = rel % bl->shape[k];
          rel /= bl->shape[k];
        }
      for (size_t k = 0; k < bl->ndim && (size_t) len < size; k++)
        len += snprintf (buf + len, size - (size_t) len, "%s%zu",
                         k ? "," : "[", coord[k]);
      if ((size_t) len < size)
        snprintf (buf + len, size - (size_t) len, "]");
      return buf;
    }
  snprintf (buf, size, "x[%zu]", index);
  return buf;
}

void
gc_result_free (gc_result *r)
{
  if (!r)
    return;
  free (r->dirs);
  free (r->blocks);
  free (r->block_names);
  free (r->constants);
  for (kept *k = r->strings; k;)
    {
      kept *next = k->next;
      free (k);
      k = next;
    }
  free (r);
}

/* Scales: s_i = max(|x_i|, rms of x over i's block), 1 where both vanish;
   magnitudes: the model's, or the largest |g_j| in i's block ("Adjoint
   rounding").  */
static void
scales_and_magnitudes (shared *sh, const float *mag_model)
{
  const gc_model *m = sh->m;
  size_t nb = m->n_blocks ? m->n_blocks : 1;
  double total_sq = 0;
  for (size_t b = 0; b < nb; b++)
    {
      size_t off = m->n_blocks ? m->blocks[b].offset : 0;
      size_t cnt = m->n_blocks ? m->blocks[b].count : sh->n;
      double sq = 0, gmax = 0;
      for (size_t i = off; i < off + cnt; i++)
        {
          sq += (double) sh->x[i] * sh->x[i];
          gmax = fmax (gmax, fabs ((double) sh->g[i]));
        }
      total_sq += sq;
      double rms = sqrt (sq / (double) cnt);
      for (size_t i = off; i < off + cnt; i++)
        {
          double s = fmax (fabs ((double) sh->x[i]), rms);
          sh->scale[i] = s > 0 ? s : 1.0;
          sh->mag[i] = mag_model ? fabs ((double) mag_model[i]) : gmax;
          /* A magnitude bounds its value: |x|^T|y| >= |x^T y| ("What the
             bar assumes").  Below half of it is no rounding: counted.  */
          double gi = fabs ((double) sh->g[i]);
          if (sh->mag[i] < gi / 2)
            sh->r->n_magnitude_low++;
          sh->mag[i] = fmax (sh->mag[i], gi);
        }
    }
  double norm = sqrt (total_sq);
  sh->scale_random = norm > 0 ? norm : 1.0;
}

static gc_status
centre (shared *sh, worker *w0)
{
  const gc_model *m = sh->m;
  gc_result *r = sh->r;
  double lf32, again;
  /* Callbacks read the worker's copy of x, never the caller's buffer: a
     callback that writes into its input is seen (inputs_intact).  */
  if (!eval_f32 (w0, w0->xf, &lf32))
    return w0->st;
  r->loss_f32 = lf32;
  /* Each callback twice at the centre ("Determinism and reentrancy").  */
  if (!eval_f32 (w0, w0->xf, &again))
    return w0->st;
  if (memcmp (&lf32, &again, sizeof lf32) != 0)
    gc__note_nondeterminism (r, GC_ND_LOSS, SIZE_MAX, lf32, again,
                             "loss_f32 gave %.9g, then %.9g at the same point",
                             lf32, again);
  int rc;
  if (m->loss_magnitude_f32)
    {
      union { float v; unsigned char b[sizeof (float) + LOSS_GUARD]; } l;
      gc__guard_fill (l.b + sizeof (float), LOSS_GUARD);
      l.v = 0;
      rc = m->loss_magnitude_f32 (m->ctx, w0->xf, &l.v);
      float ml = l.v;
      if (rc)
        {
          fail (w0, GC_ECALLBACK, rc, "loss_magnitude_f32 returned %d", rc);
          return w0->st;
        }
      if (!gc__guard_intact (l.b + sizeof (float), LOSS_GUARD))
        {
          fail (w0, GC_EOVERRUN, 0, "loss_magnitude_f32 wrote past its "
                "output (one value)");
          return w0->st;
        }
      if (!in_time (w0, "loss_magnitude_f32"))
        return w0->st;
      if (!isfinite (ml))
        {
          fail (w0, GC_ENONFINITE, 0, "loss_magnitude_f32 gave a non-finite "
                "value");
          return w0->st;
        }
      sh->mag_loss = fabs ((double) ml);
    }
  r->loss_magnitude = fmax (sh->mag_loss, fabs (lf32));
  rc = m->grad_f32 (m->ctx, w0->xf, sh->g);
  if (rc)
    {
      fail (w0, GC_ECALLBACK, rc, "grad_f32 returned %d", rc);
      return w0->st;
    }
  if (!gc__guarded_intact (sh->g, sh->n * sizeof *sh->g))
    {
      fail (w0, GC_EOVERRUN, 0, "grad_f32 wrote outside its n = %zu floats",
            sh->n);
      return w0->st;
    }
  if (!in_time (w0, "grad_f32"))
    return w0->st;
  for (size_t i = 0; i < sh->n; i++)
    if (!isfinite (sh->g[i]))
      {
        fail (w0, GC_ENONFINITE, 0,
              "grad_f32 gave a non-finite value at parameter %zu", i);
        return w0->st;
      }
  {
    /* guarded like the first call's buffer (manual: "What is isolated") */
    float *g2 = gc__guarded_alloc (sh->n * sizeof *g2);
    if (!g2)
      return GC_ENOMEM;
    rc = m->grad_f32 (m->ctx, w0->xf, g2);
    if (rc)
      {
        gc__guarded_free (g2);
        fail (w0, GC_ECALLBACK, rc, "grad_f32 returned %d", rc);
        return w0->st;
      }
    if (!gc__guarded_intact (g2, sh->n * sizeof *g2))
      {
        gc__guarded_free (g2);
        fail (w0, GC_EOVERRUN, 0, "grad_f32 wrote outside its n = %zu "
              "floats (second call)", sh->n);
        return w0->st;
      }
    size_t at = gc__float_spread (sh->g, g2, sh->n);
    if (at != SIZE_MAX)
      {
        char nm[96];
        gc_param_name (r, at, nm, sizeof nm);
        double a = sh->g[at], b = g2[at];
        double big = fmax (fabs (a), fabs (b));
        gc__note_nondeterminism (r, GC_ND_GRAD, at, a, b,
                                 "grad_f32 gave %s = %.9g, then %.9g at the "
                                 "same point (%.3g relative)", nm, a, b,
                                 big > 0 ? fabs (a - b) / big : 0.0);
      }
    gc__guarded_free (g2);
  }
  float *mag = NULL;
  if (m->grad_magnitude_f32)
    {
      mag = gc__guarded_alloc (sh->n * sizeof *mag);
      if (!mag)
        return GC_ENOMEM;
      rc = m->grad_magnitude_f32 (m->ctx, w0->xf, mag);
      if (rc)
        {
          gc__guarded_free (mag);
          fail (w0, GC_ECALLBACK, rc, "grad_magnitude_f32 returned %d", rc);
          return w0->st;
        }
      if (!gc__guarded_intact (mag, sh->n * sizeof *mag))
        {
          gc__guarded_free (mag);
          fail (w0, GC_EOVERRUN, 0, "grad_magnitude_f32 wrote outside its "
                "n = %zu floats", sh->n);
          return w0->st;
        }
      if (!in_time (w0, "grad_magnitude_f32"))
        {
          gc__guarded_free (mag);
          return w0->st;
        }
      for (size_t i = 0; i < sh->n; i++)
        if (!isfinite (mag[i]))
          {
            gc__guarded_free (mag);
            fail (w0, GC_ENONFINITE, 0,
                  "grad_magnitude_f32 gave a non-finite value at parameter %zu",
                  i);
            return w0->st;
          }
    }
  scales_and_magnitudes (sh, mag);
  gc__guarded_free (mag);

  /* Centre value of the best forward (for J) and the measured f32 error.  */
  switch (sh->best)
    {
    case GC_REF_MPFR:
      mpfr_init2 (sh->f0_mpfr, sh->p);
      sh->have_f0_mpfr = true;
      if (!eval_mpfr (w0, sh->f0_mpfr))
        return w0->st;
      sh->f0 = mpfr_get_d (sh->f0_mpfr, MPFR_RNDN);
      if (!eval_mpfr (w0, w0->lv))
        return w0->st;
      if (!mpfr_equal_p (w0->lv, sh->f0_mpfr))
        gc__note_nondeterminism (r, GC_ND_REFERENCE, SIZE_MAX, sh->f0,
                                 mpfr_get_d (w0->lv, MPFR_RNDN),
                                 "loss_mpfr gave two values at the same point "
                                 "(%.17g, then %.17g)", sh->f0,
                                 mpfr_get_d (w0->lv, MPFR_RNDN));
      break;
    case GC_REF_F64:
      if (!eval_f64 (w0, w0->xd, &sh->f0))
        return w0->st;
      if (!eval_f64 (w0, w0->xd, &again))
        return w0->st;
      if (memcmp (&again, &sh->f0, sizeof again) != 0)
        gc__note_nondeterminism (r, GC_ND_REFERENCE, SIZE_MAX, sh->f0, again,
                                 "loss_f64 gave %.17g, then %.17g at the same "
                                 "point", sh->f0, again);
      break;
    case GC_REF_F32:
      sh->f0 = lf32;
      break;
    }
  if (!inputs_intact (w0))
    return w0->st;
  r->loss_reference = sh->f0;
  r->forward_budget_ulps = r->lambda_forward * sqrt ((double) r->forward_depth);
  if (sh->best != GC_REF_F32)
    {
      double ulp = gc__ulp (r->loss_magnitude, 24);
      r->forward_error_ulps = ulp > 0 ? fabs (lf32 - sh->f0) / ulp : 0;
    }
  else
    r->forward_error_ulps = -1;
  return GC_OK;
}

gc_status
gc_check (const gc_model *m, const float *x, const gc_options *opts,
          gc_result **out)
{
  if (!out)
    return GC_EINVAL;
  *out = NULL;
  gc_options defaults;
  gc_options_init (&defaults);
  const gc_options *o = opts ? opts : &defaults;
  if (!m || !x)
    return GC_EINVAL;

  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return GC_ENOMEM;
  *out = r;
  r->worst = SIZE_MAX;
  r->verdict = GC_ERROR;
  r->n = m->n;
  r->reference = o->reference;
  r->seed = o->seed;
  r->direction_kind = o->directions;
  r->false_alarm = o->false_alarm;
  r->shard_index = o->shard_index;
  r->shard_count = o->shard_count > 1 ? o->shard_count : 1;
  r->forward_error_ulps = -1;
  snprintf (r->model_name, sizeof r->model_name, "%s",
            m->name ? m->name : "model");

  r->truncation_source = o->reference;
  r->status = validate (m, x, o, r->detail, sizeof r->detail);
  if (r->status != GC_OK)
    {
      if (!r->detail[0])
        gc__detail_status (r, m, o);
      return r->status;
    }
  if ((r->status = gc__copy_blocks (r, m->blocks, m->n_blocks)) != GC_OK
      || (r->status = gc__copy_constants (r, m->constants, m->n_constants))
         != GC_OK)
    return r->status;

  shared sh;
  memset (&sh, 0, sizeof sh);
  sh.m = m;
  sh.x = x;
  sh.o = o;
  sh.r = r;
  sh.n = m->n;
  sh.ref = o->reference;
  sh.p = o->precision ? o->precision : gc__default_precision ();
  /* The forward behind the truncation term and J ("Truncation"): the
     reference itself in MPFR and f64 modes; in f32 mode a more precise one,
     f64 first (its noise is 2^-29 of f32's, and it costs far less than
     MPFR), else MPFR, else f32 itself.  */
  sh.best = sh.ref;
  if (sh.ref == GC_REF_F32)
    sh.best = m->loss_f64 ? GC_REF_F64 : m->loss_mpfr ? GC_REF_MPFR : GC_REF_F32;
  sh.user_step = o->step > 0;
  sh.h_user = o->step;
  sh.err_pos = SIZE_MAX;
  sh.deadline = gc__deadline (o->timeout);
  atomic_init (&sh.done, 0);
  atomic_init (&sh.stop, 0);
  r->precision = (sh.ref == GC_REF_MPFR || sh.best == GC_REF_MPFR) ? sh.p : 0;
  r->truncation_source = sh.best;
  r->step_exponent = gc__default_step_exponent (sh.ref, sh.p);

  /* Directions of the whole check, then this shard's part.  */
  if (o->directions == GC_DIR_RANDOM && o->random_per_block && m->n_blocks)
    {
      if (o->n_random > SIZE_MAX / m->n_blocks)
        {
          r->status = GC_EINVAL;
          snprintf (r->detail, sizeof r->detail, "%zu random directions in "
                    "each of %zu blocks are too many", o->n_random,
                    m->n_blocks);
          return r->status;
        }
      r->random_per_block = o->n_random;
    }
  size_t total = o->directions == GC_DIR_ALL ? m->n
                 : r->random_per_block ? o->n_random * m->n_blocks
                 : o->directions == GC_DIR_RANDOM ? o->n_random
                 : o->n_indices;
  size_t sc = r->shard_count;
  size_t mine = total / sc + (o->shard_index < total % sc ? 1 : 0);
  r->n_total = total;
  r->n_directions = mine;
  r->forward_depth = m->forward_depth ? m->forward_depth : m->n;
  r->backward_depth = m->backward_depth ? m->backward_depth : m->n;
  r->defaulted = (m->forward_depth ? 0 : GC_DEFAULTED_FORWARD_DEPTH)
                 | (m->backward_depth ? 0 : GC_DEFAULTED_BACKWARD_DEPTH)
                 | (m->grad_magnitude_f32 ? 0 : GC_DEFAULTED_MAGNITUDES)
                 | (m->loss_magnitude_f32 ? 0 : GC_DEFAULTED_LOSS_MAGNITUDE);
  /* Two probabilistic bounds per direction (reference and adjoint).  */
  r->lambda_forward = gc__lambda (o->false_alarm, 2 * total, r->forward_depth);
  r->lambda_backward = gc__lambda (o->false_alarm, 2 * total,
                                   r->backward_depth);

  r->dirs = gc__within_memory ((double) mine * sizeof *r->dirs)
            ? calloc (mine ? mine : 1, sizeof *r->dirs) : NULL;
  sh.g = gc__guarded_alloc (m->n * sizeof *sh.g);
  sh.mag = malloc (m->n * sizeof *sh.mag);
  sh.scale = malloc (m->n * sizeof *sh.scale);
  if (!r->dirs || !sh.g || !sh.mag || !sh.scale
      || pthread_mutex_init (&sh.lock, NULL) != 0)
    {
      gc__guarded_free (sh.g);
      free (sh.mag);
      free (sh.scale);
      /* No half result: a result without its directions has none.  */
      bool no_dirs = !r->dirs;
      free (r->dirs);
      r->dirs = NULL;
      r->n_directions = 0;
      r->status = GC_ENOMEM;
      if (no_dirs)
        snprintf (r->detail, sizeof r->detail, "the %zu directions of this "
                  "check cannot be allocated", mine);
      else
        snprintf (r->detail, sizeof r->detail, "%s", gc_strerror (r->status));
      return r->status;
    }
  if ((r->status = gc__point_finite (x, m->n, r->detail, sizeof r->detail))
      != GC_OK)
    {
      gc__guarded_free (sh.g);
      free (sh.mag);
      free (sh.scale);
      pthread_mutex_destroy (&sh.lock);
      r->n_directions = 0;
      return r->status;
    }
  /* Read x only once its n floats are known to fit (a lying n must not
     make the digest read past it).  */
  gc__identity_set (r, x, m->n, o);   /* manual: "Merging shards" */
  /* This shard's ids only: a check of SIZE_MAX directions over as many
     shards has a few, and must not walk the others.  */
  for (size_t k = o->shard_index, pos = 0; pos < mine; k += sc)
    {
      gc_direction *d = &r->dirs[pos++];
      d->id = k;
      d->verdict = GC_ERROR;
      d->index = o->directions == GC_DIR_ALL ? k
                 : o->directions == GC_DIR_LIST ? o->indices[k] : SIZE_MAX;
    }

  unsigned nt = o->threads > 1 ? o->threads : 1;
  if (nt > mine && mine > 0)
    nt = (unsigned) mine;
  /* The MPFR numbers of the check, estimated and tried before any is made:
     GMP aborts when an allocation fails (manual: "Memory").  Per worker:
     the point (n numbers of up to 128 bits once a step is added), the
     model's copy of it at p (an estimate of the reference forward's own
     work, which only the model knows), nine of the stencil at 2p.  */
  gc_status st = GC_OK;
  if (sh.ref == GC_REF_MPFR || sh.best == GC_REF_MPFR)
    {
      double per = (double) m->n * (gc__mpfr_bytes (128)
                                    + gc__mpfr_bytes (sh.p))
                   + 9 * gc__mpfr_bytes (2 * sh.p);
      double bytes = nt * per + gc__mpfr_bytes (sh.p);
      if (!gc__fits (bytes))
        {
          st = GC_ENOMEM;
          r->n_directions = 0;      /* none was checked */
          snprintf (r->detail, sizeof r->detail, "the MPFR working set, about "
                    "%.3g MiB (%zu parameters at %ld bits, %u worker%s), "
                    "cannot be allocated", bytes / 1048576.0, m->n,
                    (long) sh.p, nt, nt > 1 ? "s" : "");
        }
    }
  worker *ws = st == GC_OK ? calloc (nt, sizeof *ws) : NULL;
  unsigned ready = 0;
  if (st == GC_OK && !ws)
    st = GC_ENOMEM;
  /* A worker that fails to start cleans up after itself: only the ready
     ones are freed below.  */
  while (st == GC_OK && ready < nt)
    if (worker_init (&ws[ready], &sh, ready, nt))
      ready++;
    else
      st = GC_ENOMEM;
  if (st == GC_OK)
    st = centre (&sh, &ws[0]);
  if (st == GC_OK)
    {
      pthread_t *tids = calloc (nt, sizeof *tids);
      unsigned started = 0;
      if (!tids)
        st = GC_ENOMEM;
      else
        {
          for (unsigned t = 1; t < nt; t++, started++)
            if (pthread_create (&tids[t], NULL, worker_run, &ws[t]) != 0)
              break;
          worker_run (&ws[0]);
          for (unsigned t = 1; t <= started; t++)
            pthread_join (tids[t], NULL);
          if (started + 1 < nt)
            {
              /* Directions of the threads that could not start.  */
              for (unsigned t = started + 1; t < nt; t++)
                worker_run (&ws[t]);
            }
          free (tids);
        }
      if (st == GC_OK)
        st = r->status;
      if (st == GC_OK && nt > 1 && !recheck_serial (&sh, &ws[0]))
        {
          st = ws[0].st;
          r->callback_code = ws[0].cb;
          snprintf (r->detail, sizeof r->detail, "%s", ws[0].detail);
        }
    }
  else if (ws && ready > 0 && ws[0].st != GC_OK)
    {
      r->callback_code = ws[0].cb;
      snprintf (r->detail, sizeof r->detail, "%s", ws[0].detail);
    }
  if (ws)
    {
      for (unsigned t = 0; t < ready; t++)
        worker_free (&ws[t]);
      free (ws);
    }
  if (sh.have_f0_mpfr)
    mpfr_clear (sh.f0_mpfr);
  pthread_mutex_destroy (&sh.lock);
  gc__guarded_free (sh.g);
  free (sh.mag);
  free (sh.scale);
  mpfr_free_cache2 (MPFR_FREE_LOCAL_CACHE);

  r->status = st;
  if (st != GC_OK && !r->detail[0])
    snprintf (r->detail, sizeof r->detail, "%s", gc_strerror (st));
  gc__summarise (r);
  /* A model that is not a function gets no failure diagnosis
     ("Determinism and reentrancy").  */
  if (st == GC_OK && !r->nondeterministic)
    {
      gc__diagnose (r);
      gc__predict_f64 (r, m->loss_f64 != NULL, sh.user_step);
    }
  return st;
}
