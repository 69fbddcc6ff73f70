/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* blasroom.c -- OpenBLAS under an address-space limit (ulimit -v).
   OpenBLAS 0.3 retries a failed mmap of its work buffer forever
   (blas_memory_alloc), so a limit that left no room for the buffers hung
   the command (manual: "Memory"): each of OpenBLAS's server threads takes
   a buffer as it starts, when the library loads, and the main thread in
   the model's first matrix product.  Under a finite RLIMIT_AS the command
   runs itself again with OPENBLAS_NUM_THREADS=1 (no server thread: only
   the calling threads take buffers), and, before any model code runs,
   maps the address space the buffers of its calling threads need and
   unmaps it again: where that fails, out of memory (exit status 3) with a
   message.  Then a product large enough to need the buffer has OpenBLAS
   take the calling thread's buffer at once, while the room is there;
   OpenBLAS keeps it for the later products.  */

#include "cli.h"

#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* OpenBLAS 0.3's work buffer on x86-64, BUFFER_SIZE (32 << 22), and the
   pages it maps beside it (the size of its first mmap, seen with
   strace).  Another build may use less: the room asked for is then too
   much, never too little there.  */
#define BLAS_BUFFER_BYTES (((size_t) 32 << 22) + 8192)

/* A product that OpenBLAS computes with its buffer: above the sizes its
   small-matrix kernels take without one.  */
#define WARM_N 256

static bool
limited (struct rlimit *rl)
{
  return getrlimit (RLIMIT_AS, rl) == 0 && rl->rlim_cur != RLIM_INFINITY;
}

void
cli_blas_one_thread (char **argv)
{
  struct rlimit rl;
  const char *t = getenv ("OPENBLAS_NUM_THREADS");
  if (!limited (&rl) || (t && strcmp (t, "1") == 0))
    return;
  /* The server threads exist already (and may be waiting for their
     buffers forever): only a new image runs without them.  */
  if (setenv ("OPENBLAS_NUM_THREADS", "1", 1) == 0)
    execv ("/proc/self/exe", argv);
  /* where it cannot: on, as OpenBLAS is */
}

int
cli_blas_room (unsigned callers)
{
  struct rlimit rl;
  if (!limited (&rl))
    return -1;
  /* One OpenBLAS thread: a second one would need a buffer of its own
     (the command runs one per worker anyway: results do not depend on
     --threads).  */
  openblas_set_num_threads (1);
  if (callers == 0)
    callers = 1;
  size_t need = (size_t) callers * BLAS_BUFFER_BYTES;
  void *room = callers <= SIZE_MAX / BLAS_BUFFER_BYTES
               ? mmap (NULL, need, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
               : MAP_FAILED;
  float *a = NULL;
  if (room != MAP_FAILED)
    {
      munmap (room, need);
      a = malloc (3 * WARM_N * WARM_N * sizeof *a);
    }
  if (!a)
    {
      fprintf (stderr, "%s: out of memory: the address-space limit (ulimit "
               "-v, %.0f MiB) leaves no room for OpenBLAS's work buffer "
               "(%.0f MiB for each of %u thread%s calling it), which OpenBLAS "
               "would wait for forever\n", progname,
               (double) rl.rlim_cur / 1048576.0,
               (double) BLAS_BUFFER_BYTES / 1048576.0, callers,
               callers > 1 ? "s" : "");
      return EXIT_INTERNAL;
    }
  float *b = a + WARM_N * WARM_N, *c = b + WARM_N * WARM_N;
  memset (a, 0, 2 * WARM_N * WARM_N * sizeof *a);
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, WARM_N, WARM_N,
               WARM_N, 1.0f, a, WARM_N, b, WARM_N, 0.0f, c, WARM_N);
  free (a);
  return -1;
}
