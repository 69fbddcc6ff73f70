/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* kernels.c -- which OpenBLAS kernels this CPU runs, decided once.

   OPENBLAS_CORETYPE is read when OpenBLAS loads, so each kernel needs a
   process of its own.  One probe process per kernel ("gradcheck kernels
   --probe" under OPENBLAS_CORETYPE=K) runs every built-in model's f32
   forward and backward on the shapes the test suites use and prints the
   kernel OpenBLAS loaded and a hash of those results' bits.  How it ends
   decides the kernel's state, by one rule (cli_outcome_of):

     - killed by SIGILL (or exit 77, or 128 + SIGILL from a shell): the CPU
       lacks the kernel's instructions: unsupported, never a failure;
     - any other signal, a non-zero exit, no output: a crash, a finding;
     - OpenBLAS loaded another kernel than the one named (its documented
       refusal: a CORETYPE it has no kernel for falls back to another):
       an alias of that kernel;
     - the same hash as a kernel probed before: grouped with it (the same
       f32 results on every cell the suites use);
     - else: a kernel of its own, run.

   gradcheck sweep, tests/kernels.sh (through tests/tap.sh) and
   bench/run.sh all take the decision from here; the kernel list below is
   the only one.  A kernel pinned by the environment (OPENBLAS_CORETYPE or
   OPENBLAS_L2_SIZE set) is never overridden: only it is probed.  */

#include "config.h"

#include "cli.h"

#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const cli_kernel_names[] = {
  "Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Sandybridge",
  "Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Atom",
  "Barcelona", "Bulldozer", "Piledriver", "Steamroller", "Excavator",
  "Opteron" };
const size_t cli_n_kernel_names
  = sizeof cli_kernel_names / sizeof cli_kernel_names[0];

bool
cli_kernel_pinned (void)
{
  return getenv ("OPENBLAS_CORETYPE") || getenv ("OPENBLAS_L2_SIZE");
}

const char *
cli_kernel_state_name (cli_kernel_state s)
{
  switch (s)
    {
    case CLI_K_RUN: return "run";
    case CLI_K_GROUPED: return "grouped";
    case CLI_K_ALIAS: return "alias";
    case CLI_K_UNSUPPORTED: return "unsupported";
    case CLI_K_CRASHED: return "crashed";
    case CLI_K_NOT_RUN: return "not-run";
    }
  return "?";
}

cli_outcome
cli_outcome_of (int status, char *why, size_t size)
{
  if (status < 0)
    {
      snprintf (why, size, "could not be started");
      return CLI_OUT_CRASH;
    }
  if (WIFSIGNALED (status))
    {
      int sig = WTERMSIG (status);
      snprintf (why, size, "%s (signal %d)", strsignal (sig), sig);
      return sig == SIGILL ? CLI_OUT_UNSUPPORTED : CLI_OUT_CRASH;
    }
  int code = WIFEXITED (status) ? WEXITSTATUS (status) : -1;
  if (code == CLI_EXIT_UNSUPPORTED || code == 128 + SIGILL)
    {
      snprintf (why, size, "%s (exit %d)", strsignal (SIGILL), code);
      return CLI_OUT_UNSUPPORTED;
    }
  snprintf (why, size, "exit %d", code);
  return code == 0 ? CLI_OUT_OK : CLI_OUT_EXIT;
}

int
cli_child_run (char *const *argv, const char *core, char **out)
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
  while (buf && (got = read (fd[0], buf + n, cap - n - 1)) != 0)
    {
      if (got < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
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

/* ------------------------------------------------------------ the probe */

/* The cells the probe evaluates: the shapes of tests/check_gdn.c,
   tests/check_kda.c and tests/kernels.sh, at the suites' default seed and
   the next two.  OpenBLAS dispatches by routine and size, so the shapes
   matter more than the values; two kernels that agree bit for bit on all
   of them run the same code on the suites' cells.  (The suites draw 20
   seeds; their values change no dispatch.)  */
static const char *const gdn_cells[] = {
  "T=1,BT=4", "T=3,BT=4", "T=4,BT=4", "T=5,BT=4", "T=37,BT=4", "T=69,BT=4",
  "T=1,BT=16", "T=15,BT=16", "T=16,BT=16", "T=17,BT=16", "T=37,BT=16",
  "T=69,BT=16", "T=9,BT=4,NORM=0", "T=9,BT=4,SIGMOID=0",
  "T=9,BT=4,NORM=0,SIGMOID=0", "T=9,BT=4" };
static const char *const kda_cells[] = {
  "T=11,BT=4,H=2,HV=2", "T=11,BT=4,H=2,HV=4", "T=9,BT=4,H=1,HV=2",
  "T=20,H=2,HV=4" };
/* The default shapes (the README's commands, tests/incident.sh,
   tests/commands.sh) and tests/kernels.sh's tanh-gemm.  */
static const char *const default_cells[][2] = {
  { "gdn", "" }, { "gdn", "GATE=1" }, { "kda", "" }, { "kda", "CHUNK=0" },
  { "tanh-gemm", "" }, { "tanh-gemm", "M=8,K=64,N=8" },
  { "tanh-gemm", "M=4,K=8,N=4" } };

static uint64_t
fnv (uint64_t h, const void *p, size_t n)
{
  const unsigned char *c = p;
  for (size_t k = 0; k < n; k++)
    h = (h ^ c[k]) * 1099511628211u;
  return h;
}

/* Hash the f32 loss and gradient of MODEL at SHAPE (with the extra keys
   EXTRA), every mutant included, into *H.  Returns false when a cell
   cannot be built or evaluated.  */
static bool
probe_cell (const char *model, const char *shape, const char *extra,
            uint64_t seed, uint64_t *h)
{
  const gcm_spec *spec = gcm_find (model);
  long v[GCM_MAX_KEYS];
  char err[256], text[256];
  snprintf (text, sizeof text, "%s%s%s", shape, *extra ? "," : "", extra);
  if (!spec || gcm_parse_shape (spec, text, v, err, sizeof err) != GC_OK)
    return false;
  for (int m = 0; m <= (int) spec->n_mutants; m++)
    {
      if (m > 0 && seed != 1)
        break;   /* mutants at one seed: they change code, not dispatch */
      gcm_instance *inst = NULL;
      if (gcm_create (spec, v, seed, m, &inst) != GC_OK)
        return false;
      size_t n = inst->model.n;
      float *g = malloc ((n + 1) * sizeof *g);
      bool ok = g && inst->model.loss_f32 (inst->model.ctx, inst->x, g + n) == 0
                && inst->model.grad_f32 (inst->model.ctx, inst->x, g) == 0;
      if (ok)
        *h = fnv (*h, g, (n + 1) * sizeof *g);
      free (g);
      gcm_destroy (inst);
      if (!ok)
        return false;
    }
  return true;
}

/* The probe child: print the kernel and the hash; exit 0, or 3 when a
   cell could not be evaluated (a crash, for the parent).  */
static int
probe (void)
{
  openblas_set_num_threads (1);
  uint64_t h = 1469598103934665603u;
  static const uint64_t seeds[] = { 1, 20261130, 20261131 };
  bool ok = true;
  for (size_t s = 0; s < sizeof seeds / sizeof seeds[0] && ok; s++)
    {
      for (size_t c = 0; c < sizeof gdn_cells / sizeof *gdn_cells && ok; c++)
        for (int gate = 0; gate < 2 && ok; gate++)
          ok = probe_cell ("gdn", gdn_cells[c], gate ? "GATE=1,H=1,K=4,V=4"
                           : "H=1,K=4,V=4", seeds[s], &h);
      for (size_t c = 0; c < sizeof kda_cells / sizeof *kda_cells && ok; c++)
        for (int form = 0; form < 8 && ok; form++)
          {
            char extra[64];
            snprintf (extra, sizeof extra, "K=4,V=4,CHUNK=%d,GATE=%d,STRONG=%d",
                      form & 1, (form >> 1) & 1, (form >> 2) & 1);
            if (c == 3)   /* the default K and V, as in the incident test */
              snprintf (extra, sizeof extra, "CHUNK=%d,GATE=%d,STRONG=%d",
                        form & 1, (form >> 1) & 1, (form >> 2) & 1);
            ok = probe_cell ("kda", kda_cells[c], extra, seeds[s], &h);
          }
      for (size_t c = 0; c < sizeof default_cells / sizeof *default_cells
                         && ok; c++)
        ok = probe_cell (default_cells[c][0], default_cells[c][1], "",
                         seeds[s], &h);
    }
  printf ("kernel %s\nfingerprint %016llx\n", openblas_get_corename (),
          (unsigned long long) h);
  return ok ? EXIT_PASS : EXIT_INTERNAL;
}

/* -------------------------------------------------------------- the plan */

size_t
cli_kernel_plan (cli_kernel *plan, bool verbose)
{
  bool pinned = cli_kernel_pinned ();
  size_t nk = pinned ? 1 : cli_n_kernel_names;
  char *argv[] = { "gradcheck", "kernels", "--probe", NULL };
  const char *env = getenv ("OPENBLAS_CORETYPE");
  size_t listed = 0;
  if (pinned)   /* the others are listed, never loaded */
    for (size_t k = 0; k < cli_n_kernel_names; k++)
      {
        if (env && !strcasecmp (env, cli_kernel_names[k]))
          continue;   /* the pinned one itself: plan[0] */
        cli_kernel *p = &plan[++listed];
        memset (p, 0, sizeof *p);
        p->coretype = cli_kernel_names[k];
        p->state = CLI_K_NOT_RUN;
        p->group = listed;
        snprintf (p->reason, sizeof p->reason, "the environment pins a "
                  "kernel (rule: never override it)");
      }
  for (size_t k = 0; k < nk; k++)
    {
      cli_kernel *p = &plan[k];
      memset (p, 0, sizeof *p);
      p->coretype = pinned ? NULL : cli_kernel_names[k];
      p->group = k;
      if (verbose)
        fprintf (stderr, "%s: probing kernel %s (%zu of %zu)\n", progname,
                 p->coretype ? p->coretype : "(pinned)", k + 1, nk);
      char *out = NULL;
      int st = cli_child_run (argv, p->coretype, &out);
      char why[96];
      cli_outcome oc = cli_outcome_of (st, why, sizeof why);
      unsigned long long fp = 0;
      const char *kl = out ? strstr (out, "kernel ") : NULL;
      const char *fl = out ? strstr (out, "fingerprint ") : NULL;
      bool parsed = kl && fl && sscanf (kl + 7, "%63s", p->name) == 1
                    && sscanf (fl + 12, "%llx", &fp) == 1;
      free (out);
      p->fingerprint = fp;
      if (oc == CLI_OUT_UNSUPPORTED)
        {
          p->state = CLI_K_UNSUPPORTED;
          snprintf (p->reason, sizeof p->reason, "the probe died: %s", why);
          continue;
        }
      if (oc != CLI_OUT_OK || !parsed)
        {
          p->state = CLI_K_CRASHED;
          snprintf (p->reason, sizeof p->reason, "the probe %s: %s",
                    oc == CLI_OUT_CRASH ? "crashed" : "failed",
                    oc == CLI_OUT_OK ? "no kernel in its output" : why);
          continue;
        }
      p->state = CLI_K_RUN;
      for (size_t j = 0; j < k; j++)
        {
          const cli_kernel *q = &plan[j];
          if (q->state != CLI_K_RUN && q->state != CLI_K_GROUPED
              && q->state != CLI_K_ALIAS)
            continue;
          if (!strcmp (q->name, p->name))
            {
              p->state = CLI_K_ALIAS;
              p->group = q->group;
              snprintf (p->reason, sizeof p->reason, "OpenBLAS loads %s for "
                        "this CORETYPE", p->name);
              break;
            }
          if (q->fingerprint == p->fingerprint && p->state == CLI_K_RUN)
            {
              p->state = CLI_K_GROUPED;
              p->group = q->group;
              snprintf (p->reason, sizeof p->reason, "the same f32 results "
                        "as %s on every cell of the suites", plan[q->group].name);
            }
        }
    }
  return pinned ? 1 + listed : nk;
}

/* ------------------------------------------------------------ the command */

static const char kernels_help[] =
"Usage: gradcheck kernels [OPTION]...\n"
"Probe every OpenBLAS kernel in a process of its own and print which this\n"
"CPU runs: 'run' (a kernel of its own), 'grouped' (the same f32 results as\n"
"an earlier kernel on every cell of the test suites), 'alias' (OpenBLAS\n"
"loads another kernel for this name), 'unsupported' (the probe died of\n"
"SIGILL: the CPU lacks the kernel's instructions) or 'crashed' (any other\n"
"death, or a failed probe: a finding).  A kernel pinned by the environment\n"
"(OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE) is the only one probed; the\n"
"others are listed as 'not-run'.\n"
"\n"
"  --format text|tsv   a table (default), or tab-separated lines:\n"
"                      CORETYPE KERNEL STATE GROUP FINGERPRINT REASON\n"
"                      (CORETYPE '-' when pinned, GROUP the CORETYPE that\n"
"                      runs for this one)\n"
"  --probe             be the probe: print this process's kernel and the\n"
"                      hash of its f32 results on the suites' cells\n"
"  -v, --verbose       one progress line per probe on stderr\n"
"  -h, --help          this help\n"
"\n"
"Exit status: 0 when no probe crashed, 1 when one did, 2 usage error.\n";

int
cli_kernels (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "format", required_argument, NULL, 'f' },
    { "probe", no_argument, NULL, 'p' },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 } };
  bool tsv = false, verbose = false;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "vh", longopts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        if (!strcmp (optarg, "tsv"))
          tsv = true;
        else if (strcmp (optarg, "text"))
          {
            usage_error ("kernels: --format takes text or tsv, not '%s'",
                         optarg);
            return EXIT_USAGE;
          }
        break;
      case 'p':
        return probe ();
      case 'v':
        verbose = true;
        break;
      case 'h':
        fputs (kernels_help, stdout);
        printf ("\nReport bugs to: %s\n%s home page: <%s>\n",
                PACKAGE_BUGREPORT, PACKAGE_NAME, PACKAGE_URL);
        return EXIT_PASS;   /* stdout is checked at exit (closeout.c) */
      default:
        usage_error ("kernels: bad option");
        return EXIT_USAGE;
      }
  if (optind < argc)
    {
      usage_error ("kernels: unexpected argument '%s'", argv[optind]);
      return EXIT_USAGE;
    }
  cli_kernel plan[sizeof cli_kernel_names / sizeof cli_kernel_names[0] + 1];
  size_t n = cli_kernel_plan (plan, verbose);
  size_t crashed = 0;
  if (!tsv)
    printf ("%-17s %-15s %-12s %s\n", "OPENBLAS_CORETYPE", "kernel", "state",
            "group / reason");
  for (size_t k = 0; k < n; k++)
    {
      const cli_kernel *p = &plan[k];
      const char *ct = p->coretype ? p->coretype : "-";
      const char *grp = plan[p->group].coretype ? plan[p->group].coretype
                        : "-";
      crashed += p->state == CLI_K_CRASHED;
      if (tsv)
        printf ("%s\t%s\t%s\t%s\t%016llx\t%s\n", ct, p->name[0] ? p->name : "-",
                cli_kernel_state_name (p->state), grp,
                (unsigned long long) p->fingerprint,
                p->reason[0] ? p->reason : "-");
      else if (p->state == CLI_K_GROUPED || p->state == CLI_K_ALIAS)
        printf ("%-17s %-15s %-12s with %s: %s\n", ct, p->name,
                cli_kernel_state_name (p->state), grp, p->reason);
      else
        printf ("%-17s %-15s %-12s %s\n", p->coretype ? ct : "(pinned)",
                p->name[0] ? p->name : "-", cli_kernel_state_name (p->state),
                p->reason);
    }
  if (!tsv && cli_kernel_pinned ())
    {
      printf ("(the environment pins a kernel:");
      if (getenv ("OPENBLAS_CORETYPE"))
        printf (" OPENBLAS_CORETYPE=%s", getenv ("OPENBLAS_CORETYPE"));
      if (getenv ("OPENBLAS_L2_SIZE"))
        printf (" OPENBLAS_L2_SIZE=%s", getenv ("OPENBLAS_L2_SIZE"));
      printf ("; no other kernel was probed)\n");
    }
  return crashed ? EXIT_FAILED : EXIT_PASS;   /* stdout: closeout.c */
}
