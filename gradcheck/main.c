/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* main.c -- the gradcheck command: check a model's backward against MPFR
   central differences and print the verdict with its derivation.

   Exit codes: 0 pass, 1 the check failed (or found a non-smooth point),
   2 usage or input error, 3 internal error.  */

#include "config.h"

#include "cli.h"

#include <cblas.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *progname = "gradcheck";

void
usage_error (const char *fmt, ...)
{
  va_list ap;
  fprintf (stderr, "%s: ", progname);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fprintf (stderr, "\nTry '%s --help' for more information.\n", progname);
}

static const char options_help[] =
"  --shape K=V,...         model shape (gradcheck list names the keys)\n"
"  --seed N                seed of the model's inputs and random directions\n"
"  --mutant NAME           a known-buggy backward from the model's catalogue\n"
"  --plugin FILE.so        check the model a plugin exports (see the manual)\n"
"  --ref mpfr|f32|f64      reference forward (default mpfr)\n"
"  --prec BITS             MPFR precision (default: derived, 128)\n"
"  --step H                absolute step (default: derived per parameter)\n"
"  --directions all|random:K|I,J,...   which directions to check\n"
"  --format text|json|md|tap   report format (default text)\n"
"  --threads N             directions in parallel (results identical)\n"
"  --shard I/N             check only shard I of N (for gradcheck merge)\n"
"  --dump DIR              write every tensor of the check as .npy files\n"
"  --false-alarm P         accepted false-alarm probability (default 1e-6)\n";

static void
print_help (FILE *f)
{
  fprintf (f,
"Usage: gradcheck COMMAND [OPTION]... [MODEL]\n"
"Check the analytic gradient (backward) of an f32 model against central\n"
"finite differences computed in GNU MPFR, with a pass bar derived from an\n"
"error model; every verdict shows its derivation.\n"
"\n"
"Commands:\n"
"  list               the built-in models, their shape keys and mutants\n"
"  run [MODEL]        check MODEL's gradient (default model: %s)\n"
"  oracle [MODEL]     MODEL's f32 outputs against its MPFR outputs\n"
"  explain MODEL --index I   the full derivation of one direction's bar\n"
"  sweep [MODEL]      the check under every OpenBLAS kernel this CPU runs\n"
"  steps MODEL --index I     reference error against the step: SVG + table\n"
"  merge REPORT...    combine shard reports (JSON) into one verdict\n"
"\n"
"Options:\n%s"
"  -h, --help              this help (also: gradcheck COMMAND --help)\n"
"  -V, --version           version and OpenBLAS kernel\n"
"\n"
"Exit status: 0 pass, 1 the check failed (or hit a non-smooth point, or\n"
"the model is non-deterministic),\n"
"2 usage or input error, 3 internal error, 4 inconclusive (no failure, but\n"
"a direction the check cannot judge: its resolution is >= 1).\n"
"The manual (info gradcheck) derives every term of the bar.\n",
           gcm_default_name (), options_help);
}

static const struct { const char *cmd, *usage, *what; } cmd_help[] = {
  { "list", "gradcheck list",
    "List the built-in models, their shape keys with defaults, and their\n"
    "mutants (known backward bugs)." },
  { "run", "gradcheck run [OPTION]... [MODEL]",
    "Check MODEL's analytic gradient against central differences; print the\n"
    "verdict, the worst direction and the derivation of its bar." },
  { "oracle", "gradcheck oracle [OPTION]... [MODEL]",
    "The forward oracle: MODEL's f32 outputs against its MPFR reference\n"
    "outputs, element by element, under a derived bar." },
  { "explain", "gradcheck explain [OPTION]... MODEL --index I",
    "The derivation of coordinate I's bar as Markdown: every term, its\n"
    "formula, inputs and value (--format json or text for the others)." },
  { "sweep", "gradcheck sweep [OPTION]... [MODEL]",
    "Run the check under every OpenBLAS kernel this CPU runs, each in its\n"
    "own process, and print a table of verdict and worst nu per kernel.  A\n"
    "kernel that dies (SIGILL) is reported as unsupported.  When the\n"
    "environment pins a kernel (OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE),\n"
    "only that kernel runs." },
  { "steps", "gradcheck steps [OPTION]... MODEL --index I [--output FILE.svg]",
    "The reference error of coordinate I against the step h, for the f32\n"
    "and the MPFR reference, with the derived bar: a data table on standard\n"
    "output and an SVG plot (default steps-MODEL-I.svg)." },
  { "merge", "gradcheck merge [--format F] REPORT...",
    "Combine the JSON reports of the shards of one check (--shard I/N\n"
    "--format json) into the report of the whole check." },
};

static int
print_cmd_help (const char *cmd)
{
  for (size_t k = 0; k < sizeof cmd_help / sizeof cmd_help[0]; k++)
    if (strcmp (cmd_help[k].cmd, cmd) == 0)
      {
        printf ("Usage: %s\n%s\n", cmd_help[k].usage, cmd_help[k].what);
        if (strcmp (cmd, "list") && strcmp (cmd, "merge"))
          printf ("\nOptions:\n%s", options_help);
        if (!strcmp (cmd, "explain") || !strcmp (cmd, "steps"))
          printf ("  --index I               the coordinate\n");
        if (!strcmp (cmd, "steps"))
          printf ("  --output FILE.svg       where the plot goes\n");
        printf ("\nExit status: 0 pass, 1 failed, 2 usage or input error, 3 "
                "internal error, 4 inconclusive.\n");
        return EXIT_PASS;
      }
  return EXIT_USAGE;
}

static int
print_version (void)
{
  printf ("gradcheck %s (OpenBLAS kernel %s)\n", PACKAGE_VERSION,
          openblas_get_corename ());
  return EXIT_PASS;
}

static int
cmd_list (void)
{
  for (size_t i = 0; i < gcm_count (); i++)
    {
      const gcm_spec *s = gcm_get (i);
      printf ("%s%s\n  %s\n  shape:", s->name,
              strcmp (s->name, gcm_default_name ()) == 0 ? " (default)" : "",
              s->summary);
      for (size_t k = 0; k < s->n_keys; k++)
        printf ("%s %s=%ld", k ? "," : "", s->keys[k].name, s->keys[k].def);
      for (size_t k = 0; k < s->n_keys; k++)
        printf ("\n    %-8s %s (%ld to %ld)", s->keys[k].name, s->keys[k].help,
                s->keys[k].min, s->keys[k].max);
      printf ("\n  mutants:");
      if (s->n_mutants == 0)
        printf (" none");
      for (size_t k = 0; k < s->n_mutants; k++)
        printf ("\n    %-22s %s", s->mutants[k].name, s->mutants[k].help);
      printf ("\n");
    }
  return EXIT_PASS;
}

/* ---------------------------------------------------------------------- */
/* Option parsing.  */

/* Parse the options of a model subcommand; returns -1 to go on, or an exit
   code.  ARGV[0] is the subcommand.  */
static int
parse_args (int argc, char **argv, cli_args *a)
{
  enum { O_REF = 256, O_PREC, O_STEP, O_SHAPE, O_SEED, O_DIRS, O_MUTANT,
         O_FORMAT, O_THREADS, O_ALPHA, O_SHARD, O_DUMP, O_PLUGIN, O_INDEX,
         O_OUTPUT };
  static const struct option longopts[] = {
    { "ref", required_argument, NULL, O_REF },
    { "prec", required_argument, NULL, O_PREC },
    { "step", required_argument, NULL, O_STEP },
    { "shape", required_argument, NULL, O_SHAPE },
    { "seed", required_argument, NULL, O_SEED },
    { "directions", required_argument, NULL, O_DIRS },
    { "mutant", required_argument, NULL, O_MUTANT },
    { "format", required_argument, NULL, O_FORMAT },
    { "threads", required_argument, NULL, O_THREADS },
    { "false-alarm", required_argument, NULL, O_ALPHA },
    { "shard", required_argument, NULL, O_SHARD },
    { "dump", required_argument, NULL, O_DUMP },
    { "plugin", required_argument, NULL, O_PLUGIN },
    { "index", required_argument, NULL, O_INDEX },
    { "output", required_argument, NULL, O_OUTPUT },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 } };
  gc_options_init (&a->opts);
  a->cmd = argv[0];
  a->seed = 1;
  a->format = GC_FMT_TEXT;
  a->index = -1;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long (argc, argv, ":hV", longopts, NULL)) != -1)
    {
      uint64_t u;
      switch (c)
        {
        case 'h':
          return print_cmd_help (a->cmd);
        case 'V':
          return print_version ();
        case O_REF:
          if (strcmp (optarg, "mpfr") == 0)
            a->opts.reference = GC_REF_MPFR;
          else if (strcmp (optarg, "f32") == 0)
            a->opts.reference = GC_REF_F32;
          else if (strcmp (optarg, "f64") == 0)
            a->opts.reference = GC_REF_F64;
          else
            {
              usage_error ("bad --ref '%s': accepted: mpfr, f32, f64", optarg);
              return EXIT_USAGE;
            }
          break;
        case O_PREC:
          if (!cli_parse_u64 (optarg, &u) || u < 25 || u > 1000000)
            {
              usage_error ("bad --prec '%s': accepted: an integer number of "
                           "bits from 25 to 1000000", optarg);
              return EXIT_USAGE;
            }
          a->opts.precision = (mpfr_prec_t) u;
          break;
        case O_STEP:
          if (!cli_parse_open (optarg, 0, INFINITY, &a->opts.step))
            {
              usage_error ("bad --step '%s': accepted: a positive finite "
                           "number", optarg);
              return EXIT_USAGE;
            }
          break;
        case O_SHAPE:
          a->shape = optarg;
          break;
        case O_SEED:
          if (!cli_parse_u64 (optarg, &u))
            {
              usage_error ("bad --seed '%s': accepted: a non-negative "
                           "integer", optarg);
              return EXIT_USAGE;
            }
          a->seed = u;
          a->opts.seed = u;
          break;
        case O_DIRS:
          if (!cli_parse_directions (optarg, &a->opts, &a->indices))
            {
              usage_error ("bad --directions '%s': accepted: all, random:K, "
                           "or a list of indices I,J,...", optarg);
              return EXIT_USAGE;
            }
          break;
        case O_MUTANT:
          a->mutant = optarg;
          break;
        case O_FORMAT:
          if (!cli_parse_format (optarg, &a->format))
            {
              usage_error ("bad --format '%s': accepted: text, json, md, tap",
                           optarg);
              return EXIT_USAGE;
            }
          a->format_set = true;
          break;
        case O_THREADS:
          if (!cli_parse_u64 (optarg, &u) || u == 0 || u > 1024)
            {
              usage_error ("bad --threads '%s': accepted: 1 to 1024", optarg);
              return EXIT_USAGE;
            }
          a->opts.threads = (unsigned) u;
          break;
        case O_ALPHA:
          if (!cli_parse_open (optarg, 0, 1, &a->opts.false_alarm))
            {
              usage_error ("bad --false-alarm '%s': accepted: a probability "
                           "in (0, 1)", optarg);
              return EXIT_USAGE;
            }
          break;
        case O_SHARD:
          if (!cli_parse_shard (optarg, &a->opts))
            {
              usage_error ("bad --shard '%s': accepted: I/N with 0 <= I < N",
                           optarg);
              return EXIT_USAGE;
            }
          break;
        case O_DUMP:
          a->dump = optarg;
          break;
        case O_PLUGIN:
          a->plugin = optarg;
          break;
        case O_INDEX:
          if (!cli_parse_u64 (optarg, &u) || u > (uint64_t) 1 << 40)
            {
              usage_error ("bad --index '%s': accepted: a parameter index",
                           optarg);
              return EXIT_USAGE;
            }
          a->index = (long) u;
          break;
        case O_OUTPUT:
          a->output = optarg;
          break;
        case ':':
          usage_error ("option '%s' needs a value", argv[optind - 1]);
          return EXIT_USAGE;
        default:
          usage_error ("unknown option '%s'", argv[optind - 1]);
          return EXIT_USAGE;
        }
    }
  if (optind < argc)
    a->model = argv[optind++];
  if (optind < argc)
    {
      usage_error ("unexpected argument '%s'", argv[optind]);
      return EXIT_USAGE;
    }
  if (a->plugin && a->model)
    {
      usage_error ("give a MODEL or --plugin, not both ('%s')", a->model);
      return EXIT_USAGE;
    }
  return -1;
}

/* ---------------------------------------------------------------------- */
/* Models: built-in or from a plugin.  */

static int
open_plugin (const cli_args *a, cli_model *cm)
{
  if (a->mutant)
    {
      usage_error ("--mutant applies to built-in models, not to plugins");
      return EXIT_USAGE;
    }
  /* A path without a slash would be searched for in the library path.  */
  char path[4096];
  snprintf (path, sizeof path, "%s%s", strchr (a->plugin, '/') ? "" : "./",
            a->plugin);
  cm->dl = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (!cm->dl)
    {
      fprintf (stderr, "%s: cannot load plugin %s: %s\n", progname, a->plugin,
               dlerror ());
      return EXIT_USAGE;
    }
  gc_plugin_fn fn;
  *(void **) &fn = dlsym (cm->dl, GC_PLUGIN_SYMBOL);
  if (!fn)
    {
      fprintf (stderr, "%s: plugin %s does not export %s\n", progname,
               a->plugin, GC_PLUGIN_SYMBOL);
      return EXIT_USAGE;
    }
  const gc_plugin *pl = fn (a->shape);
  const char *why = cli_plugin_refusal (pl);
  if (why)
    {
      fprintf (stderr, "%s: plugin %s refused: %s\n", progname, a->plugin,
               why);
      return EXIT_USAGE;
    }
  cm->model = pl->model;
  cm->x = pl->x;
  return -1;
}

int
cli_model_open (const cli_args *a, cli_model *cm)
{
  memset (cm, 0, sizeof *cm);
  if (a->plugin)
    return open_plugin (a, cm);
  const char *name = a->model ? a->model : gcm_default_name ();
  const gcm_spec *spec = gcm_find (name);
  if (!spec)
    {
      fprintf (stderr, "%s: unknown model '%s'; accepted:", progname, name);
      for (size_t i = 0; i < gcm_count (); i++)
        fprintf (stderr, " %s", gcm_get (i)->name);
      fprintf (stderr, " (or --plugin FILE.so)\n");
      return EXIT_USAGE;
    }
  long values[GCM_MAX_KEYS];
  char err[256];
  if (gcm_parse_shape (spec, a->shape, values, err, sizeof err) != GC_OK)
    {
      fprintf (stderr, "%s: %s\n", progname, err);
      return EXIT_USAGE;
    }
  int mutant = gcm_mutant_index (spec, a->mutant);
  if (mutant < 0)
    {
      fprintf (stderr, "%s: unknown mutant '%s' for model %s; accepted: none",
               progname, a->mutant, spec->name);
      for (size_t k = 0; k < spec->n_mutants; k++)
        fprintf (stderr, ", %s", spec->mutants[k].name);
      fprintf (stderr, "\n");
      return EXIT_USAGE;
    }
  gc_status st = gcm_create (spec, values, a->seed, mutant, &cm->inst);
  if (st != GC_OK)
    {
      fprintf (stderr, "%s: cannot build model %s at this shape: %s\n",
               progname, spec->name, st == GC_EINVAL
               ? "the shape keys contradict each other (see gradcheck list)"
               : gc_strerror (st));
      return st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
  cm->model = &cm->inst->model;
  cm->x = cm->inst->x;
  return -1;
}

void
cli_model_close (cli_model *cm)
{
  gcm_destroy (cm->inst);
  /* A plugin's description lives until the process ends: no dlclose.  */
  cm->inst = NULL;
}

/* ---------------------------------------------------------------------- */

static int
exit_code (gc_status st, const gc_result *r)
{
  if (st == GC_ENOMEM)
    return EXIT_INTERNAL;
  if (st != GC_OK)
    return EXIT_USAGE;
  if (r->verdict == GC_INCONCLUSIVE)
    return EXIT_INCONCLUSIVE;
  return r->verdict == GC_PASS ? EXIT_PASS : EXIT_FAILED;
}

/* Progress on stderr, only when it is a terminal: at most a hundred
   updates, then a cleared line.  */
static void
progress (void *ctx, size_t done, size_t total)
{
  (void) ctx;
  if (total < 100 || done == total || done % (total / 100) == 0)
    fprintf (stderr, "\r%s: %zu/%zu directions%s", progname, done, total,
             done == total ? "\r\033[K" : "");
}

static int
emit (gc_status st, gc_result *r, gc_format fmt, const char *text_prefix)
{
  char *text = gc_report (r, fmt);
  if (!text)
    {
      fprintf (stderr, "%s: out of memory\n", progname);
      return EXIT_INTERNAL;
    }
  if (fmt == GC_FMT_TEXT && text_prefix)
    fputs (text_prefix, stdout);
  fputs (text, stdout);
  free (text);
  if (st != GC_OK)
    {
      if (strcmp (r->detail, gc_strerror (st)) != 0)
        fprintf (stderr, "%s: %s: %s\n", progname, gc_strerror (st), r->detail);
      else
        fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
    }
  return exit_code (st, r);
}

/* run, oracle and explain.  */
static int
cmd_check (int argc, char **argv)
{
  cli_args a;
  memset (&a, 0, sizeof a);
  int rc = parse_args (argc, argv, &a);
  if (rc >= 0)
    goto out;
  bool oracle = strcmp (a.cmd, "oracle") == 0;
  bool explain = strcmp (a.cmd, "explain") == 0;
  if (explain)
    {
      if (a.index < 0)
        {
          usage_error ("explain needs --index I");
          rc = EXIT_USAGE;
          goto out;
        }
      free (a.indices);
      a.indices = malloc (sizeof *a.indices);
      if (!a.indices)
        {
          rc = EXIT_INTERNAL;
          goto out;
        }
      a.indices[0] = (size_t) a.index;
      a.opts.directions = GC_DIR_LIST;
      a.opts.indices = a.indices;
      a.opts.n_indices = 1;
      if (!a.format_set)
        a.format = GC_FMT_MARKDOWN;
    }
  cli_model cm;
  if ((rc = cli_model_open (&a, &cm)) >= 0)
    goto out;
  /* Directions run in our own threads: OpenBLAS gets one thread per worker,
     so that results do not depend on --threads.  */
  openblas_set_num_threads (1);
  size_t rank;
  int ranks = cli_mpi_ranks (&rank);
  if (ranks > 1)
    {
      if (oracle || explain || a.opts.shard_count > 1)
        {
          if (rank == 0)
            usage_error ("under mpirun, run spreads the directions itself: "
                         "no --shard, no oracle or explain");
          cli_model_close (&cm);
          rc = EXIT_USAGE;
          goto out;
        }
      a.opts.shard_index = rank;
      a.opts.shard_count = (size_t) ranks;
    }
  if (isatty (STDERR_FILENO) && !oracle && rank == 0)
    a.opts.progress = progress;
  gc_result *r = NULL;
  gc_status st = oracle ? gc_forward_check (cm.model, cm.x, &a.opts, &r)
                        : gc_check (cm.model, cm.x, &a.opts, &r);
  if (ranks > 1)
    {
      /* every rank takes part, a rank whose check failed to run too (it
         sends an empty report, which rank 0 counts as out of memory)  */
      /* One report for the whole check, from rank 0.  */
      gc_result *m = cli_mpi_gather (r, &st);
      gc_result_free (r);
      r = m;
      if (rank != 0)
        {
          cli_model_close (&cm);
          rc = EXIT_PASS;
          goto out;
        }
      if (!r)
        {
          fprintf (stderr, "%s: gathering the ranks' reports: %s\n",
                   progname, gc_strerror (st));
          cli_model_close (&cm);
          rc = EXIT_INTERNAL;
          goto out;
        }
    }
  if (!r)
    {
      fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
      rc = st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
  else if (explain && st == GC_OK)
    {
      char *text = gc_derivation (r, 0, a.format == GC_FMT_TAP ? GC_FMT_TEXT
                                                              : a.format);
      if (!text)
        {
          fprintf (stderr, "%s: out of memory\n", progname);
          rc = EXIT_INTERNAL;
        }
      else
        {
          fputs (text, stdout);
          free (text);
          rc = exit_code (st, r);
        }
    }
  else
    {
      char prefix[128];
      snprintf (prefix, sizeof prefix, "OpenBLAS kernel: %s\n",
                openblas_get_corename ());
      rc = emit (st, r, a.format, prefix);
    }
  if (r && a.dump && st == GC_OK)
    {
      int drc = cli_dump (a.dump, &cm, r);
      if (drc >= 0)
        rc = drc;
    }
  gc_result_free (r);
  cli_model_close (&cm);
out:
  free (a.indices);
  if (fflush (stdout) != 0)
    rc = EXIT_INTERNAL;
  return rc;
}

static int
cmd_steps (int argc, char **argv)
{
  cli_args a;
  memset (&a, 0, sizeof a);
  int rc = parse_args (argc, argv, &a);
  if (rc < 0)
    {
      cli_model cm;
      if (a.index < 0)
        {
          usage_error ("steps needs --index I");
          rc = EXIT_USAGE;
        }
      else if ((rc = cli_model_open (&a, &cm)) < 0)
        {
          openblas_set_num_threads (1);
          rc = cli_steps (&a, &cm);
          cli_model_close (&cm);
        }
    }
  free (a.indices);
  return rc;
}

static int
cmd_sweep (int argc, char **argv)
{
  cli_args a;
  memset (&a, 0, sizeof a);
  int rc = parse_args (argc, argv, &a);
  if (rc < 0)
    rc = cli_sweep (argc, argv, &a);
  free (a.indices);
  return rc;
}

static char *
read_file (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc (cap);
  while (buf)
    {
      size_t got = fread (buf + n, 1, cap - n, f);
      n += got;
      if (n < cap)
        break;
      if (cap > ((size_t) 1 << 30))
        {
          free (buf);
          buf = NULL;
          break;
        }
      char *t = realloc (buf, cap *= 2);
      if (!t)
        {
          free (buf);
          buf = NULL;
        }
      buf = t;
    }
  bool err = ferror (f);
  fclose (f);
  if (err)
    {
      free (buf);
      return NULL;
    }
  *len = n;
  return buf;
}

static int
cmd_merge (int argc, char **argv)
{
  gc_format fmt = GC_FMT_TEXT;
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; first++)
    {
      if (!strcmp (argv[first], "--help") || !strcmp (argv[first], "-h"))
        return print_cmd_help ("merge");
      if (!strcmp (argv[first], "--format") && first + 1 < argc)
        {
          if (!cli_parse_format (argv[++first], &fmt))
            {
              usage_error ("bad --format '%s': accepted: text, json, md, tap",
                           argv[first]);
              return EXIT_USAGE;
            }
          continue;
        }
      usage_error ("unknown option '%s' to merge", argv[first]);
      return EXIT_USAGE;
    }
  size_t n = (size_t) (argc - first);
  if (n == 0)
    {
      usage_error ("merge needs at least one REPORT");
      return EXIT_USAGE;
    }
  gc_result **shards = calloc (n, sizeof *shards);
  if (!shards)
    return EXIT_INTERNAL;
  int rc = -1;
  for (size_t k = 0; k < n && rc < 0; k++)
    {
      size_t len;
      char *text = read_file (argv[first + k], &len);
      if (!text)
        {
          fprintf (stderr, "%s: cannot read %s: %s\n", progname,
                   argv[first + k], strerror (errno));
          rc = EXIT_USAGE;
          break;
        }
      gc_status st = gc_result_parse_json (text, len, &shards[k]);
      free (text);
      if (st != GC_OK)
        {
          fprintf (stderr, "%s: %s is not a gradcheck JSON report: %s\n",
                   progname, argv[first + k], gc_strerror (st));
          rc = st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
    }
  if (rc < 0)
    {
      gc_result *m = NULL;
      gc_status st = gc_result_merge (shards, n, &m);
      if (!m)
        {
          fprintf (stderr, "%s: cannot merge: %s (%zu reports of %zu shards)"
                   "\n", progname, gc_strerror (st), n,
                   shards[0]->shard_count);
          rc = st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
      else
        {
          rc = emit (st, m, fmt, NULL);
          gc_result_free (m);
        }
    }
  for (size_t k = 0; k < n; k++)
    gc_result_free (shards[k]);
  free (shards);
  if (fflush (stdout) != 0)
    rc = EXIT_INTERNAL;
  return rc;
}

static int dispatch (int argc, char **argv);

int
main (int argc, char **argv)
{
  cli_mpi_init (&argc, &argv);
  return cli_mpi_finish (dispatch (argc, argv));
}

static int
dispatch (int argc, char **argv)
{
  if (argc < 2)
    {
      print_help (stderr);
      return EXIT_USAGE;
    }
  const char *cmd = argv[1];
  if (!strcmp (cmd, "-h") || !strcmp (cmd, "--help") || !strcmp (cmd, "help"))
    {
      print_help (stdout);
      return EXIT_PASS;
    }
  if (!strcmp (cmd, "-V") || !strcmp (cmd, "--version"))
    return print_version ();
  if (!strcmp (cmd, "list"))
    {
      if (argc > 2)
        {
          if (!strcmp (argv[2], "--help") || !strcmp (argv[2], "-h"))
            return print_cmd_help ("list");
          usage_error ("unexpected argument '%s' to list", argv[2]);
          return EXIT_USAGE;
        }
      return cmd_list ();
    }
  if (!strcmp (cmd, "run") || !strcmp (cmd, "oracle")
      || !strcmp (cmd, "explain"))
    return cmd_check (argc - 1, argv + 1);
  if (!strcmp (cmd, "sweep"))
    return cmd_sweep (argc - 1, argv + 1);
  if (!strcmp (cmd, "steps"))
    return cmd_steps (argc - 1, argv + 1);
  if (!strcmp (cmd, "merge"))
    return cmd_merge (argc - 1, argv + 1);
  usage_error ("unknown command '%s'; accepted: list, run, oracle, explain, "
               "sweep, steps, merge", cmd);
  return EXIT_USAGE;
}
