/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* npy.h -- what the two files of --dump share: npy.c works out what to
   dump (the refusals, the tensors and their file names), npy_write.c
   writes it (the .npy files and the manifest under temporary names, the
   signal handlers that remove them, the renames into place).  */

#ifndef GC_NPY_H
#define GC_NPY_H

#include "cli.h"

#include <signal.h>
#include <stdint.h>

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

/* (npy_slack.c) A float buffer of N values with slack after it (NULL
   when memory runs out), and whether the slack is as it was left.  */
float *npy_slack_alloc (size_t n);
bool npy_slack_intact (const float *p, size_t n);

/* (npy_write.c) The signal dispositions a dump replaces, to be set back.  */
#define NPY_N_CAUGHT 4
typedef struct npy_signals
{
  struct sigaction old[NPY_N_CAUGHT];
  struct sigaction old_xfsz;
} npy_signals;
/* Name the NT temporary files of T and the manifest's after this
   process, and install the handlers that remove them (DFD: the dump's
   directory); the dispositions replaced into *SAVED.  */
void npy_arm (int dfd, tensor *t, size_t nt, npy_signals *saved);
/* Remove what is left under a temporary name of T in DFD, and set the
   dispositions in *SAVED back.  */
void npy_disarm (int dfd, tensor *t, const npy_signals *saved);
/* The NT tensors T (the outputs, into OUT, computed when their files are
   next: at FIRST_OUT) and the manifest, under temporary names in DFD
   (DIR).  Returns -1, EXIT_MODEL or EXIT_INTERNAL.  */
int npy_write_set (int dfd, const char *dir, const cli_model *cm,
                   const gc_result *r, tensor *t, size_t nt, size_t first_out,
                   float *out);
/* The NT files T, written under temporary names in DFD (DIR), into place
   under the directory's lock.  Returns -1, or EXIT_INTERNAL.  */
int npy_into_place (int dfd, const char *dir, tensor *t, size_t nt);

#endif
