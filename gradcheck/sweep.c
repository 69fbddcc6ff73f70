/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* sweep.c -- gradcheck sweep: the same check under every OpenBLAS kernel
   this CPU runs, each in its own process (OPENBLAS_CORETYPE is read when
   the library loads).  Which kernels run is decided once, by the probe of
   kernels.c; how a check's process ended is read by the same rule
   (cli_outcome_of): SIGILL marks the kernel unsupported, never a pass or
   a failure; any other death is a crash, a finding: the sweep fails.
   Kernels the probe groups (the same f32 results on the suites' cells)
   still run here: the model checked need not be one of the suites'.  A
   kernel pinned by the environment is respected.  */

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child's arguments into CARGV (room for ARGC + 4): "run" with the
   same arguments, the report in JSON.  */
static void
child_argv (int argc, char **argv, char **cargv)
{
  int c = 0;
  cargv[c++] = "gradcheck";
  cargv[c++] = "run";
  cargv[c++] = "--format";   /* before any "--" of the user's */
  cargv[c++] = "json";
  for (int k = 1; k < argc; k++)
    {
      if (!strcmp (argv[k], "--format") && k + 1 < argc)
        {
          k++;
          continue;
        }
      if (!strncmp (argv[k], "--format=", 9))
        continue;
      cargv[c++] = argv[k];
    }
  cargv[c] = NULL;
}

/* The check under kernel P (the child CARGV), or NULL with why in NOTE
   (SIZE bytes) and *CRASH set where that is a crash.  */
static gc_result *
kernel_result (const cli_kernel *p, char **cargv, char *note, size_t size,
               bool *crash)
{
  if (p->state == CLI_K_UNSUPPORTED)
    snprintf (note, size, "unsupported (%s)", p->reason);
  else if (p->state == CLI_K_CRASHED)
    {
      snprintf (note, size, "CRASH (%s)", p->reason);
      *crash = true;
    }
  char *out = NULL;
  gc_result *r = NULL;
  if (!note[0])
    {
      int st = cli_child_run (cargv, p->coretype, &out);
      char why[96];
      cli_outcome oc = cli_outcome_of (st, why, sizeof why);
      if (oc == CLI_OUT_UNSUPPORTED)
        snprintf (note, size, "unsupported (the check died: %s)", why);
      else if (oc == CLI_OUT_CRASH)
        {
          snprintf (note, size, "CRASH (the check died: %s)", why);
          *crash = true;
        }
      else if (!out || gc_result_parse_json (out, strlen (out), &r)
                       != GC_OK)
        {
          /* Exited without a report: the check could not run under
             this kernel; not a verdict, and not a pass.  */
          snprintf (note, size, "CRASH (no report: %s)", why);
          *crash = true;
        }
    }
  free (out);
  return r;
}

/* Kernel P's row of the table (JSON: PRINTED rows before it), its result
   R or, without one, NOTE.  */
static void
print_row (bool json, const cli_kernel *plan, const cli_kernel *p,
           const gc_result *r, const char *note, bool crash, size_t printed)
{
  const char *label = p->coretype ? p->coretype : "(pinned)";
  if (json)
    {
      printf ("%s{\"coretype\":\"%s\",\"kernel\":\"%s\","
              "\"probe\":\"%s\",\"group\":\"%s\"",
              printed ? "," : "", label, p->name,
              cli_kernel_state_name (p->state),
              plan[p->group].coretype ? plan[p->group].coretype : label);
      if (r)
        printf (",\"verdict\":\"%s\",\"worst_nu\":%.17g,\"n_failed\":%zu,"
                "\"loss_f32\":%.17g}", gc_verdict_name (r->verdict),
                r->worst_nu, r->n_failed, r->loss_f32);
      else
        printf (",\"verdict\":null,\"crash\":%s,\"note\":\"%s\"}",
                crash ? "true" : "false", note);
    }
  else if (r)
    printf ("%-17s %-15s %-17s %-10.3g %-8zu %.9g\n", label, p->name,
            gc_verdict_name (r->verdict), r->worst_nu, r->n_failed,
            r->loss_f32);
  else
    printf ("%-17s %-15s %s\n", label, p->name[0] ? p->name : "-", note);
}

/* The text table's closing lines.  */
static void
print_tail (bool pinned, size_t crashed, size_t ran)
{
  if (crashed)
    printf ("%zu kernel(s) crashed: a finding, not a missing "
            "instruction (only SIGILL means unsupported)\n", crashed);
  else if (ran == 0)
    printf ("no kernel could run the check: nothing was checked\n");
  if (pinned)
    printf ("(the environment pins a kernel: OPENBLAS_CORETYPE=%s "
            "OPENBLAS_L2_SIZE=%s; the other kernels were not run)\n",
            getenv ("OPENBLAS_CORETYPE") ? getenv ("OPENBLAS_CORETYPE")
            : "", getenv ("OPENBLAS_L2_SIZE")
            ? getenv ("OPENBLAS_L2_SIZE") : "");
}

int
cli_sweep (int argc, char **argv, const cli_args *a)
{
  /* The child: "run" with the same arguments, the report in JSON.  */
  char **cargv = calloc ((size_t) argc + 4, sizeof *cargv);
  cli_kernel *plan = calloc (cli_n_kernel_names + 1, sizeof *plan);
  if (!cargv || !plan)
    {
      free (cargv);
      free (plan);
      fprintf (stderr, "%s: sweep: out of memory\n", progname);
      return EXIT_INTERNAL;
    }
  child_argv (argc, argv, cargv);

  bool pinned = cli_kernel_pinned ();
  bool json = a->format == GC_FMT_JSON;
  size_t nk = cli_kernel_plan (plan, false);
  size_t ran = 0, crashed = 0, printed = 0;
  /* manual: "Exit status": the worst of the kernels' own exit statuses
     (gc_exit_status's, a crash a failure's), none: nothing ran */
  int rc = -1;
  if (json)
    printf ("{\"pinned\":%s,\"kernels\":[", pinned ? "true" : "false");
  else
    printf ("%-17s %-15s %-17s %-10s %-8s %s\n", "OPENBLAS_CORETYPE",
            "kernel", "verdict", "worst nu", "failed", "f32 loss");
  for (size_t k = 0; k < nk; k++)
    {
      const cli_kernel *p = &plan[k];
      char note[224] = "";
      bool crash = false;
      if (p->state == CLI_K_ALIAS || p->state == CLI_K_NOT_RUN)
        continue;   /* another name for a kernel already run; pinned out */
      gc_result *r = kernel_result (p, cargv, note, sizeof note, &crash);
      print_row (json, plan, p, r, note, crash, printed++);
      if (r)
        {
          ran++;
          int code = gc_exit_status (r->status, r->verdict);
          rc = rc < 0 ? code : cli_exit_worse (rc, code);
        }
      if (crash)
        rc = rc < 0 ? EXIT_FAILED : cli_exit_worse (rc, EXIT_FAILED);
      crashed += crash;
      gc_result_free (r);
    }
  if (json)
    printf ("]}\n");
  else
    print_tail (pinned, crashed, ran);
  free (cargv);
  free (plan);
  /* stdout is checked at exit (closeout.c), with the error's reason.  */
  return rc < 0 ? EXIT_USAGE : rc;
}

/* gradcheck sweep [MODEL]: parse, then run every kernel.  */
int
cli_cmd_sweep (int argc, char **argv)
{
  cli_args a;
  memset (&a, 0, sizeof a);
  int rc = cli_parse_options (argc, argv, &a);
  if (rc < 0)
    rc = cli_model_operand (&a);
  if (rc < 0 && a.format != GC_FMT_TEXT && a.format != GC_FMT_JSON)
    {
      usage_error ("sweep --format takes text or json (a table of kernels)");
      rc = EXIT_USAGE;
    }
  if (rc < 0)
    rc = cli_sweep (argc, argv, &a);
  free (a.indices);
  return rc;
}
