/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_tier.c -- the tiered reference (GC_REF_AUTO; manual: "The tiered
   reference").  Its verdicts are the pure MPFR check's, direction by
   direction, on gdn, kda and tanh-gemm with every built-in mutant at the
   test shapes; the directions where f64 is not enough (its own terms not
   negligible against the adjoint term, a kink inside f64's stencil but
   outside MPFR's, random directions, a step of the user's) are decided by
   MPFR; the per-direction reference survives the JSON report, parsing and
   merging; the defaults pick it for a model with both forwards only.  */

#include "gctest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run M at X with reference REF (other options from O, or defaults).  */
static gc_result *
run (const gc_model *m, const float *x, gc_reference ref,
     const gc_options *o)
{
  gc_options oo;
  if (o)
    oo = *o;
  else
    gc_options_init (&oo);
  oo.reference = ref;
  return gct_check_ok (m, x, &oo);
}

/* AUTO (tiered) has the verdict of MP (pure MPFR) overall and in every
   direction; each of its directions was decided by f64 or MPFR, and f64
   decided only passes and failures that MPFR reached at its first step,
   unconfirmed (manual: "The tiered reference", "F64 proves MPFR's
   failure"); with a twin, the algorithm's verdict is MPFR's as well.  */
static void
assert_same_verdicts (const gc_result *mp, const gc_result *au,
                      const char *what)
{
  ck_assert_msg (au->verdict == mp->verdict, "%s: auto %s, mpfr %s", what,
                 gc_verdict_name (au->verdict), gc_verdict_name (mp->verdict));
  ck_assert_uint_eq (au->n_directions, mp->n_directions);
  for (size_t k = 0; k < au->n_directions; k++)
    {
      const gc_direction *a = &au->dirs[k], *b = &mp->dirs[k];
      ck_assert_msg (a->verdict == b->verdict, "%s: direction %zu: auto %s "
                     "(decided by %s, nu %g), mpfr %s (nu %g)", what, k,
                     gc_verdict_name (a->verdict),
                     gc_reference_name (a->decided_by), a->nu,
                     gc_verdict_name (b->verdict), b->nu);
      ck_assert_int_eq (b->decided_by, GC_REF_MPFR);
      if (au->reference == GC_REF_AUTO)
        ck_assert (a->decided_by == GC_REF_F64
                   || (a->decided_by == GC_REF_MPFR
                       && memcmp (&a->reference, &b->reference,
                                  sizeof a->reference) == 0));
      else
        ck_assert_int_eq (a->decided_by, GC_REF_MPFR);
      if (a->decided_by == GC_REF_F64)
        {
          ck_assert_msg (a->verdict == GC_PASS || a->verdict == GC_FAIL
                         || a->verdict == GC_PRECISION,
                         "%s: direction %zu: f64 decided %s", what, k,
                         gc_verdict_name (a->verdict));
          if (a->verdict_algorithm == GC_FAIL || a->nu > 1)
            ck_assert_msg (b->level == 0, "%s: direction %zu: f64 decided "
                           "a failure MPFR judged at level %d", what, k,
                           b->level);
        }
      if (!isnan (a->analytic_f64) && !isnan (b->analytic_f64))
        ck_assert_msg (a->verdict_algorithm == b->verdict_algorithm,
                       "%s: direction %zu: algorithm auto %s, mpfr %s", what,
                       k, gc_verdict_name (a->verdict_algorithm),
                       gc_verdict_name (b->verdict_algorithm));
    }
}

/* Check catalogue model NAME at shape SHAPE with mutant MUTANT both ways.
   Returns the number of directions f64 decided.  */
static size_t
same_on (const char *name, const char *shape, int mutant)
{
  const gcm_spec *spec = gcm_find (name);
  ck_assert_ptr_nonnull (spec);
  long v[GCM_MAX_KEYS];
  char err[128];
  ck_assert_int_eq (gcm_parse_shape (spec, shape, v, err, sizeof err), GC_OK);
  gcm_instance *inst = NULL;
  ck_assert_int_eq (gcm_create (spec, v, gct_seed (), mutant, &inst), GC_OK);
  gc_result *mp = run (&inst->model, inst->x, GC_REF_MPFR, NULL);
  gc_result *au = gct_check_ok (&inst->model, inst->x, NULL);  /* default */
  char what[160];
  snprintf (what, sizeof what, "%s %s mutant %s", name, shape,
            mutant ? spec->mutants[mutant - 1].name : "none");
  /* the default is the tiered reference exactly when there are both
     forwards; MPFR (named so) otherwise */
  ck_assert_int_eq (au->reference, inst->model.loss_f64 ? GC_REF_AUTO
                                                        : GC_REF_MPFR);
  assert_same_verdicts (mp, au, what);
  size_t n64 = 0;
  for (size_t k = 0; k < au->n_directions; k++)
    n64 += au->dirs[k].decided_by == GC_REF_F64;
  gc_result_free (mp);
  gc_result_free (au);
  gcm_destroy (inst);
  return n64;
}

/* The shapes of tests/check_gdn.c's mutant test (T = BT + 1 and 37, BT 4
   and 16, mild and strong gates), every variant: correct and each
   mutant.  */
START_TEST (test_gdn_mutants)
{
  const gcm_spec *spec = gcm_find ("gdn");
  int variants = 1 + (int) spec->n_mutants;
  int mutant = _i % variants, cfg = _i / variants;
  static const char *const shapes[] = {
    "T=5,H=1,K=4,V=4,BT=4,GATE=0", "T=37,H=1,K=4,V=4,BT=16,GATE=0",
    "T=5,H=1,K=4,V=4,BT=4,GATE=1", "T=37,H=1,K=4,V=4,BT=16,GATE=1" };
  size_t n64 = same_on ("gdn", shapes[cfg], mutant);
  /* a correct gdn is decided by f64 in most directions (the lever) */
  if (mutant == 0)
    ck_assert_msg (n64 > 0, "%s: f64 decided no direction", shapes[cfg]);
}
END_TEST

/* tests/check_kda.c's shapes, both paths, every variant: kda's f64
   forward (the naive recurrence) decides most directions of a correct
   kda, as gdn's.  */
START_TEST (test_kda_mutants)
{
  const gcm_spec *spec = gcm_find ("kda");
  int variants = 1 + (int) spec->n_mutants;
  int mutant = _i % variants, cfg = _i / variants;
  static const char *const shapes[] = {
    "T=9,H=1,HV=2,K=4,V=4,BT=4,CHUNK=1", "T=9,H=1,HV=2,K=4,V=4,BT=4,CHUNK=0" };
  size_t n64 = same_on ("kda", shapes[cfg], mutant);
  if (mutant == 0)
    ck_assert_msg (n64 > 0, "%s: f64 decided no direction", shapes[cfg]);
}
END_TEST

START_TEST (test_tanh_gemm_mutants)
{
  same_on ("tanh-gemm", "M=4,K=8,N=4", _i);
}
END_TEST

/* The lever of "Failures f64 decides": on a mutant of each catalogue model
   f64 decides failures, and each is a failure MPFR reached at its first
   step and did not confirm (beyond doubt: no finer level's J recorded);
   verdicts as MPFR's.  */
START_TEST (test_failures_decided_by_f64)
{
  static const char *const cases[][3] = {
    { "gdn", "T=37,H=1,K=4,V=4,BT=16,GATE=0", "no-read-scale" },
    { "kda", "T=9,H=1,HV=2,K=4,V=4,BT=4,CHUNK=1", "softplus-outside" },
    { "tanh-gemm", "M=4,K=8,N=4", "dw-twice" } };
  const gcm_spec *spec = gcm_find (cases[_i][0]);
  ck_assert_ptr_nonnull (spec);
  long v[GCM_MAX_KEYS];
  char err[128];
  ck_assert_int_eq (gcm_parse_shape (spec, cases[_i][1], v, err, sizeof err),
                    GC_OK);
  int mutant = gcm_mutant_index (spec, cases[_i][2]);
  ck_assert_int_gt (mutant, 0);
  gcm_instance *inst = NULL;
  ck_assert_int_eq (gcm_create (spec, v, gct_seed (), mutant, &inst), GC_OK);
  gc_result *mp = run (&inst->model, inst->x, GC_REF_MPFR, NULL);
  gc_result *au = run (&inst->model, inst->x, GC_REF_AUTO, NULL);
  assert_same_verdicts (mp, au, cases[_i][2]);
  size_t n64 = 0;
  for (size_t k = 0; k < au->n_directions; k++)
    if (au->dirs[k].decided_by == GC_REF_F64
        && au->dirs[k].verdict == GC_FAIL)
      {
        n64++;
        ck_assert_int_eq (mp->dirs[k].verdict, GC_FAIL);
        ck_assert_msg (mp->dirs[k].level == 0 && isnan (mp->dirs[k].jump_next),
                       "%s: direction %zu: MPFR confirmed it (level %d, "
                       "next J %g)", cases[_i][2], k, mp->dirs[k].level,
                       mp->dirs[k].jump_next);
      }
  ck_assert_msg (n64 > 0, "%s %s: f64 decided no failure", cases[_i][0],
                 cases[_i][2]);
  printf ("# %s %s: f64 decided %zu of %zu failures\n", cases[_i][0],
          cases[_i][2], n64, au->n_failed);
  gc_result_free (mp);
  gc_result_free (au);
  gcm_destroy (inst);
}
END_TEST

/* Manual: "Failures the twin decides": gdn's ds-bf16, whose f32
   verdicts fail just beyond their bar (in doubt for MPFR, 112 of its
   coordinates sent there before), is decided by f64 in every direction,
   as the correct gdn is, with MPFR's verdicts and algorithm verdicts;
   and its MPFR calls are the correct check's.  */
START_TEST (test_twin_decides)
{
  const gcm_spec *spec = gcm_find ("gdn");
  long v[GCM_MAX_KEYS];
  char err[128];
  ck_assert_int_eq (gcm_parse_shape (spec, "T=37,H=1,K=4,V=4,BT=16,GATE=0",
                                     v, err, sizeof err), GC_OK);
  size_t mpfr_calls[2];
  for (int k = 0; k < 2; k++)
    {
      int mutant = k ? gcm_mutant_index (spec, "ds-bf16") : 0;
      ck_assert_int_ge (mutant, k);
      gcm_instance *inst = NULL;
      ck_assert_int_eq (gcm_create (spec, v, gct_seed (), mutant, &inst),
                        GC_OK);
      gc_result *mp = run (&inst->model, inst->x, GC_REF_MPFR, NULL);
      gc_result *au = run (&inst->model, inst->x, GC_REF_AUTO, NULL);
      assert_same_verdicts (mp, au, k ? "ds-bf16" : "gdn");
      if (k)
        ck_assert_int_eq (au->verdict, GC_PRECISION);
      for (size_t j = 0; j < au->n_directions; j++)
        ck_assert_int_eq (au->dirs[j].decided_by, GC_REF_F64);
      mpfr_calls[k] = au->n_calls[GC_CALL_KIND_MPFR];
      ck_assert_uint_gt (au->n_calls[GC_CALL_KIND_F64], 0);
      gc_result_free (mp);
      gc_result_free (au);
      gcm_destroy (inst);
    }
  ck_assert_uint_eq (mpfr_calls[1], mpfr_calls[0]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A model with two scales: L = 1 + sum_{i<H} sin x_i + EPS sum_{i>=H}
   sin x_i, in two blocks.  The f64 reference's rounding term,
   lambda sqrt(d_f) ulp_53(M_L) / h_64 (about 1e-8 here), is far below the
   first block's adjoint term (about 5e-7) and far above the second's
   (EPS = 2^-17 smaller): f64 decides the first block, MPFR must decide the
   second.  TWIN multiplies the second block's gradient by 1 + 1e-4: an
   error of 1e-4 EPS |cos x_i|, about 1e-10, that f64 cannot see (below
   its 1e-8) and MPFR can (its bar there is the adjoint term,
   lambda sqrt(d_b) u max|g| ~ 1e-12).  KINK
   instead adds K |x_i - c_i| with c_i = x_i + 0.6 h_64 in the first block:
   a kink inside f64's stencil, 2^23 MPFR steps away.  */
enum { TWO_N = 8, TWO_H = 4 };
#define TWO_EPS 0x1p-17
#define TWO_H64 0x1p-18   /* f64's default step at |x| in [1, 2) */

typedef struct two_scale
{
  gc_model model;
  gc_block blocks[2];
  float x[TWO_N];
  double kink[TWO_N];   /* c_i, or NaN: none */
  double twin;
  double offset;   /* a constant added to the loss: a large loss */
  /* loss_f64 away from x by more than 2^-30 (f64's stencil, not MPFR's):
     0 as it should, 1 NaN, 2 fails with status 7 */
  int f64_trap;
} two_scale;

static double
coef (size_t i)
{
  return i < TWO_H ? 1.0 : TWO_EPS;
}

static int
two_f32 (void *ctx, const float *x, float *l)
{
  const two_scale *t = ctx;
  float s = 1 + (float) t->offset;
  for (size_t i = 0; i < TWO_N; i++)
    {
      s += (float) coef (i) * sinf (x[i]);
      if (!isnan (t->kink[i]))
        s += 0.5f * fabsf (x[i] - (float) t->kink[i]);
    }
  *l = s;
  return 0;
}

static int
two_grad (void *ctx, const float *x, float *g)
{
  const two_scale *t = ctx;
  for (size_t i = 0; i < TWO_N; i++)
    {
      g[i] = (float) coef (i) * cosf (x[i]);
      if (i >= TWO_H)
        g[i] = (float) (g[i] * t->twin);
      if (!isnan (t->kink[i]))
        g[i] += x[i] < t->kink[i] ? -0.5f : 0.5f;
    }
  return 0;
}

static int
two_f64 (void *ctx, const double *x, double *l)
{
  const two_scale *t = ctx;
  double s = 1;
  for (size_t i = 0; i < TWO_N; i++)
    if (t->f64_trap && fabs (x[i] - t->x[i]) > 0x1p-30)
      {
        if (t->f64_trap == 2)
          return 7;
        s = NAN;
      }
  s += t->offset;
  for (size_t i = 0; i < TWO_N; i++)
    {
      s += coef (i) * sin (x[i]);
      if (!isnan (t->kink[i]))
        s += 0.5 * fabs (x[i] - t->kink[i]);
    }
  *l = s;
  return 0;
}

static int
two_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr l)
{
  const two_scale *t = ctx;
  mpfr_prec_t p = mpfr_get_prec (l);
  mpfr_t s, u;
  mpfr_inits2 (p, s, u, (mpfr_ptr) 0);
  mpfr_set_d (s, 1 + t->offset, MPFR_RNDN);   /* exact: a power of two */
  for (size_t i = 0; i < TWO_N; i++)
    {
      mpfr_sin (u, x + i, MPFR_RNDN);
      mpfr_mul_d (u, u, coef (i), MPFR_RNDN);   /* a power of two: exact */
      mpfr_add (s, s, u, MPFR_RNDN);
      if (!isnan (t->kink[i]))
        {
          mpfr_sub_d (u, x + i, t->kink[i], MPFR_RNDN);
          mpfr_abs (u, u, MPFR_RNDN);
          mpfr_div_2ui (u, u, 1, MPFR_RNDN);
          mpfr_add (s, s, u, MPFR_RNDN);
        }
    }
  mpfr_set (l, s, MPFR_RNDN);
  mpfr_clears (s, u, (mpfr_ptr) 0);
  return 0;
}

static void
two_init (two_scale *t, bool twin, bool kink)
{
  memset (t, 0, sizeof *t);
  for (size_t i = 0; i < TWO_N; i++)
    {
      t->x[i] = 1.0f + (float) i / 16;   /* in [1, 2): h_64 = 2^-18 */
      t->kink[i] = kink && i < TWO_H ? t->x[i] + 0.6 * TWO_H64 : NAN;
    }
  t->twin = twin ? 1 + 1e-4 : 1;
  t->blocks[0] = (gc_block) { "big", 0, TWO_H, 1, { TWO_H } };
  t->blocks[1] = (gc_block) { "small", TWO_H, TWO_N - TWO_H, 1,
                              { TWO_N - TWO_H } };
  t->model.abi = GC_MODEL_ABI;
  t->model.name = "two-scale";
  t->model.n = TWO_N;
  t->model.loss_f32 = two_f32;
  t->model.grad_f32 = two_grad;
  t->model.loss_f64 = two_f64;
  t->model.loss_mpfr = two_mpfr;
  t->model.ctx = t;
  t->model.forward_depth = 3 * TWO_N;
  t->model.backward_depth = 2;
  t->model.n_blocks = 2;
  t->model.blocks = t->blocks;
}

/* f64's own terms are not negligible in the second block: those
   directions are re-evaluated and decided in MPFR, the first block's by
   f64; verdicts as MPFR's.  */
START_TEST (test_f64_terms_not_negligible)
{
  two_scale t;
  two_init (&t, false, false);
  gc_result *mp = run (&t.model, t.x, GC_REF_MPFR, NULL);
  gc_result *au = run (&t.model, t.x, GC_REF_AUTO, NULL);
  ck_assert_int_eq (au->reference, GC_REF_AUTO);
  ck_assert_int_eq (au->truncation_source, GC_REF_MPFR);   /* the centre's */
  assert_same_verdicts (mp, au, "two-scale");
  ck_assert_int_eq (au->verdict, GC_PASS);
  for (size_t k = 0; k < TWO_N; k++)
    {
      const gc_direction *d = &au->dirs[k];
      ck_assert_msg (d->decided_by == (k < TWO_H ? GC_REF_F64 : GC_REF_MPFR),
                     "direction %zu decided by %s (terms %g %g, adjoint %g)",
                     k, gc_reference_name (d->decided_by),
                     d->terms[GC_TERM_TRUNCATION].value,
                     d->terms[GC_TERM_REFERENCE].value,
                     d->terms[GC_TERM_ADJOINT].value);
      if (k >= TWO_H)   /* what made f64 not enough there */
        {
          gc_result *f = run (&t.model, t.x, GC_REF_F64, NULL);
          ck_assert (f->dirs[k].terms[GC_TERM_REFERENCE].value
                     > f->dirs[k].terms[GC_TERM_ADJOINT].value);
          gc_result_free (f);
        }
    }
  /* the report says so: per direction and in the summary */
  char *txt = gc_report (au, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (strstr (txt, "tiered reference: f64 decided 4 of 8 "
                                 "directions, MPFR 4"));
  free (txt);
  char *tap = gc_report (au, GC_FMT_TAP);
  ck_assert_ptr_nonnull (strstr (tap, "small[0] (parameter 4) nu="));
  ck_assert_ptr_nonnull (strstr (strstr (tap, "small[0] (parameter 4)"),
                                 " ref=mpfr\n"));
  ck_assert_ptr_nonnull (strstr (strstr (tap, "big[0] (parameter 0)"),
                                 " ref=f64\n"));
  free (tap);
  gc_result_free (mp);
  gc_result_free (au);
}
END_TEST

/* The twin's bug is below f64's reference rounding: --ref f64 passes it,
   the tiered reference fails it as MPFR does, in MPFR.  */
START_TEST (test_bug_f64_cannot_see)
{
  two_scale t;
  two_init (&t, true, false);
  gc_result *f = run (&t.model, t.x, GC_REF_F64, NULL);
  ck_assert_msg (f->verdict == GC_PASS, "f64 saw the bug (%s): the test "
                 "needs one it cannot see", gc_verdict_name (f->verdict));
  gc_result *mp = run (&t.model, t.x, GC_REF_MPFR, NULL);
  gc_result *au = run (&t.model, t.x, GC_REF_AUTO, NULL);
  ck_assert_int_eq (mp->verdict, GC_FAIL);
  assert_same_verdicts (mp, au, "two-scale twin");
  for (size_t k = TWO_H; k < TWO_N; k++)
    {
      ck_assert_int_eq (au->dirs[k].verdict, GC_FAIL);
      ck_assert_int_eq (au->dirs[k].decided_by, GC_REF_MPFR);
      /* a failure is confirmed with the whole stencil ("Skipping the 2h
         pair") */
      ck_assert (!isnan (au->dirs[k].d2h));
    }
  gc_result_free (f);
  gc_result_free (mp);
  gc_result_free (au);
}
END_TEST

/* A kink at 0.6 h_64: f64 sees it (J, or a central difference a fifth of
   the jump off), MPFR's stencil 2^23 steps away does not; the direction
   goes to MPFR and passes as there.  */
START_TEST (test_kink_inside_f64_stencil)
{
  two_scale t;
  two_init (&t, false, true);
  gc_result *f = run (&t.model, t.x, GC_REF_F64, NULL);
  gc_result *mp = run (&t.model, t.x, GC_REF_MPFR, NULL);
  gc_result *au = run (&t.model, t.x, GC_REF_AUTO, NULL);
  assert_same_verdicts (mp, au, "two-scale kink");
  for (size_t k = 0; k < TWO_H; k++)
    {
      ck_assert_msg (f->dirs[k].verdict != GC_PASS, "f64 did not see the "
                     "kink at %zu", k);
      ck_assert_int_eq (mp->dirs[k].verdict, GC_PASS);
      ck_assert_int_eq (au->dirs[k].decided_by, GC_REF_MPFR);
    }
  gc_result_free (f);
  gc_result_free (mp);
  gc_result_free (au);
}
END_TEST

/* An f64 forward that leaves its domain on f64's larger stencil (NaN
   there) sends those directions to MPFR, which decides them as alone;
   one that fails there (a callback's status) stops the check as --ref
   f64 would.  --ref f64 itself tries a finer first step (manual: "Domain
   edges") and does not call the model failed for its own step.  */
START_TEST (test_f64_leaves_domain)
{
  two_scale t;
  two_init (&t, false, false);
  t.f64_trap = 1;
  gc_result *f = NULL;
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F64;
  ck_assert_int_eq (gc_check (&t.model, t.x, &o, &f), GC_OK);
  ck_assert_msg (f->verdict == GC_PASS || f->verdict == GC_INCONCLUSIVE,
                 "%s", gc_verdict_name (f->verdict));
  gc_result_free (f);
  gc_result *mp = run (&t.model, t.x, GC_REF_MPFR, NULL);
  gc_result *au = run (&t.model, t.x, GC_REF_AUTO, NULL);
  assert_same_verdicts (mp, au, "f64 NaN off x");
  ck_assert_int_eq (au->verdict, GC_PASS);
  for (size_t k = 0; k < TWO_N; k++)
    ck_assert_int_eq (au->dirs[k].decided_by, GC_REF_MPFR);
  gc_result_free (mp);
  gc_result_free (au);
  t.f64_trap = 2;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&t.model, t.x, NULL, &r), GC_ECALLBACK);
  ck_assert_int_eq (r->callback_code, 7);
  ck_assert_ptr_nonnull (strstr (r->detail, "loss_f64 returned 7"));
  ck_assert_int_ne (r->verdict, GC_PASS);
  gc_result_free (r);
}
END_TEST

/* A large loss (L offset by 2^7, gradients of order 1): f64's rounding
   term at its default step is above A / 8, so the noise of J (about
   8 E_64) keeps condition (3) from holding there (manual: "The tiered
   reference", a longer f64 step).  The tiered check evaluates f64 at a
   step 2^k longer, decided in advance, and f64 decides every direction of
   the first block with MPFR's verdicts; the twin's bug in the second
   block is still MPFR's failure.  (At 2^8 the longer step's truncation
   and the noise of J_64, which condition (1) counts since "A kink only
   f64 sees", leave (1) short by a few percent, and MPFR decides.)  */
START_TEST (test_longer_f64_step)
{
  two_scale t;
  two_init (&t, _i == 1, false);
  t.offset = 0x1p7;
  gc_result *f = run (&t.model, t.x, GC_REF_F64, NULL);
  gc_result *mp = run (&t.model, t.x, GC_REF_MPFR, NULL);
  gc_result *au = run (&t.model, t.x, GC_REF_AUTO, NULL);
  assert_same_verdicts (mp, au, _i ? "offset twin" : "offset");
  ck_assert_int_eq (au->verdict, _i ? GC_FAIL : GC_PASS);
  for (size_t k = 0; k < TWO_H; k++)
    {
      const gc_direction *d0 = &f->dirs[k], *d = &au->dirs[k];
      /* at f64's default step, (3) cannot hold */
      ck_assert_msg (d0->terms[GC_TERM_REFERENCE].value
                     > d0->terms[GC_TERM_ADJOINT].value / 8,
                     "direction %zu: E_64 %g, A %g: the test needs a loss "
                     "large enough", k, d0->terms[GC_TERM_REFERENCE].value,
                     d0->terms[GC_TERM_ADJOINT].value);
      ck_assert_msg (d->decided_by == GC_REF_F64, "direction %zu decided "
                     "by %s", k, gc_reference_name (d->decided_by));
      /* a whole power of two longer, at most 2^8 */
      double ratio = d->step / d0->step;
      ck_assert_msg (ratio > 1 && ratio <= 0x1p8 && ratio == exp2 (round
                     (log2 (ratio))), "direction %zu: step %g against %g", k,
                     d->step, d0->step);
      /* its reference rounding term shrank by that ratio: below A / 16 */
      ck_assert (d->terms[GC_TERM_REFERENCE].value
                 <= d->terms[GC_TERM_ADJOINT].value / 16);
    }
  for (size_t k = TWO_H; k < TWO_N; k++)
    if (_i)
      ck_assert_int_eq (au->dirs[k].verdict, GC_FAIL);
  gc_result_free (f);
  gc_result_free (mp);
  gc_result_free (au);
}
END_TEST

/* Manual: "Skipping the 2h pair".  With L offset by 2^10 f64 cannot
   decide the first block: the step that makes its rounding small enough
   (2^8 longer) makes its truncation too large.  Its stencil shows no kink,
   though, so MPFR evaluates +-h only: the verdict and D(h) are those of
   --ref mpfr, the truncation term is the predicted bound (at least what
   MPFR's pair measures, and far below the bar), and a report read back
   keeps its formula.  The twin's failures in the second block evaluate
   the pair.  */
START_TEST (test_pair_skipped)
{
  two_scale t;
  two_init (&t, _i == 1, false);
  t.offset = 0x1p10;
  gc_result *mp = run (&t.model, t.x, GC_REF_MPFR, NULL);
  gc_result *au = run (&t.model, t.x, GC_REF_AUTO, NULL);
  assert_same_verdicts (mp, au, _i ? "offset 2^10 twin" : "offset 2^10");
  for (size_t k = 0; k < TWO_H; k++)
    {
      const gc_direction *a = &au->dirs[k], *b = &mp->dirs[k];
      ck_assert_msg (a->decided_by == GC_REF_MPFR && isnan (a->d2h)
                     && isnan (a->jump), "direction %zu: decided by %s, "
                     "D(2h) %g", k, gc_reference_name (a->decided_by),
                     a->d2h);
      ck_assert_int_eq (a->verdict, GC_PASS);
      const gc_term *ta = &a->terms[GC_TERM_TRUNCATION];
      ck_assert_str_eq (ta->section, "Skipping the 2h pair");
      ck_assert (ta->value >= b->terms[GC_TERM_TRUNCATION].value);
      ck_assert (ta->value < 1e-6 * a->bar);
      ck_assert (a->bar >= b->bar);
    }
  for (size_t k = TWO_H; k < TWO_N; k++)
    ck_assert (_i ? !isnan (au->dirs[k].d2h) : true);
  char *txt = gc_report (au, GC_FMT_TEXT);
  ck_assert_ptr_nonnull (strstr (txt, "of MPFR's without their +-2h pair"));
  free (txt);
  char *md = gc_derivation (au, 0, GC_FMT_MARKDOWN);
  ck_assert_ptr_nonnull (strstr (md, "| kink estimate J | not measured: the "
                                 "+-2h pair was skipped"));
  ck_assert_ptr_nonnull (strstr (md, "Skipping the 2h pair"));
  free (md);
  char *js = gc_report (au, GC_FMT_JSON);
  gc_result *back = NULL;
  ck_assert_int_eq (gc_result_parse_json (js, strlen (js), &back), GC_OK);
  for (size_t k = 0; k < TWO_H; k++)
    {
      ck_assert_str_eq (back->dirs[k].terms[GC_TERM_TRUNCATION].section,
                        "Skipping the 2h pair");
      ck_assert_int_eq (back->dirs[k].verdict, GC_PASS);
    }
  gc_result_free (back);
  free (js);
  gc_result_free (mp);
  gc_result_free (au);
}
END_TEST

/* Random directions and a step of the user's (rho = 1) are MPFR's.  */
START_TEST (test_random_and_user_step_mpfr)
{
  two_scale t;
  two_init (&t, false, false);
  gc_options o;
  gc_options_init (&o);
  if (_i == 0)
    {
      o.directions = GC_DIR_RANDOM;
      o.n_random = 4;
    }
  else
    o.step = 0x1p-30;
  gc_result *mp = run (&t.model, t.x, GC_REF_MPFR, &o);
  gc_result *au = run (&t.model, t.x, GC_REF_AUTO, &o);
  assert_same_verdicts (mp, au, _i ? "user step" : "random");
  for (size_t k = 0; k < au->n_directions; k++)
    {
      ck_assert_int_eq (au->dirs[k].decided_by, GC_REF_MPFR);
      /* Manual: "Skipping the 2h pair": along a random direction of this
         smooth model f64's stencil shows no kink and MPFR passes, so its
         +-2h pair is skipped (no D(2h)); at a step of the user's there is
         no f64 stencil and the pair is evaluated as in --ref mpfr */
      ck_assert_msg (isnan (au->dirs[k].d2h) == (_i == 0), "direction %zu: "
                     "D(2h) %g", k, au->dirs[k].d2h);
      ck_assert (!isnan (mp->dirs[k].d2h));
    }
  gc_result_free (mp);
  gc_result_free (au);
}
END_TEST

/* The per-direction reference survives the JSON report, parsing back and
   merging shards; a report that contradicts its check is refused.  */
START_TEST (test_merge_keeps_decided_by)
{
  two_scale t;
  two_init (&t, true, false);
  gc_result *whole = run (&t.model, t.x, GC_REF_AUTO, NULL);
  gc_result *parts[2];
  for (size_t s = 0; s < 2; s++)
    {
      gc_options o;
      gc_options_init (&o);
      o.shard_index = s;
      o.shard_count = 2;
      gc_result *r = run (&t.model, t.x, GC_REF_AUTO, &o);
      char *js = gc_report (r, GC_FMT_JSON);
      ck_assert_ptr_nonnull (js);
      ck_assert_int_eq (gc_result_parse_json (js, strlen (js), &parts[s]),
                        GC_OK);
      for (size_t k = 0; k < r->n_directions; k++)
        ck_assert_int_eq (parts[s]->dirs[k].decided_by,
                          r->dirs[k].decided_by);
      free (js);
      gc_result_free (r);
    }
  gc_result *m = NULL;
  ck_assert_int_eq (gc_result_merge (parts, 2, &m), GC_OK);
  ck_assert_int_eq (m->reference, GC_REF_AUTO);
  ck_assert_uint_eq (m->n_directions, whole->n_directions);
  bool both = false;
  for (size_t k = 0; k < m->n_directions; k++)
    {
      ck_assert_int_eq (m->dirs[k].decided_by, whole->dirs[k].decided_by);
      ck_assert_int_eq (m->dirs[k].verdict, whole->dirs[k].verdict);
      both |= m->dirs[k].decided_by != m->dirs[0].decided_by;
    }
  ck_assert (both);   /* both references decided some */
  ck_assert_int_eq (m->verdict, whole->verdict);
  /* the merged report names the deciding reference as the check did */
  char *a = gc_report (whole, GC_FMT_JSON), *b = gc_report (m, GC_FMT_JSON);
  ck_assert_ptr_nonnull (strstr (a, "\"n_decided_f64\":4"));
  ck_assert_ptr_nonnull (strstr (b, "\"n_decided_f64\":4"));
  ck_assert_ptr_nonnull (strstr (b, "\"n_decided_mpfr\":4"));
  /* f32 cannot decide a direction of a tiered check */
  char *bad = strdup (a);
  char *at = strstr (bad, "\"decided_by\":\"mpfr\"");
  ck_assert_ptr_nonnull (at);
  memcpy (at + strlen ("\"decided_by\":\""), "f32\" ", 5);   /* "f32" */
  gc_result *r = NULL;
  ck_assert_int_eq (gc_result_parse_json (bad, strlen (bad), &r), GC_EFORMAT);
  gc_result_free (r);
  free (bad);
  free (a);
  free (b);
  gc_result_free (m);
  gc_result_free (parts[0]);
  gc_result_free (parts[1]);
  gc_result_free (whole);
}
END_TEST

/* A report of a one-reference check whose direction claims another
   reference is refused; an older report without the field reads as the
   check's.  */
START_TEST (test_parse_decided_by)
{
  two_scale t;
  two_init (&t, false, false);
  gc_result *r = run (&t.model, t.x, GC_REF_F64, NULL);
  char *js = gc_report (r, GC_FMT_JSON);
  gc_result *back = NULL;
  ck_assert_int_eq (gc_result_parse_json (js, strlen (js), &back), GC_OK);
  for (size_t k = 0; k < back->n_directions; k++)
    ck_assert_int_eq (back->dirs[k].decided_by, GC_REF_F64);
  gc_result_free (back);
  /* without the field (older reports): the check's reference */
  char *old = strdup (js);
  for (char *p; (p = strstr (old, ",\"decided_by\":\"f64\"")) != NULL;)
    memmove (p, p + strlen (",\"decided_by\":\"f64\""),
             strlen (p + strlen (",\"decided_by\":\"f64\"")) + 1);
  ck_assert_ptr_null (strstr (old, "decided_by"));
  ck_assert_int_eq (gc_result_parse_json (old, strlen (old), &back), GC_OK);
  for (size_t k = 0; k < back->n_directions; k++)
    ck_assert_int_eq (back->dirs[k].decided_by, GC_REF_F64);
  gc_result_free (back);
  free (old);
  char *at = strstr (js, "\"decided_by\":\"f64\"");
  ck_assert_ptr_nonnull (at);
  memcpy (at + strlen ("\"decided_by\":\""), "f32", 3);
  back = NULL;
  ck_assert_int_eq (gc_result_parse_json (js, strlen (js), &back),
                    GC_EFORMAT);
  gc_result_free (back);
  free (js);
  gc_result_free (r);
}
END_TEST

/* The defaults: GC_REF_AUTO, which a model without f64 runs (and names)
   as MPFR, and one without MPFR refuses as before (GC_ENOREF).  */
START_TEST (test_defaults)
{
  gc_options o;
  gc_options_init (&o);
  ck_assert_int_eq (o.reference, GC_REF_AUTO);
  ck_assert_str_eq (gc_reference_name (GC_REF_AUTO), "auto");
  two_scale t;
  two_init (&t, false, false);
  t.model.loss_f64 = NULL;
  gc_result *r = gct_check_ok (&t.model, t.x, NULL);
  ck_assert_int_eq (r->reference, GC_REF_MPFR);
  ck_assert_int_eq (r->truncation_source, GC_REF_MPFR);
  gc_result_free (r);
  t.model.loss_f64 = two_f64;
  t.model.loss_mpfr = NULL;
  r = NULL;
  ck_assert_int_eq (gc_check (&t.model, t.x, NULL, &r), GC_ENOREF);
  gc_result_free (r);
}
END_TEST

static Suite *
tier_suite (void)
{
  Suite *s = suite_create ("tier");
  TCase *tc = tcase_create ("catalogue");
  tcase_set_timeout (tc, 600);
  tcase_add_loop_test (tc, test_gdn_mutants, 0,
                       4 * (1 + (int) gcm_find ("gdn")->n_mutants));
  tcase_add_loop_test (tc, test_kda_mutants, 0,
                       2 * (1 + (int) gcm_find ("kda")->n_mutants));
  tcase_add_loop_test (tc, test_tanh_gemm_mutants, 0,
                       1 + (int) gcm_find ("tanh-gemm")->n_mutants);
  suite_add_tcase (s, tc);
  TCase *tt = tcase_create ("tiers");
  tcase_set_timeout (tt, 120);
  tcase_add_test (tt, test_f64_terms_not_negligible);
  tcase_add_loop_test (tt, test_failures_decided_by_f64, 0, 3);
  tcase_add_test (tt, test_twin_decides);
  tcase_add_test (tt, test_bug_f64_cannot_see);
  tcase_add_test (tt, test_kink_inside_f64_stencil);
  tcase_add_test (tt, test_f64_leaves_domain);
  tcase_add_loop_test (tt, test_random_and_user_step_mpfr, 0, 2);
  tcase_add_loop_test (tt, test_longer_f64_step, 0, 2);
  tcase_add_loop_test (tt, test_pair_skipped, 0, 2);
  tcase_add_test (tt, test_merge_keeps_decided_by);
  tcase_add_test (tt, test_parse_decided_by);
  tcase_add_test (tt, test_defaults);
  suite_add_tcase (s, tt);
  return s;
}

int
main (void)
{
  return gct_run (tier_suite ());
}
