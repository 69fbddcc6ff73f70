/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* fuzz_args.c -- libFuzzer target: the command's option strings.  The
   input, cut at its first NUL, is given to every parser the command runs
   on user strings: --directions, --shard, --format, integers, numbers
   in an interval (--step, --false-alarm), and every
   built-in model's --shape.  */

#include "cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *s = malloc (size + 1);
  if (!s)
    return 0;
  memcpy (s, data, size);
  s[size] = 0;
  gc_options o;
  gc_options_init (&o);
  size_t *indices = NULL;
  cli_parse_directions (s, &o, &indices);
  free (indices);
  cli_parse_shard (s, &o);
  gc_format f;
  cli_parse_format (s, &f);
  uint64_t u;
  cli_parse_u64 (s, &u);
  double d;
  cli_parse_open (s, 0, 1, &d);
  for (size_t k = 0; k < gcm_count (); k++)
    {
      long values[GCM_MAX_KEYS];
      char err[256];
      gcm_parse_shape (gcm_get (k), s, values, err, sizeof err);
      gcm_mutant_index (gcm_get (k), s);
    }
  free (s);
  return 0;
}
