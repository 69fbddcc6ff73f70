/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* emit.c -- a check's report on standard output, and its exit status  */

#include "config.h"

#include "cli.h"
#include "base/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
cli_exit_code (gc_status st, const gc_result *r)
{
  return gc_exit_status (st, r->verdict);
}

/* ST's sentence before the detail that names the refusal's cause:
   gc_strerror's without its gloss of the usual causes (from " (" or
   ": " on), as the library's reports lead (lib/base/status.c,
   gc__status_lead: the library exports no gc__ symbol).  */
static const char *
status_lead (gc_status st, char *buf, size_t size)
{
  const char *s = gc_strerror (st);
  size_t n = strlen (s);
  const char *p = strstr (s, " (");
  const char *c = strstr (s, ": ");
  if (p && (size_t) (p - s) < n)
    n = (size_t) (p - s);
  if (c && (size_t) (c - s) < n)
    n = (size_t) (c - s);
  if (n >= size)
    n = size - 1;
  memcpy (buf, s, n);
  buf[n] = 0;
  return buf;
}

/* Whether file descriptors A and B are open on the same file.  */
static bool
same_file (int a, int b)
{
  struct stat sa, sb;
  fflush (stdout);
  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0
         && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
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
  /* The refusal once: a text report written to the file stderr goes to
     (a terminal, or 2>&1) already says it, on its verdict line.  */
  if (st != GC_OK && !(fmt == GC_FMT_TEXT && same_file (1, 2)))
    {
      /* the detail may carry a model's names: escaped, as in reports */
      char detail[4 * sizeof r->detail], lead[128];
      gc__escape (detail, sizeof detail, r->detail, GC__ESC_TEXT);
      if (strcmp (r->detail, gc_strerror (st)) != 0 && r->detail[0])
        fprintf (stderr, "%s: %s: %s\n", progname,
                 status_lead (st, lead, sizeof lead), detail);
      else
        fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
    }
  return cli_exit_code (st, r);
}
