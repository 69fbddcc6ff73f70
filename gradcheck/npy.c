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
   interrupted or failed dump removes its temporary files.  This file works
   out what is dumped and under which names; npy_write.c writes it.  */

#include "npy.h"

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
  float *g = npy_slack_alloc (n), *ref = malloc (n * sizeof *ref);
  float *out = outputs ? npy_slack_alloc (m->n_outputs) : NULL;
  int dfd = -1;
  npy_signals saved;
  bool armed = false;
  if (!t || !g || !ref || (outputs && !out))
    {
      fprintf (stderr, "%s: --dump: out of memory\n", progname);
      rc = EXIT_INTERNAL;
      goto done;
    }
  if (m->grad_f32 (m->ctx, cm->x, g) != 0 || !npy_slack_intact (g, n))
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
  npy_arm (dfd, t, nt, &saved);
  armed = true;
  rc = npy_write_set (dfd, dir, cm, r, t, nt, first_out, out);
  if (rc < 0)
    rc = npy_into_place (dfd, dir, t, nt);
done:
  if (armed)
    npy_disarm (dfd, t, &saved);
  if (dfd >= 0)
    close (dfd);
  free (t);
  free (g);
  free (ref);
  free (out);
  return rc;
}
