/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* merge.c -- merge the shards of one check (gc_result_merge); reading
   their JSON reports back is parse.c's.  */

#include "shards/parse-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The fields every shard of one check shares.  */
static bool
same_check (const gc_result *a, const gc_result *b)
{
  return a->kind == b->kind && strcmp (a->model_name, b->model_name) == 0
         && strcmp (a->device, b->device) == 0
         && a->n == b->n && a->reference == b->reference
         && a->precision == b->precision && a->direction_kind == b->direction_kind
         && a->seed == b->seed && a->n_total == b->n_total
         && a->shard_count == b->shard_count && a->false_alarm == b->false_alarm
         && a->forward_depth == b->forward_depth
         && a->backward_depth == b->backward_depth
         && a->loss_f32 == b->loss_f32 && a->n_blocks == b->n_blocks
         && a->twin_unused == b->twin_unused
         && a->identity.digest == b->identity.digest;
}

static int
format_bits (gc_reference ref, mpfr_prec_t p)
{
  return ref == GC_REF_F32 ? 24 : ref == GC_REF_F64 ? 53 : (int) p;
}

/* The noise of direction D's kink estimate J, recovered from its stored
   reference-rounding term (manual: "Non-smooth points"): gc_check judges
   J against 10 eps_b / h, eps_b the evaluation error of the forward behind
   J (the truncation source), and its reference term is eps_r / h +
   u_53 |D(h)|, eps_r the same bound in the reference's format: both are
   lambda sqrt(d_f) ulp(M_L) at the same M_L, so eps_b = eps_r
   2^(bits_r - bits_b).  The subtraction may differ from gc_check's value
   by an ulp of the term.  */
static double
stored_jump_noise (const gc_result *r, const gc_direction *d)
{
  if (r->kind == GC_CHECK_FORWARD || r->kind == GC_CHECK_HVP)
    return 0;
  double eps_h = d->terms[GC_TERM_REFERENCE].value
                 - GC_U64 * fabs (d->reference);
  if (!(eps_h > 0))
    return 0;
  /* a tiered check: each direction's reference is its own truncation
     source (manual: "The tiered reference") */
  gc_reference ref = r->reference == GC_REF_AUTO ? d->decided_by
                     : r->reference;
  gc_reference src = r->reference == GC_REF_AUTO ? d->decided_by
                     : r->truncation_source;
  return 10 * ldexp (eps_h, format_bits (ref, r->precision)
                            - format_bits (src, r->precision));
}

/* What a check is sharded by (manual: "Merging shards"): a direction, or
   for the HVP check a vector, its n elements ids k n to k n + n - 1.  */
static size_t
shard_unit (const gc_result *r)
{
  return r->kind == GC_CHECK_HVP && r->n ? r->n : 1;
}

/* The directions of shard I of SC in a check of TOTAL sharded by UNIT:
   units I, I + SC, ...  */
static size_t
shard_size (size_t total, size_t i, size_t sc, size_t unit)
{
  size_t units = total / unit;
  return unit * (units / sc + (i < units % sc ? 1 : 0));
}

/* Whether shard SH is sound on its own: its identity is the digest of its
   own fields (an edited n_total, step or seed shows), and its directions
   are exactly the ids of its shard index, in order.  */
static bool
shard_sound (const gc_result *sh)
{
  if (sh->status == GC_OK && sh->identity.digest != gc__identity_digest (sh))
    return false;
  size_t u = shard_unit (sh);
  if (sh->n_total % u != 0
      || sh->n_directions != shard_size (sh->n_total, sh->shard_index,
                                         sh->shard_count, u))
    return false;
  for (size_t q = 0; q < sh->n_directions; q++)
    {
      const gc_direction *d = &sh->dirs[q];
      if (d->id >= sh->n_total
          || d->id / u % sh->shard_count != sh->shard_index
          || (q > 0 && d->id <= sh->dirs[q - 1].id))
        return false;
      /* an HVP element: its element of its vector */
      if (u > 1)
        {
          if (sh->status == GC_OK && d->index != d->id % u)
            return false;
          continue;
        }
      /* the coordinate a direction of its kind must have  */
      if (sh->status == GC_OK
          && ((sh->direction_kind == GC_DIR_ALL && d->index != d->id)
              || (sh->direction_kind == GC_DIR_RANDOM
                  && d->index != SIZE_MAX)
              || (sh->direction_kind == GC_DIR_LIST
                  && d->index == SIZE_MAX)))
        return false;
    }
  return true;
}

static gc_status
merge_fail (gc_result *r, bool *filled, gc_status st)
{
  free (filled);
  gc_result_free (r);
  return st;
}

/* The terms of D point at static strings or at its shard's kept ones:
   keep copies of the latter with R (the twin's and Richardson's terms too:
   manual "The f64 twin").  False when memory runs out.  */
static bool
keep_strings (gc_result *r, gc_direction *d)
{
  gc_term *all[GC_N_TERMS + 3] = {
    &d->terms[0], &d->terms[1], &d->terms[2], &d->adjoint_f64,
    &d->richardson_terms[0], &d->richardson_terms[1] };
  for (int t = 0; t < GC_N_TERMS + 3; t++)
    {
      gc_term *tm = all[t];
      const char **str_of[GC_TERM_MAX_INPUTS + 3];
      size_t ns = 0;
      str_of[ns++] = &tm->name;
      str_of[ns++] = &tm->formula;
      str_of[ns++] = &tm->section;
      for (size_t i = 0; i < tm->n_inputs && i < GC_TERM_MAX_INPUTS; i++)
        str_of[ns++] = &tm->inputs[i].name;
      for (size_t i = 0; i < ns; i++)
        if (*str_of[i] && !(*str_of[i] = gc__read_name (r, *str_of[i])))
          return false;
    }
  return true;
}

/* Every direction of R judged again from its own numbers, as gc_check
   judges it (a merge's, and a report's read back: parse.c).  */
void
gc__judge_stored (gc_result *r)
{
  for (size_t q = 0; q < r->n_directions; q++)
    {
      gc_direction *d = &r->dirs[q];
      gc__judge (d, stored_jump_noise (r, d));
      /* no two confirmation levels agreed: the reference could not be
         trusted (manual: "Confirming a direction") */
      if (d->level < 0)
        d->verdict = GC_INCONCLUSIVE;
      else
        gc__judge_resolution (d);
      gc__judge_twin (d);   /* manual: "Two verdicts, one report" */
    }
}

/* Whether the N SHARDS are the shards of one check, each once and each
   sound; *TOTAL gets their number of directions.  GC_OK, GC_EMISMATCH or
   GC_ENOMEM.  */
static gc_status
shards_agree (gc_result *const *shards, size_t n, size_t *total)
{
  const gc_result *first = shards[0];
  if (first->shard_count != n)
    return GC_EMISMATCH;
  bool *seen = calloc (n, sizeof *seen);
  if (!seen)
    return GC_ENOMEM;
  *total = 0;
  for (size_t s = 0; s < n; s++)
    {
      const gc_result *sh = shards[s];
      if (!same_check (first, sh) || sh->shard_index >= n
          || seen[sh->shard_index] || !shard_sound (sh))
        {
          free (seen);
          return GC_EMISMATCH;
        }
      seen[sh->shard_index] = true;
      *total += sh->n_directions;
    }
  free (seen);
  /* every shard holds exactly its ids, so together they hold all  */
  return *total != first->n_total ? GC_EMISMATCH : GC_OK;
}

/* Shard SH into the merged R: its status and findings, and its directions
   by id (shard s holds ids s, s + n, s + 2n, ...) into R's TOTAL, each
   marked in FILLED.  GC_OK, GC_EMISMATCH or GC_ENOMEM.  */
static gc_status
fold_shard (gc_result *r, const gc_result *sh, bool *filled, size_t total)
{
  if (sh->status != GC_OK && r->status == GC_OK)
    {
      r->status = sh->status;
      r->callback_code = sh->callback_code;
      snprintf (r->detail, sizeof r->detail, "%s", sh->detail);
    }
  if (sh->forward_error_ulps > r->forward_error_ulps)
    r->forward_error_ulps = sh->forward_error_ulps;
  /* a model seen non-deterministic in any shard is so in the whole
     check (manual: "Determinism and reentrancy") */
  if (sh->nondeterministic && !r->nondeterministic)
    {
      r->nd_index = sh->nd_index;
      r->nd_first = sh->nd_first;
      r->nd_second = sh->nd_second;
      snprintf (r->nd_detail, sizeof r->nd_detail, "%s", sh->nd_detail);
    }
  r->nondeterministic |= sh->nondeterministic;
  /* manual: "Where the time goes": the whole check's calls are its
     shards' together, and its seconds their sum, the machine time the
     shards spent (not the wall time of shards run side by side) */
  for (int k = 0; k < 4; k++)
    {
      r->n_calls[k] += sh->n_calls[k];
      r->call_seconds[k] += sh->call_seconds[k];
    }
  r->work_seconds += sh->work_seconds;
  r->check_seconds += sh->check_seconds;
  /* the JVP's and HVP's measured depth is their directions' (manual: "The
     JVP check", "The HVP check"): the largest over the shards, at its
     first place, as the unsharded check finds it; a gradient check's
     (its centre's) is the same in every shard */
  if (sh->depth_implied > r->depth_implied
      || (sh->depth_implied == r->depth_implied
          && sh->depth_implied_at < r->depth_implied_at))
    {
      r->depth_implied = sh->depth_implied;
      r->depth_implied_at = sh->depth_implied_at;
    }
  for (size_t q = 0; q < sh->n_directions; q++)
    {
      size_t id = sh->dirs[q].id;
      if (id >= total || filled[id])
        return GC_EMISMATCH;
      filled[id] = true;
      r->dirs[id] = sh->dirs[q];
      if (!keep_strings (r, &r->dirs[id]))
        return GC_ENOMEM;
    }
  return GC_OK;
}

/* A list check: whether R's TOTAL directions, in id order, are the list
   of coordinates its identity names.  GC_OK, GC_EMISMATCH or GC_ENOMEM.  */
static gc_status
list_matches (const gc_result *r, size_t total)
{
  size_t *ix = malloc ((total ? total : 1) * sizeof *ix);
  if (!ix)
    return GC_ENOMEM;
  for (size_t q = 0; q < total; q++)
    ix[q] = r->dirs[q].index;
  uint64_t dd = gc__indices_digest (ix, total);
  free (ix);
  return dd != r->identity.directions_digest ? GC_EMISMATCH : GC_OK;
}

static gc_status
merge (gc_result *const *shards, size_t n, gc_result **out)
{
  if (!shards || !out || n == 0)
    return GC_EINVAL;
  *out = NULL;
  for (size_t s = 0; s < n; s++)
    if (!shards[s] || (shards[s]->n_directions && !shards[s]->dirs)
        || shards[s]->direction_kind == GC_DIR_SCREEN)  /* "Screening" */
      return GC_EINVAL;
  const gc_result *first = shards[0];
  size_t total;
  gc_status ag = shards_agree (shards, n, &total);
  if (ag != GC_OK)
    return ag;

  gc_result *r = calloc (1, sizeof *r);
  if (!r)
    return GC_ENOMEM;
  *r = *first;
  r->dirs = NULL;
  r->blocks = NULL;
  r->block_names = NULL;
  r->constants = NULL;
  r->n_constants = 0;
  r->n_blocks = 0;
  r->strings = NULL;
  r->shard_index = 0;
  r->shard_count = 1;
  r->worst = SIZE_MAX;
  memset (&r->diagnosis, 0, sizeof r->diagnosis);
  /* summed over the shards by fold_shard */
  memset (r->n_calls, 0, sizeof r->n_calls);
  memset (r->call_seconds, 0, sizeof r->call_seconds);
  r->work_seconds = r->check_seconds = 0;
  /* manual: "Rounding classes" */
  if (!gc__precision_copy_list (r, first->precisions, first->n_precisions))
    return merge_fail (r, NULL, GC_ENOMEM);
  gc_status st;
  if ((st = gc__copy_blocks (r, first->blocks, first->n_blocks)) != GC_OK
      || (st = gc__copy_constants (r, first->constants, first->n_constants))
         != GC_OK)
    return merge_fail (r, NULL, st);
  r->dirs = calloc (total ? total : 1, sizeof *r->dirs);
  bool *filled = calloc (total ? total : 1, sizeof *filled);
  if (!r->dirs || !filled)
    return merge_fail (r, filled, GC_ENOMEM);
  /* Directions by id: shard s holds units s, s + n, s + 2n, ...  */
  r->n_directions = total;
  for (size_t s = 0; s < n; s++)
    if ((st = fold_shard (r, shards[s], filled, total)) != GC_OK)
      return merge_fail (r, filled, st);
  for (size_t id = 0; id < total; id++)
    if (!filled[id])
      return merge_fail (r, filled, GC_EMISMATCH);
  free (filled);
  if (r->status == GC_OK)
    {
      /* The listed coordinates, in id order, are the list the identity
         names.  */
      /* (an HVP check's directions are elements: its list is of
         vectors, which the shards' identities name) */
      if (r->direction_kind == GC_DIR_LIST && r->kind != GC_CHECK_HVP
          && (st = list_matches (r, total)) != GC_OK)
        return merge_fail (r, NULL, st);
      /* Every verdict from the direction's own numbers, by the judge of
         gc_check: a stored verdict is not trusted.  */
      gc__judge_stored (r);
      r->detail[0] = 0;
    }
  /* the merged result is the unsharded check  */
  r->identity.digest = gc__identity_digest (r);
  gc__summarise (r);
  if (r->status == GC_OK)
    {
      gc__diagnose (r);
      gc__twin_findings (r);   /* manual: "Two verdicts, one report" */
    }
  *out = r;
  return r->status == GC_OK ? GC_OK : r->status;
}


/* The default floating-point environment (to nearest, no trap) while the shards are
   judged, the caller's
   set back whole on return (manual: "Floating-point environment").  */
gc_status
gc_result_merge (gc_result *const *shards, size_t n, gc_result **out)
{
  fenv_t caller;
  fegetenv (&caller);
  fesetenv (FE_DFL_ENV);
  gc_status st = merge (shards, n, out);
  fesetenv (&caller);
  return st;
}

