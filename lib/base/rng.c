/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* rng.c -- xoshiro256** (Blackman & Vigna) seeded through splitmix64.
   Directions drawn from a seed are the same on every machine.  */

#include "base/internal.h"

#include <math.h>

static uint64_t
splitmix64 (uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

void
gc__rng_seed (gc__rng *r, uint64_t seed)
{
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64 (&seed);
}

static uint64_t
rotl (uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

uint64_t
gc__rng_next (gc__rng *r)
{
  uint64_t *s = r->s;
  uint64_t result = rotl (s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl (s[3], 45);
  return result;
}

double
gc__rng_uniform (gc__rng *r)
{
  /* 53 random bits, shifted off zero.  */
  return ((double) (gc__rng_next (r) >> 11) + 0.5) * 0x1p-53;
}

double
gc__rng_gaussian (gc__rng *r)
{
  /* Box-Muller; one of the pair is dropped so that the stream position
     does not depend on how many values were drawn before.  */
  double u1 = gc__rng_uniform (r), u2 = gc__rng_uniform (r);
  return sqrt (-2.0 * log (u1)) * cos (6.283185307179586 * u2);
}
