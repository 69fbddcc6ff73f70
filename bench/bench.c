/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* bench.c -- the evidence behind the derived bar (make bench; see
   bench/run.sh, which runs this program once per OpenBLAS kernel and
   writes bench/results/).

     bench falsify MODEL SEEDS MUTANT_SEEDS   one line per cell, TSV
     bench fingerprint MODEL                  hash of the kernel's f32 results
     bench resolution MODEL                   resolution at the default shape
     bench speed                              timings of the gdn check
     bench absgrowth                          the delta rule's |M| growth
     bench twin MODEL                         the f64 twin side by side with
                                              the check without it (JSON)
     bench summarize FILE                     tables from falsify lines
     bench tiered FILE                        cells where auto != mpfr
     bench misses FILE                        the mutant cells that passed
     bench time N OUT CMD [ARG]...            CMD run N times, one whole
                                              process after the other: TSV
                                              median wall s, median CPU s,
                                              the runs, exit status (run.sh
                                              speed; the last run's output
                                              goes to OUT)

   A cell is one check: model x shape x gate x seed x reference x (correct
   backward or one mutant), under the kernel of this process.  Its line
   holds the derived verdict and the verdicts three constant bars would
   have given on the same numbers: rel <= 5e-2, rel <= 0.25 (the incident's
   two) and PyTorch's |a - r| <= 1e-5 + 1e-3 |r|.  */

#include "gradcheck.h"
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* The constant bars on the same directions: does any direction exceed?  */
static void
constant_bars (const gc_result *r, int *c5, int *c25, int *torch)
{
  *c5 = *c25 = *torch = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      const gc_direction *d = &r->dirs[k];
      double diff = fabs (d->analytic - d->reference);
      double rel = d->reference != 0 ? diff / fabs (d->reference)
                   : diff > 0 ? INFINITY : 0;
      *c5 |= rel > 5e-2;
      *c25 |= rel > 0.25;
      *torch |= diff > 1e-5 + 1e-3 * fabs (d->reference);
    }
}

/* ---------------------------------------------------------------------- */

static int
falsify (const char *model, int seeds, int mutant_seeds)
{
  static const char *const shapes_gdn[] = {
    "B=1,T=5,H=1,K=4,V=4,BT=4", "B=1,T=16,H=1,K=4,V=4,BT=16",
    "B=1,T=37,H=1,K=4,V=4,BT=16" };
  static const char *const shapes_kda[] = {
    "B=1,T=5,H=1,HV=2,K=4,V=4,BT=4", "B=1,T=16,H=1,HV=2,K=4,V=4,BT=16",
    "B=1,T=37,H=1,HV=2,K=4,V=4,BT=16" };
  bool kda = strcmp (model, "kda") == 0;
  const char *const *shapes = kda ? shapes_kda : shapes_gdn;
  const gcm_spec *spec = gcm_find (model);
  const char *kernel = openblas_get_corename ();
  openblas_set_num_threads (1);
  for (int sh = 0; sh < 3; sh++)
    for (int gate = 0; gate < 2; gate++)
      for (int mut = 0; mut <= (int) spec->n_mutants; mut++)
        for (int s = 0; s < (mut ? mutant_seeds : seeds); s++)
          {
            /* a tangent's or an HVP's bug: bench/higher.c's rows */
            if (mut && spec->mutants[mut - 1].only)
              break;
            char shape[160];
            snprintf (shape, sizeof shape, "%s,%s=%d", shapes[sh],
                      kda ? "STRONG" : "GATE", gate);
            gcm_instance *inst = make (model, shape, (uint64_t) s + 1, mut);
            /* MPFR, f32, and the tiered reference (whose verdict must be
               MPFR's in every cell: bench tiered) */
            for (int ref = 0; ref < 3; ref++)
              {
                gc_options o;
                gc_options_init (&o);
                o.reference = ref == 2 ? GC_REF_AUTO
                              : ref ? GC_REF_F32 : GC_REF_MPFR;
                gc_result *r = NULL;
                gc_check (&inst->model, inst->x, &o, &r);
                int c5, c25, torch;
                constant_bars (r, &c5, &c25, &torch);
                /* the forward oracle, for the mutants it should see */
                const char *oracle = "-";
                gc_result *fo = NULL;
                if (ref == 0 && inst->model.outputs_f32
                    && gc_forward_check (&inst->model, inst->x, NULL, &fo)
                       == GC_OK)
                  oracle = gc_verdict_name (fo->verdict);
                printf ("%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%.6g\t%s\t%s\t%s\t%s"
                        "\t%zu\n", model, kernel,
                        ref == 2 ? "auto" : ref ? "f32" : "mpfr", sh,
                        gate, s + 1, mut ? spec->mutants[mut - 1].name
                                         : "none",
                        gc_verdict_name (r->verdict), r->worst_nu,
                        c5 ? "fail" : "pass", c25 ? "fail" : "pass",
                        torch ? "fail" : "pass", oracle, r->n_directions);
                gc_result_free (fo);
                gc_result_free (r);
              }
            fflush (stdout);
            gcm_destroy (inst);
          }
  return 0;
}

/* A fingerprint of this process's kernel on the falsify cells: a hash of
   the f32 loss and gradient bits of every shape x gate at seed 1.  Kernels
   with equal fingerprints compute those models bit for bit alike (OpenBLAS
   names several CPUs that share one kernel, such as Zen and Haswell); the
   matrix runs once per distinct fingerprint.  */
static int
fingerprint (const char *model)
{
  static const char *const gdn[] = {
    "B=1,T=5,H=1,K=4,V=4,BT=4", "B=1,T=16,H=1,K=4,V=4,BT=16",
    "B=1,T=37,H=1,K=4,V=4,BT=16" };
  static const char *const kda[] = {
    "B=1,T=5,H=1,HV=2,K=4,V=4,BT=4", "B=1,T=16,H=1,HV=2,K=4,V=4,BT=16",
    "B=1,T=37,H=1,HV=2,K=4,V=4,BT=16" };
  bool is_kda = strcmp (model, "kda") == 0;
  openblas_set_num_threads (1);
  uint64_t h = 1469598103934665603u;
  for (int sh = 0; sh < 3; sh++)
    for (int gate = 0; gate < 2; gate++)
      {
        char shape[160];
        snprintf (shape, sizeof shape, "%s,%s=%d", is_kda ? kda[sh] : gdn[sh],
                  is_kda ? "STRONG" : "GATE", gate);
        gcm_instance *inst = make (model, shape, 1, 0);
        size_t n = inst->model.n;
        float *g = malloc ((n + 1) * sizeof *g);
        inst->model.loss_f32 (inst->model.ctx, inst->x, g + n);
        inst->model.grad_f32 (inst->model.ctx, inst->x, g);
        const unsigned char *p = (const unsigned char *) g;
        for (size_t k = 0; k < (n + 1) * sizeof *g; k++)
          h = (h ^ p[k]) * 1099511628211u;
        free (g);
        gcm_destroy (inst);
      }
  printf ("%016llx\n", (unsigned long long) h);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Resolution at the default shape: bar / |reference| per direction, and
   the smallest relative perturbation of one element, g_i (1 + delta), the
   check catches: |delta| > (bar_i - |a_i - r_i|) / |a_i|.  Spot-checked by
   injecting 0.99 and 1.01 times that delta into a few elements.  */

typedef struct scaled
{
  gc_model model;
  const gc_model *base;
  size_t at;
  double delta;
} scaled;

static int
scaled_grad (void *ctx, const float *x, float *g)
{
  scaled *s = ctx;
  int rc = s->base->grad_f32 (s->base->ctx, x, g);
  g[s->at] = (float) (g[s->at] * (1 + s->delta));
  return rc;
}

#define FWD(fn, type)                                                      \
  static int fn (void *ctx, type x, float *l)                             \
  {                                                                        \
    scaled *s = ctx;                                                       \
    return s->base->fn (s->base->ctx, x, l);                              \
  }
FWD (loss_f32, const float *)
FWD (loss_magnitude_f32, const float *)

static int
loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  scaled *s = ctx;
  return s->base->loss_mpfr (s->base->ctx, x, l);
}

static int
loss_f64 (void *ctx, const double *x, double *l)
{
  scaled *s = ctx;
  return s->base->loss_f64 (s->base->ctx, x, l);
}

static int
grad_magnitude_f32 (void *ctx, const float *x, float *g)
{
  scaled *s = ctx;
  return s->base->grad_magnitude_f32 (s->base->ctx, x, g);
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* What a finer scale would give.  The adjoint term's m_i is the largest
   |g_j| of i's tensor; rescale it to the largest |g_j| of i's row (the
   elements that share every index but the last) and report the median
   resolution and the worst nu that this bar would have had on the same
   check.  A finer scale sharpens the resolution and spends the margin
   that covers cancellation inside a row.  */
static void
row_scale (const gc_model *m, const gc_result *r)
{
  size_t n = r->n_directions;
  double *amax = calloc (m->n, sizeof *amax);
  double *res = malloc (n * sizeof *res);
  double worst = 0;
  size_t nr = 0;
  if (!amax || !res)
    {
      free (amax);
      free (res);
      printf (",\"row_scale\":null");
      return;
    }
  for (size_t k = 0; k < n; k++)
    if (r->dirs[k].index < m->n)
      amax[r->dirs[k].index] = fabs (r->dirs[k].analytic);
  for (size_t b = 0; b < m->n_blocks; b++)
    {
      const gc_block *bl = &m->blocks[b];
      size_t last = bl->ndim ? bl->shape[bl->ndim - 1] : bl->count;
      double tmax = 0;
      for (size_t i = 0; i < bl->count; i++)
        tmax = fmax (tmax, amax[bl->offset + i]);
      for (size_t k = 0; k < n; k++)
        {
          const gc_direction *d = &r->dirs[k];
          if (d->index < bl->offset || d->index >= bl->offset + bl->count
              || tmax == 0)
            continue;
          size_t row = (d->index - bl->offset) / last * last + bl->offset;
          double rmax = 0;
          for (size_t j = 0; j < last; j++)
            rmax = fmax (rmax, amax[row + j]);
          double a = d->terms[GC_TERM_ADJOINT].value;
          double bar = d->bar - a + a * rmax / tmax;
          worst = fmax (worst, d->diff / bar);
          if (d->reference != 0)
            res[nr++] = bar / fabs (d->reference);
        }
    }
  qsort (res, nr, sizeof *res, cmp);
  printf (",\"row_scale\":{\"resolution_median\":%.4g,\"worst_nu\":%.4g}",
          nr ? res[nr / 2] : NAN, worst);
  free (res);
  free (amax);
}

static int
resolution (const char *model)
{
  openblas_set_num_threads (1);
  gcm_instance *inst = make (model, "", 1, 0);
  printf ("{\"model\":\"%s\",\"n\":%zu", model, inst->model.n);
  for (int ref = 0; ref < 2; ref++)
    {
      gc_options o;
      gc_options_init (&o);
      o.reference = ref ? GC_REF_F32 : GC_REF_MPFR;
      o.threads = 2;
      gc_result *r = NULL;
      gc_check (&inst->model, inst->x, &o, &r);
      size_t n = r->n_directions;
      double *res = malloc (n * sizeof *res), *del = malloc (n * sizeof *del);
      size_t nd = 0;
      for (size_t k = 0; k < n; k++)
        {
          const gc_direction *d = &r->dirs[k];
          res[k] = d->resolution;
          if (d->analytic != 0)
            del[nd++] = (d->bar - d->diff) / fabs (d->analytic);
        }
      qsort (res, n, sizeof *res, cmp);
      qsort (del, nd, sizeof *del, cmp);
      printf (",\"%s\":{\"verdict\":\"%s\",\"worst_nu\":%.4g,"
              "\"resolution_median\":%.4g,\"resolution_p90\":%.4g,"
              "\"resolution_worst\":%.4g,\"delta_median\":%.4g",
              ref ? "f32" : "mpfr", gc_verdict_name (r->verdict),
              r->worst_nu, res[n / 2], res[n * 9 / 10], res[n - 1],
              del[nd / 2]);
      /* spot check: elements at the 10th, 50th and 90th percentile of
         |analytic|  */
      int agree = 0, tried = 0;
      for (int q = 1; q <= 9 && ref == 0; q += 4)
        {
          size_t k = (size_t) q * n / 10;
          const gc_direction *d = &r->dirs[k];
          if (d->analytic == 0)
            continue;
          double dmin = (d->bar - d->diff) / fabs (d->analytic);
          for (int side = 0; side < 2; side++)
            {
              double sign = (d->analytic - d->reference) * d->analytic >= 0
                            ? 1 : -1;
              scaled sc = { inst->model, &inst->model, d->index,
                            sign * dmin * (side ? 1.01 : 0.99) };
              sc.model.ctx = &sc;
              sc.model.grad_f32 = scaled_grad;
              sc.model.loss_f32 = loss_f32;
              sc.model.loss_magnitude_f32 = inst->model.loss_magnitude_f32
                                            ? loss_magnitude_f32 : NULL;
              sc.model.loss_mpfr = loss_mpfr;
              sc.model.loss_f64 = loss_f64;
              sc.model.grad_magnitude_f32 = inst->model.grad_magnitude_f32
                                            ? grad_magnitude_f32 : NULL;
              sc.model.outputs_f32 = NULL;
              sc.model.outputs_mpfr = NULL;
              /* the whole check, so that lambda is the same as above */
              gc_result *rr = NULL;
              gc_check (&sc.model, inst->x, &o, &rr);
              tried++;
              agree += (rr->dirs[k].verdict == GC_FAIL) == (side == 1);
              gc_result_free (rr);
            }
        }
      if (ref == 0)
        printf (",\"spot_checks\":%d,\"spot_checks_agree\":%d", tried, agree);
      printf ("}");
      if (ref == 0)
        row_scale (&inst->model, r);
      free (res);
      free (del);
      gc_result_free (r);
    }
  printf ("}\n");
  gcm_destroy (inst);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Speed of the gdn check at the default shape (2052 parameters).  The
   library's overhead: the time of the check outside the model's callbacks,
   over the time inside them (timed by a wrapper).  */

typedef struct timed
{
  gc_model model;
  const gc_model *base;
  double t_mpfr, t_f32, t_grad;
  size_t n_mpfr, n_f32;
} timed;

static int
t_loss_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  timed *t = ctx;
  double t0 = now ();
  int rc = t->base->loss_mpfr (t->base->ctx, x, l);
  t->t_mpfr += now () - t0;
  t->n_mpfr++;
  return rc;
}

static int
t_loss_f32 (void *ctx, const float *x, float *l)
{
  timed *t = ctx;
  double t0 = now ();
  int rc = t->base->loss_f32 (t->base->ctx, x, l);
  t->t_f32 += now () - t0;
  t->n_f32++;
  return rc;
}

static int
t_grad (void *ctx, const float *x, float *g)
{
  timed *t = ctx;
  double t0 = now ();
  int rc = t->base->grad_f32 (t->base->ctx, x, g);
  t->t_grad += now () - t0;
  return rc;
}

static int
t_loss_mag (void *ctx, const float *x, float *l)
{
  timed *t = ctx;
  double t0 = now ();
  int rc = t->base->loss_magnitude_f32 (t->base->ctx, x, l);
  t->t_f32 += now () - t0;
  return rc;
}

static double
check_time (const char *model, unsigned threads, gc_direction_kind dirs,
            size_t nrand)
{
  gcm_instance *inst = make (model, "", 1, 0);
  gc_options o;
  gc_options_init (&o);
  /* the MPFR check, the one these timings have always measured (the
     default is now the tiered reference; speed-gdn.md times both) */
  o.reference = GC_REF_MPFR;
  o.threads = threads;
  o.directions = dirs;
  o.n_random = nrand;
  gc_result *r = NULL;
  double t0 = now ();
  gc_check (&inst->model, inst->x, &o, &r);
  double t = now () - t0;
  gc_result_free (r);
  gcm_destroy (inst);
  return t;
}

static int
speed (void)
{
  openblas_set_num_threads (1);
  /* The machine's speed drifts (a shared host): one and two threads run
     alternately, seven times each, and each reports its best and median;
     the speedup is the ratio of the medians.  */
  enum { REPS = 7 };
  double a1[REPS], a2[REPS], tr = INFINITY;
  for (int k = 0; k < REPS; k++)
    {
      a1[k] = check_time ("gdn", 1, GC_DIR_ALL, 0);
      a2[k] = check_time ("gdn", 2, GC_DIR_ALL, 0);
      tr = fmin (tr, check_time ("gdn", 1, GC_DIR_RANDOM, 1));
    }
  qsort (a1, REPS, sizeof *a1, cmp);
  qsort (a2, REPS, sizeof *a2, cmp);
  double t1 = a1[0], t2 = a2[0], m1 = a1[REPS / 2], m2 = a2[REPS / 2];
  /* forwards: the f32 chunked forward and one full MPFR recurrence */
  gcm_instance *inst = make ("gdn", "", 1, 0);
  const gc_model *m = &inst->model;
  double tf = INFINITY, tm = INFINITY;
  float l;
  for (int k = 0; k < 20; k++)
    {
      double t0 = now ();
      m->loss_f32 (m->ctx, inst->x, &l);
      tf = fmin (tf, now () - t0);
    }
  __mpfr_struct *xm = malloc (m->n * sizeof *xm);
  for (size_t i = 0; i < m->n; i++)
    {
      mpfr_init2 (xm + i, 24);
      mpfr_set_flt (xm + i, inst->x[i], MPFR_RNDN);
    }
  /* a perturbed first parameter forces the full recurrence of its
     sequence; perturbing S0 of every sequence forces all of them  */
  mpfr_t lm;
  mpfr_init2 (lm, 128);
  for (int k = 0; k < 5; k++)
    {
      for (size_t i = m->n - 1; i + 128 >= m->n && i > 0; i -= 64)
        {
          mpfr_set_prec (xm + i, 64);
          mpfr_set_flt (xm + i, inst->x[i], MPFR_RNDN);
          mpfr_nextabove (xm + i);
        }
      double t0 = now ();
      m->loss_mpfr (m->ctx, xm, lm);
      tm = fmin (tm, now () - t0);
    }
  mpfr_clear (lm);
  for (size_t i = 0; i < m->n; i++)
    mpfr_clear (xm + i);
  free (xm);
  /* overhead: the time outside the callbacks, single thread  */
  timed tw = { *m, m, 0, 0, 0, 0, 0 };
  tw.model.ctx = &tw;
  tw.model.loss_mpfr = t_loss_mpfr;
  tw.model.loss_f32 = t_loss_f32;
  tw.model.grad_f32 = t_grad;
  tw.model.loss_magnitude_f32 = t_loss_mag;
  tw.model.outputs_f32 = NULL;
  tw.model.outputs_mpfr = NULL;
  gc_result *r = NULL;
  gc_options mo;
  gc_options_init (&mo);
  mo.reference = GC_REF_MPFR;   /* the callbacks timed are the MPFR ones */
  double t0 = now ();
  gc_check (&tw.model, inst->x, &mo, &r);
  double tc = now () - t0;
  double inside = tw.t_mpfr + tw.t_f32 + tw.t_grad;
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  printf ("{\"model\":\"gdn\",\"n\":%zu,\"full_check_1_thread_s\":%.3f,"
          "\"full_check_2_threads_s\":%.3f,\"full_check_1_thread_median_s\":"
          "%.3f,\"full_check_2_threads_median_s\":%.3f,"
          "\"speedup_2_threads\":%.3f,"
          "\"random_direction_check_s\":%.4f,\"f32_forward_s\":%.3e,"
          "\"mpfr_forward_full_s\":%.3e,\"mpfr_over_f32\":%.1f,"
          "\"mpfr_calls\":%zu,\"mpfr_mean_call_s\":%.3e,"
          "\"time_in_callbacks_s\":%.3f,\"check_time_s\":%.3f,"
          "\"library_overhead\":%.4f,\"peak_rss_mib\":%.1f,"
          "\"kernel\":\"%s\"}\n",
          m->n, t1, t2, m1, m2, m1 / m2, tr, tf, tm, tm / tf, tw.n_mpfr,
          tw.t_mpfr / (double) tw.n_mpfr, inside, tc, (tc - inside) / inside,
          (double) ru.ru_maxrss / 1024.0, openblas_get_corename ());
  gc_result_free (r);
  gcm_destroy (inst);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* summarize: false alarms and catches per model, reference, bar.  */

typedef struct tally
{
  char model[16], ref[8], mutant[32];
  long cells, derived_fail, derived_inconclusive, c5_fail, c25_fail,
       torch_fail, oracle_fail,
       oracle_cells;
  double worst_nu;
  char kernels[512];
} tally;

/* The cells where a mutant passed the derived bar, each beside its twin
   cell of the other reference (same kernel, shape, gate, seed): a pass in
   MPFR mode means the mutant does not change this cell's gradient beyond
   the adjoint rounding (pad-leak without padding changes nothing); a pass
   in f32 mode only means its effect is under the f32 noise floor there.  */
static int
list_misses (const char *path)
{
  FILE *f = fopen (path, "r");
  if (!f)
    return 2;
  char line[1024], prev[1024] = "";
  printf ("model\tkernel\tshape\tgate\tseed\tmutant\tnu_mpfr\tnu_f32\t"
          "missed_by\n");
  /* falsify writes the MPFR line, then the f32 line, of each cell  */
  while (fgets (line, sizeof line, f))
    {
      char m1[16], k1[32], r1[8], mu1[32], v1[16], m2[16], k2[32], r2[8],
           mu2[32], v2[16];
      int s1, g1, e1, s2, g2, e2;
      double n1, n2;
      if (sscanf (line, "%15s %31s %7s %d %d %d %31s %15s %lf", m2, k2, r2,
                  &s2, &g2, &e2, mu2, v2, &n2) == 9
          && !strcmp (r2, "f32")
          && sscanf (prev, "%15s %31s %7s %d %d %d %31s %15s %lf", m1, k1, r1,
                     &s1, &g1, &e1, mu1, v1, &n1) == 9
          && !strcmp (r1, "mpfr") && !strcmp (mu1, mu2) && strcmp (mu1, "none")
          && s1 == s2 && g1 == g2 && e1 == e2
          && (!strcmp (v1, "pass") || !strcmp (v2, "pass")))
        printf ("%s\t%s\t%d\t%d\t%d\t%s\t%.3g\t%.3g\t%s\n", m1, k1, s1, g1,
                e1, mu1, n1, n2, !strcmp (v1, "pass") ? "both (no effect)"
                : "f32 only");
      snprintf (prev, sizeof prev, "%s", line);
    }
  fclose (f);
  return 0;
}

/* tiered: the cells where the tiered reference's verdict is not the MPFR
   reference's (manual: "The tiered reference"); falsify writes each
   cell's MPFR line before its auto line.  */
static int
tiered (const char *path)
{
  FILE *f = fopen (path, "r");
  if (!f)
    return 2;
  char line[1024], key[256] = "", mv[16] = "";
  long cells = 0, differ = 0;
  printf ("model\tkernel\tshape\tgate\tseed\tmutant\tmpfr\tauto\n");
  while (fgets (line, sizeof line, f))
    {
      char m[16], k[32], r[8], mu[32], v[16];
      int s, g, e;
      if (sscanf (line, "%15s %31s %7s %d %d %d %31s %15s", m, k, r, &s, &g,
                  &e, mu, v) != 8)
        continue;
      char here[256];
      snprintf (here, sizeof here, "%s %s %d %d %d %s", m, k, s, g, e, mu);
      if (!strcmp (r, "mpfr"))
        {
          snprintf (key, sizeof key, "%s", here);
          snprintf (mv, sizeof mv, "%s", v);
        }
      else if (!strcmp (r, "auto") && !strcmp (key, here))
        {
          cells++;
          if (strcmp (mv, v))
            {
              differ++;
              printf ("%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", m, k, s, g, e, mu,
                      mv, v);
            }
        }
    }
  fclose (f);
  printf ("# %ld cells with both references, %ld verdicts differ\n", cells,
          differ);
  return differ ? 1 : 0;
}

static int
summarize (const char *path, bool misses)
{
  FILE *f = fopen (path, "r");
  if (!f)
    return 2;
  tally *t = calloc (4096, sizeof *t);
  size_t nt = 0;
  char line[1024];
  while (fgets (line, sizeof line, f))
    {
      char model[16], kernel[32], ref[8], mutant[32], verdict[16], c5[8],
           c25[8], torch[8], oracle[16];
      int sh, gate, seed;
      double nu;
      size_t nd;
      if (sscanf (line, "%15s %31s %7s %d %d %d %31s %15s %lf %7s %7s %7s "
                  "%15s %zu", model, kernel, ref, &sh, &gate, &seed, mutant,
                  verdict, &nu, c5, c25, torch, oracle, &nd) != 14)
        continue;
      size_t k;
      for (k = 0; k < nt; k++)
        if (!strcmp (t[k].model, model) && !strcmp (t[k].ref, ref)
            && !strcmp (t[k].mutant, mutant))
          break;
      if (k == nt && nt < 4096)
        {
          snprintf (t[nt].model, sizeof t[nt].model, "%s", model);
          snprintf (t[nt].ref, sizeof t[nt].ref, "%s", ref);
          snprintf (t[nt].mutant, sizeof t[nt].mutant, "%s", mutant);
          nt++;
        }
      tally *c = &t[k];
      c->cells++;
      /* an inconclusive cell is neither a catch nor a false alarm: counted
         apart (manual: "Inconclusive directions") */
      c->derived_fail += strcmp (verdict, "pass") != 0
                         && strcmp (verdict, "inconclusive") != 0;
      c->derived_inconclusive += !strcmp (verdict, "inconclusive");
      c->c5_fail += !strcmp (c5, "fail");
      c->c25_fail += !strcmp (c25, "fail");
      c->torch_fail += !strcmp (torch, "fail");
      if (strcmp (oracle, "-"))
        {
          c->oracle_cells++;
          c->oracle_fail += strcmp (oracle, "pass") != 0;
        }
      if (!strcmp (mutant, "none") && nu > c->worst_nu)
        c->worst_nu = nu;
      char key[40];
      snprintf (key, sizeof key, " %s", kernel);
      if (!strstr (c->kernels, key)
          && strlen (c->kernels) + strlen (key) < sizeof c->kernels)
        strcat (c->kernels, key);
    }
  fclose (f);
  if (misses)
    return list_misses (path);
  printf ("model\tref\tbackward\tcells\tderived\trel<=5e-2\trel<=0.25\t"
          "torch\toracle\tworst_nu\tkernels\tinconclusive\n");
  for (size_t k = 0; k < nt; k++)
    printf ("%s\t%s\t%s\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld/%ld\t%.3g\t%s\t%ld\n",
            t[k].model, t[k].ref, t[k].mutant, t[k].cells, t[k].derived_fail,
            t[k].c5_fail, t[k].c25_fail, t[k].torch_fail, t[k].oracle_fail,
            t[k].oracle_cells, t[k].worst_nu, t[k].kernels + 1,
            t[k].derived_inconclusive);
  free (t);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Why the backward on absolute values (Higham's rigorous first-order
   bound) would not sharpen the resolution of the delta rule: the state's
   transition M_t = alpha_t (I - beta_t k_t k_t^T) contracts, but |M_t| =
   alpha_t (I + beta_t |k_t||k_t|^T - 2 beta_t diag(k_t^2)) grows by up to
   alpha_t (1 + beta_t) per step.  Over T steps at gdn's defaults (K = 8,
   T = 37, mild gates g = logsigmoid(z)/8, beta = sigmoid(z), k
   normalised) the ratio max(|M_T|...|M_1|) / max|M_T...M_1|, median over
   101 seeds, is how much looser the bound on absolute values is than the
   terms it bounds.  */
static int
absgrowth (void)
{
  enum { K = 8, T = 37, SEEDS = 101 };
  double ratio[SEEDS];
  for (int s = 0; s < SEEDS; s++)
    {
      gcm_rng rng;
      gcm_rng_seed (&rng, (uint64_t) s + 1, 7);
      double P[K][K], Q[K][K], M[K][K], tmp[K][K];
      for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
          P[i][j] = Q[i][j] = i == j;
      for (int t = 0; t < T; t++)
        {
          double k[K], nk = 0;
          for (int i = 0; i < K; i++)
            {
              k[i] = gcm_normal (&rng);
              nk += k[i] * k[i];
            }
          for (int i = 0; i < K; i++)
            k[i] /= sqrt (nk);
          double zg = gcm_normal (&rng), zb = gcm_normal (&rng);
          double alpha = exp (-log1p (exp (-zg)) / 8);
          double beta = 1 / (1 + exp (-zb));
          for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++)
              M[i][j] = alpha * ((i == j) - beta * k[i] * k[j]);
          for (int pass = 0; pass < 2; pass++)
            {
              double (*X)[K] = pass ? Q : P;
              for (int i = 0; i < K; i++)
                for (int j = 0; j < K; j++)
                  {
                    double acc = 0;
                    for (int l = 0; l < K; l++)
                      acc += (pass ? fabs (M[i][l]) : M[i][l]) * X[l][j];
                    tmp[i][j] = acc;
                  }
              memcpy (X, tmp, sizeof tmp);
            }
        }
      double pmax = 0, qmax = 0;
      for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
          {
            pmax = fmax (pmax, fabs (P[i][j]));
            qmax = fmax (qmax, Q[i][j]);
          }
      ratio[s] = qmax / pmax;
    }
  qsort (ratio, SEEDS, sizeof *ratio, cmp);
  printf ("{\"K\":%d,\"T\":%d,\"seeds\":%d,\"ratio_median\":%.4g,"
          "\"ratio_min\":%.4g,\"ratio_max\":%.4g}\n", K, T, SEEDS,
          ratio[SEEDS / 2], ratio[0], ratio[SEEDS - 1]);
  return 0;
}

/* bench time: whole-process timings for the side-by-side speed table
   (bench/run.sh speed).  Wall time and the child's CPU time (user + system,
   from wait4): the machine may be shared, and a one-thread process's CPU
   time is what another process's load disturbs least.  Exit status: that
   of the runs (the last one), 125 when a run could not be started.  */
static int
time_cmd (int reps, const char *out, char **argv)
{
  if (reps < 1 || reps > 99)
    {
      fprintf (stderr, "bench time: N must be 1 to 99\n");
      return 2;
    }
  double wall[99], cpu[99];
  int status = 0;
  for (int r = 0; r < reps; r++)
    {
      double t0 = now ();
      pid_t pid = fork ();
      if (pid < 0)
        {
          perror ("bench time: fork");
          return 125;
        }
      if (pid == 0)
        {
          int fd = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
          if (fd < 0 || dup2 (fd, 1) < 0 || dup2 (fd, 2) < 0)
            _exit (125);
          close (fd);
          execvp (argv[0], argv);
          _exit (125);
        }
      int st;
      struct rusage ru;
      if (wait4 (pid, &st, 0, &ru) < 0)
        {
          perror ("bench time: wait4");
          return 125;
        }
      wall[r] = now () - t0;
      cpu[r] = (double) ru.ru_utime.tv_sec + 1e-6 * (double) ru.ru_utime.tv_usec
               + (double) ru.ru_stime.tv_sec + 1e-6 * (double) ru.ru_stime.tv_usec;
      status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
      if (status == 125)
        {
          fprintf (stderr, "bench time: could not run %s\n", argv[0]);
          return 125;
        }
    }
  double sw[99], sc[99];
  memcpy (sw, wall, reps * sizeof *wall);
  memcpy (sc, cpu, reps * sizeof *cpu);
  qsort (sw, reps, sizeof *sw, cmp);
  qsort (sc, reps, sizeof *sc, cmp);
  /* the median; of an even count, the mean of the middle two */
  double mw = (sw[(reps - 1) / 2] + sw[reps / 2]) / 2;
  double mc = (sc[(reps - 1) / 2] + sc[reps / 2]) / 2;
  printf ("%.4f\t%.4f\t", mw, mc);
  for (int r = 0; r < reps; r++)
    printf ("%s%.4f", r ? "," : "", wall[r]);
  printf ("\t");
  for (int r = 0; r < reps; r++)
    printf ("%s%.4f", r ? "," : "", cpu[r]);
  printf ("\t%d\n", status);
  return 0;
}

/* This process's CPU time (one thread does the check: its CPU time is its
   wall time on a quiet machine, and other processes do not count).  */
static double
cpu_now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* ---------------------------------------------------------------------- */
/* Manual: "The f64 twin".  At MODEL's default shape, seed 1, 1 thread:
   the default check with its twin and without it (--twin off) side by
   side, interleaved, the median of 7 CPU times each after a warm-up of
   one (other processes do not count); the algorithm's resolution
   (median, worst) beside the f32 check's; and every mutant's verdict
   both ways, with the twin's counts.  */
/* One check of INST, with its twin or without (NO_TWIN): its CPU time;
   the result in *KEEP (freed when KEEP is NULL).  */
static double
one_check (const gcm_instance *inst, int no_twin, gc_result **keep)
{
  gc_options o;
  gc_options_init (&o);
  o.no_twin = no_twin;
  gc_result *r = NULL;
  double t0 = cpu_now ();
  gc_check (&inst->model, inst->x, &o, &r);
  double t = cpu_now () - t0;
  if (keep)
    *keep = r;
  else
    gc_result_free (r);
  return t;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* TWIN_REPS checks each way, interleaved (without, with, without, ...)
   after one of each to warm up (a model's first call builds what it
   caches): the medians of their CPU times in *OFF and *ON, and the last
   results in *R0 and *R.  */
enum { TWIN_REPS = 7 };
static void
timed_pair (const gcm_instance *inst, double *off, double *on,
            gc_result **r0, gc_result **r)
{
  double t0[TWIN_REPS], t1[TWIN_REPS];
  one_check (inst, 1, NULL);
  one_check (inst, 0, NULL);
  for (int k = 0; k < TWIN_REPS; k++)
    {
      bool last = k == TWIN_REPS - 1;
      t0[k] = one_check (inst, 1, last ? r0 : NULL);
      t1[k] = one_check (inst, 0, last ? r : NULL);
    }
  qsort (t0, TWIN_REPS, sizeof *t0, cmp_double);
  qsort (t1, TWIN_REPS, sizeof *t1, cmp_double);
  *off = t0[TWIN_REPS / 2];
  *on = t1[TWIN_REPS / 2];
}

static int
twin (const char *model)
{
  const gcm_spec *spec = gcm_find (model);
  if (!spec)
    return 2;
  openblas_set_num_threads (1);
  gcm_instance *inst = make (model, "", 1, 0);
  gc_result *r = NULL, *r0 = NULL;
  double t_off, t_on;
  timed_pair (inst, &t_off, &t_on, &r0, &r);
  size_t rich = 0, mpfr = 0;
  for (size_t k = 0; k < r->n_directions; k++)
    {
      rich += r->dirs[k].richardson_used != 0;
      mpfr += r->dirs[k].decided_by == GC_REF_MPFR;
    }
  printf ("{\"model\":\"%s\",\"kernel\":\"%s\",\"n\":%zu,"
          "\"twin\":%d,\"verdict\":\"%s\",\"verdict_without\":\"%s\","
          "\"cpu_with_s\":%.4g,\"cpu_without_s\":%.4g,\"ratio\":%.3g,"
          "\"resolution_algorithm_median\":%.3g,"
          "\"resolution_algorithm_worst\":%.3g,"
          "\"resolution_f32_median\":%.3g,\"resolution_f32_worst\":%.3g,"
          "\"worst_nu_f64\":%.3g,\"worst_nu_arith\":%.3g,"
          "\"richardson_used\":%zu,\"decided_mpfr\":%zu,\"mutants\":[",
          model, openblas_get_corename (), r->n, r->twin,
          gc_verdict_name (r->verdict), gc_verdict_name (r0->verdict), t_on,
          t_off, t_on / t_off, r->resolution_f64_median,
          r->resolution_f64_worst, r0->resolution_median,
          r0->resolution_worst, r->worst_nu_f64, r->worst_nu_arith, rich,
          mpfr);
  gc_result_free (r);
  gc_result_free (r0);
  gcm_destroy (inst);
  for (size_t m = 0; m < spec->n_mutants; m++)
    {
      if (spec->mutants[m].only)    /* bench/higher.c */
        continue;
      inst = make (model, "", 1, (int) m + 1);
      gc_result *a = NULL, *b = NULL;
      gc_options o;
      gc_options_init (&o);
      double t0 = cpu_now ();
      gc_check (&inst->model, inst->x, &o, &a);
      double ta = cpu_now () - t0;
      o.no_twin = 1;
      gc_check (&inst->model, inst->x, &o, &b);
      printf ("%s{\"mutant\":\"%s\",\"precision_only\":%d,"
              "\"verdict\":\"%s\",\"verdict_without\":\"%s\","
              "\"failed_algorithm\":%zu,\"precision\":%zu,"
              "\"mismatch\":%zu,\"of\":%zu,\"cpu_s\":%.3g}",
              m ? "," : "", spec->mutants[m].name,
              spec->mutants[m].precision, gc_verdict_name (a->verdict),
              gc_verdict_name (b->verdict), a->n_failed_algorithm,
              a->n_precision, a->n_mismatch, a->n_directions, ta);
      gc_result_free (a);
      gc_result_free (b);
      gcm_destroy (inst);
    }
  printf ("]}\n");
  return 0;
}

/* bench/higher.c (bench.h): the rows of the checks beyond the gradient */

int
main (int argc, char **argv)
{
  if (argc >= 5 && !strcmp (argv[1], "falsify-higher"))
    return falsify_higher (argv[2], atoi (argv[3]), atoi (argv[4]));
  if (argc >= 3 && !strcmp (argv[1], "summarize-higher"))
    return summarize_higher (argv[2]);
  if (argc >= 3 && !strcmp (argv[1], "twin"))
    return twin (argv[2]);
  if (argc >= 3 && !strcmp (argv[1], "tiered"))
    return tiered (argv[2]);
  if (argc >= 5 && !strcmp (argv[1], "time"))
    return time_cmd (atoi (argv[2]), argv[3], argv + 4);
  if (argc >= 5 && !strcmp (argv[1], "falsify"))
    return falsify (argv[2], atoi (argv[3]), atoi (argv[4]));
  if (argc >= 3 && !strcmp (argv[1], "fingerprint"))
    return fingerprint (argv[2]);
  if (argc >= 3 && !strcmp (argv[1], "resolution"))
    return resolution (argv[2]);
  if (argc >= 2 && !strcmp (argv[1], "speed"))
    return speed ();
  if (argc >= 2 && !strcmp (argv[1], "absgrowth"))
    return absgrowth ();
  if (argc >= 3 && !strcmp (argv[1], "summarize"))
    return summarize (argv[2], false);
  if (argc >= 3 && !strcmp (argv[1], "misses"))
    return summarize (argv[2], true);
  fprintf (stderr, "usage: bench falsify MODEL SEEDS MUTANT_SEEDS | "
           "fingerprint MODEL | resolution MODEL | speed | absgrowth | "
           "summarize FILE | "
           "misses FILE | time N OUT CMD [ARG]...\n");
  return 2;
}
