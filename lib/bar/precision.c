/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* precision.c -- a model's rounding classes (manual: "Rounding classes"):
   their validation and copy into the result, and each term they add to
   the bar: the adjoint term's sum over classes, the twin's arithmetic
   bound and spread limit, the forward's budget.  A model that declares no
   class never reaches the code below past its first test: its check is
   the f32 one bit for bit.  */

#include "base/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const gc_precision *
gc__model_precisions (const gc_model *m, size_t *n)
{
  *n = 0;
  if (!m || m->abi < 3 || !m->n_precisions || !m->precisions)
    return NULL;
  *n = m->n_precisions;
  return m->precisions;
}

gc_status
gc__precision_validate (const gc_model *m, char *detail, size_t size)
{
  size_t n;
  const gc_precision *p = gc__model_precisions (m, &n);
  if (m->abi >= 3 && m->n_precisions && !m->precisions)
    {
      snprintf (detail, size, "n_precisions %zu with no precisions",
                m->n_precisions);
      return GC_EINVAL;
    }
  return gc__precision_validate_list (p, n, detail, size);
}

/* ln (1 + u)^d: the log of a class's worst-case growth (manual: "Chains
   past d u = 1/2"); refused at GC_CLASS_LOG_GROWTH = 64 ln 2.  */
#define GC_CLASS_LOG_GROWTH (64 * 0.69314718055994530942)

static double
class_log_growth (size_t d, double u)
{
  return (double) d * log1p (u);
}

gc_status
gc__precision_validate_list (const gc_precision *p, size_t n, char *detail,
                             size_t size)
{
  if (n > GC_MAX_PRECISIONS)
    {
      snprintf (detail, size, "%zu rounding classes: at most %d", n,
                GC_MAX_PRECISIONS);
      return GC_EINVAL;
    }
  for (size_t k = 0; k < n; k++)
    {
      const gc_precision *c = &p[k];
      const char *why = NULL;
      bool twice = false;
      for (size_t j = 0; c->name && j < k; j++)
        twice |= p[j].name && !strcmp (p[j].name, c->name);
      if (!c->name || !c->name[0] || strlen (c->name) >= 48)
        why = "a name of 1 to 47 bytes";
      else if (twice)
        why = "a name no earlier class has (a class listed twice would be "
              "counted twice)";
      else if (c->kind < GC_PREC_STORAGE || c->kind > GC_PREC_APPROXIMATION)
        why = "a known kind";
      else if (!(c->unit_roundoff > 0 && c->unit_roundoff <= 0.5))
        why = "a unit roundoff in (0, 1/2]";
      else if (!(c->underflow >= 0 && c->underflow <= 1))
        /* half a format's smallest subnormal, or its smallest normal
           where subnormals flush: 2^emin with emin <= 0 (every format
           holds 1), so at most 1 (manual: "Rounding classes") */
        why = "an underflow error in [0, 1] (half the format's smallest "
              "subnormal, or its smallest normal where subnormals flush)";
      else if (!(class_log_growth (c->forward_depth, c->unit_roundoff)
                 < GC_CLASS_LOG_GROWTH
                 && class_log_growth (c->backward_depth, c->unit_roundoff)
                    < GC_CLASS_LOG_GROWTH))
        {
          /* name the class, the depth and u (manual: "Chains past d u =
             1/2") */
          size_t d = c->forward_depth > c->backward_depth
                     ? c->forward_depth : c->backward_depth;
          char nm[48];
          gc__utf8_copy (nm, sizeof nm, c->name);
          double most = ceil (GC_CLASS_LOG_GROWTH
                              / log1p (c->unit_roundoff)) - 1;
          snprintf (detail, size, "rounding class %zu (%s): depth %zu at "
                    "u = %.3g gives (1 + u)^d = 2^%.4g; needs (1 + u)^d < "
                    "2^64 (no value survives more): at most %.0f", k, nm,
                    d, c->unit_roundoff,
                    class_log_growth (d, c->unit_roundoff) / log (2.0),
                    most);
          return GC_EINVAL;
        }
      if (why)
        {
          snprintf (detail, size, "rounding class %zu: needs %s", k, why);
          return GC_EINVAL;
        }
    }
  return GC_OK;
}

bool
gc__precision_copy (gc_result *r, const gc_model *m)
{
  size_t n;
  const gc_precision *p = gc__model_precisions (m, &n);
  return gc__precision_copy_list (r, p, n);
}

bool
gc__precision_copy_list (gc_result *r, const gc_precision *p, size_t n)
{
  r->n_precisions = 0;
  r->precisions = NULL;
  r->precision_names = NULL;
  if (!n)
    return true;
  r->precisions = calloc (n, sizeof *r->precisions);
  r->precision_names = calloc (n, 48);
  if (!r->precisions || !r->precision_names)
    return false;
  for (size_t k = 0; k < n; k++)
    {
      char *nm = r->precision_names + 48 * k;
      gc__utf8_copy (nm, 48, p[k].name);
      r->precisions[k] = p[k];
      r->precisions[k].name = nm;
    }
  r->n_precisions = n;
  return true;
}

size_t
gc__precision_backward_count (const gc_result *r)
{
  size_t c = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    c += r->precisions[k].backward_depth > 0;
  return c;
}

size_t
gc__precision_unreached_count (const gc_result *r)
{
  size_t c = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    c += !r->precisions[k].mode_reached;
  return c;
}

/* Manual: "Rounding classes", "Chains past d u = 1/2": a class's worst
   case over u, ((1 + u)^d - 1) / u, the largest relative error of d
   roundings in product form prod (1 + delta_j), |delta_j| <= u: finite
   at every depth, and at most gamma_d(u)/u where that exists.  */
double
gc__class_gamma_over_unit (size_t depth, double u)
{
  return expm1 ((double) depth * log1p (u)) / u;
}

/* Class C's base u_k sum |w_i| m_i + eta_k sum |w_i|.  */
static double
base (const gc_precision *c, double wm, double w1)
{
  return c->unit_roundoff * wm + c->underflow * w1;
}

/* Manual: "Rounding classes", the bar for a sum of classes: each backward
   class adds min(lambda_k sqrt(d_k), gamma_{d_k}(u_k) / u_k) (u_k sum
   |w_i| m_i + eta_k sum |w_i|), lambda_k for (2 + K) bounds per direction
   ("The confidence factor").  */
double
gc__precision_adjoint (const gc_result *r, gc_term *t, double wm, double w1,
                       double *worst)
{
  if (!r->n_precisions)
    return 0;
  size_t nb = gc__precision_backward_count (r);
  size_t bounds = gc__bounds_count (r);
  double total = (double) (bounds ? bounds : 1);
  double all = 0, unreached = 0, wc = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    {
      const gc_precision *c = &r->precisions[k];
      if (!c->backward_depth)
        continue;
      double lk = gc__lambda (r->false_alarm, (size_t) ((2 + nb) * total),
                              c->backward_depth);
      double gu = gc__class_gamma_over_unit (c->backward_depth, c->unit_roundoff);
      double b = base (c, wm, w1);
      double v = fmin (lk * sqrt ((double) c->backward_depth), gu) * b;
      all += v;
      wc += gu * b;
      if (!c->mode_reached)
        unreached += v;
    }
  t->value += all;
  /* the gradient's adjoint term says it holds the classes' part */
  if (t->formula == gc__term_texts[GC_CHECK_GRADIENT][GC_TERM_ADJOINT][1])
    t->formula = gc__adjoint_formula_classes;
  if (worst)
    *worst += wc;
  for (int j = 0; j < GC_PRECISION_N_INPUTS; j++)
    if (t->n_inputs < GC_TERM_MAX_INPUTS)
      {
        t->inputs[t->n_inputs].name = gc__precision_input_names[j];
        t->inputs[t->n_inputs].value = j ? unreached : all;
        t->n_inputs++;
      }
  return all;
}

/* Manual: "Rounding classes", "How the declarations are validated": the
   classes' worst case added to f32's bound *B (gamma_d(u)/u (u wm +
   2^-150 w1), as twin.c forms it), and the spread's share C = W / B' with
   W the largest spread the reached classes (f32 included) make.  */
void
gc__precision_arith (const gc_result *r, double wm, double w1, double *b,
                     double *c)
{
  if (!r->n_precisions)
    return;
  /* f32's own spread limit W = C B, as twin.c formed them  */
  double w = *b * *c;
  double bp = *b;
  for (size_t k = 0; k < r->n_precisions; k++)
    {
      const gc_precision *p = &r->precisions[k];
      if (!p->backward_depth)
        continue;
      bp += gc__class_gamma_over_unit (p->backward_depth, p->unit_roundoff) * base (p, wm, w1);
    }
  w += gc__precision_spread_limit (r, wm, w1);
  *b = bp;
  if (bp > 0 && w > 0)
    *c = w / bp;
}

/* Manual: "Rounding classes", "What the rounding modes reach": the
   spread the classes may add to f32's limit, two runs differing by at
   most the sum of their errors: 2 gamma_{d_k}(u'_k)/u'_k (u'_k wm +
   eta'_k w1), u'_k = 2 u_k (eta'_k = 2 eta_k) for a class the modes reach
   (a directed rounding), u_k for one they do not (it rounds to nearest in
   every run, from operands that moved).  */
double
gc__precision_spread_limit (const gc_result *r, double wm, double w1)
{
  double s = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    {
      const gc_precision *p = &r->precisions[k];
      if (!p->backward_depth)
        continue;
      double f = p->mode_reached ? 2 : 1, u = f * p->unit_roundoff;
      s += 2 * gc__class_gamma_over_unit (p->backward_depth, u)
           * (u * wm + f * p->underflow * w1);
    }
  return s;
}

/* Manual: "Rounding classes": the forward classes' share of the loss
   budget, sum lambda_f sqrt(d_k) u_k / 2^-24 ulps of ulp_24(M_L).  */
double
gc__precision_forward_ulps (const gc_result *r)
{
  double s = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    {
      const gc_precision *p = &r->precisions[k];
      s += r->lambda_forward * sqrt ((double) p->forward_depth)
           * (p->unit_roundoff / GC_U32);
    }
  return s;
}

size_t
gc__precision_forward_count (const gc_result *r)
{
  size_t c = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    c += r->precisions[k].forward_depth > 0;
  return c;
}

/* Manual: "Rounding classes", the forward oracle's output term: the
   forward classes' min(lambda sqrt(d_k), gamma_{d_k}(u_k)/u_k) (u_k m_k
   + eta_k), added to the f32 output rounding term T.  */
void
gc__precision_output (const gc_result *r, gc_term *t, double lambda,
                      double mk)
{
  double all = 0;
  for (size_t k = 0; k < r->n_precisions; k++)
    {
      const gc_precision *p = &r->precisions[k];
      if (!p->forward_depth)
        continue;
      double gu = gc__class_gamma_over_unit (p->forward_depth, p->unit_roundoff);
      all += fmin (lambda * sqrt ((double) p->forward_depth), gu)
             * (p->unit_roundoff * mk + p->underflow);
    }
  if (!(all > 0))
    return;
  t->value += all;
  if (t->n_inputs < GC_TERM_MAX_INPUTS)
    {
      t->inputs[t->n_inputs].name = gc__precision_input_names[0];
      t->inputs[t->n_inputs].value = all;
      t->n_inputs++;
    }
}

/* "bf16 storage (u 2^-8, d 9/13, bits)" for each class, "; "-separated,
   into B; nothing for a model without classes.  */
void
gc__precision_describe (gc__buf *b, const gc_result *r)
{
  for (size_t k = 0; k < r->n_precisions; k++)
    {
      const gc_precision *p = &r->precisions[k];
      int e;
      double f = frexp (p->unit_roundoff, &e);
      if (f == 0.5)
        gc__buf_printf (b, "%s%s (u 2^%d, d_f %zu, d_b %zu, %s)",
                        k ? "; " : "",
                        p->name, e - 1, p->forward_depth, p->backward_depth,
                        p->mode_reached ? "mode-reached" : "not mode-reached");
      else
        gc__buf_printf (b, "%s%s (u %.3g, d_f %zu, d_b %zu, %s)",
                        k ? "; " : "",
                        p->name, p->unit_roundoff, p->forward_depth,
                        p->backward_depth,
                        p->mode_reached ? "mode-reached" : "not mode-reached");
    }
}

const char *
gc__precision_kind_name (gc_precision_kind k)
{
  switch (k)
    {
    case GC_PREC_STORAGE: return "storage";
    case GC_PREC_ARITHMETIC: return "arithmetic";
    case GC_PREC_APPROXIMATION: return "approximation";
    }
  return "unknown";
}

/* The f32 arithmetic's bound of direction D where the floor was
   measured: GC_FLOOR_MARGIN F_w with the backward depth defaulted, else
   B32, the declared depth's (twin_floor.c measures F_w; the diagnosis
   reads the bound; manual: "The measured floor", "Structure decides
   the kind").  */
double
gc__floor_f32_bound (const gc_result *r, const gc_direction *d, double b32)
{
  if (!(d->arith_floor >= 0))
    return b32;
  return r->defaulted & GC_DEFAULTED_BACKWARD_DEPTH
         ? GC_FLOOR_MARGIN * d->arith_floor : b32;
}
