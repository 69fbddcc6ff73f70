/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gdn_bf16.c -- gdn-bf16 and gdn-fp16: the gated-delta op of gdn.c with
   its f32 path storing in bf16 (by integer bit operations: the rounding
   mode does not reach it) or in fp16 (by a conversion that follows the
   mode), and accumulating in f32, as mixed-precision kernels do (manual:
   "Rounding classes").  The algorithm is gdn's, compiled from the same
   source (gdn_backward.h: the stores are its R_ (store) calls, the
   identity in the f64 twin); this file declares the storage class and
   the mutant catalogue.

   Stored: the parameters and cotangents (so that the references run on
   exactly the kernel's values), the normalised q and k, each chunk's A,
   Aqk, W, U, Vnew, the chunk states h, the outputs o and the gradient.
   Kept in f32: every sum and product, and the state's adjoint dS between
   chunks (a running accumulator, in registers in a fused kernel).  */

#include "models.h"

#include <stdbool.h>
#include <string.h>

/* gdn's mutants that apply (ds-bf16 stores dS in bf16, which only a
   backward that keeps it in f32 can get wrong: here it does, so it
   applies too), then the one of its own: gdn's index of each.  */
static const gcm_mutant mutants[] = {
  { "scratch-zeros", "the backward reads zeros where the saved chunk states are" },
  { "scratch-shift-chunk", "the backward reads the previous chunk's state" },
  { "scratch-shift-row", "the backward reads Vnew one row on" },
  { "pad-leak", "gradients of padding rows are added into the last real row" },
  { "no-read-scale", "the read scale is missing in dq" },
  { "no-dg-cumsum", "the reverse cumulative sum of dg is skipped" },
  { "dbeta-sign", "dbeta is negated" },
  { "a-transposed", "A is used where A^T belongs in the WY backward" },
  { "dv-scale-1e-6", "dv is scaled by 1 + 1e-6 (seen by the twin's"
    " algorithm check only)" },
  { "ds-bf16", "the state's adjoint dS, an f32 accumulator, is stored in"
    " bf16 between chunks (a precision loss)", 1 },
  { "acc-lowp", "the sums <dS, h_n> and dg's reverse cumsum are kept in"
    " the storage format, not f32 (a precision loss)", 1 },
};
/* gdn.c's enum: scratch-zeros (1) to ds-bf16 (10), then jvp-no-dk (11,
   not a backward mutant), then acc-lowp (12).  */
static const int gdn_index[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12 };

/* The value of key NAME of gdn's shape in VALUES.  */
static long
key (const long *values, const char *name)
{
  for (size_t k = 0; k < GCM_GDN_N_KEYS; k++)
    if (strcmp (gcm_gdn_keys[k].name, name) == 0)
      return values[k];
  return 0;
}

/* Manual: "Rounding classes".  The storage class's depths, counted on
   gdn_backward.h's stores as "The accumulation factor" counts (only the
   stores).  Forward: an input reaches the next state through the stored
   normalised k, A, W (or U), Vnew and h (5) in its chunk, each later
   chunk's Vnew and h (2 (NT - 1)), and the loss reads the stored outputs
   (1): 2 NT + 4.  Backward: the backward reads the stored forward values,
   at most 2 NT + 3 stores deep (the last chunk's h), its own sums stay in
   f32, and the gradient is stored once: 2 NT + 4.  */
static gc_status
create_stored (const long *val, uint64_t seed, int mutant, int store,
               gcm_instance **out)
{
  int gm = mutant > 0 ? gdn_index[mutant - 1] : 0;
  gc_status st = gcm_gdn_create_stored (val, seed, gm, store, out);
  if (st != GC_OK)
    return st;
  gcm_instance *in = *out;
  long t = key (val, "T"), bt = key (val, "BT");
  size_t nt = (size_t) ((t + bt - 1) / bt);
  size_t d = 2 * nt + 4;
  bool bf16 = store == GCM_STORE_BF16;
  in->precisions[0] = (gc_precision) {
    bf16 ? "bf16 storage" : "fp16 storage", GC_PREC_STORAGE,
    bf16 ? GC_U_BF16 : GC_U_FP16, bf16 ? GC_ETA_BF16 : GC_ETA_FP16,
    d, d, bf16 ? 0 : 1 };
  in->model.name = bf16 ? "gdn-bf16" : "gdn-fp16";
  in->model.n_precisions = 1;
  in->model.precisions = in->precisions;
  return GC_OK;
}

static gc_status
create_bf16 (const long *val, uint64_t seed, int mutant, gcm_instance **out)
{
  return create_stored (val, seed, mutant, GCM_STORE_BF16, out);
}

static gc_status
create_fp16 (const long *val, uint64_t seed, int mutant, gcm_instance **out)
{
  return create_stored (val, seed, mutant, GCM_STORE_FP16, out);
}

const gcm_spec gcm_gdn_bf16_spec = {
  "gdn-bf16",
  "gdn with bf16 storage (bit rounding) of inputs, outputs and"
  " intermediates, f32 accumulation; its f64 twin judges the arithmetic",
  GCM_GDN_N_KEYS, gcm_gdn_keys,
  sizeof mutants / sizeof mutants[0], mutants,
  create_bf16,
  "bf16 storage (u 2^-8, rounded by bit operations: not mode-reached),"
  " f32 arithmetic",
};

const gcm_spec gcm_gdn_fp16_spec = {
  "gdn-fp16",
  "gdn with fp16 storage (a mode-following conversion) of inputs, outputs"
  " and intermediates, f32 accumulation",
  GCM_GDN_N_KEYS, gcm_gdn_keys,
  sizeof mutants / sizeof mutants[0], mutants,
  create_fp16,
  "fp16 storage (u 2^-11, subnormals from 2^-24, mode-reached),"
  " f32 arithmetic",
};
