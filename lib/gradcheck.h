/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gradcheck.h -- check analytic gradients of f32 models against central
   finite differences, with a pass bar derived from an error model.

   Every function here is reentrant: the library keeps no global mutable
   state, never prints, never aborts.  Errors are returned as gc_status
   codes; gc_strerror() names them.  The derivation of every bar term is in
   the manual, chapter "Deriving the pass bar"; the section a term comes from
   is recorded in the term itself (gc_term.section).  */

#ifndef GRADCHECK_H
#define GRADCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpfr.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GC_VERSION_STRING "0.1.0"

/* ABI version of gc_model.  A plugin built against another ABI version is
   refused with GC_EABI.  Bump it whenever gc_model changes layout.  */
#define GC_MODEL_ABI 1

/* ---------------------------------------------------------------------- */
/* Status codes                                                            */

typedef enum gc_status
{
  GC_OK = 0,
  GC_EINVAL,       /* a NULL argument or an option out of its range */
  GC_EEMPTY,       /* the model has no parameters (n == 0) */
  GC_ENOMEM,       /* an allocation failed */
  GC_ECALLBACK,    /* a model callback returned a non-zero status */
  GC_ENONFINITE,   /* a model callback produced NaN or Inf */
  GC_ESTEP,        /* the step vanished: x + h == x (or x - h == x) in f32 */
  GC_EPREC,        /* a precision MPFR cannot take, or below f32's 24 bits */
  GC_ENOREF,       /* the reference asked for is not provided by the model */
  GC_EDIRECTION,   /* an explicit direction index out of range */
  GC_EABI,         /* a model description of another ABI version */
  GC_EFORMAT,      /* a malformed string given to a parser */
  GC_EMISMATCH,    /* shard reports that do not belong together */
  GC_STATUS_COUNT
} gc_status;

/* A static, English, one-line description of STATUS.  Never NULL: an
   unknown code gives "unknown status".  */
const char *gc_strerror (gc_status status);

/* ---------------------------------------------------------------------- */
/* The model                                                               */

/* Callbacks return 0 on success and any other value on failure; the check
   stops with GC_ECALLBACK and records the value in gc_result.callback_code.
   They may be called concurrently from several threads when
   gc_options.threads > 1, each call with its own buffers.  */
typedef int (*gc_loss_f32_fn) (void *ctx, const float *x, float *loss);
typedef int (*gc_grad_f32_fn) (void *ctx, const float *x, float *grad);
typedef int (*gc_loss_f64_fn) (void *ctx, const double *x, double *loss);
/* X points to n contiguous MPFR numbers (x + i is parameter i); each holds
   its value exactly, possibly at a precision of its own.  The callback
   computes the loss at the precision of LOSS, mpfr_get_prec (loss), with
   every intermediate at that precision at least.  */
typedef int (*gc_loss_mpfr_fn) (void *ctx, mpfr_srcptr x, mpfr_ptr loss);
/* Outputs for the forward oracle: n_outputs values.  The MPFR form writes
   OUT + k for output k, each already initialised at the working precision.  */
typedef int (*gc_outputs_f32_fn) (void *ctx, const float *x, float *out);
typedef int (*gc_outputs_mpfr_fn) (void *ctx, mpfr_srcptr x, mpfr_ptr out);

#define GC_MAX_DIMS 6

/* A named tensor inside the parameter vector: elements
   [offset, offset + count) with the given row-major shape.  Blocks are
   optional; when given they must partition [0, n) in order.  They name the
   worst element in reports ("dq[0,12,1,3]") and scale the adjoint rounding
   term per tensor (manual: "Adjoint rounding").  */
typedef struct gc_block
{
  const char *name;
  size_t offset;
  size_t count;
  size_t ndim;
  size_t shape[GC_MAX_DIMS];
} gc_block;

/* A named constant of the model (K = 8, BT = 16, ...), used by the diagnosis
   to name a constant factor between analytic and reference ("ratio 2.8284 =
   K^0.5").  */
typedef struct gc_constant
{
  const char *name;
  double value;
} gc_constant;

/* The model description.  The caller owns everything it points to; the
   library only reads it, for the duration of one gc_check call.  */
typedef struct gc_model
{
  int abi;                     /* GC_MODEL_ABI */
  const char *name;            /* for reports; may be NULL */
  size_t n;                    /* number of f32 parameters */
  gc_loss_f32_fn loss_f32;     /* required: the production forward */
  gc_grad_f32_fn grad_f32;     /* required: the backward under test */
  gc_loss_mpfr_fn loss_mpfr;   /* optional: reference forward in MPFR */
  gc_loss_f64_fn loss_f64;     /* optional: reference forward in f64 */
  /* Optional: per element, the magnitude of the computation of gradient
     element i (the backward run on absolute values, Higham's |x|^T|y|).
     When given it replaces the per-block scale of the adjoint rounding term
     (manual: "Adjoint rounding").  */
  gc_grad_f32_fn grad_magnitude_f32;
  /* Optional: the magnitude of the loss's computation at x, M_L >= |L|:
     the forward run on absolute values, or at least the sum of the absolute
     values of the terms of its final reduction.  A loss that is a small
     difference of large terms errs by the large terms' rounding; without
     this callback |L| is used (manual: "Reference rounding").  */
  gc_loss_f32_fn loss_magnitude_f32;
  void *ctx;
  /* Accumulation depths (manual: "The accumulation factor"): the number of
     rounded operations on the longest dependency chain that reaches the loss
     (forward) and a gradient element (backward).  0 means "not declared",
     and n is used.  */
  size_t forward_depth;
  size_t backward_depth;
  size_t n_blocks;
  const gc_block *blocks;
  size_t n_constants;
  const gc_constant *constants;
  /* Optional, for the forward oracle (gc_forward_check): the op's outputs
     in f32 (the production forward) and in MPFR (the reference), their
     accumulation depth (0: forward_depth), an optional magnitude of each
     output's computation, and named output tensors partitioning
     [0, n_outputs).  */
  size_t n_outputs;
  gc_outputs_f32_fn outputs_f32;
  gc_outputs_mpfr_fn outputs_mpfr;
  gc_outputs_f32_fn outputs_magnitude_f32;
  size_t output_depth;
  size_t n_output_blocks;
  const gc_block *output_blocks;
} gc_model;

/* ---------------------------------------------------------------------- */
/* Plugins: user models for the gradcheck command                           */

/* A plugin is a shared object that exports one function,
   GC_PLUGIN_SYMBOL, of type gc_plugin_fn.  ARGS is the command's --shape
   string (NULL when none was given), for the plugin to parse as it likes.
   The function returns a description that stays valid until the process
   ends, or NULL on failure.  The command refuses a description of another
   ABI version, a NULL model or point, or a point shorter than the model's
   n, with exit status 2.  */
#define GC_PLUGIN_ABI 1
#define GC_PLUGIN_SYMBOL "gradcheck_plugin"

typedef struct gc_plugin
{
  int abi;                 /* GC_PLUGIN_ABI */
  const char *name;
  const gc_model *model;   /* model->abi == GC_MODEL_ABI */
  const float *x;          /* the point to check at */
  size_t x_count;          /* floats in x: at least model->n */
} gc_plugin;

typedef const gc_plugin *(*gc_plugin_fn) (const char *args);

/* The function a plugin defines (declared here for the plugin's own
   compilation; libgradcheck neither defines nor calls it).  */
const gc_plugin *gradcheck_plugin (const char *args);

/* ---------------------------------------------------------------------- */
/* Options                                                                 */

typedef enum gc_reference
{
  GC_REF_MPFR = 0,   /* central differences of loss_mpfr at precision p */
  GC_REF_F32,        /* central differences of loss_f32 itself */
  GC_REF_F64         /* central differences of loss_f64 */
} gc_reference;

typedef enum gc_direction_kind
{
  GC_DIR_ALL = 0,    /* every coordinate */
  GC_DIR_RANDOM,     /* n_random unit directions from the seeded generator */
  GC_DIR_LIST        /* the coordinates listed in indices */
} gc_direction_kind;

typedef void (*gc_progress_fn) (void *ctx, size_t done, size_t total);

typedef struct gc_options
{
  gc_reference reference;
  mpfr_prec_t precision;       /* MPFR precision; 0: the derived default */
  double step;                 /* absolute step h; 0: the derived default */
  gc_direction_kind directions;
  size_t n_random;             /* for GC_DIR_RANDOM */
  const size_t *indices;       /* for GC_DIR_LIST */
  size_t n_indices;
  uint64_t seed;               /* for random directions */
  /* The probability of a false alarm the caller accepts for the whole
     check; it sets the confidence factor lambda (manual: "The confidence
     factor").  In (0, 1); gc_options_init sets 1e-6.  */
  double false_alarm;
  unsigned threads;            /* directions in parallel; 0 or 1: serial */
  /* A deterministic part of the directions: shard_index of shard_count
     (directions d with d % shard_count == shard_index).  0 of 0 or 0 of 1:
     all.  */
  size_t shard_index;
  size_t shard_count;
  gc_progress_fn progress;     /* optional, called from the calling thread */
  void *progress_ctx;
} gc_options;

/* Fill OPTS with the defaults: MPFR reference, derived precision and step,
   all coordinates, seed 1, false_alarm 1e-6, serial.  */
void gc_options_init (gc_options *opts);

/* ---------------------------------------------------------------------- */
/* Results                                                                 */

typedef enum gc_verdict
{
  GC_PASS = 0,
  GC_FAIL,
  GC_NONSMOOTH,      /* the loss has a kink inside the stencil: neither */
  GC_ERROR,
  /* The check cannot judge: a direction whose bar is at least its
     reference (resolution >= 1), or whose reference could not be trusted;
     a check with one such direction and no failure (manual: "Inconclusive
     directions").  Neither pass nor fail.  */
  GC_INCONCLUSIVE,
  /* The model is not a function: a callback gave different bits for the
     same point, or the same direction gave different values in parallel
     and serially (manual: "Determinism and reentrancy").  */
  GC_NONDETERMINISTIC
} gc_verdict;

/* What was seen non-deterministic (gc_result.nondeterministic).  */
enum { GC_ND_LOSS = 1, GC_ND_GRAD = 2, GC_ND_REFERENCE = 4,
       GC_ND_THREADS = 8 };
/* Which inputs of the bar were defaulted (gc_result.defaulted).  */
enum { GC_DEFAULTED_FORWARD_DEPTH = 1, GC_DEFAULTED_BACKWARD_DEPTH = 2,
       GC_DEFAULTED_MAGNITUDES = 4, GC_DEFAULTED_LOSS_MAGNITUDE = 8 };

const char *gc_verdict_name (gc_verdict v);   /* "pass", "fail", ... */
const char *gc_reference_name (gc_reference r); /* "mpfr", "f32", "f64" */

/* One input of a bar term: a name ("|L|", "h", "lambda") and its value.  */
typedef struct gc_input
{
  const char *name;
  double value;
} gc_input;

#define GC_TERM_MAX_INPUTS 10

enum { GC_TERM_TRUNCATION = 0, GC_TERM_REFERENCE, GC_TERM_ADJOINT,
       GC_N_TERMS };
/* In a forward-oracle result the three terms are, in order: the f32
   output's rounding, the MPFR reference's rounding, and the rounding of the
   reference to a double.  */
enum { GC_TERM_OUTPUT = 0, GC_TERM_OUTPUT_REFERENCE, GC_TERM_CONVERSION };

/* A bar term: value = formula (inputs).  NAME, FORMULA and SECTION are
   static strings; SECTION names the manual section deriving the term.  */
typedef struct gc_term
{
  const char *name;
  const char *formula;
  const char *section;
  double value;
  size_t n_inputs;
  gc_input inputs[GC_TERM_MAX_INPUTS];
} gc_term;

typedef struct gc_direction
{
  size_t id;            /* position in the check's list of directions */
  size_t index;         /* coordinate index, or SIZE_MAX for a random one */
  gc_verdict verdict;
  double analytic;      /* <g_hat, w>, w the applied direction */
  double reference;     /* the central difference D(h) */
  double diff;          /* |analytic - reference| */
  double bar;           /* sum of the terms */
  double nu;            /* diff / bar; pass iff nu <= 1 */
  double resolution;    /* bar / |reference| */
  double step;          /* h as applied (mean of the two sides in f32) */
  double d2h;           /* D(2h), the Richardson companion */
  double jump;          /* J = 2 Delta(h) - Delta(2h): kink estimate */
  /* In f32 and f64 modes with a more precise forward: the largest error of
     the reference forward at x +- h, in ulps of the loss's magnitude M_L
     (measured against the more precise forward); -1 when not measured.  */
  double forward_error_ulps;
  gc_term terms[GC_N_TERMS];
  /* The confirmation level the direction was judged at: its step is the
     first step / 2^(8 level); -1 when no two levels agreed and the
     reference is not trustworthy (manual: "Confirming a direction").  */
  int level;
} gc_direction;

/* What the diagnosis found among the failing directions.  */
typedef enum gc_diagnosis_kind
{
  GC_DIAG_NONE = 0,       /* nothing failed */
  GC_DIAG_CONSTANT_FACTOR,/* analytic = c * reference on every failure */
  GC_DIAG_SIGN_FLIP,      /* analytic = -reference (c = -1) */
  GC_DIAG_ZERO_REGION,    /* analytic ~ 0 where the reference is not */
  GC_DIAG_SHIFTED,        /* analytic matches the reference k places on */
  GC_DIAG_NONSMOOTH,      /* failures sit on kinks of the loss */
  GC_DIAG_ONE_ULP,        /* failures within a few bars: rounding class */
  GC_DIAG_LOGIC           /* none of the above: a logic error */
} gc_diagnosis_kind;

typedef struct gc_diagnosis
{
  gc_diagnosis_kind kind;
  double factor;          /* for CONSTANT_FACTOR / SIGN_FLIP */
  char closed_form[64];   /* "K^0.5", "2", "-1", or "" when none fits */
  long shift;             /* for SHIFTED */
  size_t first, last;     /* index range of the failures (coordinates) */
  char block[64];         /* the block holding them, or "" */
  char text[256];         /* one sentence for people */
} gc_diagnosis;

typedef enum gc_check_kind
{
  GC_CHECK_GRADIENT = 0,   /* gc_check: directions of the gradient */
  GC_CHECK_FORWARD         /* gc_forward_check: elements of the outputs */
} gc_check_kind;

typedef struct gc_result
{
  gc_check_kind kind;
  gc_status status;        /* GC_OK, or why the check stopped */
  int callback_code;       /* the failing callback's return value */
  char detail[160];        /* what failed where, for people */
  gc_verdict verdict;
  char model_name[64];
  size_t n;                /* parameters */
  gc_reference reference;
  mpfr_prec_t precision;   /* MPFR precision used (0 if not MPFR) */
  double false_alarm;
  double lambda_forward;   /* confidence factors (manual: "The confidence */
  double lambda_backward;  /* factor") for the forward and backward bounds */
  size_t forward_depth, backward_depth;
  double step_exponent;    /* default steps are 2^this times the scale */
  double loss_f32;         /* L at x, production forward */
  double loss_magnitude;   /* M_L at x: the model's, or |L| */
  double loss_reference;   /* L at x, most precise forward available */
  /* The f32 forward's measured error, |L_f32 - L_best| / ulp_24(M_L), the
     largest over x and every stencil point where it was measured, beside its
     budget lambda_f * sqrt(d_f) (manual: "Reference rounding");
     forward_error_ulps < 0 when no forward more precise than f32 exists.  */
  double forward_error_ulps;
  double forward_budget_ulps;
  gc_reference truncation_source; /* forward used for truncation and J */
  size_t n_directions;     /* in this result (one shard when sharded) */
  size_t n_total;          /* in the whole check */
  size_t n_failed, n_nonsmooth;
  size_t worst;            /* position in dirs[], SIZE_MAX if none */
  double worst_nu;
  size_t shard_index, shard_count;
  uint64_t seed;
  gc_direction_kind direction_kind;
  gc_direction *dirs;      /* n_directions of them */
  gc_diagnosis diagnosis;
  /* The model's blocks and constants, copied so that the result outlives
     the model (and a report read back can be diagnosed again).  */
  size_t n_blocks;
  gc_block *blocks;
  char *block_names;
  size_t n_constants;
  gc_constant *constants;
  void *strings;           /* storage of strings read back (internal) */
  /* Inconclusive directions, and the distribution of the resolution over
     the judged directions (manual: "Inconclusive directions"): median,
     worst (NaN when none was judged) and its position in dirs[] (SIZE_MAX
     when none), how many are coarser than 1e-3 and how many are blind
     (resolution >= 1).  */
  size_t n_inconclusive;
  double resolution_median, resolution_worst;
  size_t blindest;
  size_t n_resolution_coarse, n_resolution_blind;
  /* GC_ND_* flags of what gave different bits when called again (0: all
     deterministic), and the spread: the element (or direction position)
     that moved most, its two values, and a sentence in nd_detail (manual:
     "Determinism and reentrancy").  */
  unsigned nondeterministic;
  /* GC_DEFAULTED_* flags: the inputs of the bar the model did not declare
     (manual: "What the bar assumes"); and how many magnitudes m_i were
     below half the value |g_i| they bound (each m_i is raised to |g_i|:
     |x|^T|y| >= |x^T y|).  */
  unsigned defaulted;
  size_t n_magnitude_low;
  size_t nd_index;
  double nd_first, nd_second;
  char nd_detail[200];
} gc_result;

/* Run the check of MODEL at X (n floats) with OPTS (NULL: defaults).
   On return *RESULT holds a result to free with gc_result_free, also when
   the check stopped with an error (its status and detail say why), unless
   the result itself could not be allocated (*RESULT == NULL, GC_ENOMEM) or
   an argument is NULL (GC_EINVAL).  Returns the result's status.  */
gc_status gc_check (const gc_model *model, const float *x,
                    const gc_options *opts, gc_result **result);

void gc_result_free (gc_result *result);

/* The forward oracle: compare MODEL's f32 outputs at X with its MPFR
   reference outputs, element by element, under a bar derived like the
   gradient check's (manual: "The forward oracle").  A formula slip in a
   forward is invisible to a gradient check against the same forward (the
   backward matches the wrong forward); this sees it when the reference is
   right.  The result has kind GC_CHECK_FORWARD: one gc_direction per
   output element (analytic = the f32 output, reference = the MPFR one),
   with the same reports and diagnosis.  OPTS: precision and false_alarm
   are used.  Returns GC_ENOREF when the model has no outputs.  */
gc_status gc_forward_check (const gc_model *model, const float *x,
                            const gc_options *opts, gc_result **result);

/* The name of parameter INDEX: "dq[0,12,1,3]"-style "name[i,j,...]" when
   the model has blocks, "x[INDEX]" otherwise.  Writes at most SIZE bytes
   (always terminated); returns BUF.  */
char *gc_param_name (const gc_result *result, size_t index, char *buf,
                     size_t size);

/* ---------------------------------------------------------------------- */
/* Shards                                                                  */

/* Read a JSON report written by gc_report (..., GC_FMT_JSON) back into a
   new result (free with gc_result_free): every direction with its values
   and term values, the worst direction with its terms' inputs, blocks and
   constants.  TEXT is untrusted: GC_EFORMAT for anything malformed.  */
gc_status gc_result_parse_json (const char *text, size_t len,
                                gc_result **result);

/* Combine the N shard results of one check (options shard_index of
   shard_count) into the result the unsharded check gives: directions in
   order, counts, verdict, worst direction and diagnosis recomputed.
   GC_EMISMATCH when the shards are of different checks, or a shard is
   missing or repeated.  The shards are not modified.  */
gc_status gc_result_merge (gc_result *const *shards, size_t n,
                           gc_result **merged);

/* ---------------------------------------------------------------------- */
/* Reports                                                                 */

typedef enum gc_format
{
  GC_FMT_TEXT = 0,   /* for people: verdict, worst element, bar terms */
  GC_FMT_JSON,       /* documented fields, see the manual "JSON report" */
  GC_FMT_MARKDOWN,   /* the derivation of one direction, as a document */
  GC_FMT_TAP         /* one test point per direction, for automake */
} gc_format;

/* Render RESULT in FORMAT into a new NUL-terminated string (free with
   free()).  Returns NULL only when memory runs out.  */
char *gc_report (const gc_result *result, gc_format format);

/* Render the derivation of direction DIR (a position in result->dirs) in
   FORMAT (TEXT, MARKDOWN or JSON) into a new string, free with free().
   Returns NULL when memory runs out or DIR is out of range.  */
char *gc_derivation (const gc_result *result, size_t dir, gc_format format);

#ifdef __cplusplus
}
#endif

#endif /* GRADCHECK_H */
