/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* fuzz_merge.c -- libFuzzer target: gradcheck merge of two or more shard
   reports.  The input is cut at its NUL bytes into up to eight reports
   (a JSON text holds no raw NUL); those that parse are merged, in the
   input's order.  A merged result must render in every format, its JSON
   must read back, and, being one whole check, merge again as the single
   shard of itself with the same verdict and counts: a finding otherwise.
   Nothing may crash, leak or read out of bounds.  */

#include "gradcheck.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHARDS 8

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_merged (gc_result *m)
{
  for (int f = GC_FMT_TEXT; f <= GC_FMT_TAP; f++)
    free (gc_report (m, (gc_format) f));
  for (size_t k = 0; k < m->n_directions && k < 2; k++)
    free (gc_derivation (m, k, GC_FMT_JSON));
  char *json = gc_report (m, GC_FMT_JSON);
  if (!json)
    return;
  gc_result *again = NULL, *twice = NULL;
  if (gc_result_parse_json (json, strlen (json), &again) != GC_OK)
    abort ();     /* the writer emitted what the reader refuses */
  gc_status st = gc_result_merge (&again, 1, &twice);
  if (m->status == GC_OK
      && (st != GC_OK || twice->verdict != m->verdict
          || twice->n_failed != m->n_failed
          || twice->n_directions != m->n_directions))
    abort ();     /* a merged check is not a whole check */
  gc_result_free (twice);
  gc_result_free (again);
  free (json);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  gc_result *shards[MAX_SHARDS];
  size_t n = 0;
  const char *p = (const char *) data, *end = p + size;
  while (p <= end && n < MAX_SHARDS)
    {
      const char *nul = memchr (p, 0, (size_t) (end - p));
      size_t len = nul ? (size_t) (nul - p) : (size_t) (end - p);
      gc_result *r = NULL;
      if (gc_result_parse_json (p, len, &r) == GC_OK)
        shards[n++] = r;
      if (!nul)
        break;
      p = nul + 1;
    }
  if (n > 0)
    {
      gc_result *m = NULL;
      gc_result_merge (shards, n, &m);
      /* the merged result outlives its shards  */
      for (size_t k = 0; k < n; k++)
        gc_result_free (shards[k]);
      if (m)
        check_merged (m);
      gc_result_free (m);
    }
  return 0;
}
