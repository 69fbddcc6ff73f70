/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* emit.c -- a check's report on standard output, and its exit status  */

#include "config.h"

#include "cli.h"
#include "escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
cli_exit_code (gc_status st, const gc_result *r)
{
  if (st != GC_OK)
    return cli_status_exit (st);
  if (r->verdict == GC_INCONCLUSIVE)
    return EXIT_INCONCLUSIVE;
  if (r->verdict == GC_PRECISION)
    return EXIT_PRECISION;
  return r->verdict == GC_PASS ? EXIT_PASS : EXIT_FAILED;
}

/* Print R's report.  KERNEL (NULL: none) is the OpenBLAS kernel the check
   ran under: the library does not know it, the command adds it to the
   first line of the text report, its header.  */
int
cli_emit (gc_status st, gc_result *r, gc_format fmt, const char *kernel)
{
  char *text = gc_report (r, fmt);
  if (!text)
    {
      fprintf (stderr, "%s: out of memory\n", progname);
      return EXIT_INTERNAL;
    }
  const char *nl = strchr (text, '\n');
  if (fmt == GC_FMT_TEXT && kernel && nl)
    cli_note_write (printf ("%.*s, OpenBLAS kernel %s%s", (int) (nl - text),
                            text, kernel, nl));
  else
    cli_note_write (fputs (text, stdout));
  free (text);
  if (st != GC_OK)
    {
      /* the detail may carry a model's names: escaped, as in reports */
      char detail[4 * sizeof r->detail];
      gc__escape (detail, sizeof detail, r->detail, GC__ESC_TEXT);
      if (strcmp (r->detail, gc_strerror (st)) != 0)
        fprintf (stderr, "%s: %s: %s\n", progname, gc_strerror (st), detail);
      else
        fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
    }
  return cli_exit_code (st, r);
}
