/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* fuzz_report.c -- libFuzzer target: shard reports read by gradcheck merge.
   Any byte string: parsed as a JSON report; when it parses, it is rendered
   in every format, merged with itself as a one-shard check (the merged
   result rendered after the shard is freed), and re-parsed
   from its own JSON.  Nothing may crash, leak or read out of bounds.  */

#include "gradcheck.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  gc_result *r = NULL;
  if (gc_result_parse_json ((const char *) data, size, &r) != GC_OK)
    return 0;
  for (int f = GC_FMT_TEXT; f <= GC_FMT_TAP; f++)
    free (gc_report (r, (gc_format) f));
  for (size_t k = 0; k < r->n_directions && k < 4; k++)
    free (gc_derivation (r, k, GC_FMT_MARKDOWN));
  char *json = gc_report (r, GC_FMT_JSON);
  gc_result *shards[1] = { r }, *m = NULL;
  gc_result_merge (shards, 1, &m);
  /* the merged result outlives its shard  */
  gc_result_free (r);
  if (m)
    for (int f = GC_FMT_TEXT; f <= GC_FMT_TAP; f++)
      free (gc_report (m, (gc_format) f));
  gc_result_free (m);
  if (json)
    {
      gc_result *again = NULL;
      gc_result_parse_json (json, strlen (json), &again);
      gc_result_free (again);
      free (json);
    }
  return 0;
}
