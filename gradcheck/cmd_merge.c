/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* cmd_merge.c -- gradcheck merge: read the JSON reports of a check's shards and
   print the report of the whole check  */

#include "config.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read the report at PATH into a new buffer: regular files only (a FIFO
   would block, /dev/zero never ends), of at most CLI_REPORT_MAX bytes.
   On failure print why and return NULL with *RC the exit code.  */
static char *
read_report (const char *path, size_t *len, int *rc)
{
  *rc = EXIT_USAGE;
  /* O_NONBLOCK: opening a FIFO returns at once, and fstat refuses it.  */
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat sb;
  const char *why = NULL;
  int err = 0;
  if (fd < 0 || fstat (fd, &sb) != 0)
    err = errno;
  else if (S_ISDIR (sb.st_mode))
    err = EISDIR;
  else if (!S_ISREG (sb.st_mode))
    why = "not a regular file (a report is read from a regular file only)";
  else if (sb.st_size > CLI_REPORT_MAX)
    why = "larger than " CLI_REPORT_MAX_TEXT ", the limit of a report";
  if (err || why)
    {
      fprintf (stderr, "%s: cannot read %s: %s\n", progname, path,
               why ? why : strerror (err));
      if (fd >= 0)
        close (fd);
      return NULL;
    }
  /* The size fstat gave, and one byte more to see the end (a file that
     grows meanwhile is refused too).  */
  size_t cap = (size_t) sb.st_size + 1, n = 0;
  char *buf = malloc (cap);
  if (!buf)
    {
      fprintf (stderr, "%s: cannot read %s: %s\n", progname, path,
               strerror (ENOMEM));
      close (fd);
      *rc = EXIT_INTERNAL;
      return NULL;
    }
  for (;;)
    {
      ssize_t got = read (fd, buf + n, cap - n);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        err = errno;
      if (got <= 0)
        break;
      n += (size_t) got;
      if (n == cap)
        {
          why = "it grew while it was read";
          break;
        }
    }
  close (fd);
  if (err || why)
    {
      fprintf (stderr, "%s: cannot read %s: %s\n", progname, path,
               why ? why : strerror (err));
      free (buf);
      return NULL;
    }
  *len = n;
  return buf;
}

int
cli_cmd_merge (int argc, char **argv)
{
  cli_args a;
  int rc = cli_parse_plain (argc, argv, &a);
  if (rc >= 0)
    return rc;
  size_t n = (size_t) a.n_operands;
  if (n == 0)
    {
      usage_error ("merge needs at least one REPORT");
      return EXIT_USAGE;
    }
  gc_result **shards = calloc (n, sizeof *shards);
  if (!shards)
    return EXIT_INTERNAL;
  for (size_t k = 0; k < n && rc < 0; k++)
    {
      const char *path = a.operands[k];
      size_t len;
      int read_rc;
      char *text = read_report (path, &len, &read_rc);
      if (!text)
        {
          rc = read_rc;
          break;
        }
      gc_status st = gc_result_parse_json (text, len, &shards[k]);
      free (text);
      if (st == GC_EMISMATCH)
        {
          fprintf (stderr, "%s: %s disagrees with itself: the version that "
                   "wrote it is not the one in its identity\n", progname,
                   path);
          rc = EXIT_USAGE;
        }
      else if (st != GC_OK)
        {
          fprintf (stderr, "%s: %s is not a gradcheck JSON report: %s\n",
                   progname, path, gc_strerror (st));
          rc = st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
    }
  if (rc < 0)
    {
      gc_result *m = NULL;
      gc_status st = gc_result_merge (shards, n, &m);
      if (!m && shards[0]->direction_kind == GC_DIR_SCREEN)
        {
          fprintf (stderr, "%s: cannot merge: a screened check's report is "
                   "whole, never a shard (manual: \"Screening\")\n",
                   progname);
          rc = EXIT_USAGE;
        }
      else if (!m)
        {
          fprintf (stderr, "%s: cannot merge: %s (%zu reports of %zu shards)"
                   "\n", progname, gc_strerror (st), n,
                   shards[0]->shard_count);
          rc = st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
      else
        {
          rc = cli_emit (st, m, a.format, NULL);
          gc_result_free (m);
        }
    }
  for (size_t k = 0; k < n; k++)
    gc_result_free (shards[k]);
  free (shards);
  return rc;
}

