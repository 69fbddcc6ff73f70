/* main.c -- the gradcheck command: check a built-in model's backward
   against MPFR central differences and print the verdict with its
   derivation.

   Exit codes: 0 pass, 1 the check failed (or found a non-smooth point),
   2 usage or input error, 3 internal error.  */

#include "config.h"

#include "gradcheck.h"
#include "models.h"

#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

static const char *progname = "gradcheck";

static void
usage_error (const char *fmt, const char *arg)
{
  fprintf (stderr, "%s: ", progname);
  fprintf (stderr, fmt, arg);
  fprintf (stderr, "\nTry '%s --help' for more information.\n", progname);
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
"  run [MODEL]        check MODEL's gradient (default model: %s); print\n"
"                     the verdict and the derivation of the worst bar\n"
"  oracle [MODEL]     the forward oracle: MODEL's f32 outputs against its\n"
"                     MPFR reference outputs, element by element\n"
"\n"
"Options for run (oracle takes --shape, --seed, --mutant, --prec,\n"
"--format, --false-alarm):\n"
"  --ref mpfr|f32|f64      reference forward (default mpfr)\n"
"  --prec BITS             MPFR precision (default: derived, 128)\n"
"  --step H                absolute step (default: derived per parameter)\n"
"  --shape K=V,...         model shape, e.g. M=8,K=16,N=8\n"
"  --seed N                seed of the model's inputs and random directions\n"
"  --directions all|random:K|I,J,...   which directions to check\n"
"  --mutant NAME           check a known-buggy backward from the catalogue\n"
"  --format text|json|md|tap   report format (default text)\n"
"  --threads N             directions in parallel (results identical)\n"
"  --false-alarm P         accepted false-alarm probability (default 1e-6)\n"
"\n"
"  -h, --help              this help\n"
"  -V, --version           version and OpenBLAS kernel\n"
"\n"
"Exit status: 0 pass, 1 the check failed (or hit a non-smooth point),\n"
"2 usage or input error, 3 internal error.\n"
"The manual (info gradcheck) derives every term of the bar.\n",
           gcm_default_name ());
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
      printf ("\n  mutants:");
      if (s->n_mutants == 0)
        printf (" none");
      for (size_t k = 0; k < s->n_mutants; k++)
        printf ("\n    %-22s %s", s->mutants[k].name, s->mutants[k].help);
      printf ("\n");
    }
  return EXIT_PASS;
}

typedef struct run_args
{
  const char *model;
  const char *shape;
  const char *mutant;
  gc_format format;
  gc_options opts;
  size_t *indices;
  uint64_t seed;
} run_args;

static bool
parse_u64 (const char *s, uint64_t *out)
{
  char *end;
  errno = 0;
  if (!s || !*s || *s == '-')
    return false;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || *end)
    return false;
  *out = v;
  return true;
}

static bool
parse_directions (const char *s, run_args *a)
{
  gc_options *o = &a->opts;
  if (strcmp (s, "all") == 0)
    {
      o->directions = GC_DIR_ALL;
      return true;
    }
  if (strncmp (s, "random:", 7) == 0)
    {
      uint64_t k;
      if (!parse_u64 (s + 7, &k) || k == 0 || k > 100000000)
        return false;
      o->directions = GC_DIR_RANDOM;
      o->n_random = (size_t) k;
      return true;
    }
  size_t count = 1;
  for (const char *p = s; *p; p++)
    count += *p == ',';
  free (a->indices);
  a->indices = malloc (count * sizeof *a->indices);
  if (!a->indices)
    return false;
  size_t k = 0;
  const char *p = s;
  while (k < count)
    {
      char *end;
      errno = 0;
      if (*p < '0' || *p > '9')
        return false;
      unsigned long long v = strtoull (p, &end, 10);
      if (errno || (*end != ',' && *end != 0))
        return false;
      a->indices[k++] = (size_t) v;
      p = *end ? end + 1 : end;
    }
  o->directions = GC_DIR_LIST;
  o->indices = a->indices;
  o->n_indices = count;
  return true;
}

static bool
parse_format (const char *s, gc_format *f)
{
  static const struct { const char *name; gc_format f; } fm[] = {
    { "text", GC_FMT_TEXT }, { "json", GC_FMT_JSON },
    { "md", GC_FMT_MARKDOWN }, { "markdown", GC_FMT_MARKDOWN },
    { "tap", GC_FMT_TAP } };
  for (size_t k = 0; k < sizeof fm / sizeof fm[0]; k++)
    if (strcmp (s, fm[k].name) == 0)
      {
        *f = fm[k].f;
        return true;
      }
  return false;
}

/* Parse run's options; returns -1 to go on, or an exit code.  */
static int
parse_run (int argc, char **argv, run_args *a)
{
  enum { O_REF = 256, O_PREC, O_STEP, O_SHAPE, O_SEED, O_DIRS, O_MUTANT,
         O_FORMAT, O_THREADS, O_ALPHA };
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
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 } };
  gc_options_init (&a->opts);
  a->seed = 1;
  a->format = GC_FMT_TEXT;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long (argc, argv, ":hV", longopts, NULL)) != -1)
    {
      uint64_t u;
      char *end;
      switch (c)
        {
        case 'h':
          print_help (stdout);
          return EXIT_PASS;
        case 'V':
          printf ("gradcheck %s (OpenBLAS kernel %s)\n", PACKAGE_VERSION,
                  openblas_get_corename ());
          return EXIT_PASS;
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
          if (!parse_u64 (optarg, &u) || u < 25 || u > 1000000)
            {
              usage_error ("bad --prec '%s': accepted: an integer number of "
                           "bits from 25 to 1000000", optarg);
              return EXIT_USAGE;
            }
          a->opts.precision = (mpfr_prec_t) u;
          break;
        case O_STEP:
          errno = 0;
          a->opts.step = strtod (optarg, &end);
          if (errno || *end || !(a->opts.step > 0) || a->opts.step > 1e30)
            {
              usage_error ("bad --step '%s': accepted: a positive number",
                           optarg);
              return EXIT_USAGE;
            }
          break;
        case O_SHAPE:
          a->shape = optarg;
          break;
        case O_SEED:
          if (!parse_u64 (optarg, &u))
            {
              usage_error ("bad --seed '%s': accepted: a non-negative "
                           "integer", optarg);
              return EXIT_USAGE;
            }
          a->seed = u;
          a->opts.seed = u;
          break;
        case O_DIRS:
          if (!parse_directions (optarg, a))
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
          if (!parse_format (optarg, &a->format))
            {
              usage_error ("bad --format '%s': accepted: text, json, md, tap",
                           optarg);
              return EXIT_USAGE;
            }
          break;
        case O_THREADS:
          if (!parse_u64 (optarg, &u) || u == 0 || u > 1024)
            {
              usage_error ("bad --threads '%s': accepted: 1 to 1024", optarg);
              return EXIT_USAGE;
            }
          a->opts.threads = (unsigned) u;
          break;
        case O_ALPHA:
          errno = 0;
          a->opts.false_alarm = strtod (optarg, &end);
          if (errno || *end || !(a->opts.false_alarm > 0)
              || !(a->opts.false_alarm < 1))
            {
              usage_error ("bad --false-alarm '%s': accepted: a probability "
                           "in (0, 1)", optarg);
              return EXIT_USAGE;
            }
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
  return -1;
}

/* run and oracle: the gradient check, or the forward oracle.  */
static int
cmd_run (int argc, char **argv, bool oracle)
{
  run_args a;
  memset (&a, 0, sizeof a);
  int rc = parse_run (argc, argv, &a);
  if (rc >= 0)
    {
      free (a.indices);
      return rc;
    }
  const char *name = a.model ? a.model : gcm_default_name ();
  const gcm_spec *spec = gcm_find (name);
  if (!spec)
    {
      fprintf (stderr, "%s: unknown model '%s'; accepted:", progname, name);
      for (size_t i = 0; i < gcm_count (); i++)
        fprintf (stderr, " %s", gcm_get (i)->name);
      fprintf (stderr, "\n");
      free (a.indices);
      return EXIT_USAGE;
    }
  long values[GCM_MAX_KEYS];
  char err[256];
  if (gcm_parse_shape (spec, a.shape, values, err, sizeof err) != GC_OK)
    {
      fprintf (stderr, "%s: %s\n", progname, err);
      free (a.indices);
      return EXIT_USAGE;
    }
  int mutant = gcm_mutant_index (spec, a.mutant);
  if (mutant < 0)
    {
      fprintf (stderr, "%s: unknown mutant '%s' for model %s; accepted: none",
               progname, a.mutant, spec->name);
      for (size_t k = 0; k < spec->n_mutants; k++)
        fprintf (stderr, ", %s", spec->mutants[k].name);
      fprintf (stderr, "\n");
      free (a.indices);
      return EXIT_USAGE;
    }
  gcm_instance *inst;
  gc_status st = gcm_create (spec, values, a.seed, mutant, &inst);
  if (st != GC_OK)
    {
      fprintf (stderr, "%s: cannot build model %s at this shape: %s\n",
               progname, spec->name, st == GC_EINVAL
               ? "the shape keys contradict each other (see gradcheck list)"
               : gc_strerror (st));
      free (a.indices);
      return st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
  /* Directions run in our own threads: OpenBLAS gets one thread per worker,
     so that results do not depend on --threads.  */
  openblas_set_num_threads (1);
  gc_result *r = NULL;
  st = oracle ? gc_forward_check (&inst->model, inst->x, &a.opts, &r)
              : gc_check (&inst->model, inst->x, &a.opts, &r);
  int code;
  if (!r)
    {
      fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
      code = st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
  else
    {
      char *text = gc_report (r, a.format);
      if (!text)
        {
          fprintf (stderr, "%s: out of memory\n", progname);
          code = EXIT_INTERNAL;
        }
      else
        {
          if (a.format == GC_FMT_TEXT)
            printf ("OpenBLAS kernel: %s\n", openblas_get_corename ());
          fputs (text, stdout);
          free (text);
          if (st != GC_OK)
            {
              if (strcmp (r->detail, gc_strerror (st)) != 0)
                fprintf (stderr, "%s: %s: %s\n", progname, gc_strerror (st),
                         r->detail);
              else
                fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
              code = st == GC_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
            }
          else
            code = r->verdict == GC_PASS ? EXIT_PASS : EXIT_FAILED;
        }
      gc_result_free (r);
    }
  gcm_destroy (inst);
  free (a.indices);
  if (fflush (stdout) != 0)
    code = EXIT_INTERNAL;
  return code;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      print_help (stderr);
      return EXIT_USAGE;
    }
  const char *cmd = argv[1];
  if (strcmp (cmd, "-h") == 0 || strcmp (cmd, "--help") == 0
      || strcmp (cmd, "help") == 0)
    {
      print_help (stdout);
      return EXIT_PASS;
    }
  if (strcmp (cmd, "-V") == 0 || strcmp (cmd, "--version") == 0)
    {
      printf ("gradcheck %s (OpenBLAS kernel %s)\n", PACKAGE_VERSION,
              openblas_get_corename ());
      return EXIT_PASS;
    }
  if (strcmp (cmd, "list") == 0)
    {
      if (argc > 2)
        {
          if (strcmp (argv[2], "--help") == 0 || strcmp (argv[2], "-h") == 0)
            {
              printf ("Usage: gradcheck list\nList the built-in models, their "
                      "shape keys with defaults, and their mutants.\n");
              return EXIT_PASS;
            }
          usage_error ("unexpected argument '%s' to list", argv[2]);
          return EXIT_USAGE;
        }
      return cmd_list ();
    }
  if (strcmp (cmd, "run") == 0)
    return cmd_run (argc - 1, argv + 1, false);
  if (strcmp (cmd, "oracle") == 0)
    return cmd_run (argc - 1, argv + 1, true);
  usage_error ("unknown command '%s'; accepted: list, run, oracle", cmd);
  return EXIT_USAGE;
}
