/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* npy_write.c -- --dump's writing (manual: "Dumping the tensors"): each
   .npy file (format version 1.0) and the manifest under a temporary name
   created exclusively, the signal handlers that remove them when the dump
   is interrupted, and the renames into place under the directory's lock,
   the manifest last.  What is dumped, and under which names, npy.c works
   out.  */

#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

static const int caught[NPY_N_CAUGHT] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

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

void
npy_arm (int dfd, tensor *t, size_t nt, npy_signals *saved)
{
  long pid = (long) getpid ();
  for (size_t k = 0; k < nt; k++)
    snprintf (t[k].tmp, sizeof t[k].tmp, TMP_PREFIX "%ld-%s", pid, t[k].file);
  snprintf (sig_manifest_tmp, sizeof sig_manifest_tmp,
            TMP_PREFIX "%ld-manifest.txt", pid);
  sig_tensors = t;
  sig_live = 0;
  sig_manifest_live = 0;
  sig_dirfd = dfd;
  handlers (true, saved->old);
  /* A file-size limit (ulimit -f) gives EFBIG, reported, instead of
     SIGXFSZ killing the process with its temporary files.  */
  struct sigaction ign;
  memset (&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction (SIGXFSZ, &ign, &saved->old_xfsz);
}

void
npy_disarm (int dfd, tensor *t, const npy_signals *saved)
{
  /* whatever is left under a temporary name goes  */
  for (sig_atomic_t k = 0; k < sig_live; k++)
    unlinkat (dfd, t[k].tmp, 0);
  if (sig_manifest_live)
    unlinkat (dfd, sig_manifest_tmp, 0);
  sig_live = 0;
  sig_manifest_live = 0;
  handlers (false, (struct sigaction *) saved->old);
  sigaction (SIGXFSZ, &saved->old_xfsz, NULL);
  sig_tensors = NULL;
  sig_dirfd = -1;
}

static uint64_t
fnv (uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t k = 0; k < n; k++)
    h = (h ^ b[k]) * 0x100000001b3u;
  return h;
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

/* The NT files T, written under temporary names in DFD (DIR), into place
   under the directory's lock.  Returns -1, or EXIT_INTERNAL.  */
int
npy_into_place (int dfd, const char *dir, tensor *t, size_t nt)
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
int
npy_write_set (int dfd, const char *dir, const cli_model *cm, const gc_result *r,
           tensor *t, size_t nt, size_t first_out, float *out)
{
  const gc_model *m = cm->model;
  int rc = -1;
  for (size_t k = 0; k < nt && rc < 0; k++)
    {
      /* The outputs are computed when their files are next: model code
         that runs during the dump runs while its files are temporary.  */
      if (k == first_out && (m->outputs_f32 (m->ctx, cm->x, out) != 0
                             || !npy_slack_intact (out, m->n_outputs)))
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
