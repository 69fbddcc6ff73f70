/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* usage.c -- what every part of the command reports through: its name in
   messages, a usage error, and the exit status of a check that stopped.
   The lowest file of the command: it calls no other.  */

#include "config.h"

#include "cli.h"

#include <stdarg.h>
#include <stdio.h>

const char *progname = "gradcheck";

void
usage_error (const char *fmt, ...)
{
  va_list ap;
  fprintf (stderr, "%s: ", progname);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fprintf (stderr, "\nTry '%s --help' for more information.\n", progname);
}

/* The exit status of a check that stopped with ST: the model's failures
   (5) apart from the caller's (2) and the machine's (3), as the library
   maps them (a verdict counts only with GC_OK, which no caller passes).  */
int
cli_status_exit (gc_status st)
{
  return gc_exit_status (st, GC_ERROR);
}

/* Manual: "Exit status", a command of several checks (sweep's kernels,
   taylor's two rate tests): the worse of two exit statuses, each
   gc_exit_status's, in the order that function decides one check's by --
   a check that did not complete before any verdict (5 the model failed,
   3 internal, 2 refused), then the verdicts (1 failed, 6 precision, 4
   inconclusive), 0 last.  */
int
cli_exit_worse (int a, int b)
{
  static const int order[] = { EXIT_MODEL, EXIT_INTERNAL, EXIT_USAGE,
                               EXIT_FAILED, EXIT_PRECISION,
                               EXIT_INCONCLUSIVE, EXIT_PASS };
  for (size_t k = 0; k < sizeof order / sizeof *order; k++)
    if (a == order[k] || b == order[k])
      return order[k];
  return a;     /* no status of the table: not given by gc_exit_status */
}
