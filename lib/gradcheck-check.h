/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gradcheck-check.h -- run a gradient check inside a Check test.

   gc_ck_assert_gradient (model, x, opts) passes when the check's verdict is
   pass (not inconclusive: manual "Inconclusive directions"), and otherwise
   fails the current Check test with the check's text
   report (verdict, worst element, bar terms) as the message, at the
   caller's file and line.  gc_ck_assert_gradient_fails asserts the
   opposite: that the check runs and fails (a known bug must be seen).
   OPTS may be NULL for the defaults.  Header-only: include it after
   <check.h> in a test linked with -lgradcheck and Check.  */

#ifndef GRADCHECK_CHECK_H
#define GRADCHECK_CHECK_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "gradcheck.h"

#define gc_ck_assert_gradient(model, x, opts) \
  gc_ck__assert ((model), (x), (opts), GC_PASS, __FILE__, __LINE__)
#define gc_ck_assert_gradient_fails(model, x, opts) \
  gc_ck__assert ((model), (x), (opts), GC_FAIL, __FILE__, __LINE__)

static inline void
gc_ck__assert (const gc_model *m, const float *x, const gc_options *o,
               gc_verdict want, const char *file, int line)
{
  gc_result *r = NULL;
  gc_status st = gc_check (m, x, o, &r);
  if (st == GC_OK && r && r->verdict == want)
    {
      gc_result_free (r);
      return;
    }
  /* Check leaves the test by exiting or jumping: copy the report to a
     buffer of ours and free everything first.  */
  char msg[8192];
  char *text = r ? gc_report (r, GC_FMT_TEXT) : NULL;
  snprintf (msg, sizeof msg, "expected verdict %s; %s", gc_verdict_name (want),
            text ? text : gc_strerror (st));
  free (text);
  gc_result_free (r);
  _ck_assert_failed (file, line, "gradient check", "%s", msg);
}

#endif
