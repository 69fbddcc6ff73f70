/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* npy_slack.c -- the buffers --dump hands a model's callbacks: room after
   them, to see a callback that writes past its N values.  Below both the
   dump's set-up (npy.c) and its writer (npy_write.c).  */

#include "npy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A model's float buffer of N values with room after it, to see a
   callback that writes past N (the check has seen it already, but this is
   another call).  */
#define SLACK 64
float *
npy_slack_alloc (size_t n)
{
  if (n > SIZE_MAX / sizeof (float) - SLACK)
    return NULL;
  float *p = malloc ((n + SLACK) * sizeof *p);
  if (p)
    memset (p + n, 0xa5, SLACK * sizeof *p);
  return p;
}

bool
npy_slack_intact (const float *p, size_t n)
{
  const unsigned char *b = (const unsigned char *) (p + n);
  for (size_t k = 0; k < SLACK * sizeof *p; k++)
    if (b[k] != 0xa5)
      return false;
  return true;
}
