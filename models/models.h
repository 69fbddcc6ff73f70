/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* models.h -- the catalogue of built-in models: each with an f32 forward on
   OpenBLAS, an analytic backward, reference forwards, named shape keys and
   a catalogue of known backward bugs (mutants).  Used by the gradcheck
   command and the tests; not installed.  */

#ifndef GC_MODELS_H
#define GC_MODELS_H

#include "gradcheck.h"

#define GCM_MAX_KEYS 16

typedef struct gcm_key
{
  const char *name;
  long def;               /* default value */
  long min, max;          /* accepted range */
  const char *help;
} gcm_key;

typedef struct gcm_mutant
{
  const char *name;
  const char *help;
  /* 1: a precision-only mutant, the f32 path's arithmetic alone (bf16
     storage and the like): with the model's twin its verdict is
     GC_PRECISION, not GC_FAIL (manual: "The f64 twin").  */
  int precision;
  /* "jvp" or "hvp": a bug of that callback alone (manual: "Beyond the
     gradient"), which gc_check never calls: its gradient passes, and only
     gradcheck jvp (hvp) sees it.  NULL: a bug of the backward.  */
  const char *only;
} gcm_mutant;

typedef struct gcm_instance gcm_instance;

typedef struct gcm_spec
{
  const char *name;
  const char *summary;
  size_t n_keys;
  const gcm_key *keys;
  size_t n_mutants;
  const gcm_mutant *mutants;
  /* Build an instance at the shape VALUES (n_keys of them, validated),
     inputs drawn from SEED, with MUTANT (0: none; k: mutants[k-1]).  */
  gc_status (*create) (const long *values, uint64_t seed, int mutant,
                       gcm_instance **out);
  /* The precisions it computes in, for `gradcheck list' (NULL: f32).  */
  const char *precisions;
} gcm_spec;

struct gcm_instance
{
  gc_model model;          /* the description handed to gc_check */
  float *x;                /* the point, model.n floats */
  void (*destroy) (gcm_instance *);
  /* Named tensors beyond the parameters (cotangents, outputs), for --dump:
     filled by the model, may be 0.  */
  size_t n_extra;
  struct { const char *name; const float *data; size_t ndim;
           size_t shape[GC_MAX_DIMS]; } extra[8];
  /* "MODEL/MUTANT" for a mutant (gcm_create), so that its reports name
     the backward they checked and never merge with the correct one's.  */
  char mutant_name[64];
  /* The model's rounding classes, when it declares any (model.precisions
     points here; manual: "Rounding classes").  */
  gc_precision precisions[2];
};

size_t gcm_count (void);
const gcm_spec *gcm_get (size_t i);
const gcm_spec *gcm_find (const char *name);
/* The model of the README's main command.  */
const char *gcm_default_name (void);

/* Parse "K=V,K=V" against SPEC's keys into VALUES (pre-filled with the
   defaults).  On error returns GC_EFORMAT and writes a one-line reason to
   ERR.  */
gc_status gcm_parse_shape (const gcm_spec *spec, const char *text,
                           long *values, char *err, size_t errsize);
/* Index (1-based) of mutant NAME, 0 for "none" or NULL, -1 if unknown.  */
int gcm_mutant_index (const gcm_spec *spec, const char *name);

gc_status gcm_create (const gcm_spec *spec, const long *values, uint64_t seed,
                      int mutant, gcm_instance **out);
void gcm_destroy (gcm_instance *inst);

/* Seeded f32 values for model inputs (the same on every machine).  */
/* X rounded to the nearest bfloat16 (ties to even) by integer bit
   operations, as CPU code and many libraries round: the rounding mode
   does not reach it.  NaN and infinities are returned as they are.  */
float gcm_bf16_round (float x);
/* X rounded to fp16 (11 significant bits) by a conversion that follows
   the rounding mode (_Float16 where the compiler has it, else an addition
   in the current mode), and X stored in format FMT (GCM_STORE_*).  Values
   beyond fp16's range become infinite; its subnormals are kept.  */
enum { GCM_STORE_F32 = 0, GCM_STORE_BF16, GCM_STORE_FP16 };
float gcm_fp16_round (float x);
float gcm_store (int fmt, float x);
/* gdn (models/gdn.c) with its f32 path storing in format STORE
   (GCM_STORE_*): the models gdn-bf16 and gdn-fp16 (models/gdn_bf16.c).
   MUTANT may be one past gdn's list: sums kept in the storage format.  */
#define GCM_GDN_N_KEYS 10
extern const gcm_key gcm_gdn_keys[GCM_GDN_N_KEYS];
gc_status gcm_gdn_create_stored (const long *values, uint64_t seed,
                                 int mutant, int store, gcm_instance **out);

typedef struct gcm_rng { uint64_t s; } gcm_rng;
void gcm_rng_seed (gcm_rng *r, uint64_t seed, uint64_t stream);
double gcm_uniform (gcm_rng *r);            /* in [0, 1) */
double gcm_normal (gcm_rng *r);

#endif
