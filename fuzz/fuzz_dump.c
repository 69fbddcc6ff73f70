/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* fuzz_dump.c -- libFuzzer target: the --dump writer (gradcheck/npy.c)
   over fuzzed descriptions, as a plugin hands them over and gc_check lets
   them through: parameter blocks and output blocks with any name (NULL,
   empty, colliding after sanitising, long, odd bytes), offset, count,
   ndim and shape; the model's extra tensors; a result whose directions
   name any index.  Each input dumps into a fresh directory under one
   temporary directory, sometimes with a symlink planted under a name the
   dump will write.  Beyond the sanitizers, a finding is: a planted
   symlink's target changed, a temporary file left behind, a successful
   dump without its manifest, or a .npy whose size disagrees with the
   manifest.  */

#include "cli.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *progname = "fuzz_dump";

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

typedef struct bytes
{
  const uint8_t *p;
  size_t n;
} bytes;

static unsigned
take (bytes *b, unsigned limit)
{
  if (!b->n || !limit)
    return 0;
  unsigned v = *b->p++;
  b->n--;
  return v % limit;
}

enum { NMAX = 64, BMAX = 6, EMAX = 8 };
static size_t model_n, model_no;
static char root[] = "/tmp/fuzz_dump.XXXXXX";
static unsigned long serial;

static int
grad (void *ctx, const float *x, float *g)
{
  (void) ctx;
  for (size_t i = 0; i < model_n; i++)
    g[i] = 2 * x[i];
  return 0;
}

static int
outputs (void *ctx, const float *x, float *o)
{
  (void) ctx;
  for (size_t k = 0; k < model_no; k++)
    o[k] = x[k % model_n] + (float) k;
  return 0;
}

static int
loss (void *ctx, const float *x, float *l)
{
  (void) ctx;
  *l = x[0];
  return 0;
}

static const char *
pick_name (bytes *b, char *buf, size_t size)
{
  static const char *const names[] = {
    NULL, "", "q", "grad_q", "a.b", "a_b", "x", "o", "ref_grad_q",
    "manifest", "..", "/etc/passwd", "a/b", "dO", "name with spaces",
    "\xff\xfe", "out_o" };
  unsigned k = take (b, sizeof names / sizeof names[0] + 2);
  if (k < sizeof names / sizeof names[0])
    return names[k];
  if (k == sizeof names / sizeof names[0])
    {
      /* a long name: 100 to 350 characters  */
      size_t len = 100 + take (b, 251);
      if (len >= size)
        len = size - 1;
      memset (buf, 'n', len);
      buf[len] = 0;
      return buf;
    }
  /* a few fuzzed bytes  */
  size_t len = 1 + take (b, 8);
  for (size_t i = 0; i < len; i++)
    buf[i] = (char) (1 + take (b, 255));
  buf[len] = 0;
  return buf;
}

static void
fuzz_blocks (bytes *b, gc_block *bl, size_t nb, size_t total,
             char names[][400])
{
  size_t off = 0;
  for (size_t k = 0; k < nb; k++)
    {
      bl[k].name = pick_name (b, names[k], sizeof names[k]);
      unsigned mode = take (b, 4);
      size_t rest = total > off ? total - off : 0;
      bl[k].offset = mode ? off : take (b, 70);
      bl[k].count = mode == 1 && k + 1 == nb ? rest
                    : mode ? 1 + take (b, rest ? (unsigned) rest : 1)
                    : take (b, 2) ? take (b, 200) : (size_t) 1000000;
      bl[k].ndim = take (b, 4) ? 1 : take (b, 1001);
      for (size_t a = 0; a < GC_MAX_DIMS; a++)
        bl[k].shape[a] = take (b, 4);
      if (bl[k].ndim == 1 && take (b, 4))
        bl[k].shape[0] = bl[k].count;
      off = bl[k].offset + bl[k].count;
    }
}

/* Remove DIR's entries (and DIR); check the invariants on the way.  */
static void
sweep (const char *dir, bool ok, const char *planted, const char *target)
{
  char path[4096];
  DIR *d = opendir (dir);
  if (!d)
    return;
  bool manifest = false;
  struct dirent *e;
  while ((e = readdir (d)))
    {
      if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
        continue;
      if (!strncmp (e->d_name, ".gcdump-", 8))
        {
          fprintf (stderr, "temporary file left: %s\n", e->d_name);
          abort ();
        }
      if (!strcmp (e->d_name, "manifest.txt"))
        manifest = true;
      snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
      unlink (path);
    }
  closedir (d);
  rmdir (dir);
  if (ok && !manifest)
    {
      fprintf (stderr, "a dump that succeeded has no manifest\n");
      abort ();
    }
  if (planted)
    {
      FILE *f = fopen (target, "r");
      char buf[16] = { 0 };
      if (!f || !fgets (buf, sizeof buf, f) || strcmp (buf, "keep\n") != 0)
        {
          fprintf (stderr, "the planted symlink %s was followed\n", planted);
          abort ();
        }
      fclose (f);
    }
}

/* The manifest's sizes against the files.  */
static void
check_manifest (const char *dir)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/manifest.txt", dir);
  FILE *f = fopen (path, "r");
  if (!f)
    return;
  char line[1024];
  while (fgets (line, sizeof line, f))
    {
      char file[512];
      unsigned long long bytes;
      if (sscanf (line, "file %511s shape %*s bytes %llu", file, &bytes) != 2)
        continue;
      snprintf (path, sizeof path, "%s/%s", dir, file);
      struct stat st;
      if (stat (path, &st) != 0 || (unsigned long long) st.st_size != bytes)
        {
          fprintf (stderr, "manifest says %s has %llu bytes\n", file, bytes);
          abort ();
        }
    }
  fclose (f);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  if (!mkdtemp (root))
    abort ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  bytes b = { data, size };
  static float x[NMAX];
  model_n = 1 + take (&b, NMAX);
  for (size_t i = 0; i < model_n; i++)
    x[i] = (float) ((int) take (&b, 256) - 128) / 16.0f;
  gc_model m;
  memset (&m, 0, sizeof m);
  m.abi = GC_MODEL_ABI;
  m.n = model_n;
  m.loss_f32 = loss;
  m.grad_f32 = grad;
  static gc_block blocks[BMAX], oblocks[BMAX];
  static char names[BMAX][400], onames[BMAX][400];
  m.n_blocks = take (&b, BMAX + 1);
  fuzz_blocks (&b, blocks, m.n_blocks, model_n, names);
  m.blocks = blocks;
  model_no = take (&b, 3) ? 1 + take (&b, 40) : 0;
  if (model_no)
    {
      m.n_outputs = model_no;
      m.outputs_f32 = outputs;
      m.n_output_blocks = take (&b, BMAX + 1);
      fuzz_blocks (&b, oblocks, m.n_output_blocks, model_no, onames);
      m.output_blocks = oblocks;
    }
  /* gc_check refuses parameter blocks that do not partition [0, n): the
     command dumps only after a check that ran, so such blocks stop here
     unless the input asks to go on (the dump must refuse them too).  */
  size_t next = 0;
  bool partition = true;
  for (size_t k = 0; k < m.n_blocks; k++)
    {
      if (blocks[k].offset != next || blocks[k].count == 0)
        partition = false;
      next = blocks[k].offset + blocks[k].count;
    }
  if (m.n_blocks && next != model_n)
    partition = false;
  if (!partition && take (&b, 2))
    return 0;

  /* the model's extra tensors (built-in models' cotangents): data of the
     size their shape says, as the catalogue guarantees  */
  static gcm_instance inst;
  static float extra[EMAX][256];
  static char enames[EMAX][400];
  memset (&inst, 0, sizeof inst);
  inst.n_extra = take (&b, EMAX + 1);
  for (size_t k = 0; k < inst.n_extra; k++)
    {
      inst.extra[k].name = pick_name (&b, enames[k], sizeof enames[k]);
      inst.extra[k].data = extra[k];
      inst.extra[k].ndim = 1 + take (&b, 3);
      size_t prod = 1;
      for (size_t a = 0; a < inst.extra[k].ndim; a++)
        {
          inst.extra[k].shape[a] = 1 + take (&b, 6);
          prod *= inst.extra[k].shape[a];
        }
      for (size_t i = 0; i < prod; i++)
        extra[k][i] = (float) i;
    }
  cli_model cm = { &m, x, take (&b, 2) ? &inst : NULL, NULL };

  gc_result r;
  memset (&r, 0, sizeof r);
  static gc_direction dirs[NMAX];
  r.kind = take (&b, 4) ? GC_CHECK_GRADIENT : GC_CHECK_FORWARD;
  r.n_directions = take (&b, NMAX + 1);
  r.dirs = take (&b, 8) ? dirs : NULL;
  if (!r.dirs)
    r.n_directions = 0;
  for (size_t k = 0; k < r.n_directions; k++)
    {
      unsigned w = take (&b, 4);
      dirs[k].index = w == 0 ? SIZE_MAX : w == 1 ? model_n + take (&b, 10)
                      : take (&b, (unsigned) model_n);
      dirs[k].reference = (double) take (&b, 256) - 128;
    }
  static char mbuf[400];
  const char *mn = pick_name (&b, mbuf, 64);
  snprintf (r.model_name, sizeof r.model_name, "%s", mn ? mn : "fuzz\nmodel");
  r.verdict = (gc_verdict) take (&b, 4);

  char dir[4096];
  snprintf (dir, sizeof dir, "%s/d%lu", root, serial++);
  char planted[4096] = "", target[4096] = "";
  if (take (&b, 4) == 0)
    {
      /* a symlink under a name the dump may write  */
      mkdir (dir, 0777);
      snprintf (target, sizeof target, "%s/target", root);
      FILE *f = fopen (target, "w");
      if (f)
        {
          fputs ("keep\n", f);
          fclose (f);
        }
      const char *nm = m.n_blocks && blocks[0].name ? blocks[0].name : "x";
      char safe[200];
      size_t k = 0;
      for (const char *p = nm; *p && k + 1 < sizeof safe; p++)
        safe[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
                    || (*p >= '0' && *p <= '9') || *p == '_' ? *p : '_';
      safe[k] = 0;
      snprintf (planted, sizeof planted, "%s/grad_%s.npy", dir, safe);
      if (symlink (target, planted) != 0)
        planted[0] = 0;
    }
  int rc = cli_dump (dir, &cm, &r);
  if (rc < 0)
    check_manifest (dir);
  sweep (dir, rc < 0, planted[0] ? planted : NULL, target);
  return 0;
}
