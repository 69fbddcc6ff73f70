/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* setup.c -- gc_check's set-up (manual: "Directional checks",
   "Memory"): validation of the model and options, the result's head, the
   shared state, the plan of directions, the allocation of what the check
   holds, and its release.  */

#include "model/check-internal.h"

#include <float.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Whether S (NULL: none) is printable ASCII shorter than SIZE bytes.  */
static bool
printable_text (const char *s, size_t size)
{
  if (!s)
    return true;
  size_t len = strnlen (s, size);
  for (size_t i = 0; i < len; i++)
    if (s[i] < 0x20 || s[i] >= 0x7f)
      return false;
  return len < size;
}

/* The directions O asks of M and this shard's part of them (manual:
   "Directional checks", "Screening", "Merging shards"); a refusal writes
   its reason into DETAIL.  */
static gc_status
directions_validate (const gc_model *m, const gc_options *o, char *detail,
                     size_t size)
{
  if ((o->directions == GC_DIR_RANDOM || o->directions == GC_DIR_SCREEN)
      && o->n_random == 0)
    {
      snprintf (detail, size, "gc_options.n_random is 0: random "
                "directions need at least one");
      return GC_EINVAL;
    }
  /* Manual: "Screening": its second round depends on the first's
     verdicts, which a shard does not see whole.  */
  if (o->directions == GC_DIR_SCREEN && o->shard_count > 1)
    {
      snprintf (detail, size, "screened directions are not sharded: give "
                "all, random or a list to split a check");
      return GC_EINVAL;
    }
  if (o->directions == GC_DIR_LIST)
    {
      if (!o->indices || o->n_indices == 0)
        {
          snprintf (detail, size, "gc_options.indices: a list of "
                    "directions needs at least one index");
          return GC_EINVAL;
        }
      for (size_t k = 0; k < o->n_indices; k++)
        if (o->indices[k] >= m->n)
          {
            snprintf (detail, size, "direction index %zu is out of range: "
                      "the model's parameters are 0 to %zu", o->indices[k],
                      m->n - 1);
            return GC_EDIRECTION;
          }
    }
  else if (o->directions != GC_DIR_ALL && o->directions != GC_DIR_RANDOM
           && o->directions != GC_DIR_SCREEN)
    {
      snprintf (detail, size, "gc_options.directions %d is not a "
                "gc_direction_kind", (int) o->directions);
      return GC_EINVAL;
    }
  if ((o->shard_count > 1 && o->shard_index >= o->shard_count)
      || (o->shard_count <= 1 && o->shard_index != 0))
    {
      snprintf (detail, size, "gc_options.shard_index %zu of shard_count "
                "%zu: the index is below the count (0 of 0 or 1: the whole "
                "check)", o->shard_index, o->shard_count);
      return GC_EINVAL;
    }
  return GC_OK;
}

/* Validate the model and options; a refusal that needs explaining writes
   its reason into DETAIL.  The point x is read only later, once arrays of
   n values exist (a lying n fails to allocate before x is read).  */
static gc_status
check_validate (const gc_model *m, const float *x, const gc_options *o,
                    char *detail, size_t size)
{
  if (!m || !x || !o)
    return GC_EINVAL;
  if (!gc__model_abi_known (m->abi))
    return GC_EABI;
  if (!m->loss_f32 || !m->grad_f32)
    return GC_EINVAL;
  if (m->n == 0)
    return GC_EEMPTY;
  /* Per parameter the check keeps at least a gradient, a magnitude, a
     scale and a worker's point (4 + 8 + 8 + 4 + 8 bytes): an n whose
     arrays cannot even be sized is refused before any is made.  */
  if (m->n > SIZE_MAX / 64)
    {
      snprintf (detail, size, "n = %zu parameters: their arrays cannot be "
                "allocated", m->n);
      return GC_ENOMEM;
    }
  if ((o->reference == GC_REF_MPFR || o->reference == GC_REF_AUTO)
      && !m->loss_mpfr)
    return GC_ENOREF;
  if (o->reference == GC_REF_F64 && !m->loss_f64)
    return GC_ENOREF;
  /* the result records gc_options_init's value in place of one out of
     range (gc__result_options): the detail names the one given */
  if (gc__result_reference (o) != o->reference)
    {
      snprintf (detail, size, "gc_options.reference %d is not a "
                "gc_reference", (int) o->reference);
      return GC_EINVAL;
    }
  if (o->precision != 0 && !gc__precision_usable (o->precision))
    return GC_EPREC;
  if (o->step < 0 || !isfinite (o->step))
    {
      snprintf (detail, size, "gc_options.step %g is not a finite step "
                ">= 0 (0: derived)", o->step);
      return GC_EINVAL;
    }
  /* The stencil reaches x +- 2h and divides by 4h, in double.  */
  if (o->step > DBL_MAX / 4)
    {
      snprintf (detail, size, "the step %g overflows: 4h exceeds the "
                "largest double", o->step);
      return GC_ESTEP;
    }
  if (!(o->timeout >= 0) || !isfinite (o->timeout))
    {
      snprintf (detail, size, "gc_options.timeout %g is not a finite "
                "number of seconds >= 0 (0: none)", o->timeout);
      return GC_EINVAL;
    }
  if (!(o->false_alarm > 0 && o->false_alarm < 1))
    {
      snprintf (detail, size, "gc_options.false_alarm %g is not a "
                "probability in (0, 1)", o->false_alarm);
      return GC_EINVAL;
    }
  /* Manual: "Device arithmetic", "PyTorch": texts the reports print as
     given */
  if (!printable_text (o->device, 64))
    {
      snprintf (detail, size, "the device's name (gc_options.device) is "
                "printable ASCII of at most 63 bytes");
      return GC_EINVAL;
    }
  if (!printable_text (o->loss_note, 160))
    {
      snprintf (detail, size, "gc_options.loss_note is printable ASCII of "
                "at most 159 bytes");
      return GC_EINVAL;
    }
  gc_status st = directions_validate (m, o, detail, size);
  if (st != GC_OK)
    return st;
  if (!gc__blocks_why (m->blocks, m->n_blocks, m->n, detail, size))
    return GC_EINVAL;
  if (m->n_constants && !m->constants)
    return GC_EINVAL;
  /* A declared depth d with d u >= 1 leaves gamma_d undefined (manual:
     "The worst case"): no bar of it bounds anything (a 1% bug passed with
     every direction blind).  The backward runs in f32; the forward in
     the reference's coarsest format.  */
  if (m->backward_depth && ldexp ((double) m->backward_depth, -24) >= 1)
    {
      snprintf (detail, size, "backward_depth %zu: %zu*u >= 1 (u = 2^-24), "
                "gamma_d undefined", m->backward_depth, m->backward_depth);
      return GC_EINVAL;
    }
  int fbits = o->reference == GC_REF_F32 ? 24
              : o->reference == GC_REF_F64
                || (o->reference == GC_REF_AUTO && m->loss_f64) ? 53
              : (int) (o->precision ? o->precision
                                    : gc__default_precision ());
  if (m->forward_depth && ldexp ((double) m->forward_depth, -fbits) >= 1)
    {
      snprintf (detail, size, "forward_depth %zu: %zu*u >= 1 (u = 2^-%d, "
                "the reference's), gamma_d undefined", m->forward_depth,
                m->forward_depth, fbits);
      return GC_EINVAL;
    }
  return GC_OK;
}

/* The forward behind the truncation term and J for the reference REF of
   model M ("Truncation"): the reference itself in MPFR and f64 modes; in
   f32 mode a more precise one, f64 first (its noise is 2^-29 of f32's,
   and it costs far less than MPFR), else MPFR, else f32 itself; tiered,
   MPFR, the forward of the centre values (each direction's truncation is
   its deciding reference's: manual "The tiered reference").  Set before
   validation too: a refusal's report names one of the forwards the
   manual lists ("JSON report"), never "auto".  */
static gc_reference
truncation_forward (const gc_model *m, gc_reference ref)
{
  if (ref == GC_REF_F32)
    return m->loss_f64 ? GC_REF_F64 : m->loss_mpfr ? GC_REF_MPFR : GC_REF_F32;
  return ref == GC_REF_AUTO ? GC_REF_MPFR : ref;
}

/* The fields of R the options O and the model M set before validation.  */
static void
result_head (gc_result *r, const gc_model *m, const gc_options *o)
{
  r->worst = SIZE_MAX;
  r->verdict = GC_ERROR;
  r->n = m->n;
  /* The tiered reference is MPFR alone for a model without an f64
     forward (manual: "The tiered reference").  */
  gc_reference ref = gc__result_reference (o);
  r->reference = ref == GC_REF_AUTO && !m->loss_f64 ? GC_REF_MPFR : ref;
  r->truncation_source = truncation_forward (m, r->reference);
  gc__result_options (r, o);
  r->forward_error_ulps = -1;
  snprintf (r->model_name, sizeof r->model_name, "%s",
            m->name ? m->name : "model");
  /* validated later (gc__check_validate): at most 63 printable bytes */
  snprintf (r->device, sizeof r->device, "%.63s", o->device ? o->device : "");
  snprintf (r->loss_note, sizeof r->loss_note, "%.159s",
            o->loss_note ? o->loss_note : "");
}

/* What the workers of the check share, from M, X, O and R: the reference,
   the forward behind the truncation term, the precision and the steps.  */
static void
shared_init (shared *sh, const gc_model *m, const float *x,
                 const gc_options *o, gc_result *r)
{
  memset (sh, 0, sizeof *sh);
  sh->m = m;
  sh->x = x;
  sh->o = o;
  sh->r = r;
  sh->n = m->n;
  sh->ref = r->reference;
  sh->p = o->precision ? o->precision : gc__default_precision ();
  /* The forward behind the truncation term and J; tiered: MPFR's centre
     value and working set, each reference's own truncation and J
     (manual: "The tiered reference").  */
  sh->best = truncation_forward (m, sh->ref);
  sh->user_step = o->step > 0;
  sh->h_user = o->step;
  sh->err_pos = SIZE_MAX;
  sh->deadline = gc__deadline (o->timeout);
  atomic_init (&sh->done, 0);
  atomic_init (&sh->stop, 0);
  r->precision = (sh->ref == GC_REF_MPFR || sh->best == GC_REF_MPFR)
                 ? sh->p : 0;
  r->truncation_source = sh->best;
  r->step_exponent = gc__default_step_exponent (sh->ref, sh->p);
  sh->step_exponent_64 = gc__default_step_exponent (GC_REF_F64, sh->p);
  /* h_mpfr / h_f64 (manual: "The tiered reference")  */
  sh->tier_rho = sh->user_step ? 1
                : ldexp (1.0, (int) r->step_exponent - sh->step_exponent_64);
}

/* Manual: "Screening": for M's blocks (the whole vector as one where M
   has none) with K random directions per block of more than K elements,
   the first round's directions (*FIRST: K per large block, every
   coordinate of the others) and every direction the check could take
   (*ALL: the first round's and each large block's coordinates).  */
static void
screen_counts (const gc_model *m, size_t k, size_t *first, size_t *all)
{
  size_t nb = m->n_blocks ? m->n_blocks : 1, f = 0, a = 0;
  for (size_t b = 0; b < nb; b++)
    {
      size_t c = m->n_blocks ? m->blocks[b].count : m->n;
      f += c > k ? k : c;
      a += c > k ? k + c : c;
    }
  *first = f;
  *all = a;
}

/* Manual: "The confidence factor", "Directional checks": the directions
   of the whole check (*TOTAL) and this shard's part (*MINE), the depths
   and the confidence factors.  GC_OK, or GC_EINVAL in R.  */
static gc_status
plan (gc_result *r, const gc_model *m, const gc_options *o,
          size_t *total_out, size_t *mine_out)
{
  /* Directions of the whole check, then this shard's part.  */
  if (o->directions == GC_DIR_RANDOM && o->random_per_block && m->n_blocks)
    {
      if (o->n_random > SIZE_MAX / m->n_blocks)
        {
          r->status = GC_EINVAL;
          snprintf (r->detail, sizeof r->detail, "%zu random directions in "
                    "each of %zu blocks are too many", o->n_random,
                    m->n_blocks);
          return r->status;
        }
      r->random_per_block = o->n_random;
    }
  /* Manual: "Screening": the first round's directions, and for the
     confidence factors every direction the check could take.  */
  size_t bounds = 0;
  if (o->directions == GC_DIR_SCREEN)
    {
      size_t nb = m->n_blocks ? m->n_blocks : 1;
      /* the ids' bound, K nb + n, fits  */
      if (o->n_random > (SIZE_MAX - m->n) / nb)
        {
          r->status = GC_EINVAL;
          snprintf (r->detail, sizeof r->detail, "%zu random directions in "
                    "each of %zu blocks are too many", o->n_random, nb);
          return r->status;
        }
      r->random_per_block = o->n_random;
      screen_counts (m, o->n_random, &r->screen_first, &bounds);
    }
  size_t total = o->directions == GC_DIR_ALL ? m->n
                 : o->directions == GC_DIR_SCREEN ? r->screen_first
                 : r->random_per_block ? o->n_random * m->n_blocks
                 : o->directions == GC_DIR_RANDOM ? o->n_random
                 : o->n_indices;
  if (!bounds)
    bounds = total;
  size_t sc = r->shard_count;
  size_t mine = total / sc + (o->shard_index < total % sc ? 1 : 0);
  /* screened: ids b K + j of random directions, K max(nb, 1) + i of
     coordinate i (manual: "Screening")  */
  r->n_total = o->directions == GC_DIR_SCREEN
               ? o->n_random * (m->n_blocks ? m->n_blocks : 1) + m->n : total;
  r->n_directions = mine;
  r->forward_depth = m->forward_depth ? m->forward_depth : m->n;
  r->backward_depth = m->backward_depth ? m->backward_depth : m->n;
  r->defaulted = (m->forward_depth ? 0 : GC_DEFAULTED_FORWARD_DEPTH)
                 | (m->backward_depth ? 0 : GC_DEFAULTED_BACKWARD_DEPTH)
                 | (m->grad_magnitude_f32 ? 0 : GC_DEFAULTED_MAGNITUDES)
                 | (m->loss_magnitude_f32 ? 0 : GC_DEFAULTED_LOSS_MAGNITUDE);
  /* Two probabilistic bounds per direction (reference and adjoint).  */
  r->lambda_forward = gc__lambda (o->false_alarm, 2 * bounds,
                                  r->forward_depth);
  /* Manual: "Rounding classes": each declared backward class is one more
     bound per direction.  */
  r->lambda_backward
    = gc__lambda (o->false_alarm,
                  (2 + gc__precision_backward_count (r)) * bounds,
                  r->backward_depth);
  /* A rate too small to share among the check's bounds (each takes
     alpha / 2M of it, a random direction's parts a quarter of that:
     manual "The confidence factor", "Directional checks") would make
     every bar infinite, and an infinite bar passes anything.  */
  if (!isfinite (r->lambda_forward) || !isfinite (r->lambda_backward)
      || !(o->false_alarm / (8.0 * (double) (bounds ? bounds : 1)) >= DBL_MIN))
    {
      r->status = GC_EINVAL;
      snprintf (r->detail, sizeof r->detail, "the false-alarm probability "
                "%g is too small to share among the %zu directions' bounds "
                "(each needs a normal double)", o->false_alarm, bounds);
      r->n_directions = 0;   /* none made: a result has the directions it
                                counts */
      return r->status;
    }
  *total_out = total;
  *mine_out = mine;
  r->screen_room = o->directions == GC_DIR_SCREEN ? bounds : 0;
  return GC_OK;
}

/* R's MINE directions and the check's gradient, magnitudes and scales,
   and X known finite.  GC_OK, or the status in R with nothing left
   allocated but R's.  */
static gc_status
allocate (shared *sh, gc_result *r, const gc_model *m, const float *x,
              size_t mine)
{
  r->dirs = gc__within_memory ((double) mine * sizeof *r->dirs)
            ? calloc (mine ? mine : 1, sizeof *r->dirs) : NULL;
  sh->g = gc__guarded_alloc (m->n * sizeof *sh->g);
  sh->mag = malloc (m->n * sizeof *sh->mag);
  sh->scale = malloc (m->n * sizeof *sh->scale);
  if (!r->dirs || !sh->g || !sh->mag || !sh->scale
      || pthread_mutex_init (&sh->lock, NULL) != 0)
    {
      gc__guarded_free (sh->g);
      free (sh->mag);
      free (sh->scale);
      /* No half result: a result without its directions has none.  */
      bool no_dirs = !r->dirs;
      free (r->dirs);
      r->dirs = NULL;
      r->n_directions = 0;
      r->status = GC_ENOMEM;
      if (no_dirs)
        snprintf (r->detail, sizeof r->detail, "the %zu directions of this "
                  "check cannot be allocated", mine);
      else
        snprintf (r->detail, sizeof r->detail, "%s", gc_strerror (r->status));
      return r->status;
    }
  if ((r->status = gc__point_finite (x, m->n, m->blocks, m->n_blocks,
                                      r->detail, sizeof r->detail))
      != GC_OK)
    {
      gc__guarded_free (sh->g);
      free (sh->mag);
      free (sh->scale);
      pthread_mutex_destroy (&sh->lock);
      r->n_directions = 0;
      return r->status;
    }
  return r->status;
}

/* Direction D's defaults before it is judged: the judge's, with REF the
   check's reference.  */
void
gc__direction_fresh (gc_direction *d, gc_reference ref)
{
  d->verdict = GC_ERROR;
  d->decided_by = ref == GC_REF_AUTO ? GC_REF_MPFR : ref;
  gc__direction_no_twin (d);
}

/* Manual: "Screening": the first round, block by block: K random
   directions of ids b K + j in a block b of more than K elements, every
   coordinate i of the others (id K max(n_blocks, 1) + i).  */
static void
screen_init (gc_result *r, size_t n, size_t k, gc_reference ref)
{
  size_t nb = r->n_blocks ? r->n_blocks : 1, pos = 0;
  for (size_t b = 0; b < nb; b++)
    {
      size_t off = r->n_blocks ? r->blocks[b].offset : 0;
      size_t c = r->n_blocks ? r->blocks[b].count : n;
      for (size_t j = 0; j < (c > k ? k : c); j++)
        {
          gc_direction *d = &r->dirs[pos++];
          gc__direction_fresh (d, ref);
          d->id = c > k ? b * k + j : k * nb + off + j;
          d->index = c > k ? SIZE_MAX : off + j;
        }
    }
}

/* Each of R's MINE directions: its id in the whole check, the judge's
   defaults, and its coordinate (REF: the check's reference).  */
static void
directions_init (gc_result *r, const gc_options *o, gc_reference ref,
                     size_t mine)
{
  if (o->directions == GC_DIR_SCREEN)
    {
      screen_init (r, r->n, o->n_random, ref);
      return;
    }
  size_t sc = r->shard_count;
  for (size_t k = o->shard_index, pos = 0; pos < mine; k += sc)
    {
      gc_direction *d = &r->dirs[pos++];
      d->id = k;
      gc__direction_fresh (d, ref);
      d->index = o->directions == GC_DIR_ALL ? k
                 : o->directions == GC_DIR_LIST ? o->indices[k] : SIZE_MAX;
    }
}

/* Manual: "Status codes": a refusal that says what would work (the
   references the model does have).  */
static void
detail_status (gc_result *r, const gc_model *m, const gc_options *o)
{
  snprintf (r->detail, sizeof r->detail, "%s", gc_strerror (r->status));
  if (r->status != GC_ENOREF || !m)
    return;
  const char *want = o->reference == GC_REF_F64 ? "f64 forward (loss_f64)"
                     : "MPFR forward (loss_mpfr)";
  bool f64 = m->loss_f64 && o->reference != GC_REF_F64;
  bool mp = m->loss_mpfr && o->reference != GC_REF_MPFR;
  snprintf (r->detail, sizeof r->detail,
            "the model has no %s; it has %s%s an f32 forward: select %s "
            "(gc_options.reference)", want,
            mp ? "an MPFR, " : "", f64 ? "an f64 and" : mp ? "and" : "only",
            mp && f64 ? "one with --ref mpfr, --ref f64 or --ref f32"
            : mp ? "one with --ref mpfr or --ref f32"
            : f64 ? "one with --ref f64 or --ref f32"
            : "it with --ref f32");
}

/* Manual: "Inside gradcheck": the set-up, in the order gc_check ran it
   before it lived here.  */
gc_status
gc__setup (const gc_model *m, const float *x, const gc_options *o,
           gc_result *r, shared *sh, const fenv_t *model_env,
           int model_round, size_t *mine)
{
  result_head (r, m, o);
  r->status = check_validate (m, x, o, r->detail, sizeof r->detail);
  if (r->status != GC_OK)
    {
      if (!r->detail[0])
        detail_status (r, m, o);
      return r->status;
    }
  /* Manual: "Rounding classes" */
  if ((r->status = gc__precision_validate (m, r->detail, sizeof r->detail))
      != GC_OK)
    return r->status;
  if (!gc__precision_copy (r, m))
    return r->status = GC_ENOMEM;
  if (o->reference == GC_REF_F32 && gc__precision_forward_count (r))
    {
      snprintf (r->detail, sizeof r->detail, "an f32 reference of a model "
                "with forward rounding classes: its forward is not f32's "
                "(manual: \"Rounding classes\")");
      return r->status = GC_EINVAL;
    }
  if ((r->status = gc__copy_blocks (r, m->blocks, m->n_blocks)) != GC_OK
      || (r->status = gc__copy_constants (r, m->constants, m->n_constants))
         != GC_OK)
    return r->status;

  shared_init (sh, m, x, o, r);
  sh->model_env = *model_env;
  sh->model_round = model_round;

  size_t total;
  if (plan (r, m, o, &total, mine) != GC_OK)
    return r->status;

  if (allocate (sh, r, m, x, r->screen_room ? r->screen_room : *mine)
      != GC_OK)
    return r->status;
  /* Read x only once its n floats are known to fit (a lying n must not
     make the digest read past it).  */
  /* the twin is part of what the check is (manual: "The f64 twin") */
  r->twin = m->grad_f64 && !o->no_twin;
  r->twin_unused = m->grad_f64 && o->no_twin;
  gc__identity_set (r, x, m->n, o);   /* manual: "Merging shards" */
  /* This shard's ids only: a check of SIZE_MAX directions over as many
     shards has a few, and must not walk the others.  */
  directions_init (r, o, sh->ref, *mine);
  return GC_OK;
}

/* Whether the MPFR working set of NT workers fits (manual: "Memory").
   GC_OK or GC_ENOMEM, said in the result.  */
gc_status
gc__mpfr_room (shared *sh, unsigned nt)
{
  const gc_model *m = sh->m;
  gc_result *r = sh->r;
  gc_status st = GC_OK;
  if (sh->ref == GC_REF_MPFR || sh->best == GC_REF_MPFR)
    {
      double per = (double) m->n * (gc__mpfr_bytes (128)
                                    + gc__mpfr_bytes (sh->p))
                   + 9 * gc__mpfr_bytes (2 * sh->p);
      double bytes = nt * per + gc__mpfr_bytes (sh->p);
      if (!gc__fits (bytes))
        {
          st = GC_ENOMEM;
          r->n_directions = 0;      /* none was checked */
          snprintf (r->detail, sizeof r->detail, "the MPFR working set, about "
                    "%.3g MiB (%zu parameters at %ld bits, %u worker%s), "
                    "cannot be allocated", bytes / 1048576.0, m->n,
                    (long) sh->p, nt, nt > 1 ? "s" : "");
        }
    }
  return st;
}

/* Free what SH holds.  */
void
gc__shared_free (shared *sh)
{
  gc__twin_free (sh);
  if (sh->have_f0_mpfr)
    mpfr_clear (sh->f0_mpfr);
  pthread_mutex_destroy (&sh->lock);
  gc__guarded_free (sh->g);
  for (int k = 0; k < GC_N_MODES; k++)
    gc__guarded_free (sh->gm[k]);
  free (sh->mag);
  free (sh->scale);
  mpfr_free_cache2 (MPFR_FREE_LOCAL_CACHE);
}
