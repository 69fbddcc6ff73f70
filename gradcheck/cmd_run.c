/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* cmd_run.c -- gradcheck run, oracle and explain: check a model's backward (or
   its forward) and print the verdict with its derivation  */

#include "config.h"

#include "cli.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Progress on stderr (manual: "Invoking gradcheck", --quiet).  On a
   terminal a counter rewritten in place, at most a hundred updates, then
   a cleared line.  Elsewhere (a CI log, make check) nothing for the first
   INTERVAL seconds, then a line at most every INTERVAL seconds:
   INTERVAL is 5, or GRADCHECK_PROGRESS_INTERVAL (seconds, >= 0; for
   tests).  */
typedef struct progress_state
{
  bool tty;
  double interval, start, last;
} progress_state;

static double
seconds_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void
progress (void *ctx, size_t done, size_t total)
{
  progress_state *ps = ctx;
  if (ps->tty)
    {
      if (total < 100 || done == total || done % (total / 100) == 0)
        fprintf (stderr, "\r%s: %zu/%zu directions%s", progname, done, total,
                 done == total ? "\r\033[K" : "");
      return;
    }
  double now = seconds_now (), t = now - ps->start;
  if (t < ps->interval || now - ps->last < ps->interval)
    return;
  ps->last = now;
  if (done > 0 && done < total)
    fprintf (stderr, "%s: %zu/%zu directions in %.0f s, about %.0f s left\n",
             progname, done, total, t,
             t / (double) done * (double) (total - done));
  else
    fprintf (stderr, "%s: %zu/%zu directions in %.0f s\n", progname, done,
             total, t);
}

static void
progress_init (progress_state *ps)
{
  ps->tty = isatty (STDERR_FILENO);
  ps->interval = 5;
  const char *e = getenv ("GRADCHECK_PROGRESS_INTERVAL");
  double v;
  if (e && *e && cli_parse_open (e, -1, 1e7, &v) && v >= 0)
    ps->interval = v;
  ps->start = ps->last = seconds_now ();
  ps->last -= ps->interval;
}

/* explain's own options: it needs --index I, and TAP is not one of its
   formats (its default is Markdown).  Returns -1 to go on, or EXIT_USAGE.  */
static int
explain_options (cli_args *a)
{
  if (a->index < 0)
    {
      usage_error ("explain needs --index I");
      return EXIT_USAGE;
    }
  if (a->format_set && a->format == GC_FMT_TAP)
    {
      usage_error ("explain --format takes md, text or json (one "
                   "direction's derivation; TAP is run's)");
      return EXIT_USAGE;
    }
  if (!a->format_set)
    a->format = GC_FMT_MARKDOWN;
  return -1;
}

/* The bar run derives for coordinate I: the direction of id I in the full
   check of every coordinate, as its shard I of n, so that lambda shares
   the false-alarm rate among all n directions as run's does (manual: "The
   confidence factor").  Returns -1 to go on, or EXIT_USAGE.  */
static int
explain_direction (cli_args *a, const cli_model *cm)
{
  if ((size_t) a->index >= cm->model->n)
    {
      usage_error ("--index %ld is out of range: the model has %zu "
                   "parameters (0 to %zu)", a->index, cm->model->n,
                   cm->model->n ? cm->model->n - 1 : 0);
      return EXIT_USAGE;
    }
  a->opts.directions = GC_DIR_ALL;
  a->opts.shard_index = (size_t) a->index;
  a->opts.shard_count = cm->model->n;
  return -1;
}

/* Under mpirun (RANKS > 1), rank RANK checks its shard of run's
   directions.  Returns -1 to go on, or EXIT_USAGE.  */
static int
mpi_shard (cli_args *a, bool oracle, bool explain, int ranks, size_t rank)
{
  if (oracle || explain || a->opts.shard_count > 1)
    {
      if (rank == 0)
        usage_error ("under mpirun, run spreads the directions itself: "
                     "no --shard, no oracle or explain");
      return EXIT_USAGE;
    }
  a->opts.shard_index = rank;
  a->opts.shard_count = (size_t) ranks;
  return -1;
}

/* Under mpirun: every rank takes part, a rank whose check failed to run
   too (it sends an empty report, which rank 0 counts as out of memory);
   one report for the whole check, from rank 0, replaces *R.  Returns -1
   to go on (rank 0, with the report), or the exit code.  */
static int
mpi_gather (gc_result **r, gc_status *st, size_t rank)
{
  gc_result *m = cli_mpi_gather (*r, st);
  gc_result_free (*r);
  *r = m;
  if (rank != 0)
    return EXIT_PASS;
  if (!*r)
    {
      fprintf (stderr, "%s: gathering the ranks' reports: %s\n",
               progname, gc_strerror (*st));
      return EXIT_INTERNAL;
    }
  return -1;
}

/* What the check R (or its failure ST) prints: explain the derivation of
   its one direction, run and oracle the report.  */
static int
output (const cli_args *a, bool explain, gc_status st, gc_result *r)
{
  if (!r)
    {
      fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
      return st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
  if (!explain || st != GC_OK)
    return cli_emit (st, r, a->format, openblas_get_corename ());
  char *text = gc_derivation (r, 0, a->format == GC_FMT_TAP ? GC_FMT_TEXT
                                                           : a->format);
  if (!text)
    {
      fprintf (stderr, "%s: out of memory\n", progname);
      return EXIT_INTERNAL;
    }
  cli_note_write (fputs (text, stdout));
  free (text);
  return cli_exit_code (st, r);
}

/* --dump DIR after the report RC: the report is out before the dump
   starts (an interrupted dump keeps it); a failed dump is said on stderr
   and keeps a failing verdict's status, and turns a pass into 3 (manual:
   "Exit status").  Returns the exit status.  */
static int
dump (const cli_args *a, const cli_model *cm, const gc_result *r, int rc)
{
  if (fflush (stdout) != 0)
    rc = EXIT_INTERNAL;
  cli_watch_begin (a->opts.timeout);
  int drc = cli_dump (a->dump, cm, r);
  cli_watch_end ();
  if (drc >= 0 && rc == EXIT_PASS)
    rc = drc;
  return rc;
}

/* Check the model CM as A says, print what the subcommand prints, and
   return its exit status.  */
static int
check (cli_args *a, const cli_model *cm, bool oracle, bool explain)
{
  int rc;
  if (explain && (rc = explain_direction (a, cm)) >= 0)
    return rc;
  /* Directions run in our own threads: OpenBLAS gets one thread per worker,
     so that results do not depend on --threads.  */
  openblas_set_num_threads (1);
  size_t rank;
  int ranks = cli_mpi_ranks (&rank);
  if (ranks > 1 && (rc = mpi_shard (a, oracle, explain, ranks, rank)) >= 0)
    return rc;
  progress_state ps;
  progress_init (&ps);
  if (!a->quiet && !oracle && rank == 0)
    {
      a->opts.progress = progress;
      a->opts.progress_ctx = &ps;
    }
  gc_result *r = NULL;
  a->opts.model_identity = cm->identity;   /* manual: "Merging shards" */
  cli_watch_begin (a->opts.timeout);
  if (strcmp (a->cmd, "taylor") == 0)
    {
      /* manual: "The Taylor test" (cmd_higher.c) */
      rc = cli_taylor (a, cm);
      cli_watch_end ();
      return rc;
    }
  gc_status st = oracle ? gc_forward_check (cm->model, cm->x, &a->opts, &r)
                 : cli_higher_check (a->cmd, cm->model, cm->x, &a->opts, &r);
  cli_watch_end ();
  if (ranks > 1 && (rc = mpi_gather (&r, &st, rank)) >= 0)
    return rc;
  rc = output (a, explain, st, r);
  if (r && a->dump && st == GC_OK)
    rc = dump (a, cm, r, rc);
  gc_result_free (r);
  return rc;
}

/* gradcheck run, oracle and explain.  */
int
cli_cmd_run (int argc, char **argv)
{
  cli_args a;
  memset (&a, 0, sizeof a);
  int rc = cli_parse_options (argc, argv, &a);
  if (rc < 0)
    rc = cli_model_operand (&a);
  bool oracle = strcmp (a.cmd, "oracle") == 0;
  bool explain = strcmp (a.cmd, "explain") == 0;
  if (rc < 0 && explain)
    rc = explain_options (&a);
  /* under ulimit -v, before any model code runs (manual: "Memory") */
  if (rc < 0)
    rc = cli_blas_room (a.opts.threads);
  cli_model cm;
  if (rc < 0 && (rc = cli_model_open (&a, &cm)) < 0)
    {
      rc = check (&a, &cm, oracle, explain);
      cli_model_close (&cm);
    }
  free (a.indices);
  return rc;
}
