/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* identity.c -- the identity of a check: what every shard of one check
   shares, as a digest that gc_result_merge compares across shards and
   recomputes from each shard's own fields (manual: "Merging shards").

   The digest is 64-bit FNV-1a (Fowler, Noll, Vo) over a fixed byte
   serialisation: integers and doubles as 8 little-endian bytes (a double
   by its bit pattern), strings with their terminating NUL.  FNV-1a is no
   cryptographic hash: it tells apart shards of different checks run in
   good faith (another step, a mutant, another point), not a forger.  */

#include "base/internal.h"

#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325u
#define FNV_PRIME 0x100000001b3u

static uint64_t
fnv_bytes (uint64_t h, const void *p, size_t n)
{
  const unsigned char *c = p;
  for (size_t k = 0; k < n; k++)
    {
      h ^= c[k];
      h *= FNV_PRIME;
    }
  return h;
}

static uint64_t
fnv_u64 (uint64_t h, uint64_t v)
{
  unsigned char b[8];
  for (int k = 0; k < 8; k++)
    b[k] = (unsigned char) (v >> (8 * k));
  return fnv_bytes (h, b, 8);
}

static uint64_t
fnv_double (uint64_t h, double v)
{
  uint64_t bits;
  memcpy (&bits, &v, sizeof bits);
  return fnv_u64 (h, bits);
}

/* S as the JSON report writes it: valid UTF-8, each invalid byte replaced
   by U+FFFD (gc__utf8_len).  */
static uint64_t
fnv_string (uint64_t h, const char *s)
{
  static const unsigned char fffd[3] = { 0xef, 0xbf, 0xbd };
  const unsigned char *p = (const unsigned char *) (s ? s : "");
  while (*p)
    {
      size_t l = gc__utf8_len (p);
      if (l)
        h = fnv_bytes (h, p, l);
      else
        h = fnv_bytes (h, fffd, 3);
      p += l ? l : 1;
    }
  return fnv_bytes (h, "", 1);
}

uint64_t
gc__identity_digest (const gc_result *r)
{
  const gc_identity *id = &r->identity;
  char version[sizeof id->version + 1];
  memcpy (version, id->version, sizeof id->version);
  version[sizeof id->version] = 0;
  uint64_t h = FNV_OFFSET;
  h = fnv_string (h, version);
  h = fnv_u64 (h, (uint64_t) r->kind);
  h = fnv_string (h, r->model_name);
  h = fnv_u64 (h, r->n);
  h = fnv_u64 (h, (uint64_t) r->reference);
  h = fnv_u64 (h, (uint64_t) r->precision);
  h = fnv_u64 (h, (uint64_t) r->truncation_source);
  h = fnv_double (h, id->step);
  h = fnv_double (h, r->false_alarm);
  h = fnv_u64 (h, (uint64_t) r->direction_kind);
  h = fnv_u64 (h, r->n_total);
  h = fnv_u64 (h, r->random_per_block);
  h = fnv_u64 (h, r->seed);
  h = fnv_u64 (h, r->shard_count);
  h = fnv_u64 (h, r->forward_depth);
  h = fnv_u64 (h, r->backward_depth);
  h = fnv_u64 (h, id->x_digest);
  h = fnv_u64 (h, id->directions_digest);
  /* judged with the model's f64 twin (manual: "The f64 twin"); nothing
     added without one, so that a check without a twin keeps its digest */
  if (r->twin)
    h = fnv_string (h, "twin");
  /* the declared rounding classes (manual: "Rounding classes"); nothing
     without them, so that a model without classes keeps its digest */
  for (size_t k = 0; k < r->n_precisions; k++)
    {
      const gc_precision *p = &r->precisions[k];
      h = fnv_string (h, p->name);
      h = fnv_u64 (h, (uint64_t) p->kind);
      h = fnv_double (h, p->unit_roundoff);
      h = fnv_double (h, p->underflow);
      h = fnv_u64 (h, p->forward_depth);
      h = fnv_u64 (h, p->backward_depth);
      h = fnv_u64 (h, p->mode_reached != 0);
    }
  h = fnv_u64 (h, id->model_digest);
  return h;
}

uint64_t
gc__indices_digest (const size_t *indices, size_t n)
{
  uint64_t h = FNV_OFFSET;
  for (size_t k = 0; k < n; k++)
    h = fnv_u64 (h, indices[k]);
  return h;
}

void
gc__identity_set (gc_result *r, const float *x, size_t nx,
                  const gc_options *o)
{
  gc_identity *id = &r->identity;
  memset (id, 0, sizeof *id);
  /* the name as every report writes it (valid UTF-8, whole characters) */
  char name[sizeof r->model_name];
  gc__utf8_copy (name, sizeof name, r->model_name);
  memcpy (r->model_name, name, sizeof name);
  snprintf (id->version, sizeof id->version, "%s", GC_VERSION_STRING);
  uint64_t h = FNV_OFFSET;
  for (size_t i = 0; i < nx; i++)
    {
      uint32_t bits;
      memcpy (&bits, &x[i], sizeof bits);
      unsigned char b[4] = { (unsigned char) bits, (unsigned char) (bits >> 8),
                             (unsigned char) (bits >> 16),
                             (unsigned char) (bits >> 24) };
      h = fnv_bytes (h, b, 4);
    }
  id->x_digest = h;
  bool gradient = r->kind == GC_CHECK_GRADIENT;
  id->step = gradient && o->step > 0 ? o->step : 0;
  id->directions_digest
    = gradient && o->directions == GC_DIR_LIST
      ? gc__indices_digest (o->indices, o->n_indices)
      : gc__indices_digest (NULL, 0);
  /* what selected the model (a plugin's arguments and file, a built-in
     model's shape), as the caller says it: its bytes as they are (it is
     not written anywhere, so two strings of other invalid UTF-8 are two
     models) */
  const char *mi = o->model_identity ? o->model_identity : "";
  id->model_digest = fnv_bytes (FNV_OFFSET, mi, strlen (mi) + 1);
  id->digest = gc__identity_digest (r);
}
