/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* cli.h -- the parts of the gradcheck command, shared between its files.  */

#ifndef GC_CLI_H
#define GC_CLI_H

#include "gradcheck.h"
#include "models.h"

#include <stdbool.h>

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3,
       EXIT_INCONCLUSIVE = 4 };

extern const char *progname;

/* Print "gradcheck: <message>" and the hint to --help on stderr.  */
void usage_error (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));

/* The options of every subcommand that checks a model.  */
typedef struct cli_args
{
  const char *cmd;          /* "run", "oracle", "explain", "sweep", "steps" */
  const char *model;        /* built-in name, or NULL */
  const char *plugin;       /* --plugin FILE.so */
  const char *shape;
  const char *mutant;
  const char *dump;         /* --dump DIR */
  const char *output;       /* --output FILE (steps) */
  gc_format format;
  bool format_set;
  gc_options opts;
  size_t *indices;
  uint64_t seed;
  long index;               /* --index (explain, steps); -1 when unset */
} cli_args;

/* A model to check: a built-in instance or a plugin's description.  */
typedef struct cli_model
{
  const gc_model *model;
  const float *x;
  gcm_instance *inst;       /* built-in, or NULL */
  void *dl;                 /* plugin handle, or NULL */
} cli_model;

/* Option strings (args.c): each returns false for a malformed string.  */
bool cli_parse_u64 (const char *s, uint64_t *out);
/* A finite number in the open interval (LO, HI).  */
bool cli_parse_open (const char *s, double lo, double hi, double *out);
bool cli_parse_format (const char *s, gc_format *f);
/* all, random:K, or I,J,...: sets O's direction fields; a list goes to a
   new *INDICES (the old one freed), which O then points at.  */
bool cli_parse_directions (const char *s, gc_options *o, size_t **indices);
/* I/N with 0 <= I < N.  */
bool cli_parse_shard (const char *s, gc_options *o);
/* Why a plugin's description cannot be used, or NULL when it can.  */
const char *cli_plugin_refusal (const gc_plugin *pl);

/* Build the model named by ARGS; on failure print why and return an exit
   code (>= 0); -1 on success.  */
int cli_model_open (const cli_args *a, cli_model *cm);
void cli_model_close (cli_model *cm);

/* --dump DIR: every parameter, gradient, output and cotangent tensor of
   the check as .npy files (npy.c).  Returns an exit code or -1.  */
int cli_dump (const char *dir, const cli_model *cm, const gc_result *r);

/* gradcheck sweep (sweep.c); ARGV are the subcommand's arguments.  */
int cli_sweep (int argc, char **argv, const cli_args *a);

/* MPI (mpi.c): initialise when started by a launcher; the number of ranks
   and this one's; gather the ranks' results on rank 0 and merge them;
   finish with rank 0's exit code everywhere.  */
void cli_mpi_init (int *argc, char ***argv);
int cli_mpi_ranks (size_t *rank);
gc_result *cli_mpi_gather (const gc_result *mine, gc_status *st);
int cli_mpi_finish (int code);

/* gradcheck steps (steps.c).  */
int cli_steps (const cli_args *a, const cli_model *cm);

#endif
