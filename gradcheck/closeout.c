/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* closeout.c -- standard output is closed, and checked, before the command
   exits: a report that did not reach its file (a full disk, a closed pipe
   end, /dev/full) must not leave with the exit status of the check.  The
   idea is gnulib's close_stdout; this is our own.  */

#include "cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The errno of the first failed write to stdout that a caller noted.  */
static int noted_errno;

void
cli_note_write (int result)
{
  if (result < 0 && noted_errno == 0)
    noted_errno = errno;
}

int
cli_close_stdout (int code)
{
  /* stdio forgets the errno of a write that failed while a buffer filled;
     the data of the last buffer is still pending, and flushing it fails
     again with the reason, unless a large write went past the buffer: the
     reason noted then (cli_note_write) is used.  */
  bool earlier = ferror (stdout) != 0;
  errno = 0;
  bool flush_failed = fflush (stdout) != 0;
  int err = errno;
  errno = 0;
  bool close_failed = fclose (stdout) != 0;
  if (!flush_failed)
    err = close_failed ? errno : noted_errno;
  /* Nothing written and nothing pending: a standard output closed by the
     caller (gradcheck run --frob >&-) is no write error.  */
  if (close_failed && !earlier && !flush_failed && err == EBADF)
    close_failed = false;
  if (!earlier && !flush_failed && !close_failed)
    return code;
  if (err != 0)
    fprintf (stderr, "%s: write error: %s\n", progname, strerror (err));
  else
    fprintf (stderr, "%s: write error\n", progname);
  return EXIT_INTERNAL;
}
