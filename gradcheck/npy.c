/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* npy.c -- --dump DIR: the tensors of a check as NumPy .npy files (format
   version 1.0: magic, little-endian header dict padded to 64 bytes, raw
   little-endian float32 data), named after the model's tensors, so that a
   failing check can be inspected with numpy.load.  */

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool
write_npy (const char *dir, const char *prefix, const char *name,
           const float *data, size_t ndim, const size_t *shape)
{
  char path[4096], safe[128];
  size_t k = 0;
  for (const char *p = name; *p && k + 1 < sizeof safe; p++)
    safe[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
                || (*p >= '0' && *p <= '9') || *p == '_' ? *p : '_';
  safe[k] = 0;
  snprintf (path, sizeof path, "%s/%s%s.npy", dir, prefix, safe);
  char header[512];
  int len = snprintf (header, sizeof header,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  size_t count = 1;
  for (size_t a = 0; a < ndim; a++)
    {
      len += snprintf (header + len, sizeof header - (size_t) len, "%zu,%s",
                       shape[a], a + 1 < ndim ? " " : "");
      count *= shape[a];
    }
  len += snprintf (header + len, sizeof header - (size_t) len, "), }");
  /* magic (6) + version (2) + header length (2) + header, padded with
     spaces to a multiple of 64, ending in a newline  */
  size_t total = 10 + (size_t) len + 1;
  size_t pad = (64 - total % 64) % 64;
  memset (header + len, ' ', pad);
  header[len + (int) pad] = '\n';
  unsigned hl = (unsigned) len + (unsigned) pad + 1;
  FILE *f = fopen (path, "wb");
  if (!f)
    {
      fprintf (stderr, "%s: cannot write %s: %s\n", progname, path,
               strerror (errno));
      return false;
    }
  unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                            (unsigned char) (hl & 0xff),
                            (unsigned char) (hl >> 8) };
  bool ok = fwrite (pre, 1, 10, f) == 10 && fwrite (header, 1, hl, f) == hl;
  /* float32 little-endian: the host's order on every machine gradcheck
     builds on (x86-64, aarch64); checked at run time all the same.  */
  const unsigned one = 1;
  if (*(const unsigned char *) &one != 1)
    ok = false;
  ok = ok && fwrite (data, sizeof (float), count, f) == count;
  ok = (fclose (f) == 0) && ok;
  if (!ok)
    fprintf (stderr, "%s: cannot write %s\n", progname, path);
  return ok;
}

int
cli_dump (const char *dir, const cli_model *cm, const gc_result *r)
{
  if (mkdir (dir, 0777) != 0 && errno != EEXIST)
    {
      fprintf (stderr, "%s: cannot create %s: %s\n", progname, dir,
               strerror (errno));
      return EXIT_USAGE;
    }
  const gc_model *m = cm->model;
  size_t n = m->n;
  float *g = malloc (n * sizeof *g), *ref = malloc (n * sizeof *ref);
  float *out = NULL;
  bool ok = g && ref;
  if (!ok)
    fprintf (stderr, "%s: --dump: out of memory\n", progname);
  if (ok && m->grad_f32 (m->ctx, cm->x, g) != 0)
    {
      fprintf (stderr, "%s: --dump: the backward failed\n", progname);
      ok = false;
    }
  if (ok)
    {
      /* The reference per coordinate where the check has one; NaN
         elsewhere (random directions have no coordinate).  */
      for (size_t i = 0; i < n; i++)
        ref[i] = NAN;
      if (r->kind == GC_CHECK_GRADIENT)
        for (size_t k = 0; k < r->n_directions; k++)
          if (r->dirs[k].index < n)
            ref[r->dirs[k].index] = (float) r->dirs[k].reference;
      size_t nb = m->n_blocks ? m->n_blocks : 1;
      for (size_t b = 0; b < nb && ok; b++)
        {
          gc_block whole = { "x", 0, n, 1, { n } };
          const gc_block *bl = m->n_blocks ? &m->blocks[b] : &whole;
          size_t one = bl->count;
          const size_t *shape = bl->ndim ? bl->shape : &one;
          size_t nd = bl->ndim ? bl->ndim : 1;
          ok = write_npy (dir, "", bl->name, cm->x + bl->offset, nd, shape)
               && write_npy (dir, "grad_", bl->name, g + bl->offset, nd, shape)
               && write_npy (dir, "ref_grad_", bl->name, ref + bl->offset, nd,
                             shape);
        }
    }
  if (ok && cm->inst)
    for (size_t k = 0; k < cm->inst->n_extra && ok; k++)
      ok = write_npy (dir, "", cm->inst->extra[k].name,
                      cm->inst->extra[k].data, cm->inst->extra[k].ndim,
                      cm->inst->extra[k].shape);
  if (ok && m->outputs_f32 && m->n_outputs)
    {
      out = malloc (m->n_outputs * sizeof *out);
      ok = out && m->outputs_f32 (m->ctx, cm->x, out) == 0;
      if (!ok)
        fprintf (stderr, "%s: --dump: %s\n", progname,
                 out ? "the outputs failed" : "out of memory");
      for (size_t b = 0; ok && b < m->n_output_blocks; b++)
        ok = write_npy (dir, "out_", m->output_blocks[b].name,
                        out + m->output_blocks[b].offset,
                        m->output_blocks[b].ndim, m->output_blocks[b].shape);
    }
  free (g);
  free (ref);
  free (out);
  return ok ? -1 : EXIT_INTERNAL;
}
