/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* sweep.c -- gradcheck sweep: the same check under every OpenBLAS kernel
   this CPU runs, each in its own process (OPENBLAS_CORETYPE is read when
   the library loads).  A child that dies on a signal -- SIGILL on a CPU
   without the kernel's instructions -- marks the kernel unsupported, never
   a pass or a failure.  A kernel pinned by the environment is respected.  */

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const kernels[] = {
  "Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Sandybridge",
  "Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Atom",
  "Barcelona", "Bulldozer", "Piledriver", "Steamroller", "Excavator",
  "Opteron" };

/* Run ARGV with OPENBLAS_CORETYPE=CORE (NULL: the environment's), stdout
   into a new buffer *OUT.  Returns the wait status, -1 if it could not
   run.  */
static int
run_child (char *const *argv, const char *core, char **out)
{
  int fd[2];
  *out = NULL;
  if (pipe (fd) != 0)
    return -1;
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (fd[0]);
      close (fd[1]);
      return -1;
    }
  if (pid == 0)
    {
      dup2 (fd[1], STDOUT_FILENO);
      close (fd[0]);
      close (fd[1]);
      int null = open ("/dev/null", O_WRONLY);
      if (null >= 0)
        dup2 (null, STDERR_FILENO);
      if (core)
        setenv ("OPENBLAS_CORETYPE", core, 1);
      execv ("/proc/self/exe", argv);
      _exit (127);
    }
  close (fd[1]);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc (cap);
  ssize_t got;
  while (buf && (got = read (fd[0], buf + n, cap - n - 1)) > 0)
    {
      n += (size_t) got;
      if (n + 1 == cap)
        {
          char *t = realloc (buf, cap *= 2);
          if (!t)
            free (buf);
          buf = t;
        }
    }
  close (fd[0]);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        free (buf);
        return -1;
      }
  if (buf)
    buf[n] = 0;
  *out = buf;
  return status;
}

int
cli_sweep (int argc, char **argv, const cli_args *a)
{
  /* The child: "run" with the same arguments, the report in JSON.  */
  char **cargv = calloc ((size_t) argc + 4, sizeof *cargv);
  char *vargv[] = { "gradcheck", "--version", NULL };
  if (!cargv)
    return EXIT_INTERNAL;
  int c = 0;
  cargv[c++] = "gradcheck";
  cargv[c++] = "run";
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
  cargv[c++] = "--format";
  cargv[c++] = "json";
  cargv[c] = NULL;

  bool pinned = getenv ("OPENBLAS_CORETYPE") || getenv ("OPENBLAS_L2_SIZE");
  bool json = a->format == GC_FMT_JSON;
  char seen[1024] = " ";
  size_t ran = 0, failed = 0, printed = 0;
  if (json)
    printf ("{\"pinned\":%s,\"kernels\":[", pinned ? "true" : "false");
  else
    printf ("%-15s %-15s %-11s %-10s %-8s %s\n", "OPENBLAS_CORETYPE",
            "kernel", "verdict", "worst nu", "failed", "f32 loss");
  size_t nk = pinned ? 1 : sizeof kernels / sizeof kernels[0];
  for (size_t k = 0; k < nk; k++)
    {
      const char *core = pinned ? NULL : kernels[k];
      const char *label = pinned ? "(pinned)" : core;
      char *ver;
      int st = run_child (vargv, core, &ver);
      char name[64] = "";
      const char *p = ver ? strstr (ver, "OpenBLAS kernel ") : NULL;
      if (p && sscanf (p + 16, "%63[^)]", name) != 1)
        name[0] = 0;
      free (ver);
      char note[96] = "";
      if (st < 0 || !WIFEXITED (st) || !name[0])
        snprintf (note, sizeof note, "unsupported (%s)",
                  st >= 0 && WIFSIGNALED (st) ? strsignal (WTERMSIG (st))
                  : "did not start");
      else
        {
          char key[80];
          snprintf (key, sizeof key, " %s ", name);
          if (strstr (seen, key))
            continue;   /* another name for a kernel already run */
          if (strlen (seen) + strlen (key) < sizeof seen)
            strcat (seen, key + 1);
        }
      char *out = NULL;
      gc_result *r = NULL;
      if (!note[0])
        {
          st = run_child (cargv, core, &out);
          if (st < 0 || WIFSIGNALED (st))
            snprintf (note, sizeof note, "unsupported (%s)",
                      st >= 0 ? strsignal (WTERMSIG (st)) : "did not start");
          else if (!out || gc_result_parse_json (out, strlen (out), &r)
                           != GC_OK)
            snprintf (note, sizeof note, "error (exit %d)",
                      WEXITSTATUS (st));
        }
      free (out);
      if (json)
        {
          printf ("%s{\"coretype\":\"%s\",\"kernel\":\"%s\"",
                  printed++ ? "," : "", label, name);
          if (r)
            printf (",\"verdict\":\"%s\",\"worst_nu\":%.17g,\"n_failed\":%zu,"
                    "\"loss_f32\":%.17g}", gc_verdict_name (r->verdict),
                    r->worst_nu, r->n_failed, r->loss_f32);
          else
            printf (",\"verdict\":null,\"note\":\"%s\"}", note);
        }
      else if (r)
        printf ("%-15s %-15s %-11s %-10.3g %-8zu %.9g\n", label, name,
                gc_verdict_name (r->verdict), r->worst_nu, r->n_failed,
                r->loss_f32);
      else
        printf ("%-15s %-15s %s\n", label, name[0] ? name : "-", note);
      if (r)
        {
          ran++;
          if (r->verdict != GC_PASS)
            failed++;
        }
      gc_result_free (r);
    }
  if (json)
    printf ("]}\n");
  else if (pinned)
    printf ("(the environment pins a kernel: OPENBLAS_CORETYPE=%s "
            "OPENBLAS_L2_SIZE=%s; the other kernels were not run)\n",
            getenv ("OPENBLAS_CORETYPE") ? getenv ("OPENBLAS_CORETYPE") : "",
            getenv ("OPENBLAS_L2_SIZE") ? getenv ("OPENBLAS_L2_SIZE") : "");
  free (cargv);
  if (fflush (stdout) != 0)
    return EXIT_INTERNAL;
  return ran == 0 ? EXIT_USAGE : failed ? EXIT_FAILED : EXIT_PASS;
}
