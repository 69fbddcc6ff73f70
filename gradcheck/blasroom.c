/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* blasroom.c -- OpenBLAS under an address-space limit (ulimit -v).
   OpenBLAS 0.3 retries a failed mmap of its work buffer forever
   (blas_memory_alloc), so a limit that left no room for the buffers hung
   the command (manual: "Memory"): each of OpenBLAS's server threads takes
   a buffer as it starts, when the library loads, and the main thread in
   the model's first matrix product; and where a server thread's stack
   does not fit, OpenBLAS raises SIGINT as it loads.  Under a finite
   RLIMIT_AS the command sets OPENBLAS_NUM_THREADS=1 before OpenBLAS
   initialises (from the executable's .preinit_array, which runs before
   any shared library's constructors; where that did not take, main runs
   the command again with it), so that OpenBLAS starts no server thread;
   and before any model code runs it maps the address space the buffers
   of its calling threads need and unmaps it again: where that fails, out
   of memory (exit status 3) with a message.  Then a product large enough
   to need the buffer has OpenBLAS take the calling thread's buffer at
   once, while the room is there; OpenBLAS keeps it for the later
   products.  */

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

/* Before OpenBLAS's constructor reads its environment and starts its
   threads: under an address-space limit, unless OPENBLAS_NUM_THREADS is
   1 already, the command runs again at once with it (ENVP and one more
   entry).  setenv would not do: the C library sets its environ from ENVP
   again after this runs.  Where execve fails, on as OpenBLAS is.  */
static void
one_thread_before_openblas (int argc, char **argv, char **envp)
{
  (void) argc;
  struct rlimit rl;
  if (!argv || !envp || !limited (&rl))
    return;
  size_t n = 0;
  for (; envp[n]; n++)
    if (strncmp (envp[n], "OPENBLAS_NUM_THREADS=", 21) == 0
        && strcmp (envp[n] + 21, "1") == 0)
      return;
  static char one[] = "OPENBLAS_NUM_THREADS=1";
  char **env = malloc ((n + 2) * sizeof *env);
  if (!env)
    return;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp (envp[i], "OPENBLAS_NUM_THREADS=", 21) != 0)
      env[k++] = envp[i];
  env[k++] = one;
  env[k] = NULL;
  execve ("/proc/self/exe", argv, env);
  free (env);
}

/* The executable's .preinit_array runs before any shared library's
   constructors, OpenBLAS's among them.  */
__attribute__ ((section (".preinit_array"), used))
static void (*const preinit) (int, char **, char **)
  = one_thread_before_openblas;

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
