/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* watch.c -- what the command does about a model that misbehaves beyond
   the library's reach (manual: "What is isolated"): a callback that never
   returns (the --timeout watchdog), a callback that calls exit(), and GMP's
   abort when memory runs out inside MPFR.  Each ends the process with a
   message on stderr and exit status 5 (3 for memory), never with a status
   that claims a pass the command did not print.  The command's
   floating-point environment is set back after model code ran (a plugin
   that enables traps, changes the rounding or flushes subnormals while it
   loads leaves the command's own arithmetic alone).  */

#include "cli.h"

#include <fenv.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* Set while model code runs (loading the plugin: its constructors and
   its set-up function; the check; the dump).  */
static volatile sig_atomic_t in_model;
/* The command's floating-point environment before model code ran.  */
static fenv_t command_fpenv;
static char timeout_msg[256];
static size_t timeout_len;

static void
say (const char *s)
{
  size_t len = strlen (s);
  while (len)
    {
      ssize_t w = write (STDERR_FILENO, s, len);
      if (w <= 0)
        return;
      s += w;
      len -= (size_t) w;
    }
}

static void
at_exit (void)
{
  if (!in_model)
    return;
  /* exit() called from model code: whatever status it asked for, the
     command has not printed a verdict (or is still dumping it).  */
  in_model = 0;
  fflush (stdout);
  say (progname);
  say (": the model called exit() while it was loaded or checked; no "
       "verdict stands (exit status 5)\n");
  _exit (EXIT_MODEL);
}

static void
on_alarm (int sig)
{
  (void) sig;
  if (write (STDERR_FILENO, timeout_msg, timeout_len) < 0)
    {
      /* nothing left to tell */
    }
  _exit (EXIT_MODEL);
}

/* GMP cannot take a failed allocation back (it aborts); these end the
   process with a message instead of SIGABRT.  */
static void
gmp_out_of_memory (void)
{
  say (progname);
  say (": out of memory inside GMP/MPFR (the reference forward's numbers "
       "do not fit; try a smaller shape or --prec)\n");
  _exit (EXIT_INTERNAL);
}

static void *
gmp_alloc (size_t n)
{
  void *p = malloc (n);
  if (!p)
    gmp_out_of_memory ();
  return p;
}

static void *
gmp_realloc (void *p, size_t old, size_t n)
{
  (void) old;
  void *q = realloc (p, n);
  if (!q)
    gmp_out_of_memory ();
  return q;
}

static void
gmp_free (void *p, size_t n)
{
  (void) n;
  free (p);
}

void
cli_watch_init (void)
{
  atexit (at_exit);
  /* Process-wide, and set before any GMP number exists (numbers made
     with one set of functions must be freed with the same).  */
  mp_set_memory_functions (gmp_alloc, gmp_realloc, gmp_free);
}

void
cli_watch_begin (double timeout)
{
  fegetenv (&command_fpenv);
  in_model = 1;
  if (!(timeout > 0))
    return;
  /* The library stops at the first callback that returns past the time
     limit; the watchdog fires later, for a callback that never returns:
     a quarter of the limit and a second on.  */
  double t = timeout * 1.25 + 1;
  int len = snprintf (timeout_msg, sizeof timeout_msg,
                      "%s: the check ran past its time limit of %g s and a "
                      "model callback has not returned (watchdog after %g "
                      "s); no verdict (exit status 5)\n", progname, timeout,
                      t);
  timeout_len = len > 0 && (size_t) len < sizeof timeout_msg
                ? (size_t) len : strlen (timeout_msg);
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGALRM, &sa, NULL);
  struct itimerval it;
  memset (&it, 0, sizeof it);
  it.it_value.tv_sec = (time_t) floor (t);
  it.it_value.tv_usec = (suseconds_t) ((t - floor (t)) * 1e6);
  setitimer (ITIMER_REAL, &it, NULL);
}

void
cli_watch_end (void)
{
  struct itimerval it;
  memset (&it, 0, sizeof it);
  setitimer (ITIMER_REAL, &it, NULL);
  in_model = 0;
  fesetenv (&command_fpenv);
}
