/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* main.c -- the gradcheck command: check a model's backward against MPFR
   central differences and print the verdict with its derivation.

   Exit codes: 0 pass, 1 the check failed (or found a non-smooth point),
   2 usage or input error, 3 internal error (out of memory, a failed
   --dump after a pass), 4 the model failed (a callback's error, NaN or
   Inf, a write past its buffer, the time limit, exit() inside it).  */

#include "config.h"

#include "cli.h"
#include "escape.h"

#include <cblas.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The largest report merge reads: a shard of a check of about a million
   parameters (a direction takes some 400 bytes of JSON).  */
#define CLI_REPORT_MAX ((off_t) 1 << 30)
#define CLI_REPORT_MAX_TEXT "1 GiB"

/* The subcommands, as bits of the set of subcommands an option applies
   to.  An option given to a subcommand it does not apply to is refused
   (exit 2), never ignored.  */
enum { C_LIST = 1 << 0, C_RUN = 1 << 1, C_ORACLE = 1 << 2,
       C_EXPLAIN = 1 << 3, C_SWEEP = 1 << 4, C_STEPS = 1 << 5,
       C_MERGE = 1 << 6,
       /* manual: "Beyond the gradient" (cmd_higher.c) */
       C_JVP = 1 << 7, C_HVP = 1 << 8, C_TAYLOR = 1 << 9 };
#define C_HIGHER (C_JVP | C_HVP | C_TAYLOR)
#define C_MODEL (C_RUN | C_ORACLE | C_EXPLAIN | C_SWEEP | C_STEPS | C_HIGHER)

static const struct { const char *name; unsigned bit; } commands[] = {
  { "list", C_LIST }, { "run", C_RUN }, { "oracle", C_ORACLE },
  { "explain", C_EXPLAIN }, { "sweep", C_SWEEP }, { "steps", C_STEPS },
  { "merge", C_MERGE }, { "jvp", C_JVP }, { "hvp", C_HVP },
  { "taylor", C_TAYLOR } };
#define N_COMMANDS (sizeof commands / sizeof commands[0])

enum { O_REF = 256, O_PREC, O_STEP, O_SHAPE, O_SEED, O_DIRS, O_MUTANT,
       O_FORMAT, O_THREADS, O_ALPHA, O_SHARD, O_DUMP, O_PLUGIN, O_INDEX,
       O_OUTPUT, O_TIMEOUT, O_TWIN, O_QUIET };

/* Every long option with a value: its name, value, the subcommands it
   applies to, and its line of --help.  */
static const struct cli_option
{
  const char *name;
  int val;
  unsigned applies;
  const char *arg, *help;
} cli_options[] = {
  { "shape", O_SHAPE, C_MODEL, "K=V,...",
    "model shape (gradcheck list names the keys)" },
  { "seed", O_SEED, C_MODEL, "N",
    "seed of the model's inputs and random directions" },
  { "mutant", O_MUTANT, C_MODEL, "NAME",
    "a known-buggy backward from the model's catalogue" },
  { "plugin", O_PLUGIN, C_MODEL, "FILE.so",
    "check the model a plugin exports (see the manual)" },
  { "ref", O_REF, C_RUN | C_EXPLAIN | C_SWEEP | C_JVP | C_TAYLOR,
    "auto|mpfr|f32|f64",
    "reference forward (default auto: f64, then MPFR wherever f64 may not "
    "give MPFR's verdict; mpfr for a model without f64)" },
  { "prec", O_PREC, C_MODEL, "BITS", "MPFR precision (default: derived, 128)" },
  { "step", O_STEP, C_RUN | C_EXPLAIN | C_SWEEP | C_HIGHER, "H",
    "absolute step (default: derived per parameter)" },
  { "directions", O_DIRS, C_RUN | C_SWEEP | C_HIGHER,
    "all|random:K|random-per-block:K|I,J,...",
    "which directions to check (random-per-block: K random directions "
    "within each tensor)" },
  { "format", O_FORMAT, C_RUN | C_ORACLE | C_EXPLAIN | C_SWEEP | C_MERGE
    | C_HIGHER,
    "text|json|md|tap", "report format (default text; explain: md)" },
  { "threads", O_THREADS, C_RUN | C_SWEEP, "N",
    "directions in parallel (results identical)" },
  { "shard", O_SHARD, C_RUN | C_SWEEP | C_JVP, "I/N",
    "check only shard I of N (for gradcheck merge)" },
  { "dump", O_DUMP, C_RUN | C_ORACLE | C_EXPLAIN, "DIR",
    "write every tensor of the check as .npy files" },
  { "false-alarm", O_ALPHA, C_RUN | C_ORACLE | C_EXPLAIN | C_SWEEP
    | C_HIGHER, "P",
    "accepted false-alarm probability (default 1e-6)" },
  { "index", O_INDEX, C_EXPLAIN | C_STEPS, "I", "the coordinate" },
  { "output", O_OUTPUT, C_STEPS, "FILE.svg",
    "where the plot goes (default steps-MODEL-I.svg)" },
  { "timeout", O_TIMEOUT, C_MODEL, "SECONDS",
    "time limit of the check (default: none)" },
  { "twin", O_TWIN, C_RUN | C_EXPLAIN | C_SWEEP | C_HVP | C_TAYLOR,
    "on|off",
    "judge the algorithm with the model's f64 twin of the backward, and the "
    "f32 arithmetic against it (default on, where the model has one)" },
  { "quiet", O_QUIET, C_RUN | C_ORACLE | C_EXPLAIN | C_HIGHER, "",
    "no progress on stderr (by default: a counter on a terminal; elsewhere "
    "a line every 5 s once the check has run 5 s)" },
};
#define N_OPTIONS (sizeof cli_options / sizeof cli_options[0])

/* The options that apply to the subcommands in MASK, one a line.  */
static void
print_options (FILE *f, unsigned mask)
{
  for (size_t k = 0; k < N_OPTIONS; k++)
    if (cli_options[k].applies & mask)
      {
        int w = fprintf (f, "  --%s %s", cli_options[k].name,
                         cli_options[k].arg);
        fprintf (f, "%*s%s\n", w < 24 ? 26 - w : 2, "", cli_options[k].help);
      }
  fprintf (f, "  -h, --help              this help\n"
              "  -V, --version           version, licence and OpenBLAS "
              "kernel\n");
}

static void
print_trailer (FILE *f)
{
  fprintf (f,
"\n"
"Exit status: 0 pass, 1 the check failed (or hit a non-smooth point, or\n"
"the model is non-deterministic), 2 usage or input error, 3 internal error\n"
"(out of memory) or write error, 4 inconclusive (no failure, but a\n"
"direction the check cannot judge: its resolution is >= 1), 5 the model\n"
"failed (a callback's error, NaN or Inf, a write past its buffer, the time\n"
"limit, exit()), 6 precision (with the model's f64 twin: the algorithm\n"
"passes, the f32 arithmetic errs beyond its derived bound).\n"
"The manual (info gradcheck) derives every term of the bar.\n"
"\n"
"Report bugs to: %s\n"
"%s home page: <%s>\n", PACKAGE_BUGREPORT, PACKAGE_NAME, PACKAGE_URL);
}

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
"  kernels            which OpenBLAS kernels this CPU runs (one probe each)\n"
"  steps MODEL --index I     reference error against the step: SVG + table\n"
"  merge REPORT...    combine shard reports (JSON) into one verdict\n"
"  jvp [MODEL]        check MODEL's forward-mode tangent (jvp_f32)\n"
"  hvp [MODEL]        check MODEL's Hessian-vector product (hvp_f32)\n"
"  taylor [MODEL]     the Taylor test: remainder rates along one direction\n"
"\n"
"Options (gradcheck COMMAND --help lists those COMMAND takes; another is\n"
"refused):\n", gcm_default_name ());
  print_options (f, ~0u);
  print_trailer (f);
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
  { "explain", "gradcheck explain [OPTION]... [MODEL] --index I",
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
    "--format json) into the report of the whole check.  Each REPORT is a\n"
    "regular file of at most " CLI_REPORT_MAX_TEXT "." },
  { "jvp", "gradcheck jvp [OPTION]... [MODEL]",
    "Check MODEL's forward-mode tangent jvp_f32 (x, w) against the gradient\n"
    "check's central differences along the same directions, under the bar\n"
    "with the tangent's rounding term (manual: \"The JVP check\")." },
  { "hvp", "gradcheck hvp [OPTION]... [MODEL]",
    "Check MODEL's Hessian-vector product hvp_f32 (x, v) element by element\n"
    "against central differences of its gradient along v (of its f64 twin\n"
    "where it has one; manual: \"The HVP check\").  --directions all: every\n"
    "coordinate vector (n^2 elements); random:K: K random vectors." },
  { "taylor", "gradcheck taylor [OPTION]... [MODEL]",
    "The Taylor test along one direction (the first listed coordinate, or\n"
    "a random one): the remainders' rates against eps, 2 expected, 3 with\n"
    "the HVP (manual: \"The Taylor test\")." },
};

static unsigned
command_bit (const char *cmd)
{
  for (size_t k = 0; k < N_COMMANDS; k++)
    if (strcmp (commands[k].name, cmd) == 0)
      return commands[k].bit;
  return 0;
}

static int
print_cmd_help (const char *cmd)
{
  for (size_t k = 0; k < sizeof cmd_help / sizeof cmd_help[0]; k++)
    if (strcmp (cmd_help[k].cmd, cmd) == 0)
      {
        printf ("Usage: %s\n%s\n\nOptions:\n", cmd_help[k].usage,
                cmd_help[k].what);
        print_options (stdout, command_bit (cmd));
        print_trailer (stdout);
        return EXIT_PASS;
      }
  return EXIT_USAGE;
}

/* GNU Coding Standards, "--version": the name and version on the first
   line, then copyright, licence and warranty; then what the check runs on.
   The OpenBLAS kernel keeps the form "(OpenBLAS kernel NAME)" that
   gradcheck sweep and the kernel sweeps of the scripts read.  */
static int
print_version (void)
{
  const char *config = openblas_get_config ();
  char blas[32] = "";
  if (!config || sscanf (config, "OpenBLAS %31s", blas) != 1)
    blas[0] = 0;
  printf ("%s (%s) %s\n"
          "Copyright (C) 2026 The gradcheck authors\n"
          "License LGPL-3.0-or-later: GNU LGPL version 3 or later "
          "<https://gnu.org/licenses/lgpl.html>.\n"
          "This is free software: you are free to change and redistribute "
          "it.\n"
          "There is NO WARRANTY, to the extent permitted by law.\n"
          "\n"
          "Linked with GNU MPFR %s and OpenBLAS%s%s (OpenBLAS kernel %s)\n",
          PACKAGE_TARNAME, PACKAGE_NAME, PACKAGE_VERSION, mpfr_get_version (),
          blas[0] ? " " : "", blas, openblas_get_corename ());
  return EXIT_PASS;
}

static int
list_models (void)
{
  for (size_t i = 0; i < gcm_count (); i++)
    {
      const gcm_spec *s = gcm_get (i);
      /* every write noted: the list outgrows stdio's buffer, and a
         failed write's reason would be lost (closeout.c) */
      cli_note_write (printf ("%s%s\n  %s\n  shape:", s->name,
                              strcmp (s->name, gcm_default_name ()) == 0
                              ? " (default)" : "", s->summary));
      for (size_t k = 0; k < s->n_keys; k++)
        cli_note_write (printf ("%s %s=%ld", k ? "," : "", s->keys[k].name,
                                s->keys[k].def));
      for (size_t k = 0; k < s->n_keys; k++)
        cli_note_write (printf ("\n    %-8s %s (%ld to %ld)",
                                s->keys[k].name, s->keys[k].help,
                                s->keys[k].min, s->keys[k].max));
      cli_note_write (printf ("\n  mutants:"));
      if (s->n_mutants == 0)
        cli_note_write (printf (" none"));
      for (size_t k = 0; k < s->n_mutants; k++)
        cli_note_write (printf ("\n    %-22s %s", s->mutants[k].name,
                                s->mutants[k].help));
      char checks[128];
      cli_note_write (printf ("\n  checks: %s\n", cli_model_checks (s, checks,
                                                    sizeof checks)));
    }
  return EXIT_PASS;
}

/* ---------------------------------------------------------------------- */
/* Option parsing.  */

/* After a message of getopt's own ("option '--s' is ambiguous; ...").  */
static void
usage_hint (void)
{
  fprintf (stderr, "Try '%s --help' for more information.\n", progname);
}

/* The subcommands an option applies to, for the message that refuses it.  */
static void
refuse_option (const char *cmd, const struct cli_option *o)
{
  char where[128] = "";
  size_t len = 0;
  for (size_t k = 0; k < N_COMMANDS; k++)
    if ((o->applies & commands[k].bit) && len < sizeof where)
      len += (size_t) snprintf (where + len, sizeof where - len, "%s%s",
                                len ? ", " : "", commands[k].name);
  usage_error ("option '--%s' does not apply to %s; it applies to: %s",
               o->name, cmd, where);
}

/* A value that must not be empty (--mutant '', --plugin '').  */
static bool
nonempty (const char *opt, const char *what)
{
  if (*optarg)
    return true;
  usage_error ("bad --%s '': accepted: %s", opt, what);
  return false;
}

/* Parse the options of subcommand ARGV[0] with getopt_long; what follows
   them (in any order: GNU getopt permutes, and "--" ends the options)
   goes to A->operands.  Returns -1 to go on, or an exit code.  */
static int
parse_args (int argc, char **argv, cli_args *a)
{
  static struct option longopts[N_OPTIONS + 3];
  for (size_t k = 0; k < N_OPTIONS; k++)
    longopts[k] = (struct option) { cli_options[k].name,
                                    cli_options[k].arg[0] ? required_argument
                                                          : no_argument,
                                    NULL, cli_options[k].val };
  longopts[N_OPTIONS] = (struct option) { "help", no_argument, NULL, 'h' };
  longopts[N_OPTIONS + 1] = (struct option) { "version", no_argument, NULL,
                                              'V' };
  longopts[N_OPTIONS + 2] = (struct option) { NULL, 0, NULL, 0 };
  gc_options_init (&a->opts);
  a->cmd = argv[0];
  a->seed = 1;
  a->format = GC_FMT_TEXT;
  a->index = -1;
  unsigned cmd = command_bit (a->cmd);
  /* getopt names argv[0] in its messages: the program, not "run".  */
  char *argv0 = argv[0];
  argv[0] = (char *) progname;
  optind = 0;   /* glibc: start afresh (the command line was scanned) */
  opterr = 1;
  int c, rc = -1;
  while (rc < 0 && (c = getopt_long (argc, argv, "hV", longopts, NULL)) != -1)
    {
      uint64_t u;
      if (c == '?')
        {
          usage_hint ();
          rc = EXIT_USAGE;
          break;
        }
      const struct cli_option *o = NULL;
      for (size_t k = 0; k < N_OPTIONS; k++)
        if (cli_options[k].val == c)
          o = &cli_options[k];
      if (o && !(o->applies & cmd))
        {
          refuse_option (argv0, o);
          rc = EXIT_USAGE;
          break;
        }
      switch (c)
        {
        case 'h':
          rc = print_cmd_help (argv0);
          break;
        case 'V':
          rc = print_version ();
          break;
        case O_REF:
          if (strcmp (optarg, "mpfr") == 0)
            a->opts.reference = GC_REF_MPFR;
          else if (strcmp (optarg, "f32") == 0)
            a->opts.reference = GC_REF_F32;
          else if (strcmp (optarg, "f64") == 0)
            a->opts.reference = GC_REF_F64;
          else if (strcmp (optarg, "auto") == 0)
            a->opts.reference = GC_REF_AUTO;
          else
            {
              usage_error ("bad --ref '%s': accepted: auto, mpfr, f32, f64",
                           optarg);
              rc = EXIT_USAGE;
            }
          break;
        case O_PREC:
          if (!cli_parse_u64 (optarg, &u) || u < 25 || u > 1000000)
            {
              usage_error ("bad --prec '%s': accepted: an integer number of "
                           "bits from 25 to 1000000", optarg);
              rc = EXIT_USAGE;
            }
          else
            a->opts.precision = (mpfr_prec_t) u;
          break;
        case O_STEP:
          if (!cli_parse_open (optarg, 0, INFINITY, &a->opts.step))
            {
              usage_error ("bad --step '%s': accepted: a positive finite "
                           "number", optarg);
              rc = EXIT_USAGE;
            }
          break;
        case O_SHAPE:
          if (!nonempty ("shape", "KEY=VALUE,... (gradcheck list names the "
                         "keys) or a plugin's argument"))
            rc = EXIT_USAGE;
          a->shape = optarg;
          break;
        case O_SEED:
          if (!cli_parse_u64 (optarg, &u))
            {
              usage_error ("bad --seed '%s': accepted: a non-negative "
                           "integer", optarg);
              rc = EXIT_USAGE;
            }
          else
            a->seed = a->opts.seed = u;
          break;
        case O_DIRS:
          if (!cli_parse_directions (optarg, &a->opts, &a->indices))
            {
              usage_error ("bad --directions '%s': accepted: all, random:K, "
                           "random-per-block:K, "
                           "or a list of indices I,J,...", optarg);
              rc = EXIT_USAGE;
            }
          break;
        case O_MUTANT:
          if (!nonempty ("mutant", "a mutant's name (gradcheck list names "
                         "them) or none"))
            rc = EXIT_USAGE;
          a->mutant = optarg;
          break;
        case O_FORMAT:
          if (!cli_parse_format (optarg, &a->format))
            {
              usage_error ("bad --format '%s': accepted: text, json, md, tap",
                           optarg);
              rc = EXIT_USAGE;
            }
          a->format_set = true;
          break;
        case O_THREADS:
          if (!cli_parse_u64 (optarg, &u) || u == 0 || u > 1024)
            {
              usage_error ("bad --threads '%s': accepted: 1 to 1024", optarg);
              rc = EXIT_USAGE;
            }
          else
            a->opts.threads = (unsigned) u;
          break;
        case O_ALPHA:
          if (!cli_parse_open (optarg, 0, 1, &a->opts.false_alarm))
            {
              usage_error ("bad --false-alarm '%s': accepted: a probability "
                           "in (0, 1)", optarg);
              rc = EXIT_USAGE;
            }
          break;
        case O_SHARD:
          if (!cli_parse_shard (optarg, &a->opts))
            {
              usage_error ("bad --shard '%s': accepted: I/N with 0 <= I < N",
                           optarg);
              rc = EXIT_USAGE;
            }
          break;
        case O_DUMP:
          if (!nonempty ("dump", "a directory"))
            rc = EXIT_USAGE;
          a->dump = optarg;
          break;
        case O_PLUGIN:
          if (!nonempty ("plugin", "a shared object FILE.so"))
            rc = EXIT_USAGE;
          a->plugin = optarg;
          break;
        case O_INDEX:
          if (!cli_parse_u64 (optarg, &u) || u > (uint64_t) 1 << 40)
            {
              usage_error ("bad --index '%s': accepted: a parameter index",
                           optarg);
              rc = EXIT_USAGE;
            }
          else
            a->index = (long) u;
          break;
        case O_OUTPUT:
          if (!nonempty ("output", "a file name"))
            rc = EXIT_USAGE;
          a->output = optarg;
          break;
        case O_QUIET:
          a->quiet = true;
          break;
        case O_TWIN:
          if (strcmp (optarg, "on") == 0)
            a->opts.no_twin = 0;
          else if (strcmp (optarg, "off") == 0)
            a->opts.no_twin = 1;
          else
            {
              usage_error ("bad --twin '%s': accepted: on, off", optarg);
              rc = EXIT_USAGE;
            }
          break;
        case O_TIMEOUT:
          if (!cli_parse_open (optarg, 0, 1e7, &a->opts.timeout))
            {
              usage_error ("bad --timeout '%s': accepted: a number of "
                           "seconds in (0, 1e7)", optarg);
              return EXIT_USAGE;
            }
          break;
        default:
          usage_hint ();
          rc = EXIT_USAGE;
          break;
        }
    }
  a->operands = argv + optind;
  a->n_operands = argc - optind;
  argv[0] = argv0;
  if (rc >= 0)
    return rc;
  if (cmd & C_MODEL)
    {
      if (a->n_operands > 0)
        a->model = a->operands[0];
      if (a->n_operands > 1)
        {
          usage_error ("unexpected argument '%s'", a->operands[1]);
          return EXIT_USAGE;
        }
      if (a->plugin && a->model)
        {
          usage_error ("give a MODEL or --plugin, not both ('%s')", a->model);
          return EXIT_USAGE;
        }
    }
  else if (cmd == C_LIST && a->n_operands > 0)
    {
      usage_error ("unexpected argument '%s' to list", a->operands[0]);
      return EXIT_USAGE;
    }
  return -1;
}

/* ---------------------------------------------------------------------- */
/* Models: built-in or from a plugin.  */

/* FNV-1a (64-bit), as the library's identity digests: it tells apart the
   files and arguments of checks run in good faith, not a forger.  */
static uint64_t
fnv1a (uint64_t h, const void *p, size_t n)
{
  const unsigned char *c = p;
  for (size_t k = 0; k < n; k++)
    {
      h ^= c[k];
      h *= 0x100000001b3u;
    }
  return h;
}

/* The digest of the bytes of the file at PATH into *OUT; false with errno
   set when it cannot be read.  */
static bool
file_digest (const char *path, uint64_t *out)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  uint64_t h = 0xcbf29ce484222325u;
  char buf[65536];
  for (;;)
    {
      ssize_t got = read (fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        {
          int err = errno;
          close (fd);
          errno = err;
          return false;
        }
      if (got == 0)
        break;
      h = fnv1a (h, buf, (size_t) got);
    }
  close (fd);
  *out = h;
  return true;
}

static int
open_plugin (const cli_args *a, cli_model *cm)
{
  if (a->mutant)
    {
      usage_error ("--mutant applies to built-in models, not to plugins");
      return EXIT_USAGE;
    }
  /* A path without a slash would be searched for in the library path.  */
  char path[PATH_MAX];
  int plen = snprintf (path, sizeof path, "%s%s",
                       strchr (a->plugin, '/') ? "" : "./", a->plugin);
  if (plen < 0 || (size_t) plen >= sizeof path)
    {
      /* cut short, it would name another file  */
      fprintf (stderr, "%s: cannot load plugin %.40s...: %s (%zu characters;"
               " at most %d)\n", progname, a->plugin, strerror (ENAMETOOLONG),
               strlen (a->plugin), PATH_MAX - 3);
      return EXIT_USAGE;
    }
  /* The plugin's constructors are model code: an exit() there is caught
     (exit status 5) like one in a callback.  */
  cli_watch_begin (0);
  cm->dl = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (!cm->dl)
    {
      cli_watch_end ();
      fprintf (stderr, "%s: cannot load plugin %s: %s\n", progname, a->plugin,
               dlerror ());
      return EXIT_USAGE;
    }
  gc_plugin_fn fn;
  *(void **) &fn = dlsym (cm->dl, GC_PLUGIN_SYMBOL);
  if (!fn)
    {
      cli_watch_end ();
      fprintf (stderr, "%s: plugin %s does not export %s\n", progname,
               a->plugin, GC_PLUGIN_SYMBOL);
      return EXIT_USAGE;
    }
  const gc_plugin *pl = fn (a->shape);
  cli_watch_end ();
  const char *why = cli_plugin_refusal (pl);
  if (why)
    {
      fprintf (stderr, "%s: plugin %s refused: %s\n", progname, a->plugin,
               why);
      return EXIT_USAGE;
    }
  /* The plugin file and its arguments select the model: both are part
     of the check's identity (the file as loaded; its bytes, read once
     more, name it).  */
  uint64_t file;
  if (!file_digest (path, &file))
    {
      fprintf (stderr, "%s: cannot read plugin %s: %s\n", progname,
               a->plugin, strerror (errno));
      return EXIT_USAGE;
    }
  const char *args = a->shape ? a->shape : "";
  snprintf (cm->identity, sizeof cm->identity, "plugin file %016" PRIx64
            " args %s%016" PRIx64, file, a->shape ? "" : "none ",
            fnv1a (0xcbf29ce484222325u, args, strlen (args) + 1));
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
  /* every shape key's value (the defaults too, so that two spellings of
     one shape are one model); the mutant is in the model's name */
  size_t len = (size_t) snprintf (cm->identity, sizeof cm->identity,
                                  "built-in %s", spec->name);
  for (size_t k = 0; k < spec->n_keys && len < sizeof cm->identity; k++)
    len += (size_t) snprintf (cm->identity + len, sizeof cm->identity - len,
                              " %s=%ld", spec->keys[k].name, values[k]);
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
  if (st != GC_OK)
    return cli_status_exit (st);
  if (r->verdict == GC_INCONCLUSIVE)
    return EXIT_INCONCLUSIVE;
  if (r->verdict == GC_PRECISION)
    return EXIT_PRECISION;
  return r->verdict == GC_PASS ? EXIT_PASS : EXIT_FAILED;
}

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

/* Print R's report.  KERNEL (NULL: none) is the OpenBLAS kernel the check
   ran under: the library does not know it, the command adds it to the
   first line of the text report, its header.  */
static int
emit (gc_status st, gc_result *r, gc_format fmt, const char *kernel)
{
  char *text = gc_report (r, fmt);
  if (!text)
    {
      fprintf (stderr, "%s: out of memory\n", progname);
      return EXIT_INTERNAL;
    }
  const char *nl = strchr (text, '\n');
  if (fmt == GC_FMT_TEXT && kernel && nl)
    cli_note_write (printf ("%.*s, OpenBLAS kernel %s%s", (int) (nl - text),
                            text, kernel, nl));
  else
    cli_note_write (fputs (text, stdout));
  free (text);
  if (st != GC_OK)
    {
      /* the detail may carry a model's names: escaped, as in reports */
      char detail[4 * sizeof r->detail];
      gc__escape (detail, sizeof detail, r->detail, GC__ESC_TEXT);
      if (strcmp (r->detail, gc_strerror (st)) != 0)
        fprintf (stderr, "%s: %s: %s\n", progname, gc_strerror (st), detail);
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
      if (a.format_set && a.format == GC_FMT_TAP)
        {
          usage_error ("explain --format takes md, text or json (one "
                       "direction's derivation; TAP is run's)");
          rc = EXIT_USAGE;
          goto out;
        }
      if (!a.format_set)
        a.format = GC_FMT_MARKDOWN;
    }
  /* under ulimit -v, before any model code runs (manual: "Memory") */
  if ((rc = cli_blas_room (a.opts.threads)) >= 0)
    goto out;
  cli_model cm;
  if ((rc = cli_model_open (&a, &cm)) >= 0)
    goto out;
  if (explain)
    {
      /* The bar run derives for coordinate I: the direction of id I in
         the full check of every coordinate, as its shard I of n, so that
         lambda shares the false-alarm rate among all n directions as
         run's does (manual: "The confidence factor").  */
      if ((size_t) a.index >= cm.model->n)
        {
          usage_error ("--index %ld is out of range: the model has %zu "
                       "parameters (0 to %zu)", a.index, cm.model->n,
                       cm.model->n ? cm.model->n - 1 : 0);
          cli_model_close (&cm);
          rc = EXIT_USAGE;
          goto out;
        }
      a.opts.directions = GC_DIR_ALL;
      a.opts.shard_index = (size_t) a.index;
      a.opts.shard_count = cm.model->n;
    }
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
  progress_state ps;
  progress_init (&ps);
  if (!a.quiet && !oracle && rank == 0)
    {
      a.opts.progress = progress;
      a.opts.progress_ctx = &ps;
    }
  gc_result *r = NULL;
  a.opts.model_identity = cm.identity;   /* manual: "Merging shards" */
  cli_watch_begin (a.opts.timeout);
  if (strcmp (a.cmd, "taylor") == 0)
    {
      /* manual: "The Taylor test" (cmd_higher.c) */
      rc = cli_taylor (&a, &cm);
      cli_watch_end ();
      cli_model_close (&cm);
      goto out;
    }
  gc_status st = oracle ? gc_forward_check (cm.model, cm.x, &a.opts, &r)
                 : cli_higher_check (a.cmd, cm.model, cm.x, &a.opts, &r);
  cli_watch_end ();
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
          cli_note_write (fputs (text, stdout));
          free (text);
          rc = exit_code (st, r);
        }
    }
  else
    rc = emit (st, r, a.format, openblas_get_corename ());
  if (r && a.dump && st == GC_OK)
    {
      /* The report is out before the dump starts (an interrupted dump
         keeps it); a failed dump is said on stderr and keeps a failing
         verdict's status, and turns a pass into 3 (manual: "Exit
         status").  */
      if (fflush (stdout) != 0)
        rc = EXIT_INTERNAL;
      cli_watch_begin (a.opts.timeout);
      int drc = cli_dump (a.dump, &cm, r);
      cli_watch_end ();
      if (drc >= 0 && rc == EXIT_PASS)
        rc = drc;
    }
  gc_result_free (r);
  cli_model_close (&cm);
out:
  free (a.indices);
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
      else if ((rc = cli_blas_room (1)) < 0
               && (rc = cli_model_open (&a, &cm)) < 0)
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

/* Read the report at PATH into a new buffer: regular files only (a FIFO
   would block, /dev/zero never ends), of at most CLI_REPORT_MAX bytes.
   On failure print why and return NULL with *RC the exit code.  */
static char *
read_report (const char *path, size_t *len, int *rc)
{
  *rc = EXIT_USAGE;
  /* O_NONBLOCK: opening a FIFO returns at once, and fstat refuses it.  */
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat sb;
  const char *why = NULL;
  int err = 0;
  if (fd < 0 || fstat (fd, &sb) != 0)
    err = errno;
  else if (S_ISDIR (sb.st_mode))
    err = EISDIR;
  else if (!S_ISREG (sb.st_mode))
    why = "not a regular file (a report is read from a regular file only)";
  else if (sb.st_size > CLI_REPORT_MAX)
    why = "larger than " CLI_REPORT_MAX_TEXT ", the limit of a report";
  if (err || why)
    {
      fprintf (stderr, "%s: cannot read %s: %s\n", progname, path,
               why ? why : strerror (err));
      if (fd >= 0)
        close (fd);
      return NULL;
    }
  /* The size fstat gave, and one byte more to see the end (a file that
     grows meanwhile is refused too).  */
  size_t cap = (size_t) sb.st_size + 1, n = 0;
  char *buf = malloc (cap);
  if (!buf)
    {
      fprintf (stderr, "%s: cannot read %s: %s\n", progname, path,
               strerror (ENOMEM));
      close (fd);
      *rc = EXIT_INTERNAL;
      return NULL;
    }
  for (;;)
    {
      ssize_t got = read (fd, buf + n, cap - n);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        err = errno;
      if (got <= 0)
        break;
      n += (size_t) got;
      if (n == cap)
        {
          why = "it grew while it was read";
          break;
        }
    }
  close (fd);
  if (err || why)
    {
      fprintf (stderr, "%s: cannot read %s: %s\n", progname, path,
               why ? why : strerror (err));
      free (buf);
      return NULL;
    }
  *len = n;
  return buf;
}

static int
cmd_merge (int argc, char **argv)
{
  cli_args a;
  memset (&a, 0, sizeof a);
  int rc = parse_args (argc, argv, &a);
  free (a.indices);
  if (rc >= 0)
    return rc;
  size_t n = (size_t) a.n_operands;
  if (n == 0)
    {
      usage_error ("merge needs at least one REPORT");
      return EXIT_USAGE;
    }
  gc_result **shards = calloc (n, sizeof *shards);
  if (!shards)
    return EXIT_INTERNAL;
  for (size_t k = 0; k < n && rc < 0; k++)
    {
      const char *path = a.operands[k];
      size_t len;
      int read_rc;
      char *text = read_report (path, &len, &read_rc);
      if (!text)
        {
          rc = read_rc;
          break;
        }
      gc_status st = gc_result_parse_json (text, len, &shards[k]);
      free (text);
      if (st == GC_EMISMATCH)
        {
          fprintf (stderr, "%s: %s disagrees with itself: the version that "
                   "wrote it is not the one in its identity\n", progname,
                   path);
          rc = EXIT_USAGE;
        }
      else if (st != GC_OK)
        {
          fprintf (stderr, "%s: %s is not a gradcheck JSON report: %s\n",
                   progname, path, gc_strerror (st));
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
          rc = emit (st, m, a.format, NULL);
          gc_result_free (m);
        }
    }
  for (size_t k = 0; k < n; k++)
    gc_result_free (shards[k]);
  free (shards);
  return rc;
}

static int
cmd_list (int argc, char **argv)
{
  cli_args a;
  memset (&a, 0, sizeof a);
  int rc = parse_args (argc, argv, &a);
  free (a.indices);
  return rc >= 0 ? rc : list_models ();
}

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
      print_help (stderr);
      return EXIT_USAGE;
    }
  argv[0] = (char *) progname;
  opterr = 1;
  int c = getopt_long (argc, argv, "+hV", longopts, NULL);
  if (c == 'h')
    {
      print_help (stdout);
      return EXIT_PASS;
    }
  if (c == 'V')
    return print_version ();
  if (c != -1)
    {
      usage_hint ();
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
      print_help (stdout);
      return EXIT_PASS;
    }
  if (!strcmp (cmd, "list"))
    return cmd_list (sub_argc, sub_argv);
  if (!strcmp (cmd, "run") || !strcmp (cmd, "oracle")
      || !strcmp (cmd, "explain") || cli_is_higher (cmd))
    return cmd_check (sub_argc, sub_argv);
  if (!strcmp (cmd, "sweep"))
    return cmd_sweep (sub_argc, sub_argv);
  if (!strcmp (cmd, "kernels"))
    return cli_kernels (sub_argc, sub_argv);
  if (!strcmp (cmd, "steps"))
    return cmd_steps (sub_argc, sub_argv);
  if (!strcmp (cmd, "merge"))
    return cmd_merge (sub_argc, sub_argv);
  usage_error ("unknown command '%s'; accepted: list, run, oracle, explain, "
               "sweep, kernels, steps, merge, jvp, hvp, taylor", cmd);
  return EXIT_USAGE;
}
