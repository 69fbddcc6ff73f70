/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* hvp.c -- the HVP check (manual: "The HVP check"): each element of the
   model's hvp_f32 (x, v) against the central difference of the gradient
   along v (the f64 twin's where the model gives one), with the
   truncation, the gradient's rounding over the step and the HVP's own
   rounding.  */

#include "higher/hvp-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static gc_status
validate (const gc_model *m, const gc_options *o, char *what, size_t size)
{
  if (!gc__model_abi_known (m->abi))
    return GC_EABI;
  if (m->n == 0)
    return GC_EEMPTY;
  if (!m->hvp_f32)
    {
      snprintf (what, size, "the model gives no Hessian-vector product "
                "(hvp_f32) to check");
      return GC_ENOREF;
    }
  if (!m->grad_f32 || !(o->false_alarm > 0 && o->false_alarm < 1)
      || !(o->timeout >= 0) || !isfinite (o->timeout)
      || !(o->step >= 0) || !isfinite (o->step)
      || !gc__blocks_valid (m->blocks, m->n_blocks, m->n)
      || (m->n_constants && !m->constants))
    return GC_EINVAL;
  /* manual: "Merging shards": shard I of N takes vectors I, I + N, ... */
  if ((o->shard_count > 1 && o->shard_index >= o->shard_count)
      || (o->shard_count <= 1 && o->shard_index != 0))
    return GC_EINVAL;
  if (o->directions == GC_DIR_RANDOM && o->n_random == 0)
    return GC_EINVAL;
  if (o->directions == GC_DIR_LIST)
    {
      if (!o->indices || o->n_indices == 0)
        return GC_EINVAL;
      for (size_t k = 0; k < o->n_indices; k++)
        if (o->indices[k] >= m->n)
          return GC_EDIRECTION;
    }
  else if (o->directions != GC_DIR_ALL && o->directions != GC_DIR_RANDOM)
    {
      snprintf (what, size, o->directions == GC_DIR_SCREEN
                ? "screened directions are a gradient or JVP check's: the "
                  "HVP check takes all, random or a list"
                : "gc_options.directions %d is not a gc_direction_kind",
                (int) o->directions);
      return GC_EINVAL;
    }
  /* a declared depth with d u >= 1 leaves gamma_d undefined (manual:
     "The worst case"), as setup.c refuses a backward's */
  if (m->hvp_depth && ldexp ((double) m->hvp_depth, -24) >= 1)
    {
      snprintf (what, size, "hvp_depth %zu: %zu*u >= 1 (u = 2^-24), "
                "gamma_d undefined", m->hvp_depth, m->hvp_depth);
      return GC_EINVAL;
    }
  if (m->backward_depth && ldexp ((double) m->backward_depth, -24) >= 1)
    {
      snprintf (what, size, "backward_depth %zu: %zu*u >= 1 (u = 2^-24), "
                "gamma_d undefined", m->backward_depth, m->backward_depth);
      return GC_EINVAL;
    }
  if (m->n > SIZE_MAX / 64)
    return GC_ENOMEM;
  return GC_OK;
}


static void
work_free (hvp_work *w)
{
  free (w->v);
  free (w->y);
  free (w->ym);
  free (w->xf);
  free (w->xp);
  for (int k = 0; k < 4; k++)
    free (w->g[k]);
  free (w->spread);
  free (w->mag);
  free (w->magh);
  free (w->tmp);
  free (w->scale);
  free (w->xd);
  free (w->vd);
  free (w->y64);
  free (w->y64m);
  free (w->spread64);
  free (w->magh64);
}

static bool
work_alloc (hvp_work *w, size_t n)
{
  memset (w, 0, sizeof *w);
  w->v = malloc (n * sizeof (float));
  w->y = malloc (n * sizeof (float));
  w->ym = malloc (n * sizeof (float));
  w->xf = malloc (n * sizeof (float));
  w->xp = malloc (n * sizeof (double));
  bool ok = w->v && w->y && w->ym && w->xf && w->xp;
  for (int k = 0; k < 4; k++)
    ok = (w->g[k] = malloc (n * sizeof (double))) && ok;
  w->spread = malloc (n * sizeof (double));
  w->mag = malloc (n * sizeof (double));
  w->magh = malloc (n * sizeof (double));
  w->tmp = malloc (n * sizeof (double));
  w->scale = malloc (n * sizeof (double));
  double **d64[] = { &w->xd, &w->vd, &w->y64, &w->y64m, &w->spread64,
                     &w->magh64 };
  for (size_t k = 0; k < sizeof d64 / sizeof *d64; k++)
    ok = (*d64[k] = malloc (n * sizeof (double))) && ok;
  return ok && w->spread && w->mag && w->magh && w->tmp && w->scale;
}

/* Whether the stencil point X + SH V is exact in double (in float too
   without TWIN), its value in *P.  The product SH V and the sum are each
   tested exactly (the product by an fma, the sum by Knuth's TwoSum): an
   fma over a rounded X - P alone misses a point that loses all of X
   (x + 1e30, where X - P rounds to -1e30 too).  */
static bool
point_exact (double x, double sh, double v, bool twin, double *p)
{
  double y = sh * v;
  *p = x + y;
  if (!isfinite (*p) || fma (sh, v, -y) != 0)
    return false;
  double bb = *p - x;
  double err = (x - (*p - bb)) + (y - bb);
  return err == 0 && (twin || (double) (float) *p == *p);
}

/* The gradient at x + s h v, s = SIGN, into G (doubles): the twin's at the
   point in double, else grad_f32's at it in f32; GC_ESTEP when the point
   is not exact in that format (the difference would not be along v).  */
gc_status
gc__hvp_gradient_at (const gc_model *m, const gc__env *e, const float *x,
             hvp_work *w, double sh, bool twin, double *g, int *code,
             char *what, size_t size)
{
  size_t n = m->n;
  for (size_t i = 0; i < n; i++)
    {
      double p;
      /* exact: the rounding error of x_i + sh v_i is 0 */
      if (!point_exact (x[i], sh, w->v[i], twin, &p))
        {
          snprintf (what, size, "x + %g v is not exact in %s at element "
                    "%zu: the difference would not be along v", sh,
                    twin ? "double" : "float", i);
          return GC_ESTEP;
        }
      w->xp[i] = p;
      w->xf[i] = (float) p;
    }
  if (twin)
    return gc__call (m, e, GC_CALL_GRAD_F64, w->xp, NULL, e->round, g, code,
                     what, size);
  float *gf = (float *) w->tmp;     /* n doubles hold n floats */
  gc_status st = gc__call (m, e, GC_CALL_GRAD_F32, w->xf, NULL, e->round, gf,
                           code, what, size);
  if (st == GC_OK)
    for (size_t i = n; i-- > 0;)
      g[i] = (double) gf[i];
  return st;
}

/* The HVP at x along w->v to nearest (twice: determinism), and its spread
   per element under the other rounding modes (a mode whose call fails is
   left out: *DROPPED).  */
static gc_status
hvp_at (gc_result *r, const gc_model *m, const gc__env *e, const float *x,
        hvp_work *w, size_t k, unsigned *dropped, int *code, char *what,
        size_t size)
{
  size_t n = m->n;
  gc_status st = gc__call (m, e, GC_CALL_HVP, x, w->v, e->round, w->y, code,
                           what, size);
  if (st == GC_OK)
    st = gc__call (m, e, GC_CALL_HVP, x, w->v, e->round, w->ym, code, what,
                   size);
  if (st != GC_OK)
    return st;
  size_t at = gc__float_spread (w->y, w->ym, n);
  if (at != SIZE_MAX)
    gc__note_nondeterminism (r, GC_ND_GRAD, at, w->y[at], w->ym[at],
                             "hvp_f32 gave %.9g, then %.9g, for element %zu "
                             "of vector %zu", w->y[at], w->ym[at], at, k);
  for (size_t i = 0; i < n; i++)
    w->spread[i] = 0;
  int modes[GC_N_MODES];
  int nm = gc__other_modes (e->round, modes);
  for (int j = 0; j < nm; j++)
    {
      char ignore[160];
      int c2;
      if ((*dropped & (1u << j))
          || gc__call (m, e, GC_CALL_HVP, x, w->v, modes[j], w->ym, &c2,
                       ignore, sizeof ignore) != GC_OK)
        {
          *dropped |= 1u << j;
          continue;
        }
      for (size_t i = 0; i < n; i++)
        w->spread[i] = fmax (w->spread[i],
                             fabs ((double) w->ym[i] - w->y[i]));
    }
  return GC_OK;
}

/* Manual: "The HVP check", its twin: hvp_f64 at x along the same v (twice:
   determinism), its spread per element under the other rounding modes
   (a mode whose call fails is left out), its magnitudes.  */
static gc_status
hvp64_at (gc_result *r, const gc_model *m, const gc__env *e, const float *x,
          hvp_work *w, size_t k, bool first, int *code, char *what,
          size_t size)
{
  size_t n = m->n;
  for (size_t i = 0; i < n; i++)
    {
      w->xd[i] = x[i];
      w->vd[i] = w->v[i];
    }
  gc_status st = gc__call (m, e, GC_CALL_HVP_F64, w->xd, w->vd, e->round,
                           w->y64, code, what, size);
  if (st == GC_OK)
    st = gc__call (m, e, GC_CALL_HVP_F64, w->xd, w->vd, e->round, w->y64m,
                   code, what, size);
  if (st != GC_OK)
    return st;
  for (size_t i = 0; i < n; i++)
    if (memcmp (&w->y64[i], &w->y64m[i], sizeof (double)) != 0)
      {
        gc__note_nondeterminism (r, GC_ND_GRAD, i, w->y64[i], w->y64m[i],
                                 "hvp_f64 gave %.17g, then %.17g, for "
                                 "element %zu of vector %zu", w->y64[i],
                                 w->y64m[i], i, k);
        break;
      }
  for (size_t i = 0; i < n; i++)
    w->spread64[i] = 0;
  int modes[GC_N_MODES];
  int nm = gc__other_modes (e->round, modes);
  for (int j = 0; j < nm; j++)
    {
      char ignore[160];
      int c2;
      if (gc__call (m, e, GC_CALL_HVP_F64, w->xd, w->vd, modes[j], w->y64m,
                    &c2, ignore, sizeof ignore) != GC_OK)
        {
          /* say why the mode is left out (issue 35: it was silent) */
          if (first && !r->twin_rounding_note[0])
            snprintf (r->twin_rounding_note, sizeof r->twin_rounding_note,
                      "hvp_f64 under rounding %s: %s",
                      gc__mode_name (modes[j]), ignore);
          continue;
        }
      if (first)
        r->twin_rounding_modes++;
      for (size_t i = 0; i < n; i++)
        w->spread64[i] = fmax (w->spread64[i], fabs (w->y64m[i] - w->y64[i]));
    }
  gc__block_max (m, w->y64, w->magh64);
  return GC_OK;
}

/* Manual: "The HVP check", two verdicts: element D's twin value, the
   twin's HVP term, the arithmetic's bound and error as the gradient
   check's twin forms them (twin.c), then judge.c's two verdicts.  */
void
gc__hvp_twin_element (const gc_result *r, gc_direction *d, const hvp_work *w,
              size_t i)
{
  size_t dh = r->backward_depth;
  d->analytic_f64 = w->y64[i];
  double mh = fmax (w->magh64[i], w->magh[i]);
  gc__term_adjoint_f64 (&d->adjoint_f64, dh, mh, 1, w->spread64[i], true);
  d->arith_floor = d->arith_floor_probe = NAN;   /* not measured here */
  d->arith_factor = NAN;
  d->arith_factor_points = 0;
  d->arith_drift = NAN;
  double gu24 = gc__gamma_over_u (dh, 24), gu23 = gc__gamma_over_u (dh, 23);
  d->arith_bar = gu24 * (GC_U32 * mh + 0x1p-150) + d->adjoint_f64.value;
  d->arith_diff = fmax (fabs (d->analytic - d->analytic_f64),
                        w->spread[i] / (4 * gu23 / gu24));
  gc__judge_twin (d);
}

/* Whether every stencil point x + s H v, s = +-1, +-2, is exact in the
   format of the gradient evaluated there (double with the twin, else
   float).  */
bool
gc__hvp_points_exact (const float *x, const float *v, double h, bool twin, size_t n)
{
  for (size_t i = 0; i < n; i++)
    for (int s = -2; s <= 2 && v[i] != 0; s++)
      {
        double p;
        if (s != 0 && (!point_exact (x[i], s * h, v[i], twin, &p)
                       || p == (double) x[i]))
          return false;
      }
  return true;
}

/* Vector K of the check: e_index (INDEX < n) or the random one.  */
static gc_status
one_vector (gc_result *r, const gc_model *m, const gc__env *e,
            const float *x, const gc_options *o, hvp_work *w, size_t k,
            size_t pos, size_t index, bool twin, size_t db, int *code,
            char *what, size_t size, unsigned *dropped)
{
  size_t n = m->n;
  if (index != SIZE_MAX)
    {
      memset (w->v, 0, n * sizeof *w->v);
      w->v[index] = 1;
    }
  else
    gc__draw_direction (o->seed, n, 0, n, k, w->v, NULL);
  /* Manual: "The HVP check", the step: the f64 (f32) stencil's exponent
     at the vector's scale, or the caller's step */
  double h = o->step;
  if (!(h > 0))
    {
      int ex;
      frexp (index != SIZE_MAX ? w->scale[index]
             : gc__support_norm (x, w->v, 0, n), &ex);
      h = ldexp (1, ex - 1 + (int) r->step_exponent);
    }
  /* ... and v rounded to the grid on which every stencil point is exact:
     h v_i a multiple of the ulp Q_i of the points' binade, 2^(e - bits),
     |x_i| + 2h|v_i| < 2^e (a coordinate vector is unchanged) */
  int bits = twin ? 53 : 24;
  for (size_t i = 0; i < n; i++)
    {
      if (w->v[i] == 0)
        continue;
      int e;
      frexp (fabs ((double) x[i]) + 2 * h * fabs ((double) w->v[i]), &e);
      double q = ldexp (1, e - bits);
      w->v[i] = (float) (nearbyint ((double) w->v[i] * h / q) * q / h);
      /* x_i itself off that grid (the points cross into a higher binade):
         no v_i makes them exact but 0 (the check is along the v it
         states, v_i = 0 included) */
      for (int s = -2; s <= 2 && index == SIZE_MAX; s++)
        {
          double p;
          if (!point_exact (x[i], s * h, w->v[i], twin, &p))
            w->v[i] = 0;
        }
    }
  /* Manual: "The HVP check", a step too small for the point: h v rounded
     to the grid is 0 at every element (x + h v rounds to x): the four
     points are x itself, every difference is 0 and so is every HVP along
     that v -- a check of nothing, refused as the gradient check refuses a
     vanished step */
  size_t nz = 0;
  for (size_t i = 0; i < n; i++)
    nz += w->v[i] != 0;
  if (nz == 0 || (index != SIZE_MAX && w->v[index] == 0))
    {
      if (index != SIZE_MAX)
        snprintf (what, size, "the step vanished at parameter %zu: x + %g "
                  "rounds to x = %.9g in %s (h below half an ulp of x)",
                  index, h, (double) x[index], twin ? "double" : "float");
      else
        snprintf (what, size, "the step vanished along random vector %zu: "
                  "h = %g times v rounds to 0 at every element of x (in "
                  "%s)", k, h, twin ? "double" : "float");
      return GC_ESTEP;
    }
  static const double sign[4] = { 1, -1, 2, -2 };
  gc_status st = GC_OK;
  for (int p = 0; p < 4 && st == GC_OK; p++)
    {
      st = gc__hvp_gradient_at (m, e, x, w, sign[p] * h, twin, w->g[p], code, what,
                        size);
      if (st == GC_OK)
        {
          gc__block_max (m, w->g[p], w->tmp);
          for (size_t i = 0; i < n; i++)
            w->mag[i] = p == 0 ? w->tmp[i] : fmax (w->mag[i], w->tmp[i]);
        }
    }
  if (st == GC_OK)
    st = hvp_at (r, m, e, x, w, k, dropped, code, what, size);
  if (st == GC_OK && r->twin)
    st = hvp64_at (r, m, e, x, w, k, pos == 0, code, what, size);
  if (st != GC_OK)
    return st;
  for (size_t i = 0; i < n; i++)
    w->tmp[i] = w->y[i];
  gc__block_max (m, w->tmp, w->magh);
  for (size_t i = 0; i < n; i++)
    {
      gc_direction *d = &r->dirs[pos * n + i];
      d->id = k * n + i;
      d->index = i;
      d->analytic = w->y[i];
      d->reference = (w->g[0][i] - w->g[1][i]) / (2 * h);
      d->d2h = (w->g[2][i] - w->g[3][i]) / (4 * h);
      d->step = h;
      d->jump = 0;
      d->jump_next = NAN;
      d->level = 0;
      d->forward_error_ulps = -1;
      d->decided_by = r->reference;
      gc__direction_no_twin (d);
      double b = gc__gradient_rounding (twin, r->lambda_forward, db,
                                        w->mag[i]);
      d->bar_worst_case
        = gc__terms_hvp (d->terms, d->reference, d->d2h,
                         d->d2h - d->reference, h, b, r->lambda_backward,
                         r->backward_depth, w->magh[i], w->spread[i]);
      /* manual: "The HVP check", the HVP's measured rounding: the depth
         its spread implies, S^H_i / (2 (u m^H_i + 2^-150)) */
      double q = w->spread[i] / (2 * (GC_U32 * w->magh[i] + 0x1p-150));
      if (q > r->depth_implied)
        {
          r->depth_implied = q;
          r->depth_implied_at = i;
        }
      gc__judge (d, INFINITY);
      gc__judge_resolution (d);
      if (r->twin)
        gc__hvp_twin_element (r, d, w, i);
    }
  return gc__hvp_confirm_vector (r, m, e, x, w, pos, h, twin, db, code, what, size);
}

static gc_status
hvp_check (gc_result *r, const gc_model *m, const float *x,
           const gc_options *o)
{
  char what[160] = "";
  gc_status st = validate (m, o, what, sizeof what);
  if (st != GC_OK)
    return gc__refuse (r, st, what[0] ? what : NULL);
  size_t n = m->n;
  size_t nv = o->directions == GC_DIR_ALL ? n
              : o->directions == GC_DIR_RANDOM ? o->n_random : o->n_indices;
  /* this shard's vectors: K = shard_index, shard_index + sc, ...  */
  size_t sc = o->shard_count > 1 ? o->shard_count : 1;
  size_t mine = nv / sc + (o->shard_index < nv % sc ? 1 : 0);
  if (nv > SIZE_MAX / 64 / n
      || !gc__within_memory ((double) mine * n * sizeof *r->dirs))
    return gc__refuse (r, GC_ENOMEM, "the directions of this HVP check "
                       "cannot be allocated");
  if ((st = gc__point_finite (x, n, m->blocks, m->n_blocks, what,
                              sizeof what)) != GC_OK)
    return gc__refuse (r, st, what);
  bool twin = m->grad_f64 && !o->no_twin;
  /* both twins: the two verdicts (manual: "The HVP check") */
  r->twin = twin && m->hvp_f64;
  size_t fd = m->forward_depth ? m->forward_depth : n;
  size_t db = m->backward_depth ? m->backward_depth : n;
  r->n = n;
  r->n_total = nv * n;
  r->shard_index = o->shard_index;
  r->shard_count = sc;
  r->reference = twin ? GC_REF_F64 : GC_REF_F32;
  r->truncation_source = r->reference;
  r->forward_depth = db;     /* the gradient's, for its rounding B_i */
  r->backward_depth = m->hvp_depth ? m->hvp_depth : fd + db;
  r->defaulted = (m->backward_depth ? 0 : GC_DEFAULTED_FORWARD_DEPTH)
                 | (m->hvp_depth ? 0 : GC_DEFAULTED_BACKWARD_DEPTH)
                 | GC_DEFAULTED_MAGNITUDES;
  r->lambda_forward = gc__lambda (o->false_alarm, 2 * r->n_total, db);
  r->lambda_backward = gc__lambda (o->false_alarm, 2 * r->n_total,
                                   r->backward_depth);
  r->step_exponent = gc__default_step_exponent (r->reference, 0);
  r->depth_implied = 0;
  r->depth_implied_at = SIZE_MAX;     /* every spread 0, until one is not */
  r->loss_f32 = r->loss_reference = r->loss_magnitude = NAN;
  if ((st = gc__copy_blocks (r, m->blocks, m->n_blocks)) != GC_OK
      || (st = gc__copy_constants (r, m->constants, m->n_constants)) != GC_OK)
    return gc__refuse (r, st, NULL);
  /* the identity as a gradient check's of these options (its step and
     listed indices), then of this kind (manual: "Merging shards") */
  r->kind = GC_CHECK_GRADIENT;
  gc__identity_set (r, x, n, o);
  r->kind = GC_CHECK_HVP;
  r->identity.digest = gc__identity_digest (r);
  r->dirs = calloc (mine ? mine * n : 1, sizeof *r->dirs);
  hvp_work w;
  if (!r->dirs || !work_alloc (&w, n))
    {
      if (r->dirs)
        work_free (&w);
      free (r->dirs);
      r->dirs = NULL;
      return gc__refuse (r, GC_ENOMEM, NULL);
    }
  r->n_directions = mine * n;
  gc__scales (m, x, w.scale);
  gc__env e;
  gc__env_enter (&e, o);
  unsigned dropped = 0;
  int code = 0;
  /* the loss at x, for the report's header (the f32 forward's only) */
  float l;
  st = gc__call (m, &e, GC_CALL_LOSS_F32, x, NULL, e.round, &l, &code, what,
                 sizeof what);
  if (st == GC_OK)
    {
      r->loss_f32 = r->loss_reference = l;
      r->loss_magnitude = fabs ((double) l);
    }
  for (size_t k = o->shard_index, pos = 0; pos < mine && st == GC_OK;
       k += sc, pos++)
    {
      size_t index = o->directions == GC_DIR_ALL ? k
                     : o->directions == GC_DIR_LIST ? o->indices[k]
                     : SIZE_MAX;
      st = one_vector (r, m, &e, x, o, &w, k, pos, index, twin, db, &code,
                       what, sizeof what, &dropped);
    }
  gc__env_leave (&e);
  work_free (&w);
  int modes[GC_N_MODES];
  int nm = gc__other_modes (e.round, modes);
  r->rounding_dropped = 0;
  for (int j = 0; j < nm; j++)
    r->rounding_dropped += (dropped >> j) & 1;
  r->rounding_modes = (unsigned) nm - r->rounding_dropped;
  if (st != GC_OK)
    {
      r->callback_code = code;
      free (r->dirs);
      r->dirs = NULL;
      return gc__refuse (r, st, what);
    }
  return GC_OK;
}

gc_status
gc_hvp_check (const gc_model *m0, const float *x, const gc_options *opts,
              gc_result **out)
{
  if (!out)
    return GC_EINVAL;
  *out = NULL;
  if (!m0 || !x)
    return GC_EINVAL;
  gc_options defaults;
  gc_options_init (&defaults);
  const gc_options *o = opts ? opts : &defaults;
  gc_model copy;
  const gc_model *m = gc__model_by_abi (m0, &copy);
  gc_result *r = gc__higher_result (GC_CHECK_HVP, m, o);
  if (!(*out = r))
    return GC_ENOMEM;
  hvp_check (r, m, x, o);
  gc__summarise (r);
  if (r->status == GC_OK && !r->nondeterministic)
    {
      gc__diagnose (r);
      gc__twin_findings (r);   /* manual: "Two verdicts, one report" */
    }
  return r->status;
}
