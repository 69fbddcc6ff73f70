/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* options.c -- the options of gradcheck's subcommands: one table of every
   option (its value, the subcommands it applies to, its line of --help),
   --help and --version, and the parser each subcommand calls.  An option
   given to a subcommand it does not apply to is refused (exit 2)  */

#include "config.h"

#include "cli.h"

#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    "all|random:K|random-per-block:K|screen:K|I,J,...",
    "which directions to check (random-per-block: K random directions "
    "within each tensor; screen: those, then every coordinate of a tensor "
    "where one did not pass)" },
  { "format", O_FORMAT, C_RUN | C_ORACLE | C_EXPLAIN | C_SWEEP | C_MERGE
    | C_HIGHER,
    "text|json|md|tap", "report format (default text; explain: md)" },
  { "threads", O_THREADS, C_RUN | C_SWEEP, "N",
    "directions in parallel (results identical)" },
  { "shard", O_SHARD, C_RUN | C_SWEEP | C_JVP | C_HVP, "I/N",
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
"passes, the f32 arithmetic errs beyond its derived bound).  sweep and\n"
"taylor, of several checks, exit with the worst of their statuses in the\n"
"order 5, 3, 2, 1, 6, 4, 0.\n"
"The manual (info gradcheck) derives every term of the bar.\n"
"\n"
"Report bugs to: %s\n"
"%s home page: <%s>\n", PACKAGE_BUGREPORT, PACKAGE_NAME, PACKAGE_URL);
}

void
cli_print_help (FILE *f)
{
  fprintf (f,
"Usage: gradcheck COMMAND [OPTION]... [MODEL]\n"
"Check the analytic gradient (backward) of an f32 model against central\n"
"finite differences of a reference forward in f64 or GNU MPFR (by default\n"
"f64, and MPFR wherever f64 may not give MPFR's verdict), with a pass bar\n"
"derived from an error model; every verdict shows its derivation.\n"
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
    "The Taylor test along one direction (--directions I: coordinate I;\n"
    "random:1 or none given: a random one; more than one is refused): the\n"
    "remainders' rates against eps, 2 expected, 3 with the HVP (manual:\n"
    "\"The Taylor test\")." },
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
int
cli_print_version (void)
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

/* ---------------------------------------------------------------------- */
/* Option parsing.  */

/* After a message of getopt's own ("option '--s' is ambiguous; ...").  */
void
cli_usage_hint (void)
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

enum { NOT_MINE = -2 };   /* an option another handler takes */

/* The options that say which model, from where, and what becomes of its
   check: --shape, --seed, --mutant, --plugin, --index, --dump, --output,
   --format, --quiet.  Returns -1, an exit code, or NOT_MINE.  */
static int
model_option (int c, cli_args *a)
{
  uint64_t u;
  int rc = -1;
  switch (c)
    {
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
  case O_MUTANT:
    if (!nonempty ("mutant", "a mutant's name (gradcheck list names "
                   "them) or none"))
      rc = EXIT_USAGE;
    a->mutant = optarg;
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
  case O_DUMP:
    if (!nonempty ("dump", "a directory"))
      rc = EXIT_USAGE;
    a->dump = optarg;
    break;
  case O_OUTPUT:
    if (!nonempty ("output", "a file name"))
      rc = EXIT_USAGE;
    a->output = optarg;
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
  case O_QUIET:
    a->quiet = true;
    break;
    default:
      return NOT_MINE;
    }
  return rc;
}

/* The options of the check itself, into A->opts: --ref, --prec, --step,
   --directions, --threads, --false-alarm, --shard, --twin, --timeout.
   Returns -1, an exit code, or NOT_MINE.  */
static int
check_option (int c, cli_args *a)
{
  uint64_t u;
  int rc = -1;
  switch (c)
    {
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
  case O_DIRS:
    a->dirs_set = true;
    if (!cli_parse_directions (optarg, &a->opts, &a->indices))
      {
        usage_error ("bad --directions '%s': accepted: all, random:K, "
                     "random-per-block:K, screen:K, "
                     "or a list of indices I,J,...", optarg);
        rc = EXIT_USAGE;
      }
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
        rc = EXIT_USAGE;
      }
    break;
    default:
      return NOT_MINE;
    }
  return rc;
}

/* getopt_long's table: every option of cli_options, --help, --version.  */
static const struct option *
long_options (void)
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
  return longopts;
}

/* Parse the options of subcommand ARGV[0] with getopt_long; what follows
   them (in any order: GNU getopt permutes, and "--" ends the options)
   goes to A->operands.  Returns -1 to go on, or an exit code.  */
int
cli_parse_options (int argc, char **argv, cli_args *a)
{
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
  const struct option *longopts = long_options ();
  while (rc < 0 && (c = getopt_long (argc, argv, "hV", longopts, NULL)) != -1)
    {
      if (c == '?')
        {
          cli_usage_hint ();
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
      if (c == 'h')
        rc = print_cmd_help (argv0);
      else if (c == 'V')
        rc = cli_print_version ();
      else if ((rc = model_option (c, a)) == NOT_MINE
               && (rc = check_option (c, a)) == NOT_MINE)
        {
          cli_usage_hint ();
          rc = EXIT_USAGE;
        }
    }
  a->operands = argv + optind;
  a->n_operands = argc - optind;
  argv[0] = argv0;
  return rc;
}

/* The operand of a subcommand that checks a model: at most one MODEL, and
   not with --plugin.  Returns -1 to go on, or an exit code.  */
int
cli_model_operand (cli_args *a)
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
  return -1;
}

int
cli_parse_plain (int argc, char **argv, cli_args *a)
{
  memset (a, 0, sizeof *a);
  int rc = cli_parse_options (argc, argv, a);
  free (a->indices);
  a->indices = NULL;
  return rc;
}
