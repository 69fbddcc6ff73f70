/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* main.c -- the gradcheck command: its own options (--help, --version),
   then the dispatch to the file of each subcommand, which parses its own
   options (options.c) and operands: cmd_run.c (run, oracle, explain),
   cmd_list.c, cmd_merge.c, steps.c, sweep.c, kernels.c.  The exit
   statuses are those --help lists (options.c, print_trailer).  */

#include "config.h"

#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static int dispatch (int argc, char **argv);

int
main (int argc, char **argv)
{
  cli_watch_init ();
  cli_mpi_init (&argc, &argv);
  return cli_mpi_finish (cli_close_stdout (dispatch (argc, argv)));
}

/* The command's own options (--help, --version) come before COMMAND;
   getopt_long stops at COMMAND ("+"), whose options are its own.  */
static int
dispatch (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 } };
  if (argc < 2)
    {
      cli_print_help (stderr);
      return EXIT_USAGE;
    }
  argv[0] = (char *) progname;
  opterr = 1;
  int c = getopt_long (argc, argv, "+hV", longopts, NULL);
  if (c == 'h')
    {
      cli_print_help (stdout);
      return EXIT_PASS;
    }
  if (c == 'V')
    return cli_print_version ();
  if (c != -1)
    {
      cli_usage_hint ();
      return EXIT_USAGE;
    }
  if (optind >= argc)
    {
      usage_error ("no COMMAND after the options");
      return EXIT_USAGE;
    }
  const char *cmd = argv[optind];
  int sub_argc = argc - optind;
  char **sub_argv = argv + optind;
  if (!strcmp (cmd, "help"))
    {
      cli_print_help (stdout);
      return EXIT_PASS;
    }
  if (!strcmp (cmd, "list"))
    return cli_cmd_list (sub_argc, sub_argv);
  if (!strcmp (cmd, "run") || !strcmp (cmd, "oracle")
      || !strcmp (cmd, "explain") || cli_is_higher (cmd))
    return cli_cmd_run (sub_argc, sub_argv);
  if (!strcmp (cmd, "sweep"))
    return cli_cmd_sweep (sub_argc, sub_argv);
  if (!strcmp (cmd, "kernels"))
    return cli_kernels (sub_argc, sub_argv);
  if (!strcmp (cmd, "steps"))
    return cli_cmd_steps (sub_argc, sub_argv);
  if (!strcmp (cmd, "merge"))
    return cli_cmd_merge (sub_argc, sub_argv);
  usage_error ("unknown command '%s'; accepted: list, run, oracle, explain, "
               "sweep, kernels, steps, merge, jvp, hvp, taylor", cmd);
  return EXIT_USAGE;
}

