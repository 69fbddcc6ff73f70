/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* mpi.c -- mpirun -n R gradcheck run ...: rank r checks shard r of R and
   rank 0 gathers the shards' JSON reports and merges them into the report
   of the whole check, identical to a single process's.  Without MPI (or
   when not started by a launcher) these are no-ops.  */

#include "config.h"

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GC_WITH_MPI
#include <mpi.h>

static int size = 1, rank = 0;

void
cli_mpi_init (int *argc, char ***argv)
{
  /* Only under a launcher: a plain start stays a plain process.  */
  if (!getenv ("OMPI_COMM_WORLD_SIZE") && !getenv ("PMI_SIZE")
      && !getenv ("PMIX_RANK"))
    return;
  int provided;
  if (MPI_Init_thread (argc, argv, MPI_THREAD_FUNNELED, &provided)
      != MPI_SUCCESS)
    return;
  MPI_Comm_size (MPI_COMM_WORLD, &size);
  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
}

int
cli_mpi_finish (int code)
{
  if (size > 1 || rank > 0)
    {
      MPI_Bcast (&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
      MPI_Finalize ();
    }
  else
    {
      int init = 0;
      MPI_Initialized (&init);
      if (init)
        MPI_Finalize ();
    }
  return code;
}

int
cli_mpi_ranks (size_t *rank_out)
{
  *rank_out = (size_t) rank;
  return size;
}

/* Rank 0 cannot receive the reports: the other ranks wait in the
   collective, so the whole job stops.  */
static void
out_of_memory (void)
{
  fprintf (stderr, "%s: gathering the ranks' reports: %s\n", progname,
           gc_strerror (GC_ENOMEM));
  MPI_Abort (MPI_COMM_WORLD, EXIT_INTERNAL);
}

/* Gather every rank's JSON report on rank 0 and merge them.  Returns the
   merged result on rank 0, NULL elsewhere; *ST says what happened.  */
gc_result *
cli_mpi_gather (const gc_result *mine, gc_status *st)
{
  char *json = gc_report (mine, GC_FMT_JSON);
  int len = json ? (int) strlen (json) + 1 : 0;
  int *lens = NULL, *offs = NULL;
  char *all = NULL;
  if (rank == 0)
    {
      lens = calloc ((size_t) size, sizeof *lens);
      offs = calloc ((size_t) size, sizeof *offs);
      if (!lens || !offs)
        out_of_memory ();
    }
  MPI_Gather (&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  size_t total = 0;
  if (rank == 0)
    {
      for (int r = 0; r < size; r++)
        {
          offs[r] = (int) total;
          total += (size_t) lens[r];
        }
      all = malloc (total ? total : 1);
      if (!all)
        out_of_memory ();
    }
  MPI_Gatherv (json ? json : "", len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0,
               MPI_COMM_WORLD);
  free (json);
  gc_result *merged = NULL;
  *st = GC_OK;
  if (rank == 0)
    {
      gc_result **shards = calloc ((size_t) size, sizeof *shards);
      *st = shards && all ? GC_OK : GC_ENOMEM;
      for (int r = 0; r < size && *st == GC_OK; r++)
        *st = lens[r] > 0 ? gc_result_parse_json (all + offs[r],
                                                  (size_t) lens[r] - 1,
                                                  &shards[r])
                          : GC_ENOMEM;
      if (*st == GC_OK)
        *st = gc_result_merge (shards, (size_t) size, &merged);
      for (int r = 0; shards && r < size; r++)
        gc_result_free (shards[r]);
      free (shards);
    }
  free (lens);
  free (offs);
  free (all);
  return merged;
}

#else

void
cli_mpi_init (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
}

int
cli_mpi_finish (int code)
{
  return code;
}

int
cli_mpi_ranks (size_t *rank_out)
{
  *rank_out = 0;
  return 1;
}

gc_result *
cli_mpi_gather (const gc_result *mine, gc_status *st)
{
  (void) mine;
  *st = GC_EINVAL;
  return NULL;
}

#endif
