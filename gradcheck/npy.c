/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* npy.c -- --dump DIR: the tensors of a check as NumPy .npy files (format
   version 1.0: magic, little-endian header dict padded to 64 bytes, raw
   little-endian float32 data), named after the model's tensors, so that a
   failing check can be inspected with numpy.load.

   The descriptions come from the model (a plugin's are untrusted): every
   block is validated and every file name worked out before anything is
   written, and names that would collide are refused.  Each file is written
   under a temporary name created exclusively (O_EXCL | O_NOFOLLOW: a
   planted symlink is never followed) and renamed into place at the end,
   under a lock of the directory, the manifest last: a dump is complete
   when its manifest.txt names it (manual: "Dumping the tensors").  An
   interrupted or failed dump removes its temporary files.  */

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* File names are the tensor's name with every character outside
   [A-Za-z0-9_] replaced by '_', a prefix and ".npy": at most this long,
   so that the temporary name fits NAME_MAX.  */
#define NAME_LEN_MAX 160
#define TMP_PREFIX ".gcdump-"

typedef struct tensor
{
  const char *name;        /* the model's name, for messages */
  const char *role;        /* "parameters", "gradient", ... for messages */
  char file[NAME_LEN_MAX + 32];
  char tmp[NAME_LEN_MAX + 64];
  const float *data;
  size_t ndim;
  size_t shape[GC_MAX_DIMS];
  size_t count;
  uint64_t hash;           /* FNV-1a of the file's bytes, for the manifest */
  uint64_t bytes;
} tensor;

/* Temporary files that exist now, for the signal handler: the names are
   fixed before the handler is installed; LIVE counts the created ones.  */
static tensor *volatile sig_tensors;
static volatile sig_atomic_t sig_live;
static volatile int sig_dirfd = -1;
static char sig_manifest_tmp[NAME_LEN_MAX + 64];
static volatile sig_atomic_t sig_manifest_live;

static void
on_signal (int sig)
{
  tensor *t = sig_tensors;
  for (sig_atomic_t k = 0; t && k < sig_live; k++)
    unlinkat (sig_dirfd, t[k].tmp, 0);
  if (sig_manifest_live)
    unlinkat (sig_dirfd, sig_manifest_tmp, 0);
  signal (sig, SIG_DFL);
  raise (sig);
}

static const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

static void
handlers (bool on, struct sigaction *old)
{
  for (size_t k = 0; k < sizeof caught / sizeof caught[0]; k++)
    if (on)
      {
        struct sigaction sa;
        memset (&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset (&sa.sa_mask);
        for (size_t j = 0; j < sizeof caught / sizeof caught[0]; j++)
          sigaddset (&sa.sa_mask, caught[j]);
        sigaction (caught[k], &sa, &old[k]);
      }
    else
      sigaction (caught[k], &old[k], NULL);
}

static uint64_t
fnv (uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t k = 0; k < n; k++)
    h = (h ^ b[k]) * 0x100000001b3u;
  return h;
}

/* A tensor description: a name, 1 to GC_MAX_DIMS non-zero extents whose
   product is COUNT (checked without overflow).  NULL when it is fine, else
   why not.  */
static const char *
shape_refusal (const char *name, size_t ndim, const size_t *shape,
               size_t count)
{
  if (!name)
    return "it has no name";
  if (!name[0])
    return "its name is empty";
  if (strlen (name) > NAME_LEN_MAX)
    return "its name is too long for a file name";
  if (ndim == 0 || ndim > GC_MAX_DIMS)
    return "its number of dimensions is not 1 to 6";
  size_t prod = 1;
  for (size_t a = 0; a < ndim; a++)
    {
      if (shape[a] == 0 || prod > SIZE_MAX / shape[a])
        return "its shape has a zero or overflowing extent";
      prod *= shape[a];
    }
  if (prod != count)
    return "its shape does not multiply to its element count";
  return NULL;
}

/* Blocks must partition [0, total) in order, as the library requires of
   the parameter blocks (the output blocks reach here unchecked).  */
static const char *
blocks_refusal (const gc_block *b, size_t nb, size_t total, size_t *bad)
{
  if (nb && !b)
    return "the block list is missing";
  size_t next = 0;
  for (size_t k = 0; k < nb; k++)
    {
      *bad = k;
      const char *why = shape_refusal (b[k].name, b[k].ndim ? b[k].ndim : 1,
                                       b[k].ndim ? b[k].shape : &b[k].count,
                                       b[k].count);
      if (why)
        return why;
      if (b[k].offset != next || b[k].count > total - next)
        return "the blocks do not partition the tensor in order";
      next += b[k].count;
    }
  if (nb && next != total)
    return "the blocks do not cover the tensor";
  return NULL;
}

static void
add (tensor *t, size_t *nt, const char *prefix, const char *name,
     const float *data, size_t ndim, const size_t *shape, size_t count)
{
  tensor *e = &t[(*nt)++];
  memset (e, 0, sizeof *e);
  e->name = name;
  e->role = !strcmp (prefix, "grad_") ? "the gradient of"
            : !strcmp (prefix, "ref_grad_") ? "the reference gradient of"
            : !strcmp (prefix, "out_") ? "the output" : "the tensor";
  e->data = data;
  e->ndim = ndim;
  memcpy (e->shape, shape, ndim * sizeof *shape);
  e->count = count;
  size_t k = (size_t) snprintf (e->file, sizeof e->file, "%s", prefix);
  for (const char *p = name; *p && k + 5 < sizeof e->file; p++)
    e->file[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
                   || (*p >= '0' && *p <= '9') || *p == '_' ? *p : '_';
  snprintf (e->file + k, sizeof e->file - k, ".npy");
}

static int
by_file (const void *a, const void *b)
{
  const tensor *const *x = a, *const *y = b;
  return strcmp ((*x)->file, (*y)->file);
}

static bool
write_all (int fd, const void *p, size_t n, uint64_t *hash)
{
  *hash = fnv (*hash, p, n);
  const char *b = p;
  while (n)
    {
      ssize_t w = write (fd, b, n > ((size_t) 1 << 30) ? (size_t) 1 << 30 : n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        {
          if (w == 0)
            errno = EIO;
          return false;
        }
      b += w;
      n -= (size_t) w;
    }
  return true;
}

/* Create T's temporary file exclusively and write it; false with errno.  */
static bool
write_npy (int dfd, tensor *t)
{
  /* The header: fixed text plus at most 21 digits and ", " per axis.  */
  size_t cap = 96 + t->ndim * 24 + 64;
  char *header = malloc (cap);
  if (!header)
    return false;
  int len = snprintf (header, cap,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  for (size_t a = 0; a < t->ndim; a++)
    len += snprintf (header + len, cap - (size_t) len, "%zu,%s", t->shape[a],
                     a + 1 < t->ndim ? " " : "");
  len += snprintf (header + len, cap - (size_t) len, "), }");
  /* magic (6) + version (2) + header length (2) + header, padded with
     spaces to a multiple of 64, ending in a newline  */
  size_t total = 10 + (size_t) len + 1;
  size_t pad = (64 - total % 64) % 64;
  memset (header + len, ' ', pad);
  header[(size_t) len + pad] = '\n';
  size_t hl = (size_t) len + pad + 1;
  int fd = openat (dfd, t->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                   | O_CLOEXEC, 0666);
  if (fd < 0)
    {
      free (header);
      return false;
    }
  sig_live++;
  unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                            (unsigned char) (hl & 0xff),
                            (unsigned char) (hl >> 8) };
  t->hash = 0xcbf29ce484222325u;
  /* float32 little-endian: the host's order on every machine gradcheck
     builds on (x86-64, aarch64); checked at run time all the same.  */
  const unsigned one = 1;
  bool ok = *(const unsigned char *) &one == 1;
  if (!ok)
    errno = ENOTSUP;
  ok = ok && write_all (fd, pre, sizeof pre, &t->hash)
       && write_all (fd, header, hl, &t->hash)
       && write_all (fd, t->data, t->count * sizeof (float), &t->hash);
  int saved = errno;
  free (header);
  if (close (fd) != 0 && ok)
    {
      ok = false;
      saved = errno;
    }
  t->bytes = sizeof pre + hl + (uint64_t) t->count * sizeof (float);
  errno = saved;
  return ok;
}

/* A model's float buffer of N values with room after it, to see a
   callback that writes past N (the check has seen it already, but this is
   another call).  */
#define SLACK 64
static float *
slack_alloc (size_t n)
{
  if (n > SIZE_MAX / sizeof (float) - SLACK)
    return NULL;
  float *p = malloc ((n + SLACK) * sizeof *p);
  if (p)
    memset (p + n, 0xa5, SLACK * sizeof *p);
  return p;
}

static bool
slack_intact (const float *p, size_t n)
{
  const unsigned char *b = (const unsigned char *) (p + n);
  for (size_t k = 0; k < SLACK * sizeof *p; k++)
    if (b[k] != 0xa5)
      return false;
  return true;
}

static void
manifest_text (FILE *f, const cli_model *cm, const gc_result *r,
               const tensor *t, size_t nt)
{
  const gc_model *m = cm->model;
  fprintf (f, "# gradcheck --dump manifest: the files of one check\n");
  fprintf (f, "gradcheck %s\n", GC_VERSION_STRING);
  fprintf (f, "model ");
  for (const char *p = r->model_name; *p; p++)
    fputc (*p >= ' ' && *p <= '~' ? *p : '?', f);
  fprintf (f, "\nn %zu\nkind %s\nreference %s\nprecision %ld\nseed %llu\n"
           "directions %zu of %zu (shard %zu/%zu)\nverdict %s\npid %ld\n",
           m->n, r->kind == GC_CHECK_FORWARD ? "forward" : "gradient",
           gc_reference_name (r->reference), (long) r->precision,
           (unsigned long long) r->seed, r->n_directions, r->n_total,
           r->shard_index, r->shard_count, gc_verdict_name (r->verdict),
           (long) getpid ());
  for (size_t k = 0; k < nt; k++)
    {
      fprintf (f, "file %s shape (", t[k].file);
      for (size_t a = 0; a < t[k].ndim; a++)
        fprintf (f, "%zu%s", t[k].shape[a], a + 1 < t[k].ndim ? "," : "");
      fprintf (f, ") bytes %llu fnv1a64 %016llx\n",
               (unsigned long long) t[k].bytes,
               (unsigned long long) t[k].hash);
    }
}

static bool
write_manifest (int dfd, const char *tmp, const cli_model *cm,
                const gc_result *r, const tensor *t, size_t nt)
{
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&text, &len);
  if (!mem)
    return false;
  manifest_text (mem, cm, r, t, nt);
  if (fclose (mem) != 0)
    {
      free (text);
      return false;
    }
  int fd = openat (dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                   | O_CLOEXEC, 0666);
  if (fd < 0)
    {
      free (text);
      return false;
    }
  sig_manifest_live = 1;
  uint64_t h = 0;
  bool ok = write_all (fd, text, len, &h);
  int saved = errno;
  free (text);
  if (close (fd) != 0 && ok)
    {
      ok = false;
      saved = errno;
    }
  errno = saved;
  return ok;
}

/* Refuse, before anything is written, a description of CM that --dump
   cannot write: a parameter or output (OUTPUTS) block, or a tensor of the
   model's own (*N_EXTRA_OUT of them).  Returns -1, or EXIT_USAGE.  */
static int
refusal (const cli_model *cm, bool outputs, size_t *n_extra_out)
{
  const gc_model *m = cm->model;
  size_t n = m->n;
  size_t bad = 0;
  const char *why;
  /* Validate every description first.  */
  if ((why = blocks_refusal (m->blocks, m->n_blocks, n, &bad)))
    {
      fprintf (stderr, "%s: --dump: parameter block %zu refused: %s\n",
               progname, bad, why);
      return EXIT_USAGE;
    }
  if (outputs && (why = blocks_refusal (m->output_blocks, m->n_output_blocks,
                                        m->n_outputs, &bad)))
    {
      fprintf (stderr, "%s: --dump: output block %zu refused: %s\n",
               progname, bad, why);
      return EXIT_USAGE;
    }
  size_t n_extra = cm->inst ? cm->inst->n_extra : 0;
  if (n_extra > sizeof cm->inst->extra / sizeof cm->inst->extra[0])
    n_extra = 0;
  *n_extra_out = n_extra;
  for (size_t k = 0; k < n_extra; k++)
    {
      const size_t *sh = cm->inst->extra[k].shape;
      size_t nd = cm->inst->extra[k].ndim, count = 1;
      for (size_t a = 0; a < nd && a < GC_MAX_DIMS; a++)
        count = sh[a] && count <= SIZE_MAX / sh[a] ? count * sh[a] : 0;
      if ((why = shape_refusal (cm->inst->extra[k].name, nd, sh, count))
          || !cm->inst->extra[k].data)
        {
          fprintf (stderr, "%s: --dump: tensor %zu of the model refused: %s\n",
                   progname, k, why ? why : "it has no data");
          return EXIT_USAGE;
        }
    }
  return -1;
}

/* The tensors of the dump into T: per block the parameters, the gradient G
   and the reference REF (NaN where the check has none), the model's own
   N_EXTRA tensors, the NOB output blocks into OUT (*FIRST_OUT the first).
   Returns their number.  */
static size_t
list (tensor *t, const cli_model *cm, const gc_result *r, float *g,
      float *ref, float *out, size_t nob, size_t n_extra, size_t *first_out)
{
  const gc_model *m = cm->model;
  size_t n = m->n;
  size_t nb = m->n_blocks ? m->n_blocks : 1;
  size_t nt = 0;
  /* The reference per coordinate where the check has one; NaN elsewhere
     (random directions have no coordinate).  */
  for (size_t i = 0; i < n; i++)
    ref[i] = NAN;
  if (r->kind == GC_CHECK_GRADIENT && r->dirs)
    for (size_t k = 0; k < r->n_directions; k++)
      if (r->dirs[k].index < n)
        ref[r->dirs[k].index] = (float) r->dirs[k].reference;
  for (size_t b = 0; b < nb; b++)
    {
      gc_block whole = { "x", 0, n, 1, { n } };
      const gc_block *bl = m->n_blocks ? &m->blocks[b] : &whole;
      size_t one = bl->count;
      const size_t *shape = bl->ndim ? bl->shape : &one;
      size_t nd = bl->ndim ? bl->ndim : 1;
      add (t, &nt, "", bl->name, cm->x + bl->offset, nd, shape, bl->count);
      add (t, &nt, "grad_", bl->name, g + bl->offset, nd, shape, bl->count);
      add (t, &nt, "ref_grad_", bl->name, ref + bl->offset, nd, shape,
           bl->count);
    }
  for (size_t k = 0; k < n_extra; k++)
    {
      size_t count = 1;
      for (size_t a = 0; a < cm->inst->extra[k].ndim; a++)
        count *= cm->inst->extra[k].shape[a];
      add (t, &nt, "", cm->inst->extra[k].name, cm->inst->extra[k].data,
           cm->inst->extra[k].ndim, cm->inst->extra[k].shape, count);
    }
  *first_out = nt;
  for (size_t b = 0; b < nob; b++)
    {
      const gc_block *bl = &m->output_blocks[b];
      size_t one = bl->count;
      add (t, &nt, "out_", bl->name, out + bl->offset, bl->ndim ? bl->ndim : 1,
           bl->ndim ? bl->shape : &one, bl->count);
    }
  return nt;
}

/* Two of the NT tensors T written to one file: said, and EXIT_USAGE;
   EXIT_INTERNAL without memory; -1 when each has its own file.  */
static int
clash (const tensor *t, size_t nt)
{
  int rc = -1;
  const tensor **sorted = malloc (nt * sizeof *sorted);
  if (!sorted)
    {
      fprintf (stderr, "%s: --dump: out of memory\n", progname);
      return EXIT_INTERNAL;
    }
  for (size_t k = 0; k < nt; k++)
    sorted[k] = &t[k];
  qsort (sorted, nt, sizeof *sorted, by_file);
  for (size_t k = 1; k < nt && rc < 0; k++)
    if (strcmp (sorted[k - 1]->file, sorted[k]->file) == 0)
      {
        const tensor *a = sorted[k - 1] < sorted[k] ? sorted[k - 1] : sorted[k];
        const tensor *b = sorted[k - 1] < sorted[k] ? sorted[k] : sorted[k - 1];
        fprintf (stderr, "%s: --dump: %s '%s' and %s '%s' would both be "
                 "written to %s; rename one\n", progname, a->role, a->name,
                 b->role, b->name, a->file);
        rc = EXIT_USAGE;
      }
  free (sorted);
  return rc;
}

/* The NT files T, written under temporary names in DFD (DIR), into place
   under the directory's lock.  Returns -1, or EXIT_INTERNAL.  */
static int
into_place (int dfd, const char *dir, tensor *t, size_t nt)
{
  int rc = -1;
  /* Into place under the directory's lock (a concurrent dump renames
     its whole set before or after this one), the old manifest gone
     first and the new one last: a set without a manifest is
     incomplete.  */
  if (flock (dfd, LOCK_EX) != 0)
    {
      fprintf (stderr, "%s: --dump: cannot lock %s: %s\n", progname, dir,
               strerror (errno));
      rc = EXIT_INTERNAL;
    }
  else
    {
      if (unlinkat (dfd, "manifest.txt", 0) != 0 && errno != ENOENT)
        {
          fprintf (stderr, "%s: --dump: cannot replace %s/manifest.txt: "
                   "%s\n", progname, dir, strerror (errno));
          rc = EXIT_INTERNAL;
        }
      /* Renamed files leave the list the handler cleans up.  */
      for (size_t k = nt; k-- > 0 && rc < 0;)
        {
          if (renameat (dfd, t[k].tmp, dfd, t[k].file) != 0)
            {
              fprintf (stderr, "%s: --dump: cannot rename into %s/%s: "
                       "%s\n", progname, dir, t[k].file, strerror (errno));
              rc = EXIT_INTERNAL;
              break;
            }
          sig_live = (sig_atomic_t) k;
        }
      if (rc < 0 && renameat (dfd, sig_manifest_tmp, dfd, "manifest.txt")
                    != 0)
        {
          fprintf (stderr, "%s: --dump: cannot rename into %s/manifest."
                   "txt: %s\n", progname, dir, strerror (errno));
          rc = EXIT_INTERNAL;
        }
      else if (rc < 0)
        sig_manifest_live = 0;
      flock (dfd, LOCK_UN);
    }
  return rc;
}

/* The NT tensors T (the outputs, into OUT, computed when their files are
   next: at FIRST_OUT) and the manifest, under temporary names in DFD
   (DIR).  Returns -1, EXIT_MODEL or EXIT_INTERNAL.  */
static int
write_set (int dfd, const char *dir, const cli_model *cm, const gc_result *r,
           tensor *t, size_t nt, size_t first_out, float *out)
{
  const gc_model *m = cm->model;
  int rc = -1;
  for (size_t k = 0; k < nt && rc < 0; k++)
    {
      /* The outputs are computed when their files are next: model code
         that runs during the dump runs while its files are temporary.  */
      if (k == first_out && (m->outputs_f32 (m->ctx, cm->x, out) != 0
                             || !slack_intact (out, m->n_outputs)))
        {
          fprintf (stderr, "%s: --dump: the outputs failed or wrote past "
                   "their buffer\n", progname);
          rc = EXIT_MODEL;
        }
      else if (!write_npy (dfd, &t[k]))
        {
          fprintf (stderr, "%s: --dump: cannot write %s/%s: %s\n", progname,
                   dir, t[k].file, strerror (errno));
          rc = EXIT_INTERNAL;
        }
    }
  if (rc < 0 && !write_manifest (dfd, sig_manifest_tmp, cm, r, t, nt))
    {
      fprintf (stderr, "%s: --dump: cannot write %s/manifest.txt: %s\n",
               progname, dir, strerror (errno));
      rc = EXIT_INTERNAL;
    }
  return rc;
}

int
cli_dump (const char *dir, const cli_model *cm, const gc_result *r)
{
  const gc_model *m = cm->model;
  size_t n = m->n;
  bool outputs = m->outputs_f32 && m->n_outputs && m->n_output_blocks;
  size_t n_extra;
  int rc = refusal (cm, outputs, &n_extra);
  if (rc >= 0)
    return rc;
  size_t nb = m->n_blocks ? m->n_blocks : 1;
  size_t nob = outputs ? m->n_output_blocks : 0;
  if (nb > (SIZE_MAX / sizeof (tensor) - n_extra - nob) / 3)
    return EXIT_USAGE;
  size_t cap = 3 * nb + n_extra + nob;
  tensor *t = calloc (cap, sizeof *t);
  float *g = slack_alloc (n), *ref = malloc (n * sizeof *ref);
  float *out = outputs ? slack_alloc (m->n_outputs) : NULL;
  int dfd = -1;
  struct sigaction old[sizeof caught / sizeof caught[0]];
  struct sigaction old_xfsz;
  bool armed = false;
  if (!t || !g || !ref || (outputs && !out))
    {
      fprintf (stderr, "%s: --dump: out of memory\n", progname);
      rc = EXIT_INTERNAL;
      goto done;
    }
  if (m->grad_f32 (m->ctx, cm->x, g) != 0 || !slack_intact (g, n))
    {
      fprintf (stderr, "%s: --dump: the backward failed or wrote past its "
               "buffer\n", progname);
      rc = EXIT_MODEL;
      goto done;
    }
  size_t first_out;
  size_t nt = list (t, cm, r, g, ref, out, nob, n_extra, &first_out);
  /* Two tensors, one file: refused before anything is written.  */
  rc = clash (t, nt);
  if (rc >= 0)
    goto done;
  if (mkdir (dir, 0777) != 0 && errno != EEXIST)
    {
      fprintf (stderr, "%s: --dump: cannot create %s: %s\n", progname, dir,
               strerror (errno));
      rc = EXIT_INTERNAL;
      goto done;
    }
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    {
      fprintf (stderr, "%s: --dump: cannot open %s: %s\n", progname, dir,
               strerror (errno));
      rc = EXIT_INTERNAL;
      goto done;
    }
  long pid = (long) getpid ();
  for (size_t k = 0; k < nt; k++)
    snprintf (t[k].tmp, sizeof t[k].tmp, TMP_PREFIX "%ld-%s", pid, t[k].file);
  snprintf (sig_manifest_tmp, sizeof sig_manifest_tmp,
            TMP_PREFIX "%ld-manifest.txt", pid);
  sig_tensors = t;
  sig_live = 0;
  sig_manifest_live = 0;
  sig_dirfd = dfd;
  handlers (true, old);
  /* A file-size limit (ulimit -f) gives EFBIG, reported, instead of
     SIGXFSZ killing the process with its temporary files.  */
  struct sigaction ign;
  memset (&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction (SIGXFSZ, &ign, &old_xfsz);
  armed = true;
  rc = write_set (dfd, dir, cm, r, t, nt, first_out, out);
  if (rc < 0)
    rc = into_place (dfd, dir, t, nt);
done:
  if (armed)
    {
      /* whatever is left under a temporary name goes  */
      for (sig_atomic_t k = 0; k < sig_live; k++)
        unlinkat (dfd, t[k].tmp, 0);
      if (sig_manifest_live)
        unlinkat (dfd, sig_manifest_tmp, 0);
      sig_live = 0;
      sig_manifest_live = 0;
      handlers (false, old);
      sigaction (SIGXFSZ, &old_xfsz, NULL);
      sig_tensors = NULL;
      sig_dirfd = -1;
    }
  if (dfd >= 0)
    close (dfd);
  free (t);
  free (g);
  free (ref);
  free (out);
  return rc;
}
