/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* catalogue.c -- the list of built-in models, shape parsing, seeding.  */

#include "models.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const gcm_spec gcm_gdn_spec;
extern const gcm_spec gcm_gdn_bf16_spec;
extern const gcm_spec gcm_gdn_fp16_spec;
extern const gcm_spec gcm_kda_spec;
extern const gcm_spec gcm_tanh_gemm_spec;

/* The first is the default model of the README's main command.  */
static const gcm_spec *const specs[] = {
  &gcm_gdn_spec,
  &gcm_kda_spec,
  &gcm_tanh_gemm_spec,
  &gcm_gdn_bf16_spec,
  &gcm_gdn_fp16_spec,
};

size_t
gcm_count (void)
{
  return sizeof specs / sizeof specs[0];
}

const gcm_spec *
gcm_get (size_t i)
{
  return i < gcm_count () ? specs[i] : NULL;
}

const gcm_spec *
gcm_find (const char *name)
{
  for (size_t i = 0; name && i < gcm_count (); i++)
    if (strcmp (specs[i]->name, name) == 0)
      return specs[i];
  return NULL;
}

const char *
gcm_default_name (void)
{
  return specs[0]->name;
}

gc_status
gcm_parse_shape (const gcm_spec *spec, const char *text, long *values,
                 char *err, size_t errsize)
{
  for (size_t k = 0; k < spec->n_keys; k++)
    values[k] = spec->keys[k].def;
  if (!text || !*text)
    return GC_OK;
  const char *p = text;
  bool seen[GCM_MAX_KEYS] = { false };
  while (*p)
    {
      const char *eq = strchr (p, '=');
      const char *end = strchr (p, ',');
      if (!end)
        end = p + strlen (p);
      if (!eq || eq > end || eq == p)
        {
          snprintf (err, errsize, "bad shape item '%.*s': expected KEY=VALUE",
                    (int) (end - p), p);
          return GC_EFORMAT;
        }
      size_t k;
      for (k = 0; k < spec->n_keys; k++)
        if (strlen (spec->keys[k].name) == (size_t) (eq - p)
            && strncmp (spec->keys[k].name, p, (size_t) (eq - p)) == 0)
          break;
      if (k == spec->n_keys)
        {
          int len = snprintf (err, errsize, "unknown shape key '%.*s' for "
                              "model %s; accepted:", (int) (eq - p), p,
                              spec->name);
          for (size_t j = 0; j < spec->n_keys && len > 0
               && (size_t) len < errsize; j++)
            len += snprintf (err + len, errsize - (size_t) len, " %s",
                             spec->keys[j].name);
          return GC_EFORMAT;
        }
      if (seen[k])
        {
          snprintf (err, errsize, "shape key %s given twice: accepted: each "
                    "key once", spec->keys[k].name);
          return GC_EFORMAT;
        }
      seen[k] = true;
      char num[32];
      size_t nl = (size_t) (end - eq - 1);
      if (nl == 0 || nl >= sizeof num)
        {
          snprintf (err, errsize, "bad value for %s: accepted: an integer in "
                    "[%ld, %ld]", spec->keys[k].name, spec->keys[k].min,
                    spec->keys[k].max);
          return GC_EFORMAT;
        }
      memcpy (num, eq + 1, nl);
      num[nl] = 0;
      char *stop;
      errno = 0;
      long v = strtol (num, &stop, 10);
      if (errno || *stop || v < spec->keys[k].min || v > spec->keys[k].max)
        {
          snprintf (err, errsize, "bad value '%s' for %s: accepted: an integer "
                    "in [%ld, %ld]", num, spec->keys[k].name,
                    spec->keys[k].min, spec->keys[k].max);
          return GC_EFORMAT;
        }
      values[k] = v;
      p = *end ? end + 1 : end;
      if (*end && !*p)
        {
          snprintf (err, errsize, "bad shape: trailing ','");
          return GC_EFORMAT;
        }
    }
  return GC_OK;
}

int
gcm_mutant_index (const gcm_spec *spec, const char *name)
{
  if (!name || !*name || strcmp (name, "none") == 0)
    return 0;
  for (size_t k = 0; k < spec->n_mutants; k++)
    if (strcmp (spec->mutants[k].name, name) == 0)
      return (int) k + 1;
  return -1;
}

gc_status
gcm_create (const gcm_spec *spec, const long *values, uint64_t seed,
            int mutant, gcm_instance **out)
{
  if (!spec || !values || !out || mutant < 0
      || (size_t) mutant > spec->n_mutants)
    return GC_EINVAL;
  *out = NULL;
  gc_status st = spec->create (values, seed, mutant, out);
  if (st == GC_OK && mutant > 0)
    {
      gcm_instance *in = *out;
      snprintf (in->mutant_name, sizeof in->mutant_name, "%s/%s",
                spec->name, spec->mutants[mutant - 1].name);
      in->model.name = in->mutant_name;
    }
  return st;
}

void
gcm_destroy (gcm_instance *inst)
{
  if (inst)
    inst->destroy (inst);
}

/* splitmix64 per stream: every tensor of a model draws from its own stream,
   so adding a tensor never changes the others' values.  */
void
gcm_rng_seed (gcm_rng *r, uint64_t seed, uint64_t stream)
{
  r->s = seed * 0x9e3779b97f4a7c15u + stream * 0xbf58476d1ce4e5b9u + 1;
}

static uint64_t
next (gcm_rng *r)
{
  uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

double
gcm_uniform (gcm_rng *r)
{
  return (double) (next (r) >> 11) * 0x1p-53;
}

double
gcm_normal (gcm_rng *r)
{
  double u1 = gcm_uniform (r), u2 = gcm_uniform (r);
  return sqrt (-2.0 * log (1.0 - u1)) * cos (6.283185307179586 * u2);
}

float
gcm_bf16_round (float x)
{
  uint32_t u;
  memcpy (&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u)
    return x;
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  memcpy (&x, &u, sizeof x);
  return x;
}

float
gcm_fp16_round (float x)
{
#if defined __FLT16_MAX__
  return (float) (_Float16) x;
#else
  /* 11 significant bits by an addition in the current mode: x + C - C,
     C = 1.5 2^(e+13), ulp(C) fp16's ulp at x's exponent e (at least its
     subnormal spacing 2^-24); beyond 65504 + half an ulp, infinite  */
  if (x == 0 || !isfinite (x))
    return x;
  int e = ilogbf (x);
  if (e < -14)
    e = -14;
  volatile float c = ldexpf (1.5f, e + 13);
  volatile float t = x + c;
  float y = t - c;
  return fabsf (y) > 65504.0f ? copysignf (INFINITY, y) : y;
#endif
}

float
gcm_store (int fmt, float x)
{
  switch (fmt)
    {
    case GCM_STORE_BF16: return gcm_bf16_round (x);
    case GCM_STORE_FP16: return gcm_fp16_round (x);
    default: return x;
    }
}
