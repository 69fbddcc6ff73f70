/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* internal.h -- declarations shared by the files of libgradcheck; not
   installed.  Every symbol here has internal linkage at the library level:
   the export list (Makefile.am) keeps only the gc_ prefix public, and these
   use the gc__ prefix, which that list excludes.  */

#ifndef GC_INTERNAL_H
#define GC_INTERNAL_H

#include "gradcheck.h"

#include <fenv.h>
#include <stdarg.h>
#include <stdbool.h>

/* Whether a gc_model of ABI version ABI is taken: GC_MODEL_ABI_OLDEST to
   GC_MODEL_ABI (a version-1 model is read as one without grad_f64).  */
static inline bool
gc__model_abi_known (int abi)
{
  return abi >= GC_MODEL_ABI_OLDEST && abi <= GC_MODEL_ABI;
}

/* (abi.c) M itself when of the current ABI version (or unknown: the
   caller refuses it), else COPY filled with M's fields and zeros for those
   its version lacks.  */
const gc_model *gc__model_by_abi (const gc_model *m, gc_model *copy);

/* (higher.c) A check kind's name in JSON reports ("gradient",
   "forward", "jvp", "hvp") and its label in text reports ("" for the
   gradient check, "forward oracle, ", "JVP check, ", "HVP check, ").  */
const char *gc__kind_name (gc_check_kind kind);
/* "parameter I", and its name where the model has blocks ("parameter 3
   (W[0,3])"), into BUF of SIZE bytes; returns BUF.  For messages.  */
char *gc__param_at (const gc_result *r, size_t i, char *buf, size_t size);
const char *gc__kind_label (gc_check_kind kind);
/* (higher.c) The names of a kind's two depths in the report's inputs
   (result forward_depth, backward_depth: "d_f", "d_b"; the JVP's "d_t";
   the HVP's "d_b", "d_H") and what stands in for them when not declared
   ("n", "2 d_f", "d_f + d_b").  */
void gc__kind_depths (gc_check_kind kind, const char *name[2],
                      const char *dflt[2]);

/* (directions.c) Random direction ID of a check of seed SEED over n
   parameters, drawn on [LO, HI) (zero elsewhere), unit in the 2-norm,
   into V; N, the norm the draws were divided by, into *NORM_OUT when not
   NULL (manual: "Directional checks").  gc_check's random directions are
   these.  */
void gc__draw_direction (uint64_t seed, size_t n, size_t lo, size_t hi,
                         size_t id, float *v, double *norm_out);

/* The f32 unit roundoff u = 2^-24 (manual: "Notation").  */
#define GC_U32 0x1p-24
#define GC_U64 0x1p-53

/* Manual: "Measured rounding sensitivity": the factor by which a declared
   depth may exceed the depth the measurement implies before the report
   calls it overstated (the bar is then coarser by up to its square root,
   8).  */
#define GC_COARSE_FACTOR 64
/* Manual: "Depths declared far above the implied": a declared depth this
   many times the implied one is named in the report (sqrt(8) = 2.8 times
   the adjoint term the measurement shows).  */
#define GC_OVER_FACTOR 8

/* Growable string; every operation is a no-op once an allocation failed,
   so callers check ok once at the end.  */
typedef struct gc__buf
{
  char *s;
  size_t len, cap;
  bool failed;
} gc__buf;

void gc__buf_printf (gc__buf *b, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
void gc__buf_puts (gc__buf *b, const char *s);
/* (buf.c) Ratio R with DIGITS significant digits, as "1 + d" where that
   would print 1 for R != 1; into BUF of SIZE bytes, returned.  */
const char *gc__ratio_text (char *buf, size_t size, double r, int digits);
/* (buf.c) The range LO to HI with the digits that tell them apart
   ("13.99999998 to 14.00000003", "1 - 0.0027 to 1 + 0.008"); into BUF of
   SIZE bytes (at least 96), returned.  */
const char *gc__range_text (char *buf, size_t size, double lo, double hi);
/* UTF-8 (buf.c): the length of the valid sequence at P or 0; S appended
   with each invalid byte as U+FFFD; SRC so cleaned into DST of SIZE bytes
   (not in place), cut at a character boundary.  */
size_t gc__utf8_len (const unsigned char *p);
void gc__buf_utf8 (gc__buf *b, const char *s);
void gc__utf8_copy (char *dst, size_t size, const char *src);
/* Hand over the string (NULL after a failed allocation; the buffer is
   freed either way).  */
char *gc__buf_take (gc__buf *b);

/* xoshiro256** seeded by splitmix64: a small, well-tested generator whose
   streams are identical on every platform.  */
typedef struct gc__rng { uint64_t s[4]; } gc__rng;
void gc__rng_seed (gc__rng *r, uint64_t seed);
uint64_t gc__rng_next (gc__rng *r);
double gc__rng_uniform (gc__rng *r);      /* in (0, 1) */
double gc__rng_gaussian (gc__rng *r);     /* standard normal */

/* ulp of |y| in a binary format with P-bit significands: 2^(floor(log2|y|)
   - P + 1); for y == 0 the smallest normal's ulp is not needed, 0 is
   returned.  */
double gc__ulp (double y, int p);

/* The confidence factor lambda for M probabilistic bounds sharing a false
   alarm probability ALPHA (manual: "The confidence factor").  */
double gc__lambda (double alpha, size_t m, size_t d);

/* Default MPFR precision and steps (manual: "Default precision and step").  */
mpfr_prec_t gc__default_precision (void);
bool gc__precision_usable (mpfr_prec_t p);
int gc__default_step_exponent (gc_reference ref, mpfr_prec_t p);

/* Status names as the JSON report writes them ("ECALLBACK").  */
const char *gc__status_name (gc_status s);
const char *gc__status_lead (gc_status status, const char *detail,
                             char *buf, size_t size);
int gc__status_from_name (const char *name);
/* The verdict named NAME ("inconclusive"), -1 for none: for reports read
   back (the inverse of gc_verdict_name).  */
int gc__verdict_from_name (const char *name);
/* The arithmetic class's name in JSON ("precision"), and back (-1: none):
   manual "Two verdicts, one report".  */
const char *gc__arith_name (gc_arith a);
int gc__arith_from_name (const char *name);
/* (noise.c) The element where A and B (N floats) differ most, relative to
   the larger of the two (absolute where both are 0), or SIZE_MAX when they
   are bitwise equal.  */
size_t gc__float_spread (const float *a, const float *b, size_t n);
/* (noise.c) Manual: "Measured rounding sensitivity".  The rounding modes
   the backward is run again under: the three IEEE modes other than the
   caller's CURRENT one, written to MODES (the count is returned); their
   names; the spread S_i of element I over the result to nearest G and the
   modes' results GM (NULL: a mode left out); the spread S_w along V.  */
#define GC_N_MODES 3
int gc__other_modes (int current, int modes[GC_N_MODES]);
const char *gc__mode_name (int mode);
double gc__spread_at (const float *g, float *const gm[GC_N_MODES], size_t i);
double gc__spread_along (const float *g, float *const gm[GC_N_MODES],
                         const float *v, size_t n);
/* (noise.c) Record that WHAT (GC_ND_*) gave different bits, with the
   element INDEX (SIZE_MAX: none), both values and a sentence; the first
   record's values and sentence are kept (manual: "Determinism and
   reentrancy").  */
/* How many directions share the check's false-alarm budget (manual:
   "The confidence factor"): the directions of the whole check, or of a
   screened one every direction it could take ("Screening").  */
size_t gc__bounds_count (const gc_result *r);
void gc__note_nondeterminism (gc_result *r, unsigned what, size_t index,
                              double first, double second, const char *fmt,
                              ...) __attribute__ ((format (printf, 6, 7)));
/* (judge.c) A passing gradient direction whose resolution is >= 1 and
   whose reference terms are at least its adjoint term is inconclusive
   (manual: "Inconclusive directions").  */
void gc__judge_resolution (gc_direction *d);
/* (judge.c) Judge D as smooth, by its nu (manual: "Non-smooth points").  */
void gc__judge_smooth (gc_direction *d);

/* Shared by gc_check and gc_forward_check (check.c).  */
gc_status gc__copy_blocks (gc_result *r, const gc_block *blocks, size_t nb);
gc_status gc__copy_constants (gc_result *r, const gc_constant *c, size_t n);
/* Keep a copy of S with the result (freed by gc_result_free); NULL when
   memory runs out.  */
const char *gc__keep_string (gc_result *r, const char *s);
bool gc__blocks_valid (const gc_block *blocks, size_t nb, size_t n);
bool gc__blocks_why (const gc_block *blocks, size_t nb, size_t n, char *why,
                     size_t size);
/* Manual: "JSON report": the options of O that a result records before
   the check validates them, each within its range (result.c): an option
   out of it, which the check refuses, leaves gc_options_init's value in
   its place (the refusal's detail names it), so that a refusal's report
   holds only the values the manual lists and reads back
   (gc_result_parse_json).  Also sets the measured depth's element to
   none (SIZE_MAX), where a check stopped before measuring leaves it.  */
void gc__result_options (gc_result *r, const gc_options *o);
/* D without the twin's values (manual: "Two verdicts, one report"):
   analytic_f64 NaN says so, to the judge and the reports alike.  */
void gc__direction_no_twin (gc_direction *d);
/* O's reference when it is a gc_reference, else gc_options_init's
   (GC_REF_AUTO): for the result's record only, as above.  */
gc_reference gc__result_reference (const gc_options *o);
/* GC_EPOINT, with the first non-finite element named in DETAIL by the
   NB BLOCKS (validated) that hold it ("w[3] = inf (parameter 99)"), when the
   point X of N floats holds NaN or Inf.  */
gc_status gc__point_finite (const float *x, size_t n, const gc_block *blocks,
                            size_t nb, char *detail, size_t size);
/* Element INDEX named by the NB BLOCKS (validated) that hold it, "x[INDEX]"
   where none does; BUF of SIZE bytes, returned.  */
char *gc__element_name (const gc_block *blocks, size_t nb, size_t index,
                        char *buf, size_t size);
/* Counts, worst direction and verdict of R from its directions
   (judge.c).  */
void gc__summarise (gc_result *r);

/* The identity of a check (identity.c, manual: "Merging shards"): set
   from X (NX floats) and the options once R's other fields are; the
   digest of R's fields and identity; the digest of a direction list.  */
void gc__identity_set (gc_result *r, const float *x, size_t nx,
                       const gc_options *o);
uint64_t gc__identity_digest (const gc_result *r);
uint64_t gc__indices_digest (const size_t *indices, size_t n);

/* The diagnosis of a finished result (diagnose.c).  */
void gc__diagnose (gc_result *r);
/* (diagnose.c) Manual: "Two verdicts, one report": in a check with a
   twin, precision findings with the structure of a logic error become
   failures of the f32 path (the counts summarised again), and the
   diagnosis reads each failure through the question that found it (of
   the precision findings where nothing failed).  A no-op without a twin.  */
void gc__twin_findings (gc_result *r);
double gc__class_depth_implied (const gc_result *r, size_t *at);
/* (diagnose.c) Issue 36: with a twin, failures of the algorithm alone
   where g32 agrees with the reference: the twin is not the reference's
   algorithm (GC_DIAG_TWIN_DIFFERS), said over R's diagnosis.  */
void gc__diag_twin_differs (gc_result *r);
/* (diagnose.c) Issue 36: a diagnosis of precision findings worded as
   such: "precision finding(s)", not "failure(s)"; g32 / g64, not
   analytic / reference.  */
void gc__diag_as_precision (gc_diagnosis *dg);
/* Whether every failure of R is the f32 path's by structure alone (a
   factor or smooth term the moved points kept), within 2^16 of its bar,
   with no backward class declared (diagnose.c).  */
bool gc__diag_by_structure (const gc_result *r);

/* One tensor's part of a result (manual: "Diagnosis"): its directions'
   counts, worst nu, median resolution, and for a failing tensor checked by
   coordinates the exact per-axis structure of its failures ("axis 0: 0-22
   fail, 23 passes"), or "".  */
typedef struct gc__tensor
{
  const char *name;
  size_t block;            /* index in r->blocks, or SIZE_MAX */
  size_t checked, failed, nonsmooth;
  /* directions whose verdict is GC_PRECISION, GC_INCONCLUSIVE: findings
     the failed count does not show  */
  size_t precision, inconclusive;
  size_t coordinates;      /* of the checked, those along a coordinate */
  double worst_nu;
  double resolution;       /* median bar / |reference|; NaN if none */
  /* The median relative error |analytic - reference| / |reference| of its
     failures (infinite where a reference is 0); 0 when none fails.  */
  double rel_error;
  /* Manual: "Directional checks", "What a pass rules out": for a tensor
     checked by random directions with no failure, the 2-norm E* of an
     error of its backward caught with probability 1 - alpha, and E* over
     the estimate of its gradient's 2-norm; NaN otherwise.  */
  double rules_out, rules_out_rel;
  /* With a twin, the same for an error of the f32 path alone, judged by
     the arithmetic's bounds (a_k A* alpha^(-1/K)); NaN without a twin or
     where the tensor holds an arithmetic finding.  */
  double rules_out_f32, rules_out_f32_rel;
  char structure[200];
} gc__tensor;
/* The tensors of R: one per block when the directions can be placed in
   blocks, else one for the whole vector.  *OUT is freed with free().  */
gc_status gc__tensors (const gc_result *r, gc__tensor **out, size_t *count);
/* The block of direction D, or SIZE_MAX.  */
size_t gc__direction_block (const gc_result *r, const gc_direction *d);
/* qsort's comparison of two doubles, ascending (tensors.c).  */
int gc__cmp_double (const void *a, const void *b);
/* Whether the f32 loss at the centre disagrees with the reference loss
   beyond its budget: 0 no, 1 beyond the probabilistic budget but within
   the worst case gamma_{d_f} (a depth declared too small can explain it),
   2 beyond the worst case (different functions), 3 beyond it where M_L is
   only |L| (the model declares no larger magnitude, and no measured
   spread raised it: a cancelling loss may explain it, unless the f32
   forward's spread was measured, gc__forward_spread_measured).
   *WORST_ULPS: that worst case in ulps of M_L.  */
int gc__forward_disagreement (const gc_result *r, double *worst_ulps);
/* Whether the f32 forward's spread S_32 was measured at the centre under
   the other rounding modes (gc_result.spread_loss_f32 not NaN), in a
   mode whose reference is another forward (manual: "Forward
   disagreement", "Never a pass").  */
bool gc__forward_spread_measured (const gc_result *r);
/* Manual: "Never a pass": whether the forwards' disagreement leaves the
   gradient unjudged (no pass: inconclusive where nothing failed).  */
bool gc__forward_unjudged (const gc_result *r);
/* Set R's f64_same_verdict and f64_term_ratio from its MPFR directions'
   terms, when the model HAS_F64 (manual: "Would f64 do?").  */
void gc__predict_f64 (gc_result *r, bool has_f64, bool user_step);

/* Term constructors (errmodel.c).  */
void gc__term_truncation (gc_term *t, double d1, double d2, double diff,
                          double h);
/* (errmodel.c) The truncation term of an MPFR stencil whose +-2h pair was
   not evaluated (manual: "Skipping the 2h pair"): rho^2 T_64 + E2, T_64
   the f64 stencil's truncation term on the same line at the step h / rho,
   E2 twice MPFR's rounding term at twice the loss and twice |D(h)|: a
   bound on what the pair would have measured.  */
void gc__term_truncation_predicted (gc_term *t, double d1, double h,
                                    double rho, double t64, double e2);
/* Give T that term's formula and section (a report read back).  */
void gc__term_mark_predicted (gc_term *t);
/* The step is h = HM * 2^HE (manual: "Default precision and step").  */
/* (errmodel.c) The input NAME of term T, or FALLBACK when it has none of
   that name; gamma_d(u) / u = d / (1 - d u) for unit roundoff 2^-BITS
   (infinite where d u >= 1; manual: "The worst case").  */
double gc__term_input (const gc_term *t, const char *name, double fallback);
double gc__gamma_over_u (size_t depth, int bits);
/* The same for any unit roundoff U (a rounding class's).  */
double gc__gamma_over_unit (size_t depth, double u);
double gc__class_gamma_over_unit (size_t depth, double u);
/* Each returns the term's worst-case value, gamma_d in place of lambda
   sqrt(d) (manual: "The worst case").  */
double gc__term_reference (gc_term *t, gc_reference ref, mpfr_prec_t p,
                         double lambda, size_t depth, double lmax, double hm,
                         long he, double d, double spread_loss);
/* gamma_depth(2^-P) * lmax / h for h = HM * 2^HE (manual: "Reference
   rounding"), without forming either as a double.  */
double gc__gamma_over_step (mpfr_prec_t p, size_t depth, double lmax,
                            double hm, long he);
/* lambda * sqrt(depth) * ulp_p(lmax) / h for h = HM * 2^HE, without forming
   either as a double.  */
double gc__eval_error_over_step (gc_reference ref, mpfr_prec_t p,
                                 double lambda, size_t depth, double lmax,
                                 double hm, long he);
/* (errmodel.c) The adjoint term T of a random direction, made by
   gc__term_adjoint with worst-case value WORST, replaced by the draw's
   bound where that is smaller (manual: "Directional checks"); returns the
   worst-case value.  */
double gc__term_adjoint_random (gc_term *t, double worst, double alpha_dir,
                                double cq, size_t depth, size_t k, double q2,
                                double qv, double qd, double norm,
                                double spread);
/* (errmodel.c) The joint quantile c of a random direction's adjoint term
   (manual: "Directional checks"): P(|<zeta, e>| > (1+u) c ||sigma||_2)
   <= P for K elements of depth DEPTH, whatever their dependence;
   INFINITY where no c <= 1024 does.  Costs some 10^5 exponentials.  */
double gc__joint_quantile (double p, size_t depth, size_t k);
/* (errmodel_random.c) The upper bound the joint quantile holds at P:
   P(|<zeta, e>| > (1 + u) C ||sigma||_2) for depth DEPTH and K elements
   (the quantile is the least C, to 2^-20, with it at most P).  */
double gc__joint_tail (double c, size_t depth, size_t k, double p);
double gc__term_adjoint (gc_term *t, double lambda, size_t depth,
                       double weighted_magnitude, double norm1_w,
                       double spread);
/* The terms' name, formula and manual section by check kind (0 gradient,
   1 forward) and term; the static copy of a term text or input name S, or
   NULL when S is none of them.  */
#define GC_N_KINDS 4   /* gc_check_kind: gradient, forward, JVP, HVP */
extern const char *const gc__term_texts[GC_N_KINDS][GC_N_TERMS][3];
const char *gc__known_name (const char *s);
/* The forward oracle's three terms of an output k: magnitude MK, MPFR
   precision P, reference R (manual: "The forward oracle").  */
void gc__terms_output (gc_term t[GC_N_TERMS], double lambda, size_t depth,
                       mpfr_prec_t p, double mk, double r);
/* (errmodel.c) Manual: "The JVP check": the tangent rounding term of
   depth DEPTH over u WM + 2^-150 W1 (WM = sum_i |w_i| m_i, W1 =
   sum_i |w_i|), or over QV = sum_i |v_i| (u m_i + 2^-150) where QV is not
   NAN, with the tangent's spread; returns its worst-case value.  */
double gc__term_tangent (gc_term *t, double lambda, size_t depth,
                         double wm, double w1, double qv, double spread);
/* (errmodel.c) Manual: "The HVP check": a gradient element's rounding
   B_i at magnitude M (the twin's, or f32's), and an HVP element's three
   terms; the latter returns the worst-case bar.  */
double gc__gradient_rounding (bool twin, double lambda, size_t depth,
                              double m);
double gc__terms_hvp (gc_term t[GC_N_TERMS], double d1, double d2,
                      double diff, double h, double b, double lambda,
                      size_t depth, double mh, double spread);
/* (errmodel.c) The twin's adjoint term (manual: "The f64 twin"):
   gamma_d(2^-53)/u (u sum |w_i| m_i + 2^-1074 sum |w_i|) + S_w64;
   DEFAULTED: whether the magnitudes were defaulted, kept as an input.  */
void gc__term_adjoint_f64 (gc_term *t, size_t depth,
                           double weighted_magnitude, double norm1_w,
                           double spread, bool defaulted);
/* (errmodel.c) Richardson's two terms (manual: "Richardson's stencil"):
   of ORDER 1, truncation |R(2h) - R(h)| from R1 = R(h), R2 = R(2h), and
   rounding 3/2 of E, the reference rounding term of D at the same step
   H; of ORDER 2 (the ladder's second extrapolation), truncation
   |R2(2h) - R2(h)| from R1 = R2(h), R2 = R2(2h), and rounding 33/20 of
   E.  E64 is E's value.  */
void gc__terms_richardson (gc_term t[2], double h, int order, double r1,
                           double r2, double e64);
/* The step of Richardson's stencil for a coordinate of scale S:
   2^(floor(log2 S) - GC_RICHARDSON_SHIFT) (manual: "Richardson's
   stencil"); its points reach x +- 4h = x +- S / 2^(SHIFT - 2) at most.  */
#define GC_RICHARDSON_SHIFT 7
/* Manual: "Richardson's stencil", the ladder: the most further doublings
   of R's step where its terms are above the algorithm's resolution goal
   (the widest points x +- 2^(floor(log2 S) - 1), half the scale).  */
#define GC_RICHARDSON_LADDER 3
/* Manual: "Richardson's stencil", a forward flat at the short step: the
   ulps of |L| by which R's slope must part two neighbours of the f64
   stencil for their exact equality to say "constant", not "rounded
   alike".  A model, not a bound: it stands above the modelled rounding of
   one f64 evaluation at the loss's own magnitude, lambda sqrt(d_f) ulps
   (some 30 for torch's ops), and below the measured spread S_L, which the
   stairs themselves raise (torch's round: 2^40 ulps of |L|).  */
#define GC_FLAT_ULPS 64
/* Manual: "Two verdicts, one report": a constant factor whose findings'
   ratios spread (half their range) by more than 1 / GC_FACTOR_SCATTER of
   |c - 1| is scatter, not a logic error's factor (which holds to its last
   bits: f32factor's x1.01, a spread 10^-5 of |c - 1|; ds-bf16's, 0.54). */
#define GC_FACTOR_SCATTER 4
/* (judge_twin.c) Manual: "Two verdicts, one report": with the twin's analytic
   value, adjoint term and the arithmetic's bound arith_bar in D, and D
   judged against its reference as
   without a twin (its verdict, terms and nu), the algorithm's verdict,
   the arithmetic's class and the two combined into D's verdict.  A no-op
   for a direction without a twin (analytic_f64 NaN) or in error.  */
void gc__judge_twin (gc_direction *d);
/* (judge_twin.c) Manual: "Two verdicts, one report": R's twin counts
   and worst directions; "Twin rounding the modes do not reach": the
   algorithm's failures within the twin's worst case at the depth the
   measurement implies, where every twin spread is 0 and the declared
   depth is contradicted, made inconclusive (counted in n_unreached).
   Both idempotent; gc__summarise calls them.  */
void gc__twin_summary (gc_result *r);
/* (judge_twin.c) Manual: "Richardson's stencil": the reference D's
   algorithm was judged on (R(h) where used, else D(h)), its terms' sum in
   *TERMS.  */
double gc__algorithm_reference (const gc_direction *d, double *terms);
void gc__judge_twin_unreached (gc_result *r);
/* (judge_twin.c) Manual: "Within the bound": the band a direction not
   among the precision candidates is tested on, GC_FACTOR_BAND (S_w + u
   |g64|); and
   whether D's factor was read on it (|g32 - g64| below GC_FACTOR_NU of
   its arithmetic's bar).  */
double gc__factor_band_within (const gc_direction *d);
bool gc__factor_within (const gc_direction *d);
/* (judge.c) Manual: "Inconclusive directions": whether D, judged with
   adjoint-like term A of measured part SPREAD, is below the rounding a
   correct backward may make by A's derived part alone.  */
bool gc__below_rounding (const gc_direction *d, const gc_term *a,
                         double spread);
/* The ratio of bf16's unit roundoff to f32's, 2^16: an arithmetic
   error up to this many f32 bounds is one the same derivation explains at
   bf16's precision (GC_ARITH_PRECISION); beyond it, none (manual: "The f64
   twin").  */
#define GC_PRECISION_CUT 0x1p16
/* Manual: "The measured floor": the perturbed points the twin's gradient
   is measured at, and the margin kappa over the floor F_w a correct f32
   evaluation stays within (a model, calibrated there).  */
#define GC_FLOOR_DRAWS 4
#define GC_FLOOR_MARGIN 64
/* Manual: "A factor the point does not move": the least and the most
   points g32 and g64 are compared at (as many as make (2 / nu)^K times
   the candidates below the false-alarm rate, for the least nu tested),
   the relative move of each parameter there, and the least ratio of a
   precision finding's error to its bar that is tested.  */
/* Manual: "What f64 mode cannot judge": the finer step a failure in
   doubt of aliasing is evaluated again at, h / 2^GC_F64_CONFIRM_SHIFT.  */
#define GC_F64_CONFIRM_SHIFT 8
#define GC_FACTOR_POINTS 4
#define GC_FACTOR_POINTS_MAX 12
#define GC_FACTOR_STEP 0x1p-4
#define GC_FACTOR_NU 16
/* ... and the least ratio of |g32 - g64| to its bar at every point.  */
#define GC_FACTOR_AT 4
/* Manual: "Within the bound": the band a direction within the bound is
   tested on, GC_FACTOR_BAND (S_w + u |g64|): the modes measured the f32
   value's rounding at x alone, and at the moved points it may be a few
   times that (an exp near -10 rounded 8 u against 4 u at x).  */
#define GC_FACTOR_BAND 4
/* ... and the jump of g64 at a moved point, by this factor or more from
   its value at x either way, that reads as the gradient's structure
   moved (a rank swapped, an element left the support), not a smooth
   change: the direction is tested again at one common fraction.  */
#define GC_FACTOR_JUMP 4
/* Manual: "Screening": the coarsest resolution at which a random
   direction's pass spares its tensor the second round: the twin's
   bar_64 / |reference| where it judged, 2^-20; else bar / |reference|,
   2^-10.  */
#define GC_SCREEN_RESOLUTION_64 0x1p-20
#define GC_SCREEN_RESOLUTION_32 0x1p-10
/* ... and where the points do not move the twin, the least ratio of
   |g32 - g64| to the f32 spread over the rounding modes that reads as a
   factor the modes do not move (three directed runs reproducing the
   to-nearest error to within 2^-10 of it).  */
#define GC_FACTOR_SPREAD 0x1p10
/* Manual: "A term the point does not redraw": the largest relative drift
   of g32 - g64 over the same points that reads as a smooth term (a
   rounding redrawn lands within it with a chance of at most 1/8).  */
#define GC_TERM_DRIFT 0.125
/* (twin_floor.c) f32's own arithmetic bound on D without the classes,
   given B32, the declared-depth bound gamma_d(u)/u (u sum |w_i| m_i +
   2^-150 sum |w_i|): kappa F_w where the floor was measured and the
   depth defaulted, else B32 (manual: "The measured floor").  */
double gc__floor_f32_bound (const gc_result *r, const gc_direction *d,
                            double b32);

/* (precision.c) Manual: "Rounding classes".  The model's classes (NULL and
   *N = 0 for a model of ABI < 3 or without any); their validation
   (GC_EINVAL with DETAIL); their copy into R (false: no memory); how many
   apply to the backward and to the forward.  */
#define GC_PRECISION_N_INPUTS 2
extern const char *const gc__precision_input_names[GC_PRECISION_N_INPUTS];
extern const char *const gc__adjoint_formula_classes;
const gc_precision *gc__model_precisions (const gc_model *m, size_t *n);
gc_status gc__precision_validate (const gc_model *m, char *detail,
                                  size_t size);
bool gc__precision_copy (gc_result *r, const gc_model *m);
/* The same for a list P of N classes (a result's, a report's).  */
gc_status gc__precision_validate_list (const gc_precision *p, size_t n,
                                       char *detail, size_t size);
bool gc__precision_copy_list (gc_result *r, const gc_precision *p,
                              size_t n);
size_t gc__precision_backward_count (const gc_result *r);
/* How many of R's classes the rounding modes do not reach (manual: "What
   the rounding modes reach").  */
size_t gc__precision_unreached_count (const gc_result *r);
size_t gc__precision_forward_count (const gc_result *r);
/* The classes' part of the adjoint term added to T (inputs "A_classes",
   "A_unreached": the part of classes the rounding modes do not reach),
   their worst case added to *WORST (may be NULL); returns the part.  WM:
   sum |w_i| m_i, W1: sum |w_i|.  */
double gc__precision_adjoint (const gc_result *r, gc_term *t, double wm,
                              double w1, double *worst);
/* The twin's arithmetic: the classes' worst case added to f32's bound *B,
   and the spread's share *C replaced by W / B'.  */
void gc__precision_arith (const gc_result *r, double wm, double w1,
                          double *b, double *c);
/* The spread the reached classes may add to f32's limit.  */
double gc__precision_spread_limit (const gc_result *r, double wm,
                                   double w1);
/* The forward classes' share of the loss budget, in ulps of ulp_24(M_L).  */
double gc__precision_forward_ulps (const gc_result *r);
/* The forward classes' part of the forward oracle's output term T.  */
void gc__precision_output (const gc_result *r, gc_term *t, double lambda,
                           double mk);
/* One line naming the classes, appended to B.  */
void gc__precision_describe (gc__buf *b, const gc_result *r);
const char *gc__precision_kind_name (gc_precision_kind k);
/* (judge.c) Sum D's terms into its bar and judge it: diff, nu, resolution, verdict;
   non-smooth when its kink estimate exceeds the bar plus NOISE_J.  */
void gc__judge (gc_direction *d, double noise_j);
/* Manual: "A failure beyond doubt": whether D's failure at its first step
   stands at any finer one (no confirmation), from its values and terms
   and the noise NOISE_J of its J.  */
bool gc__failure_beyond_doubt (const gc_direction *d, double noise_j);
/* (single.c) Manual: "What f32 mode cannot judge": in a check of
   reference REF (f32), D's verdicts that a finer step would have to
   confirm made inconclusive and unconfirmed (level -1).  */
void gc__judge_single_level (gc_reference ref, gc_direction *d);
/* Manual: "A failure beyond doubt": whether no oscillation finer than the
   step explains reference REF against analytic value F, with truncation
   T, reference rounding E and adjoint term A.  */
bool gc__aliasing_excluded (double ref, double f, double t, double e,
                            double a);
/* Value of the reference-rounding epsilon (per evaluation) for a forward of
   the given kind: lambda * sqrt(depth) * ulp_p(lmax).  */
double gc__eval_error (gc_reference ref, mpfr_prec_t p, double lambda,
                       size_t depth, double lmax);

/* Canaries around callback output buffers (guard.c): GC_GUARD_BYTES of a
   fixed pattern on each side of a guarded block.  */
#define GC_GUARD_BYTES 256
void gc__guard_fill (void *p, size_t len);
bool gc__guard_intact (const void *p, size_t len);
/* BYTES of storage between two guards (NULL when memory runs out); free
   with gc__guarded_free.  */
void *gc__guarded_alloc (size_t bytes);
/* Manual: "Unwritten elements" (guard.c).  */
void gc__unwritten_fill (void *buf, size_t n, bool dbl, int pass);
bool gc__unwritten_held (const void *buf, size_t i, bool dbl, int pass);
size_t gc__unwritten_any (const void *buf, size_t n, bool dbl);
size_t gc__unwritten_list (const gc_result *r, const void *b1,
                           const void *b2, size_t n, bool dbl,
                           const char *who, char *what, size_t size);
bool gc__guarded_intact (const void *p, size_t bytes);
void gc__guarded_free (void *p);

/* Wall-clock seconds (CLOCK_MONOTONIC) and the deadline of a check with a
   time limit of TIMEOUT seconds (0: none), for gc_options.timeout.  */
double gc__now (void);
double gc__deadline (double timeout);

/* Whether a check whose MPFR numbers take about BYTES can start: false
   when BYTES overflows or a block of that size cannot be allocated now
   (manual: "Memory").  */
bool gc__fits (double bytes);
/* Whether BYTES is at most the machine's physical memory (an array larger
   than that is refused without trying it).  */
bool gc__within_memory (double bytes);
/* Bytes of one MPFR number of precision P (struct and limbs).  */
double gc__mpfr_bytes (mpfr_prec_t p);

#endif
