/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report.c -- the dispatch of gc_report and gc_derivation to the file of
   each format (report-internal.h): report_text.c, report_json.c,
   report_md.c and report_tap.c; the pieces they share are in words.c.  The JSON field names are documented in the manual,
   section "JSON report"; keep the two in step.  */

#include "report/report-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *
derivation (const gc_result *r, size_t dir, gc_format fmt)
{
  if (!r || !r->dirs || dir >= r->n_directions)
    return NULL;
  const gc_direction *d = &r->dirs[dir];
  gc__buf b = { 0 };
  switch (fmt)
    {
    case GC_FMT_MARKDOWN:
      gc__derivation_markdown (&b, r, d);
      break;
    case GC_FMT_JSON:
      gc__derivation_json (&b, r, d);
      break;
    case GC_FMT_TEXT:
    case GC_FMT_TAP:
      gc__derivation_text (&b, r, d);
      break;
    }
  return gc__buf_take (&b);
}

static char *
report (const gc_result *r, gc_format fmt)
{
  if (!r)
    return NULL;
  /* A result that lost its directions (or a worst beyond them) renders as
     one without directions, never by reading through a NULL.  */
  gc_result safe;
  if ((r->n_directions && !r->dirs)
      || (r->worst != SIZE_MAX && r->worst >= r->n_directions))
    {
      safe = *r;
      if (!safe.dirs)
        safe.n_directions = 0;
      if (safe.worst >= safe.n_directions)
        safe.worst = SIZE_MAX;
      r = &safe;
    }
  gc__buf b = { 0 };
  switch (fmt)
    {
    case GC_FMT_TEXT:
      gc__report_text (&b, r);
      break;
    case GC_FMT_JSON:
      gc__report_json (&b, r);
      break;
    case GC_FMT_MARKDOWN:
      gc__report_markdown (&b, r);
      break;
    case GC_FMT_TAP:
      gc__report_tap (&b, r);
      break;
    }
  return gc__buf_take (&b);
}

/* The default floating-point environment (to nearest, no trap) while the derivation
   is written, the caller's
   set back whole on return (manual: "Floating-point environment").  */
char *
gc_derivation (const gc_result *r, size_t dir, gc_format fmt)
{
  fenv_t caller;
  fegetenv (&caller);
  fesetenv (FE_DFL_ENV);
  char *text = derivation (r, dir, fmt);
  fesetenv (&caller);
  return text;
}

/* The default floating-point environment (to nearest, no trap) while the report is
   written, the caller's
   set back whole on return (manual: "Floating-point environment").  */
char *
gc_report (const gc_result *r, gc_format fmt)
{
  fenv_t caller;
  fegetenv (&caller);
  fesetenv (FE_DFL_ENV);
  char *text = report (r, fmt);
  fesetenv (&caller);
  return text;
}
