/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* cli.h -- the parts of the gradcheck command, shared between its files.  */

#ifndef GC_CLI_H
#define GC_CLI_H

#include "gradcheck.h"
#include "models.h"

#include <stdbool.h>
#include <stdio.h>

/* The exit statuses: the library's (gc_exit_status maps a check's status
   and verdict to them; manual: "Exit status").  */
enum { EXIT_PASS = GC_EXIT_PASS, EXIT_FAILED = GC_EXIT_FAIL,
       EXIT_USAGE = GC_EXIT_USAGE, EXIT_INTERNAL = GC_EXIT_INTERNAL,
       EXIT_INCONCLUSIVE = GC_EXIT_INCONCLUSIVE, EXIT_MODEL = GC_EXIT_MODEL,
       EXIT_PRECISION = GC_EXIT_PRECISION };

/* The command's name in its messages (usage.c).  */
extern const char *progname;

/* Print "gradcheck: <message>" and the hint to --help on stderr
   (usage.c).  */
void usage_error (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));

/* Flush and close standard output; on a write error print
   "gradcheck: write error: REASON" and return EXIT_INTERNAL, else CODE
   (closeout.c).  Called once, when the command ends.  */
int cli_close_stdout (int code);
/* Note the errno of a write to stdout whose RESULT (of printf, fputs) is
   negative, for cli_close_stdout's message.  */
void cli_note_write (int result);

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
  bool quiet;               /* --quiet: no progress on stderr */
  bool dirs_set;            /* --directions given */
  gc_options opts;
  size_t *indices;
  uint64_t seed;
  long index;               /* --index (explain, steps); -1 when unset */
  char **operands;          /* what follows the options: MODEL, REPORT... */
  int n_operands;
} cli_args;

/* A model to check: a built-in instance or a plugin's description.  */
typedef struct cli_model
{
  const gc_model *model;
  const float *x;
  gcm_instance *inst;       /* built-in, or NULL */
  void *dl;                 /* plugin handle, or NULL */
  /* What selected the model, for the check's identity
     (gc_options.model_identity; manual: "Merging shards"): a built-in
     model's name and every shape key's value; a plugin's file (a digest
     of its bytes) and its --shape arguments (a digest).  */
  char identity[1024];
} cli_model;

/* The exit status of a check that stopped with status ST, not GC_OK
   (usage.c): gc_exit_status's.  */
int cli_status_exit (gc_status st);
/* The worse of the exit statuses A and B of two checks of one command
   (usage.c; manual: "Exit status"): 5, 3, 2, then 1, 6, 4, then 0.  */
int cli_exit_worse (int a, int b);

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

/* Under an address-space limit (ulimit -v): OpenBLAS on one thread, and
   room for the work buffers of CALLERS threads that call it, its calling
   thread's taken at once (blasroom.c).  Returns EXIT_INTERNAL after a
   message where there is no room, else -1.  */
int cli_blas_room (unsigned callers);

/* --dump DIR: every parameter, gradient, output and cotangent tensor of
   the check as .npy files (npy.c).  Returns an exit code or -1.  */
int cli_dump (const char *dir, const cli_model *cm, const gc_result *r);

/* Manual: "Beyond the gradient" (cmd_higher.c).  Whether CMD is jvp, hvp
   or taylor; the check of CMD (jvp: gc_jvp_check, hvp: gc_hvp_check, any
   other: gc_check); the Taylor test of A's model, its report printed, its
   exit status returned; and the checks SPEC's model supports at its
   default shape ("gradient, oracle, jvp, hvp, taylor"), into BUF.  */
bool cli_is_higher (const char *cmd);
gc_status cli_higher_check (const char *cmd, const gc_model *m,
                            const float *x, const gc_options *o,
                            gc_result **r);
int cli_taylor (const cli_args *a, const cli_model *cm);
const char *cli_model_checks (const gcm_spec *spec, char *buf, size_t size);

/* gradcheck sweep (sweep.c); ARGV are the subcommand's arguments.  */
int cli_sweep (int argc, char **argv, const cli_args *a);

/* OpenBLAS kernels (kernels.c): the one list of kernel names, the probe
   that decides once which this CPU runs, and the rule that reads how a
   process under a kernel ended.  */
extern const char *const cli_kernel_names[];
extern const size_t cli_n_kernel_names;
/* The exit status of a process that saw SIGILL in a child of its own (a
   Check suite whose forked test died of it): "unsupported", as SIGILL.  */
enum { CLI_EXIT_UNSUPPORTED = 77 };
typedef enum cli_outcome
{
  CLI_OUT_OK,            /* exited 0 */
  CLI_OUT_EXIT,          /* exited with another status (the caller judges) */
  CLI_OUT_UNSUPPORTED,   /* SIGILL, exit 77 or exit 128 + SIGILL */
  CLI_OUT_CRASH          /* any other signal, or could not be started */
} cli_outcome;
/* Classify a wait STATUS (-1: the child did not start); WHY gets a
   one-line account ("Illegal instruction (signal 4)", "exit 3").  */
cli_outcome cli_outcome_of (int status, char *why, size_t size);
/* Run ARGV as /proc/self/exe with OPENBLAS_CORETYPE=CORE (NULL: the
   environment's), stdout into a new buffer *OUT (NULL when it could not be
   read), stderr to /dev/null.  Returns the wait status, -1 if it could not
   run.  */
int cli_child_run (char *const *argv, const char *core, char **out);
/* Whether the environment pins a kernel.  */
bool cli_kernel_pinned (void);
typedef enum cli_kernel_state
{
  CLI_K_RUN,           /* a kernel of its own */
  CLI_K_GROUPED,       /* the same f32 results as plan[group] */
  CLI_K_ALIAS,         /* OpenBLAS loads plan[group]'s kernel for it */
  CLI_K_UNSUPPORTED,   /* the probe died of SIGILL */
  CLI_K_CRASHED,       /* the probe died otherwise, or failed */
  CLI_K_NOT_RUN        /* not probed: the environment pins a kernel */
} cli_kernel_state;
typedef struct cli_kernel
{
  const char *coretype;   /* NULL: the environment's (pinned) */
  char name[64];          /* the kernel OpenBLAS loaded, "" if unknown */
  unsigned long long fingerprint;
  cli_kernel_state state;
  size_t group;           /* index of the kernel that runs for this one */
  char reason[160];
} cli_kernel;
const char *cli_kernel_state_name (cli_kernel_state s);
/* Probe every kernel, one process each, into PLAN (room for
   cli_n_kernel_names + 1 entries); returns the number of entries.  When
   the environment pins a kernel, PLAN[0] is it (coretype NULL), the only
   one probed, and every named kernel follows as CLI_K_NOT_RUN.  VERBOSE: a
   progress line per probe on stderr.  */
size_t cli_kernel_plan (cli_kernel *plan, bool verbose);
/* gradcheck kernels; ARGV are the subcommand's arguments.  */
int cli_kernels (int argc, char **argv);

/* MPI (mpi.c): initialise when started by a launcher; the number of ranks
   and this one's; gather the ranks' results on rank 0 and merge them;
   finish with rank 0's exit code everywhere.  */
void cli_mpi_init (int *argc, char ***argv);
int cli_mpi_ranks (size_t *rank);
gc_result *cli_mpi_gather (const gc_result *mine, gc_status *st);
int cli_mpi_finish (int code);

/* Models that misbehave beyond the library's reach (watch.c): install the
   exit() catcher and GMP's memory functions (once, first thing in main);
   mark model code running, with a watchdog after TIMEOUT seconds (0:
   none); and its end.  */
void cli_watch_init (void);
void cli_watch_begin (double timeout);
void cli_watch_end (void);

/* gradcheck steps (steps.c).  */
int cli_steps (const cli_args *a, const cli_model *cm);

/* The subcommands, one file each (main.c dispatches): run, oracle and
   explain (cmd_run.c), list (cmd_list.c), merge (cmd_merge.c), steps
   (steps.c), sweep (sweep.c), kernels (kernels.c).  ARGV[0] is the
   subcommand's name; each returns the exit status.  */
int cli_cmd_run (int argc, char **argv);
int cli_cmd_list (int argc, char **argv);
int cli_cmd_merge (int argc, char **argv);
int cli_cmd_steps (int argc, char **argv);
int cli_cmd_sweep (int argc, char **argv);

/* Options (options.c).  Parse the options of subcommand ARGV[0] into A
   (an option it does not take is refused); what follows them goes to
   A->operands.  Returns -1 to go on, or an exit code (--help, --version,
   a usage error).  */
int cli_parse_options (int argc, char **argv, cli_args *a);
/* The same into a cleared *A, for a subcommand that checks no model (list,
   merge): nothing of A is left to free.  */
int cli_parse_plain (int argc, char **argv, cli_args *a);
/* A subcommand that checks a model: its one operand, MODEL, into
   A->model (not with --plugin).  Returns -1 to go on, or EXIT_USAGE.  */
int cli_model_operand (cli_args *a);
void cli_print_help (FILE *f);
int cli_print_version (void);
/* After a message of getopt's own: the hint to --help.  */
void cli_usage_hint (void);

/* The largest report merge reads: a shard of a check of about a million
   parameters (a direction takes some 400 bytes of JSON).  */
#define CLI_REPORT_MAX ((off_t) 1 << 30)
#define CLI_REPORT_MAX_TEXT "1 GiB"

/* Print R's report; KERNEL (NULL: none) is the OpenBLAS kernel the check
   ran under, added to the first line of a text report.  Returns the exit
   status of ST and R (emit.c).  */
int cli_emit (gc_status st, gc_result *r, gc_format fmt, const char *kernel);
/* The exit status of the check R that ended with ST: gc_exit_status's of
   ST and R's verdict (emit.c).  */
int cli_exit_code (gc_status st, const gc_result *r);

#endif
