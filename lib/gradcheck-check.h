/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gradcheck-check.h -- run a gradient check inside a Check test.

   gc_ck_assert_gradient (model, x, opts) passes when the check's verdict is
   pass (not inconclusive: manual "Inconclusive directions"), and otherwise
   fails the current Check test at the caller's file and
   line with the check's text report (verdict, worst element, bar terms) as
   the message.  gc_ck_assert_gradient_fails asserts the opposite: that the
   check runs and fails (a known bug must be seen).
   gc_ck_assert_gradient_fails_as (model, x, opts, kind) asserts how it
   fails: verdict fail and a diagnosis of KIND (a gc_diagnosis_kind, such as
   GC_DIAG_CONSTANT_FACTOR); a failure diagnosed otherwise -- a false alarm
   of the rounding class, say -- does not satisfy it.  OPTS may be NULL for
   the defaults.

   Check kills a test that runs longer than its timeout: 4 seconds unless
   the test case sets another with tcase_set_timeout (tc, seconds) or the
   environment sets CK_DEFAULT_TIMEOUT (the default of test cases that set
   none), both times CK_TIMEOUT_MULTIPLIER.  The test then fails with
   "Test timeout expired" and no message of the assertion.  A failing
   check costs more than a passing one (its failures are confirmed), so a
   gc_ck_assert_gradient_fails_as test on a loaded machine may run into
   it.  Define GC_CK_TIMEOUT to the test case's timeout in seconds (4 for
   Check's default) before including this header: each assertion then
   gives a check whose options set no time limit (gc_options.timeout 0)
   a limit of 80% of it (times CK_TIMEOUT_MULTIPLIER), and when the check
   stops there the assertion fails with a message that says so and how
   to raise it, before Check kills the test silently.  Without
   GC_CK_TIMEOUT no limit is set, and a failure message of a check that
   took a second or more names Check's timeout.  (manual: "Tests with
   Check")

   The message is valid TAP when the suite prints TAP
   (CK_TAP_LOG_FILE_NAME): every line after the first starts with "# ".
   Only Check's public API is used (ck_abort_msg).  Header-only: include it
   after <check.h> in a test linked with -lgradcheck and Check.  Each
   assertion keeps GC_CK_MESSAGE_SIZE bytes on the stack.  */

#ifndef GRADCHECK_CHECK_H
#define GRADCHECK_CHECK_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gradcheck.h"

#define GC_CK_MESSAGE_SIZE 8192

/* The test case's timeout in seconds, when the suite declares it.  */
#ifdef GC_CK_TIMEOUT
# define GC_CK__TIMEOUT ((double) (GC_CK_TIMEOUT))
#else
# define GC_CK__TIMEOUT 0.0
#endif

#define gc_ck__assert(model, x, opts, want, check_kind, kind)             \
  do                                                                      \
    {                                                                     \
      char gc_ck__msg[GC_CK_MESSAGE_SIZE];                                \
      if (!gc_ck__check ((model), (x), (opts), (want), (check_kind),      \
                         (kind), GC_CK__TIMEOUT, gc_ck__msg,              \
                         sizeof gc_ck__msg))                              \
        ck_abort_msg ("%s", gc_ck__msg);                                  \
    }                                                                     \
  while (0)

#define gc_ck_assert_gradient(model, x, opts) \
  gc_ck__assert (model, x, opts, GC_PASS, 0, GC_DIAG_NONE)
#define gc_ck_assert_gradient_fails(model, x, opts) \
  gc_ck__assert (model, x, opts, GC_FAIL, 0, GC_DIAG_NONE)
#define gc_ck_assert_gradient_fails_as(model, x, opts, kind) \
  gc_ck__assert (model, x, opts, GC_FAIL, 1, kind)

/* The diagnosis kinds as the JSON report names them.  */
static inline const char *
gc_ck__diagnosis_name (gc_diagnosis_kind k)
{
  static const char *const names[] = {
    "none", "constant-factor", "sign-flip", "zero-region", "shifted-window",
    "non-smooth", "rounding", "logic", "forward-mismatch", "axis-offset",
    "approximate-shift", "precision", "rounding-suspected", "twin-differs",
    "staircase" };
  return (unsigned) k < sizeof names / sizeof names[0] ? names[k]
                                                       : "unknown";
}

/* Append S to MSG (LEN bytes used of SIZE), each new line followed by
   "# " so that the message stays one TAP test point and its comments.  */
static inline size_t
gc_ck__append (char *msg, size_t len, size_t size, const char *s)
{
  for (; *s && len + 3 < size; s++)
    {
      if (len > 0 && msg[len - 1] == '\n')
        {
          msg[len++] = '#';
          msg[len++] = ' ';
        }
      msg[len++] = *s;
    }
  msg[len] = 0;
  return len;
}

/* The bytes of a message Check passes on: CK_MAX_MSG_SIZE from the
   environment, else Check's default 4096, less room for its own framing;
   at most SIZE.  A longer message makes Check end the test process (exit
   2, "Early exit") instead of failing the test with it.  */
static inline size_t
gc_ck__message_cap (size_t size)
{
  const char *e = getenv ("CK_MAX_MSG_SIZE");
  long v = e ? strtol (e, NULL, 10) : 0;
  size_t cap = v > 0 ? (size_t) v : 4096;
  cap = cap > 512 ? cap - 256 : cap / 2;
  return cap < size ? cap : size;
}

/* Seconds on a monotonic clock where POSIX gives one; else C11's
   calendar clock, else whole seconds (a strict C99 build).  */
static inline double
gc_ck__now (void)
{
#if defined CLOCK_MONOTONIC
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
#elif defined TIME_UTC
  struct timespec ts;
  timespec_get (&ts, TIME_UTC);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
#else
  return (double) time (NULL);
#endif
}

/* Check's CK_TIMEOUT_MULTIPLIER, 1 when unset or not a positive number.  */
static inline double
gc_ck__multiplier (void)
{
  const char *s = getenv ("CK_TIMEOUT_MULTIPLIER");
  double v = s ? strtod (s, NULL) : 1;
  return v > 0 ? v : 1;
}

/* Run the check; 1 when its verdict is WANT (and, when CHECK_KIND, its
   diagnosis is KIND), else 0 with why and the report in MSG.  TIMEOUT is
   the test case's timeout in seconds (0: not declared): a check with no
   time limit of its own gets 80% of it, so that it stops with a message
   before Check kills the test without one.  Everything is freed before
   returning: Check leaves a failing test by exiting or jumping.  */
static inline int
gc_ck__check (const gc_model *m, const float *x, const gc_options *o,
              gc_verdict want, int check_kind, gc_diagnosis_kind kind,
              double timeout, char *msg, size_t size)
{
  gc_options local;
  double limit = 0, full = timeout * gc_ck__multiplier ();
  if (timeout > 0 && (!o || o->timeout == 0))
    {
      if (o)
        local = *o;
      else
        gc_options_init (&local);
      limit = local.timeout = 0.8 * full;
      o = &local;
    }
  gc_result *r = NULL;
  double t0 = gc_ck__now ();
  gc_status st = gc_check (m, x, o, &r);
  double took = gc_ck__now () - t0;
  if (st == GC_OK && r && r->verdict == want
      && (!check_kind || r->diagnosis.kind == kind))
    {
      gc_result_free (r);
      return 1;
    }
  char head[640];
  if (st == GC_ETIMEOUT && limit > 0)
    snprintf (head, sizeof head, "expected verdict %s; the check stopped "
              "after %.3g s, at 80%% of the test's timeout of %.3g s "
              "(GC_CK_TIMEOUT times CK_TIMEOUT_MULTIPLIER), where Check "
              "would kill the test without a message: a failing check costs "
              "more than a passing one; raise the timeout with "
              "tcase_set_timeout (or CK_DEFAULT_TIMEOUT, Check's default "
              "of 4 s) and GC_CK_TIMEOUT together\n",
              gc_verdict_name (want), took, full);
  else if (st != GC_OK || !r)
    snprintf (head, sizeof head, "expected verdict %s; the check stopped: "
              "%s\n", gc_verdict_name (want), gc_strerror (st));
  else if (check_kind)
    snprintf (head, sizeof head, "expected verdict %s with diagnosis %s; "
              "got %s with diagnosis %s\n", gc_verdict_name (want),
              gc_ck__diagnosis_name (kind), gc_verdict_name (r->verdict),
              gc_ck__diagnosis_name (r->diagnosis.kind));
  else
    snprintf (head, sizeof head, "expected verdict %s; got %s\n",
              gc_verdict_name (want), gc_verdict_name (r->verdict));
  /* A slow check is near Check's timeout: say where it is.  */
  if (took >= 1 && !(st == GC_ETIMEOUT && limit > 0))
    {
      size_t l = strlen (head);
      snprintf (head + l, sizeof head - l, "(the check took %.3g s; Check "
                "kills a test after its timeout, 4 s unless "
                "tcase_set_timeout or CK_DEFAULT_TIMEOUT says otherwise)\n",
                took);
    }
  char *text = r ? gc_report (r, GC_FMT_TEXT) : NULL;
  /* the report's head (verdict, findings, worst direction) comes first;
     what Check cannot carry is cut, and the cut said */
  static const char cut[] = "\n[report cut: Check carries CK_MAX_MSG_SIZE "
                            "bytes; gradcheck run prints it whole]";
  size_t cap = gc_ck__message_cap (size);
  size_t len = gc_ck__append (msg, 0, cap, head);
  len = gc_ck__append (msg, len, cap, text ? text : "");
  if (text && len + 3 >= cap && cap > sizeof cut + 64)
    {
      len = cap - sizeof cut - 64;
      while (len > 0 && msg[len - 1] != '\n')
        len--;
      msg[len] = 0;
      len = gc_ck__append (msg, len, cap, cut + 1);
    }
  while (len > 0 && msg[len - 1] == '\n')
    msg[--len] = 0;
  free (text);
  gc_result_free (r);
  return 0;
}

#endif
