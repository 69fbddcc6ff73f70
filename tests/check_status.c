/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* check_status.c -- every status code provoked, each with its own cause;
   never a crash.  Each test runs in its own process (Check's fork mode), so
   that the memory limit of the ENOMEM test stays there.  */

#include "gctest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#if defined (__SANITIZE_ADDRESS__)
# define ASAN 1
#elif defined (__has_feature)
# if __has_feature (address_sanitizer)
#  define ASAN 1
# endif
#endif
#ifndef ASAN
# define ASAN 0
#endif

typedef struct liar
{
  gct_model *base;
  int fail_loss_at;      /* fail the Nth loss_f32 call (1-based), 0: never */
  int nan_loss_at;
  int fail_grad;
  size_t nan_grad_at;    /* SIZE_MAX: none */
  int fail_mpfr_at;
  int calls, mpfr_calls;
} liar;

static int
liar_loss (void *ctx, const float *x, float *loss)
{
  liar *l = ctx;
  int call = ++l->calls;
  if (call == l->fail_loss_at)
    return 7;
  int rc = l->base->model.loss_f32 (l->base, x, loss);
  if (call == l->nan_loss_at)
    *loss = NAN;
  return rc;
}

static int
liar_grad (void *ctx, const float *x, float *g)
{
  liar *l = ctx;
  if (l->fail_grad)
    return l->fail_grad;
  int rc = l->base->model.grad_f32 (l->base, x, g);
  if (l->nan_grad_at != SIZE_MAX)
    g[l->nan_grad_at] = NAN;
  return rc;
}

static int
liar_mpfr (void *ctx, mpfr_srcptr x, mpfr_ptr loss)
{
  liar *l = ctx;
  if (++l->mpfr_calls == l->fail_mpfr_at)
    return 9;
  return l->base->model.loss_mpfr (l->base, x, loss);
}

static void
liar_init (liar *l, gc_model *m)
{
  memset (l, 0, sizeof *l);
  l->base = gct_poly (12, gct_seed ());
  l->nan_grad_at = SIZE_MAX;
  *m = l->base->model;
  m->ctx = l;
  m->loss_f32 = liar_loss;
  m->grad_f32 = liar_grad;
  m->loss_mpfr = liar_mpfr;
  /* The base's other callbacks expect the base's context: not offered.  */
  m->loss_f64 = NULL;
  m->grad_magnitude_f32 = NULL;
  m->loss_magnitude_f32 = NULL;
}

static gc_status
check (const gc_model *m, const float *x, const gc_options *o)
{
  gc_result *r = NULL;
  gc_status st = gc_check (m, x, o, &r);
  if (r)
    {
      ck_assert_int_eq (r->status, st);
      if (st != GC_OK)
        {
          ck_assert_int_eq (r->verdict, GC_ERROR);
          ck_assert_msg (r->detail[0] != 0, "no detail for %s",
                         gc_strerror (st));
          /* The report of an error renders and names the error.  */
          char *text = gc_report (r, GC_FMT_TEXT);
          ck_assert_ptr_nonnull (text);
          ck_assert_ptr_nonnull (strstr (text, "ERROR"));
          free (text);
        }
    }
  gc_result_free (r);
  return st;
}

START_TEST (test_strerror)
{
  for (int s = 0; s < GC_STATUS_COUNT; s++)
    {
      const char *msg = gc_strerror ((gc_status) s);
      ck_assert_ptr_nonnull (msg);
      ck_assert (strlen (msg) > 5);
      for (int t = 0; t < s; t++)
        ck_assert_str_ne (msg, gc_strerror ((gc_status) t));
    }
  ck_assert_str_eq (gc_strerror ((gc_status) 999), "unknown status");
  ck_assert_str_eq (gc_strerror ((gc_status) -1), "unknown status");
}
END_TEST

/* gc_exit_status against the manual's table ("Exit status"): a status
   other than GC_OK decides alone, and never reads as a verdict's exit
   (0, 1, 4, 6); the model's failures are 5, memory 3, the caller's input
   and any unknown code 2; with GC_OK, 0 is a pass's alone, inconclusive
   4, precision 6, every other verdict (an unknown one too) 1.  */
START_TEST (test_exit_status)
{
  const gc_status model[] = { GC_ECALLBACK, GC_ENONFINITE, GC_EOVERRUN,
                              GC_ETIMEOUT, GC_EUNWRITTEN };
  for (int s = -1; s <= GC_STATUS_COUNT + 1; s++)
    {
      if (s == GC_OK)
        continue;
      int want = GC_EXIT_USAGE;
      if (s == GC_ENOMEM)
        want = GC_EXIT_INTERNAL;
      for (size_t k = 0; k < sizeof model / sizeof model[0]; k++)
        if (s == (int) model[k])
          want = GC_EXIT_MODEL;
      for (int v = -1; v <= GC_PRECISION + 1; v++)
        ck_assert_msg (gc_exit_status ((gc_status) s, (gc_verdict) v) == want,
                       "status %d, verdict %d: exit %d, want %d", s, v,
                       gc_exit_status ((gc_status) s, (gc_verdict) v), want);
    }
  for (int v = -1; v <= GC_PRECISION + 1; v++)
    {
      int got = gc_exit_status (GC_OK, (gc_verdict) v);
      int want = v == GC_PASS ? GC_EXIT_PASS
                 : v == GC_INCONCLUSIVE ? GC_EXIT_INCONCLUSIVE
                 : v == GC_PRECISION ? GC_EXIT_PRECISION : GC_EXIT_FAIL;
      ck_assert_msg (got == want, "verdict %d: exit %d, want %d", v, got,
                     want);
    }
  /* the numbers themselves are the command's, documented in its manual
     and man page (doc/gradcheck.1): scripts test them */
  ck_assert_int_eq (GC_EXIT_PASS, 0);
  ck_assert_int_eq (GC_EXIT_FAIL, 1);
  ck_assert_int_eq (GC_EXIT_USAGE, 2);
  ck_assert_int_eq (GC_EXIT_INTERNAL, 3);
  ck_assert_int_eq (GC_EXIT_INCONCLUSIVE, 4);
  ck_assert_int_eq (GC_EXIT_MODEL, 5);
  ck_assert_int_eq (GC_EXIT_PRECISION, 6);
}
END_TEST

START_TEST (test_einval)
{
  gct_model *t = gct_poly (4, 1);
  gc_result *r = (gc_result *) 1;
  ck_assert_int_eq (gc_check (NULL, t->x, NULL, &r), GC_EINVAL);
  ck_assert_ptr_null (r);
  ck_assert_int_eq (gc_check (&t->model, NULL, NULL, &r), GC_EINVAL);
  ck_assert_int_eq (gc_check (&t->model, t->x, NULL, NULL), GC_EINVAL);
  gc_model m = t->model;
  m.grad_f32 = NULL;
  ck_assert_int_eq (check (&m, t->x, NULL), GC_EINVAL);
  gc_options o;
  gc_options_init (&o);
  o.step = -1;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_EINVAL);
  gc_options_init (&o);
  o.false_alarm = 0;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_EINVAL);
  gc_options_init (&o);
  o.directions = GC_DIR_RANDOM;
  o.n_random = 0;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_EINVAL);
  gc_options_init (&o);
  o.shard_count = 2;
  o.shard_index = 2;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_EINVAL);
  /* blocks that do not partition [0, n) */
  gc_block b = { "a", 0, 3, 1, { 3 } };
  m = t->model;
  m.n_blocks = 1;
  m.blocks = &b;
  ck_assert_int_eq (check (&m, t->x, NULL), GC_EINVAL);
  /* each way of not partitioning says which block and why (a new user's
     trial read only "invalid argument" for all of them) */
  gc_block bb[2] = { { "a", 0, 2, 1, { 2 } }, { "c", 2, 2, 2, { 1, 2 } } };
  static const struct { size_t off1, cnt1, dim1; const char *want; } bad[] = {
    { 3, 1, 1, "block 1 (c) starts at 3, where the blocks" },   /* a gap */
    { 1, 3, 3, "block 1 (c) starts at 1" },                     /* overlap */
    { 2, 9, 9, "block 1 (c) has 9 elements from 2, of n = 4" }, /* too long */
    { 2, 1, 1, "the blocks cover 3 of the n = 4 parameters" },  /* short */
    { 2, 2, 3, "block 1 (c): its shape's product is not its count 2" },
  };
  m.blocks = bb;
  m.n_blocks = 2;
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    {
      bb[1].offset = bad[k].off1;
      bb[1].count = bad[k].cnt1;
      bb[1].shape[1] = bad[k].dim1;
      bb[1].shape[0] = 1;
      gc_result *rb = NULL;
      ck_assert_int_eq (gc_check (&m, t->x, NULL, &rb), GC_EINVAL);
      ck_assert_msg (strstr (rb->detail, bad[k].want), "case %zu: %s", k,
                     rb->detail);
      gc_result_free (rb);
    }
  gct_free (t);
}
END_TEST

START_TEST (test_eempty)
{
  gct_model *t = gct_poly (4, 1);
  gc_model m = t->model;
  m.n = 0;
  ck_assert_int_eq (check (&m, t->x, NULL), GC_EEMPTY);
  gct_free (t);
}
END_TEST

START_TEST (test_ecallback)
{
  gc_model m;
  liar l;
  liar_init (&l, &m);
  l.fail_loss_at = 1;
  ck_assert_int_eq (check (&m, l.base->x, NULL), GC_ECALLBACK);
  gct_free (l.base);
  /* the loss failing on its 17th call, in f32 mode, mid-check */
  liar_init (&l, &m);
  l.fail_loss_at = 17;
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F32;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&m, l.base->x, &o, &r), GC_ECALLBACK);
  ck_assert_int_eq (r->callback_code, 7);
  ck_assert_ptr_nonnull (strstr (r->detail, "loss_f32"));
  gc_result_free (r);
  gct_free (l.base);
  liar_init (&l, &m);
  l.fail_grad = 3;
  ck_assert_int_eq (check (&m, l.base->x, NULL), GC_ECALLBACK);
  gct_free (l.base);
  liar_init (&l, &m);
  l.fail_mpfr_at = 5;
  ck_assert_int_eq (check (&m, l.base->x, NULL), GC_ECALLBACK);
  gct_free (l.base);
}
END_TEST

START_TEST (test_enonfinite)
{
  gc_model m;
  liar l;
  liar_init (&l, &m);
  l.nan_loss_at = 1;
  ck_assert_int_eq (check (&m, l.base->x, NULL), GC_ENONFINITE);
  gct_free (l.base);
  liar_init (&l, &m);
  l.nan_grad_at = 2;
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&m, l.base->x, NULL, &r), GC_ENONFINITE);
  ck_assert_ptr_nonnull (strstr (r->detail, "parameter 2"));
  gc_result_free (r);
  gct_free (l.base);
  /* with blocks, the element's name beside its index: (4) and (4, 2)
     tensors, the 12 parameters of the base; index 9 is b's [2,1] */
  liar_init (&l, &m);
  l.nan_grad_at = 9;
  gc_block bl[2] = { { "a", 0, 4, 1, { 4 } }, { "b", 4, 8, 2, { 4, 2 } } };
  m.blocks = bl;
  m.n_blocks = 2;
  ck_assert_int_eq (gc_check (&m, l.base->x, NULL, &r), GC_ENONFINITE);
  ck_assert_msg (strstr (r->detail, "parameter 9 (b[2,1])"), "%s", r->detail);
  gc_result_free (r);
  gct_free (l.base);
  /* Inf in the point itself: the caller's, GC_EPOINT (check_hostile.c) */
  gct_model *t = gct_poly (4, 1);
  t->x[1] = INFINITY;
  ck_assert_int_eq (check (&t->model, t->x, NULL), GC_EPOINT);
  gct_free (t);
}
END_TEST

START_TEST (test_estep)
{
  gct_model *t = gct_poly (4, 1);
  t->x[2] = 1.0f;
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F32;
  o.step = 1e-30;      /* far below half an ulp of 1.0f */
  gc_result *r = NULL;
  ck_assert_int_eq (gc_check (&t->model, t->x, &o, &r), GC_ESTEP);
  ck_assert_ptr_nonnull (strstr (r->detail, "vanished"));
  gc_result_free (r);
  /* the same step is exact in MPFR: no error there */
  o.reference = GC_REF_MPFR;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_OK);
  gct_free (t);
}
END_TEST

START_TEST (test_eprec)
{
  gct_model *t = gct_poly (4, 1);
  gc_options o;
  gc_options_init (&o);
  o.precision = 10;       /* below f32's 24 bits */
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_EPREC);
  o.precision = MPFR_PREC_MAX;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_EPREC);
  gct_free (t);
}
END_TEST

START_TEST (test_enoref)
{
  gct_model *t = gct_abs (4, 1);   /* has no f64 forward */
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F64;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_ENOREF);
  gc_model m = t->model;
  m.loss_mpfr = NULL;
  ck_assert_int_eq (check (&m, t->x, NULL), GC_ENOREF);
  gct_free (t);
}
END_TEST

START_TEST (test_edirection)
{
  gct_model *t = gct_poly (4, 1);
  size_t idx[2] = { 1, 4 };
  gc_options o;
  gc_options_init (&o);
  o.directions = GC_DIR_LIST;
  o.indices = idx;
  o.n_indices = 2;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_EDIRECTION);
  idx[1] = 3;
  ck_assert_int_eq (check (&t->model, t->x, &o), GC_OK);
  gct_free (t);
}
END_TEST

START_TEST (test_eabi)
{
  gct_model *t = gct_poly (4, 1);
  gc_model m = t->model;
  m.abi = GC_MODEL_ABI + 1;
  ck_assert_int_eq (check (&m, t->x, NULL), GC_EABI);
  gct_free (t);
}
END_TEST

START_TEST (test_eformat)
{
  const gcm_spec *s = gcm_find ("tanh-gemm");
  long v[GCM_MAX_KEYS];
  char err[200];
  ck_assert_int_eq (gcm_parse_shape (s, "M=4,K=8", v, err, sizeof err), GC_OK);
  ck_assert_int_eq (v[0], 4);
  ck_assert_int_eq (v[1], 8);
  ck_assert_int_eq (gcm_parse_shape (s, "Q=4", v, err, sizeof err),
                    GC_EFORMAT);
  ck_assert_ptr_nonnull (strstr (err, "accepted"));
  ck_assert_int_eq (gcm_parse_shape (s, "M=0", v, err, sizeof err),
                    GC_EFORMAT);
  ck_assert_int_eq (gcm_parse_shape (s, "M=4,", v, err, sizeof err),
                    GC_EFORMAT);
  ck_assert_int_eq (gcm_parse_shape (s, "M", v, err, sizeof err), GC_EFORMAT);
  ck_assert_int_eq (gcm_parse_shape (s, "M=99999999999999999999", v, err,
                                     sizeof err), GC_EFORMAT);
  /* a key given twice is refused, not last-wins */
  ck_assert_int_eq (gcm_parse_shape (s, "K=8,K=9", v, err, sizeof err),
                    GC_EFORMAT);
  ck_assert_ptr_nonnull (strstr (err, "K given twice"));
  ck_assert_int_eq (gcm_parse_shape (s, "K=8,M=2,K=8", v, err, sizeof err),
                    GC_EFORMAT);
}
END_TEST

/* Out of memory: a check whose working arrays cannot fit under an address
   space limit returns GC_ENOMEM and a result that says so.  */
START_TEST (test_enomem)
{
  size_t n = (size_t) 1 << 24;          /* 64 MiB of f32 parameters */
  float *x = calloc (n, sizeof *x);
  ck_assert_ptr_nonnull (x);
  gct_model *t = gct_poly (4, 1);
  gc_model m = t->model;
  m.n = n;
  m.loss_mpfr = NULL;
  m.loss_f64 = NULL;
  struct rlimit rl;
  getrlimit (RLIMIT_AS, &rl);
  /* room for what is mapped now plus 32 MiB: the check's own n-sized
     arrays (4 to 8 bytes per parameter, several of them) do not fit.  */
  FILE *f = fopen ("/proc/self/statm", "r");
  unsigned long pages = 0;
  ck_assert (f && fscanf (f, "%lu", &pages) == 1);
  fclose (f);
  rl.rlim_cur = pages * 4096ul + ((rlim_t) 32 << 20);
  ck_assert_int_eq (setrlimit (RLIMIT_AS, &rl), 0);
  gc_options o;
  gc_options_init (&o);
  o.reference = GC_REF_F32;
  gc_result *r = NULL;
  gc_status st = gc_check (&m, x, &o, &r);
  ck_assert_int_eq (st, GC_ENOMEM);
  if (r)
    ck_assert_int_eq (r->status, GC_ENOMEM);
  gc_result_free (r);
  free (x);
  gct_free (t);
}
END_TEST

static Suite *
status_suite (void)
{
  Suite *s = suite_create ("status");
  TCase *tc = tcase_create ("codes");
  tcase_add_test (tc, test_strerror);
  tcase_add_test (tc, test_exit_status);
  tcase_add_test (tc, test_einval);
  tcase_add_test (tc, test_eempty);
  tcase_add_test (tc, test_ecallback);
  tcase_add_test (tc, test_enonfinite);
  tcase_add_test (tc, test_estep);
  tcase_add_test (tc, test_eprec);
  tcase_add_test (tc, test_enoref);
  tcase_add_test (tc, test_edirection);
  tcase_add_test (tc, test_eabi);
  tcase_add_test (tc, test_eformat);
  suite_add_tcase (s, tc);
  /* The memory limit must stay in its own process; AddressSanitizer
     reserves more address space than any limit leaves (its allocator
     reports exhaustion itself), so the test runs without it.  */
  const char *fork = getenv ("CK_FORK");
  if ((!fork || strcmp (fork, "no") != 0) && !ASAN)
    {
      TCase *tm = tcase_create ("memory");
      tcase_add_test (tm, test_enomem);
      suite_add_tcase (s, tm);
    }
  return s;
}

int
main (void)
{
  return gct_run (status_suite ());
}
