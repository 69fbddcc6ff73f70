/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* errmodel.c -- the terms of the pass bar.  Each function computes one
   term and records its formula, inputs and the manual section that derives
   it (doc/gradcheck.texi, chapter "Deriving the pass bar").  No tolerance is
   chosen here: every number below is either an input measured by the check,
   a property of a floating-point format, or a declared property of the
   model.  */

#include "bar/errmodel.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Manual: "Notation".  ulp_p(y) = 2^(floor(log2|y|) - p + 1).  */
double
gc__ulp (double y, int p)
{
  if (y == 0 || !isfinite (y))
    return 0;
  int e;
  frexp (fabs (y), &e);       /* |y| = f * 2^e, f in [0.5, 1) */
  return ldexp (1.0, e - p);
}

/* Manual: "The confidence factor".  Higham and Mary (2019, Thm 3.1): a
   chain of d roundings with unit roundoff u errs by more than
   lambda*sqrt(d)*u (first order) times the magnitude of the computation
   with probability at most 2d*exp(-lambda^2 (1-u)^2 / 2).  Sharing the
   accepted false-alarm probability ALPHA among M such bounds (union bound)
   gives lambda = sqrt(2 ln(2 d M / alpha)) / (1 - u).  */
double
gc__lambda (double alpha, size_t m, size_t d)
{
  double md = (double) (m ? m : 1) * (double) (d ? d : 1);
  return sqrt (2.0 * log (2.0 * md / alpha)) / (1.0 - GC_U32);
}

/* Manual: "Default precision and step".  The reference terms must be
   negligible next to the f32 adjoint term: with the step h = 2^-(p/3)
   times the scale, truncation and MPFR rounding are both about 2^(-2p/3)
   relative, and 2^(-2p/3) <= u^2 * 2^-37 (u = 2^-24, 37 bits of headroom
   for a loss much larger than the gradient times the scale) asks for
   p >= 127.5: the next multiple of the 64-bit limb is 128.  */
mpfr_prec_t
gc__default_precision (void)
{
  return 128;
}

/* Whether gc_check can take precision P.  Below 25 bits the reference is
   no more precise than the f32 forward it judges (24-bit significands);
   the differences run at 2p, which MPFR_PREC_MAX / 4 keeps within MPFR's
   range with a factor of two to spare.  */
bool
gc__precision_usable (mpfr_prec_t p)
{
  return p >= 25 && p <= MPFR_PREC_MAX / 4;
}

/* Manual: "Default precision and step".  The step that balances the
   truncation term (~h^2) against the rounding term (~eps/h) is h ~
   eps^(1/3) times the scale: 2^-8 for f32 (u = 2^-24), 2^-18 for f64
   (2^-53, rounded to a whole exponent), 2^-floor(p/3) for MPFR.  */
int
gc__default_step_exponent (gc_reference ref, mpfr_prec_t p)
{
  switch (ref)
    {
    case GC_REF_F32: return -8;
    case GC_REF_F64: return -18;
    case GC_REF_MPFR: case GC_REF_AUTO: break;
    }
  return -(int) (p / 3);
}

/* The terms' names, formulas and manual sections, per check kind
   (gradient, forward), and the names of their inputs: the strings a report
   read back points at (gc__known_name).  */
const char *const gc__term_texts[GC_N_KINDS][GC_N_TERMS][3] = {
  { { "truncation", "|D(2h) - D(h)|", "Truncation" },
    { "reference rounding",
      "min(lambda * sqrt(d_f), gamma_d / u_p) * ulp_p(M_L) / h"
      " [max(lambda * sqrt(d_f) * ulp_p(M_L), gamma_d(2^-p) M_L) / h in MPFR]"
      " + S_L / h + u_53 |D(h)|",
      "Reference rounding" },
    { "adjoint rounding",
      "min(lambda * sqrt(d_b), gamma_d / u) * (u * sum_i |w_i| m_i"
      " + 2^-150 * sum_i |w_i|) + S_w",
      "Adjoint rounding" } },
  { { "f32 output rounding", "lambda * sqrt(d_o) * u * m_k",
      "The forward oracle" },
    { "reference rounding", "lambda * sqrt(d_o) * 2^-p * m_k",
      "The forward oracle" },
    { "conversion to double", "u_53 * |r|", "The forward oracle" } },
  /* Manual: "The JVP check": the gradient direction's reference terms,
     the tangent's rounding in place of the adjoint's */
  { { "truncation", "|D(2h) - D(h)|", "Truncation" },
    { "reference rounding",
      "min(lambda * sqrt(d_f), gamma_d / u_p) * ulp_p(M_L) / h"
      " [max(lambda * sqrt(d_f) * ulp_p(M_L), gamma_d(2^-p) M_L) / h in MPFR]"
      " + S_L / h + u_53 |D(h)|",
      "Reference rounding" },
    { "tangent rounding",
      "min(lambda * sqrt(d_t), gamma_d / u) * sum_i |w_i| (u m_i + 2^-150)"
      " + S_w (the tangent's spread)",
      "The JVP check" } },
  /* Manual: "The HVP check" */
  { { "gradient truncation", "|D_i(2h) - D_i(h)|", "The HVP check" },
    { "gradient rounding", "B_i / h + u_53 |D_i(h)|, B_i the gradient"
      " element's rounding (the twin's gamma_d(2^-53) / u_53 (u_53 m_i"
      " + 2^-1074), or f32's lambda sqrt(d_b) (u m_i + 2^-150))",
      "The HVP check" },
    { "HVP rounding",
      "min(lambda * sqrt(d_H), gamma_d / u) * (u * m^H_i + 2^-150) + S_w"
      " (the HVP element's spread)",
      "The HVP check" } } };

static const char *const input_names[] = {
  "lambda", "d_f", "d_b", "d_o", "p", "u", "h", "M_L", "ulp_p(M_L)", "D(h)",
  "D(2h)", "|D(h)|", "sum |w_i| m_i", "sum |w_i|", "m_k", "|r|", "log2(h)",
  "gamma_d(2^-p) M_L / h", "S_w", "S_L", "gamma_d / u", "lambda_w",
  "lambda_n", "||u m + 2^-150||_2", "N", "sum |v_i| (u m_i + 2^-150)",
  "sum |w_i - v_i| (u m_i + 2^-150)", "rho", "T_64", "c",
  "2 E_mpfr(2 M_L, 2 |D(h)|)", "S_w64", "m defaulted", "R(h)", "R(2h)",
  "E_64(h)", "R2(h)", "R2(2h)", "d_t", "sum |w_i| (u m_i + 2^-150)",
  "B_i", "d_H", "m^H_i" };

/* The inputs the rounding classes add to the adjoint term (manual:
   "Rounding classes"; precision.c).  */
const char *const gc__precision_input_names[GC_PRECISION_N_INPUTS] = {
  "A_classes", "A_unreached" };

/* The adjoint term's formula with rounding classes: f32's part plus the
   classes' (manual: "Rounding classes"; precision.c).  */
const char *const gc__adjoint_formula_classes =
  "min(lambda * sqrt(d_b), gamma_d / u) * (u * sum_i |w_i| m_i"
  " + 2^-150 * sum_i |w_i|) + S_w + A_classes";

/* Richardson's stencil (manual: "Richardson's stencil"): the names,
   formulas and section of its two terms.  */
static const char *const richardson_texts[] = {
  "Richardson truncation", "|R(2h) - R(h)|, R(h) = (4 D(h) - D(2h)) / 3",
  "Richardson rounding", "3/2 E_64(h): the reference rounding of D at h,"
  " times (4 + 1/2) / 3",
  "Richardson's stencil",
  "|R2(2h) - R2(h)|, R2(h) = (16 R(h) - R(2h)) / 15",
  "33/20 E_64(h): the reference rounding of D at h,"
  " times (64 + 20/2 + 1/4) / 45" };

/* The twin's adjoint term (manual: "The f64 twin"): name, formula and
   section.  */
static const char *const twin_texts[] = {
  "twin adjoint rounding",
  "gamma_d(2^-53) / u * (u * sum_i |w_i| m_i + 2^-1074 * sum_i |w_i|)"
  " + S_w64, u = 2^-53",
  "The f64 twin" };

/* The adjoint term of a random direction where the draw's bound is the
   smaller (manual: "Directional checks"): formula and section.  */
const char *const gc__random_texts[2] = {
  "min(c sqrt(d_b), lambda_w gamma_d / u) (1+u) ||u m + 2^-150||_2 / N"
  " + 2u sum |v_i| b_i + sum |w_i - v_i| b_i + S_w,"
  " b_i = min(lambda_n sqrt(d_b), gamma_d / u) (u m_i + 2^-150)",
  "Directional checks" };

/* The truncation term of an MPFR stencil without its +-2h pair (manual:
   "Skipping the 2h pair"): formula and section.  */
static const char *const predicted_texts[] = {
  "rho^2 T_64 + 2 E_mpfr(2 M_L, 2 |D(h)|) (predicted from the f64 stencil;"
  " the +-2h pair not evaluated)",
  "Skipping the 2h pair" };

const char *
gc__known_name (const char *s)
{
  for (int k = 0; k < GC_N_KINDS; k++)
    for (int t = 0; t < GC_N_TERMS; t++)
      for (int f = 0; f < 3; f++)
        if (strcmp (gc__term_texts[k][t][f], s) == 0)
          return gc__term_texts[k][t][f];
  for (size_t k = 0; k < sizeof input_names / sizeof *input_names; k++)
    if (strcmp (input_names[k], s) == 0)
      return input_names[k];
  for (size_t k = 0;
       k < sizeof gc__random_texts / sizeof *gc__random_texts; k++)
    if (strcmp (gc__random_texts[k], s) == 0)
      return gc__random_texts[k];
  for (size_t k = 0; k < 2; k++)
    if (strcmp (predicted_texts[k], s) == 0)
      return predicted_texts[k];
  for (size_t k = 0; k < 3; k++)
    if (strcmp (twin_texts[k], s) == 0)
      return twin_texts[k];
  for (size_t k = 0;
       k < sizeof richardson_texts / sizeof *richardson_texts; k++)
    if (strcmp (richardson_texts[k], s) == 0)
      return richardson_texts[k];
  for (size_t k = 0; k < GC_PRECISION_N_INPUTS; k++)
    if (strcmp (gc__precision_input_names[k], s) == 0)
      return gc__precision_input_names[k];
  if (strcmp (gc__adjoint_formula_classes, s) == 0)
    return gc__adjoint_formula_classes;
  return NULL;
}

/* Term T of check kind KIND: its texts, no inputs yet.  */
static void
term_texts (gc_term *t, int kind, int term)
{
  t->name = gc__term_texts[kind][term][0];
  t->formula = gc__term_texts[kind][term][1];
  t->section = gc__term_texts[kind][term][2];
  t->n_inputs = 0;
}

/* Manual: "Truncation".  D(h) = f'(x) + c h^2 + O(h^4), so
   D(2h) - D(h) = 3 c h^2 + O(h^4): the error of D(h) is a third of the
   measured difference; the whole difference is taken, the factor 3 being
   headroom for the O(h^4) terms.  DIFF is D(2h) - D(h) as computed (at the
   reference's own precision, not as the difference of the rounded D's).  */
void
gc__term_truncation (gc_term *t, double d1, double d2, double diff, double h)
{
  term_texts (t, 0, GC_TERM_TRUNCATION);
  add_input (t, "D(h)", d1);
  add_input (t, "D(2h)", d2);
  add_input (t, "h", h);
  t->value = fabs (diff);
}

/* Manual: "Skipping the 2h pair".  */
void
gc__term_mark_predicted (gc_term *t)
{
  t->formula = predicted_texts[0];
  t->section = predicted_texts[1];
}

void
gc__term_truncation_predicted (gc_term *t, double d1, double h, double rho,
                               double t64, double e2)
{
  term_texts (t, 0, GC_TERM_TRUNCATION);
  gc__term_mark_predicted (t);
  add_input (t, "D(h)", d1);
  add_input (t, "h", h);
  add_input (t, "rho", rho);
  add_input (t, "T_64", t64);
  add_input (t, "2 E_mpfr(2 M_L, 2 |D(h)|)", e2);
  t->value = rho * rho * t64 + e2;
}

static int
format_bits (gc_reference ref, mpfr_prec_t p)
{
  switch (ref)
    {
    case GC_REF_F32: return 24;
    case GC_REF_F64: return 53;
    case GC_REF_MPFR: case GC_REF_AUTO: break;
    }
  return (int) p;
}

double
gc__term_input (const gc_term *t, const char *name, double fallback)
{
  for (size_t k = 0; k < t->n_inputs; k++)
    if (t->inputs[k].name && strcmp (t->inputs[k].name, name) == 0)
      return t->inputs[k].value;
  return fallback;
}

/* Manual: "The worst case".  gamma_d(u) / u = d / (1 - d u), the
   deterministic first-order multiplier of a chain of D roundings of unit
   roundoff 2^-BITS (infinite where d u >= 1).  */
double
gc__gamma_over_u (size_t depth, int bits)
{
  return gc__gamma_over_unit (depth, ldexp (1.0, -bits));
}

double
gc__gamma_over_unit (size_t depth, double u)
{
  double du = (double) depth * u;
  return du < 1 ? (double) depth / (1 - du) : INFINITY;
}

/* Manual: "Reference rounding".  One evaluation of the forward errs by at
   most eps = lambda*sqrt(d_f)*ulp_p(M_L) (the accumulation bound of "The
   accumulation factor"; M_L the magnitude of the loss's computation, the
   model's or |L|; u M_L <= ulp(M_L)).  */
double
gc__eval_error (gc_reference ref, mpfr_prec_t p, double lambda, size_t depth,
                double lmax)
{
  return lambda * sqrt ((double) depth) * gc__ulp (lmax, format_bits (ref, p));
}

/* Manual: "Reference rounding" and "Default precision and step": eps / h
   for the step h = HM * 2^HE, formed from exponents, so that neither
   ulp_p(M_L) nor h is ever a double below 2^-1074 (at p = 3300 both are;
   the quotient underflows only where it is itself below 2^-1074).  */
double
gc__eval_error_over_step (gc_reference ref, mpfr_prec_t p, double lambda,
                          size_t depth, double lmax, double hm, long he)
{
  if (lmax == 0 || !isfinite (lmax))
    return 0;
  int e;
  frexp (fabs (lmax), &e);
  double ex = (double) e - format_bits (ref, p) - (double) he;
  if (ex < -2000)
    return 0;
  return ldexp (lambda * sqrt ((double) depth) / hm, (int) ex);
}

/* Manual: "Reference rounding".  gamma_d(2^-p) M_L / h for h = HM * 2^HE:
   the deterministic first-order bound of a chain of DEPTH correctly rounded
   operations at precision P, over the step, formed from exponents.  */
double
gc__gamma_over_step (mpfr_prec_t p, size_t depth, double lmax, double hm,
                     long he)
{
  if (lmax == 0 || !isfinite (lmax))
    return 0;
  int e;
  double f = frexp (fabs (lmax), &e);
  double ex = (double) e - (double) p - (double) he;
  if (ex < -2000)
    return 0;
  /* d 2^-p / (1 - d 2^-p): the denominator is 1 to double precision
     whenever d 2^-p < 2^-53, and gc__precision_usable keeps p >= 25 */
  double du = ldexp ((double) depth, -(int) (p < 1000 ? p : 1000));
  double den = du < 1 ? 1 - du : 0;
  if (den <= 0)
    return INFINITY;
  return ldexp ((double) depth * f / (hm * den), (int) ex);
}

/* Manual: "Reference rounding".  D(h) = (f(x+h) - f(x-h)) / 2h carries the
   two evaluation errors divided by 2h: at most eps/h.  D itself is
   delivered as a double, rounded once more: u_53 |D|.  The step is
   h = HM * 2^HE ("Default precision and step").  Manual: "Measured
   rounding sensitivity": SPREAD_LOSS, S_L, the spread of the f32 or f64
   reference forward at x over the rounding modes, adds S_L / h (0 in MPFR
   mode).  */
double
gc__term_reference (gc_term *t, gc_reference ref, mpfr_prec_t p,
                    double lambda, size_t depth, double lmax, double hm,
                    long he, double d, double spread_loss)
{
  double h = ldexp (hm, (int) (he < -4000 ? -4000 : he));
  term_texts (t, 0, GC_TERM_REFERENCE);
  add_input (t, "lambda", lambda);
  add_input (t, "d_f", (double) depth);
  add_input (t, "p", (double) format_bits (ref, p));
  add_input (t, "M_L", lmax);
  add_input (t, "ulp_p(M_L)", gc__ulp (lmax, format_bits (ref, p)));
  add_input (t, "h", h);
  add_input (t, "|D(h)|", fabs (d));
  add_input (t, "log2(h)", log2 (hm) + (double) he);
  double eps_h = gc__eval_error_over_step (ref, p, lambda, depth, lmax, hm,
                                           he);
  double worst = eps_h;
  if (ref != GC_REF_MPFR)
    {
      /* Manual: "The worst case": the deterministic multiplier where it is
         the smaller (depths below about lambda^2)  */
      double gu = gc__gamma_over_u (depth, format_bits (ref, p));
      add_input (t, "gamma_d / u", gu);
      double ls = lambda * sqrt ((double) depth);
      worst = ls > 0 ? eps_h / ls * gu : eps_h;
      eps_h = fmin (eps_h, worst);
    }
  else
    {
      /* Manual: "Reference rounding": the deterministic first-order bound
         gamma_d = d 2^-p / (1 - d 2^-p) of the MPFR forward, beside the
         probabilistic one; the larger is taken (it costs nothing).  */
      double g = gc__gamma_over_step (p, depth, lmax, hm, he);
      add_input (t, "gamma_d(2^-p) M_L / h", g);
      eps_h = fmax (eps_h, g);
      worst = eps_h;
    }
  double rest = GC_U64 * fabs (d);
  if (spread_loss > 0)
    {
      add_input (t, "S_L", spread_loss);
      rest += ldexp (spread_loss / hm, (int) (he < -4000 ? 4000 : -he));
    }
  t->value = eps_h + rest;
  return worst + rest;
}

/* Manual: "Adjoint rounding".  Element i of the f32 backward errs by at
   most lambda*sqrt(d_b)*(u*m_i + 2^-150), m_i the magnitude of its
   computation, 2^-150 the absolute error of a rounding in the subnormal
   range; along the applied direction w the errors add up to at most
   lambda*sqrt(d_b)*(u*sum_i |w_i| m_i + 2^-150 sum_i |w_i|).  Manual:
   "Measured rounding sensitivity": the measured spread S_w of <g, w> over
   the rounding modes is added (SPREAD; 0 when not measured).  */
double
gc__term_adjoint (gc_term *t, double lambda, size_t depth,
                  double weighted_magnitude, double norm1_w, double spread)
{
  term_texts (t, 0, GC_TERM_ADJOINT);
  add_input (t, "lambda", lambda);
  add_input (t, "d_b", (double) depth);
  add_input (t, "u", GC_U32);
  add_input (t, "sum |w_i| m_i", weighted_magnitude);
  add_input (t, "sum |w_i|", norm1_w);
  add_input (t, "S_w", spread);
  /* Manual: "The worst case": the smaller multiplier decides; the worst
     case is returned for the direction's worst-case bar.  */
  double gu = gc__gamma_over_u (depth, 24);
  add_input (t, "gamma_d / u", gu);
  double base = GC_U32 * weighted_magnitude + 0x1p-150 * norm1_w;
  t->value = fmin (lambda * sqrt ((double) depth), gu) * base + spread;
  return gu * base + spread;
}

/* Manual: "The f64 twin", the twin's adjoint term: the same chain of
   d_b roundings at u = 2^-53, bounded in the worst case (gamma_d: at this
   unit roundoff rigour costs a factor sqrt(d_b) / lambda of almost
   nothing), plus the twin's measured spread S_w64 over the rounding modes.
   DEFAULTED records whether the magnitudes m_i were defaulted (judge.c:
   a blindness a defaulted magnitude makes is the check's, not the
   element's).  */
void
gc__term_adjoint_f64 (gc_term *t, size_t depth, double weighted_magnitude,
                      double norm1_w, double spread, bool defaulted)
{
  t->name = twin_texts[0];
  t->formula = twin_texts[1];
  t->section = twin_texts[2];
  t->n_inputs = 0;
  add_input (t, "d_b", (double) depth);
  add_input (t, "u", GC_U64);
  add_input (t, "sum |w_i| m_i", weighted_magnitude);
  add_input (t, "sum |w_i|", norm1_w);
  add_input (t, "S_w64", spread);
  double gu = gc__gamma_over_u (depth, 53);
  add_input (t, "gamma_d / u", gu);
  add_input (t, "m defaulted", defaulted ? 1 : 0);
  t->value = gu * (GC_U64 * weighted_magnitude + 0x1p-1074 * norm1_w)
             + spread;
}

/* Manual: "Richardson's stencil".  R(h) = (4 D(h) - D(2h)) / 3 =
   f' + O(h^4), R(2h) - R(h) = 15 c_4 h^4 + O(h^6): the whole measured
   difference is taken as R(h)'s truncation (15 times headroom, as
   "Truncation" takes 3).  Each of the six evaluations errs by at most
   eps, so R(h) errs by at most (4 (2 eps / 2h) + 2 eps / 4h) / 3 = 3/2
   eps / h: 3/2 the reference rounding term E of D at h (E, made by
   gc__term_reference, also carries S_L / h and u_53 |D|, scaled alike).
   The ladder's second extrapolation R2(h) = (64 D(h) - 20 D(2h) +
   D(4h)) / 45 errs by at most (64 + 20 / 2 + 1 / 4) / 45 = 33/20 eps / h.
   E64 is E's value.  */
void
gc__terms_richardson (gc_term t[2], double h, int order, double r1,
                      double r2, double e64)
{
  bool two = order == 2;
  t[0].name = richardson_texts[0];
  t[0].formula = richardson_texts[two ? 5 : 1];
  t[0].section = richardson_texts[4];
  t[0].n_inputs = 0;
  add_input (&t[0], "h", h);
  add_input (&t[0], two ? "R2(h)" : "R(h)", r1);
  add_input (&t[0], two ? "R2(2h)" : "R(2h)", r2);
  t[0].value = fabs (r2 - r1);
  t[1].name = richardson_texts[2];
  t[1].formula = richardson_texts[two ? 6 : 3];
  t[1].section = richardson_texts[4];
  t[1].n_inputs = 0;
  add_input (&t[1], "h", h);
  add_input (&t[1], "E_64(h)", e64);
  t[1].value = (two ? (64 + 20 / 2. + 1 / 4.) / 45 : (4 + 1 / 2.) / 3) * e64;
}

/* Manual: "The forward oracle".  Output k of the f32 forward errs by at
   most lambda sqrt(d_o) u m_k, the MPFR one by lambda sqrt(d_o) 2^-p m_k,
   and the reference loses u_53 |r| on its way to a double.  */
void
gc__terms_output (gc_term t[GC_N_TERMS], double lambda, size_t depth,
                  mpfr_prec_t p, double mk, double r)
{
  double sd = sqrt ((double) depth);
  gc_term *o = &t[GC_TERM_OUTPUT];
  term_texts (o, 1, GC_TERM_OUTPUT);
  add_input (o, "lambda", lambda);
  add_input (o, "d_o", (double) depth);
  add_input (o, "u", GC_U32);
  add_input (o, "m_k", mk);
  o->value = lambda * sd * GC_U32 * mk;
  o = &t[GC_TERM_OUTPUT_REFERENCE];
  term_texts (o, 1, GC_TERM_OUTPUT_REFERENCE);
  add_input (o, "lambda", lambda);
  add_input (o, "d_o", (double) depth);
  add_input (o, "p", (double) p);
  add_input (o, "m_k", mk);
  o->value = lambda * sd * ldexp (mk, -(int) p);
  o = &t[GC_TERM_CONVERSION];
  term_texts (o, 1, GC_TERM_CONVERSION);
  add_input (o, "|r|", fabs (r));
  o->value = GC_U64 * fabs (r);
}

/* Manual: "The JVP check".  The tangent's rounding: the adjoint term's
   chain at the tangent's depth DEPTH, over the same magnitude
   u sum_i |w_i| m_i + 2^-150 sum_i |w_i| (WM = sum_i |w_i| m_i, W1 =
   sum_i |w_i|: the inputs the adjoint term has, so that judge.c reads
   both alike, "What the measurement does not support"), or, where the
   gradient check gave only the random direction's form, that sum whole
   (QV, NAN otherwise); plus the tangent's measured spread.  Returns the
   worst-case value (gamma_d).  */
double
gc__term_tangent (gc_term *t, double lambda, size_t depth, double wm,
                  double w1, double qv, double spread)
{
  term_texts (t, GC_CHECK_JVP, GC_TERM_ADJOINT);
  add_input (t, "lambda", lambda);
  add_input (t, "d_t", (double) depth);
  add_input (t, "u", GC_U32);
  double base = qv;
  if (isnan (qv))
    {
      add_input (t, "sum |w_i| m_i", wm);
      add_input (t, "sum |w_i|", w1);
      base = GC_U32 * wm + 0x1p-150 * w1;
    }
  else
    add_input (t, "sum |v_i| (u m_i + 2^-150)", qv);
  add_input (t, "S_w", spread);
  double gu = gc__gamma_over_u (depth, 24);
  add_input (t, "gamma_d / u", gu);
  t->value = fmin (lambda * sqrt ((double) depth), gu) * base + spread;
  return gu * base + spread;
}

/* Manual: "The HVP check".  B_i, one gradient element's rounding: the
   twin's deterministic gamma_d(2^-53) / u_53 (u_53 m + 2^-1074) (TWIN),
   or f32's min(lambda sqrt(d_b), gamma_d / u) (u m + 2^-150).  */
double
gc__gradient_rounding (bool twin, double lambda, size_t depth, double m)
{
  if (twin)
    return gc__gamma_over_u (depth, 53) * (GC_U64 * m + 0x1p-1074);
  return fmin (lambda * sqrt ((double) depth), gc__gamma_over_u (depth, 24))
         * (GC_U32 * m + 0x1p-150);
}

/* Manual: "The HVP check": element i's three terms from D_i(h) = D1,
   D_i(2h) = D2 (their difference DIFF as computed), the step H, the
   gradient's rounding B_i = B, and the HVP's depth DEPTH, magnitude MH
   and measured spread SPREAD.  Returns the worst-case bar (gamma_d in
   place of lambda sqrt(d) in the HVP term).  */
double
gc__terms_hvp (gc_term t[GC_N_TERMS], double d1, double d2, double diff,
               double h, double b, double lambda, size_t depth, double mh,
               double spread)
{
  term_texts (&t[0], GC_CHECK_HVP, GC_TERM_TRUNCATION);
  add_input (&t[0], "D(h)", d1);
  add_input (&t[0], "D(2h)", d2);
  add_input (&t[0], "h", h);
  t[0].value = fabs (diff);
  term_texts (&t[1], GC_CHECK_HVP, GC_TERM_REFERENCE);
  add_input (&t[1], "B_i", b);
  add_input (&t[1], "h", h);
  add_input (&t[1], "|D(h)|", fabs (d1));
  t[1].value = b / h + GC_U64 * fabs (d1);
  term_texts (&t[2], GC_CHECK_HVP, GC_TERM_ADJOINT);
  add_input (&t[2], "lambda", lambda);
  add_input (&t[2], "d_H", (double) depth);
  add_input (&t[2], "u", GC_U32);
  add_input (&t[2], "m^H_i", mh);
  add_input (&t[2], "S_w", spread);
  double gu = gc__gamma_over_u (depth, 24);
  add_input (&t[2], "gamma_d / u", gu);
  double base = GC_U32 * mh + 0x1p-150;
  t[2].value = fmin (lambda * sqrt ((double) depth), gu) * base + spread;
  return t[0].value + t[1].value + gu * base + spread;
}
