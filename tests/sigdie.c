/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* sigdie.c -- a process that ends as its arguments say, for the test of
   the kernel runner's rule (tests/outcomes.sh): how a process under a
   kernel ended decides skip (SIGILL: the CPU lacks an instruction) or fail
   (anything else), whatever CPU runs the test.

     sigdie raw SIG      raise SIG (ILL, SEGV, ABRT, BUS) in this process
     sigdie exit N       exit with status N
     sigdie check SIG    a Check suite (forked tests, gct_run) of two tests:
                         one passes, the other raises SIG (NONE: passes)
     sigdie check2 SIG   the same, with a third test that fails an
                         assertion (a real failure beside the signal)  */

#include "gctest.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sig;

static int
signal_of (const char *name)
{
  static const struct { const char *name; int sig; } t[] = {
    { "ILL", SIGILL }, { "SEGV", SIGSEGV }, { "ABRT", SIGABRT },
    { "BUS", SIGBUS }, { "FPE", SIGFPE }, { "NONE", 0 } };
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
    if (!strcmp (name, t[k].name))
      return t[k].sig;
  return -1;
}

START_TEST (test_passes)
{
  ck_assert_int_eq (1 + 1, 2);
}
END_TEST

START_TEST (test_dies)
{
  if (sig)
    raise (sig);
}
END_TEST

START_TEST (test_fails)
{
  ck_assert_msg (0, "a real failure beside the signal");
}
END_TEST

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: sigdie raw|exit|check|check2 ARG\n");
      return 2;
    }
  if (!strcmp (argv[1], "exit"))
    return atoi (argv[2]);
  sig = signal_of (argv[2]);
  if (sig < 0)
    {
      fprintf (stderr, "sigdie: unknown signal %s\n", argv[2]);
      return 2;
    }
  if (!strcmp (argv[1], "raw"))
    {
      if (sig)
        raise (sig);
      return 0;
    }
  Suite *s = suite_create ("sigdie");
  TCase *tc = tcase_create ("core");
  tcase_add_test (tc, test_passes);
  tcase_add_test (tc, test_dies);
  if (!strcmp (argv[1], "check2"))
    tcase_add_test (tc, test_fails);
  suite_add_tcase (s, tc);
  return gct_run (s);
}
