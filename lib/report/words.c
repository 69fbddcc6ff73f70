/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* words.c -- the pieces every rendering of a result shares: names, the
   reference's description, escaped labels, the arithmetic's words, the
   tensor summary (report-internal.h).  Below every format's file and the
   dispatcher (report.c).  */

#include "report/report-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *
gc__direction_kind_name (gc_direction_kind k)
{
  switch (k)
    {
    case GC_DIR_ALL: return "all";
    case GC_DIR_RANDOM: return "random";
    case GC_DIR_LIST: return "list";
    case GC_DIR_SCREEN: return "screen";
    }
  return "unknown";
}

/* How many directions of R reference REF decided (manual: "The tiered
   reference").  */
size_t
gc__decided_count (const gc_result *r, gc_reference ref)
{
  size_t n = 0;
  for (size_t k = 0; r->dirs && k < r->n_directions; k++)
    n += r->dirs[k].verdict != GC_ERROR && r->dirs[k].decided_by == ref;
  return n;
}

/* Manual: "Where the time goes": whether the reports carry the call
   counts and times (the environment variable GRADCHECK_PROFILE set and
   not "0": they are off by default, times differ from run to run and the
   reports are compared byte for byte), and how many directions were
   judged.  */
bool
gc__profile_on (const gc_result *r)
{
  const char *e = getenv ("GRADCHECK_PROFILE");
  size_t all = 0;
  for (int k = 0; k < 4; k++)
    all += r->n_calls[k];
  return e && *e && strcmp (e, "0") != 0 && all > 0;
}

size_t
gc__judged_count (const gc_result *r)
{
  size_t n = 0;
  for (size_t k = 0; r->dirs && k < r->n_directions; k++)
    n += r->dirs[k].verdict != GC_ERROR;
  return n;
}

void
gc__calls_text (gc__buf *b, const gc_result *r)
{
  if (!gc__profile_on (r))
    return;
  size_t nd = gc__judged_count (r);
  const size_t *c = r->n_calls;
  const double *t = r->call_seconds;
  double per = nd ? 1.0 / (double) nd : NAN;
  gc__buf_printf (b, "time: %.3g s, %.3g s of them the centre and the "
                  "directions\n", r->check_seconds, r->work_seconds);
  gc__buf_printf (b, "calls: f32 forward %zu (%.3g s), f64 forward %zu "
                  "(%.3g s), MPFR forward %zu (%.3g s), backward %zu "
                  "(%.3g s)\n  per direction judged (%zu): forward %.3g "
                  "(f32 %.3g, f64 %.3g, MPFR %.3g) (manual: \"Where the "
                  "time goes\")\n", c[GC_CALL_KIND_F32], t[GC_CALL_KIND_F32],
                  c[GC_CALL_KIND_F64], t[GC_CALL_KIND_F64],
                  c[GC_CALL_KIND_MPFR], t[GC_CALL_KIND_MPFR],
                  c[GC_CALL_KIND_BACKWARD], t[GC_CALL_KIND_BACKWARD], nd,
                  (double) (c[0] + c[1] + c[2]) * per, (double) c[0] * per,
                  (double) c[1] * per, (double) c[2] * per);
}

void
gc__describe_reference (gc__buf *b, const gc_result *r)
{
  if (r->reference == GC_REF_AUTO)
    gc__buf_printf (b, "tiered: f64 central differences, MPFR at %ld bits "
                    "wherever f64 may not give MPFR's verdict",
                    (long) r->precision);
  else if (r->reference == GC_REF_MPFR && r->precision > 0)
    gc__buf_printf (b, "MPFR central differences at %ld bits",
                    (long) r->precision);
  else if (r->reference == GC_REF_MPFR)
    gc__buf_puts (b, "MPFR central differences");
  else
    gc__buf_printf (b, "%s central differences",
                    r->reference == GC_REF_F32 ? "f32" : "f64");
  if (r->truncation_source != r->reference && r->status == GC_OK
      && r->reference != GC_REF_AUTO)
    gc__buf_printf (b, " (truncation from the %s forward)",
                    gc_reference_name (r->truncation_source));
}

/* Names in the text, Markdown and TAP renderings come from plugins and
   shard files: each goes through gc__escape (escape.h), so that a name
   cannot start a line, a TAP directive or a terminal escape sequence.  The
   JSON writer escapes its own way.  */

/* Append S escaped for KIND, padded with spaces to WIDTH bytes.  */
void
gc__put_esc_pad (gc__buf *b, const char *s, gc__escape_kind kind, size_t width)
{
  if (!s)
    s = "";
  char small[256];
  size_t n = gc__escape (small, sizeof small, s, kind);
  if (n < sizeof small)
    gc__buf_puts (b, small);
  else
    {
      char *t = malloc (n + 1);
      if (!t)
        {
          b->failed = true;
          return;
        }
      gc__escape (t, n + 1, s, kind);
      gc__buf_puts (b, t);
      free (t);
    }
  for (; n < width; n++)
    gc__buf_puts (b, " ");
}

void
gc__put_esc (gc__buf *b, const char *s, gc__escape_kind kind)
{
  gc__put_esc_pad (b, s, kind, 0);
}

void
gc__put_label (gc__buf *b, const gc_result *r, const gc_direction *d,
           gc__escape_kind kind)
{
  size_t rb = d->index == SIZE_MAX ? gc__direction_block (r, d) : SIZE_MAX;
  if (rb != SIZE_MAX)
    {
      gc__buf_printf (b, "random direction %zu within ", d->id);
      gc__put_esc (b, r->blocks[rb].name, kind);
    }
  else if (d->index == SIZE_MAX)
    gc__buf_printf (b, "random direction %zu", d->id);
  else
    {
      char nm[96];
      gc_param_name (r, d->index, nm, sizeof nm);
      gc__put_esc (b, nm, kind);
      gc__buf_printf (b, " (%s %zu)",
                      r->kind == GC_CHECK_FORWARD ? "output" : "parameter",
                      d->index);
    }
}

/* The arithmetic class's words; CLASSES: the bound is the declared
   rounding classes' (manual: "Rounding classes"), not f32's alone.  */
const char *
gc__arith_words (gc_arith a, bool classes)
{
  switch (a)
    {
    case GC_ARITH_OK:
      return classes ? "within the declared precisions' derived bound"
                     : "within the derived f32 bound";
    case GC_ARITH_PRECISION:
      if (classes)
        return "beyond the declared precisions' derived bound, within 2^16 "
               "of it: PRECISION (an operation of lower precision than "
               "declared, or a cancellation in the f32 path)";
      return "beyond the derived f32 bound, within 2^16 of it: PRECISION "
             "(a reduced-precision operation or a cancellation in the f32 "
             "path)";
    case GC_ARITH_MISMATCH:
      return "beyond any rounding, or a factor or structure no rounding "
             "makes: the f32 path alone is wrong, or the twin is not the "
             "same algorithm";
    case GC_ARITH_INCONCLUSIVE:
      return "beyond the derived bound by the f32 spread alone, against "
             "defaulted magnitudes: INCONCLUSIVE (declare "
             "grad_magnitude_f32)";
    case GC_ARITH_NONE: break;
    }
  return "no twin";
}

/* ---------------------------------------------------------------------- */
/* Per-tensor summary (manual: "Diagnosis").  */

/* The tensors of R, or NULL: none to show, or memory ran out (which fails
   the report: B is marked failed).  */
gc__tensor *
gc__tensors_of (gc__buf *b, const gc_result *r, size_t *nt)
{
  gc__tensor *t = NULL;
  *nt = 0;
  if (r->status != GC_OK || r->n_directions == 0 || !r->dirs)
    return NULL;
  if (gc__tensors (r, &t, nt) != GC_OK)
    b->failed = true;
  return t;
}

/* The diagnosis kind K as JSON names it (manual: "JSON report").  */
const char *
gc__diagnosis_name (gc_diagnosis_kind k)
{
  switch (k)
    {
    case GC_DIAG_NONE: return "none";
    case GC_DIAG_CONSTANT_FACTOR: return "constant-factor";
    case GC_DIAG_SIGN_FLIP: return "sign-flip";
    case GC_DIAG_ZERO_REGION: return "zero-region";
    case GC_DIAG_SHIFTED: return "shifted-window";
    case GC_DIAG_NONSMOOTH: return "non-smooth";
    case GC_DIAG_ONE_ULP: return "rounding";
    case GC_DIAG_LOGIC: return "logic";
    case GC_DIAG_FORWARD_MISMATCH: return "forward-mismatch";
    case GC_DIAG_AXIS_OFFSET: return "axis-offset";
    case GC_DIAG_APPROX_SHIFT: return "approximate-shift";
    case GC_DIAG_PRECISION: return "precision";
    case GC_DIAG_ROUNDING_SUSPECTED: return "rounding-suspected";
    case GC_DIAG_TWIN_DIFFERS: return "twin-differs";
    case GC_DIAG_STAIRCASE: return "staircase";
    }
  return "unknown";
}

/* Whether block BB of R (the vector where R has none) is one the second
   round of a screened check took: more than K elements, a coordinate
   among its directions.  */
static bool
screen_again (const gc_result *r, size_t bb, size_t k)
{
  size_t c = r->n_blocks ? r->blocks[bb].count : r->n;
  size_t off = r->n_blocks ? r->blocks[bb].offset : 0;
  for (size_t q = 0; q < r->n_directions && c > k; q++)
    if (r->dirs[q].index >= off && r->dirs[q].index - off < c)
      return true;
  return false;
}

void
gc__screen_text (gc__buf *b, const gc_result *r)
{
  size_t k = r->random_per_block, nb = r->n_blocks ? r->n_blocks : 1;
  gc__buf_printf (b, ", %zu random per %s of more than %zu elements, every "
                  "coordinate of the others", k,
                  r->n_blocks ? "block" : "vector", k);
  size_t again = 0;
  for (size_t bb = 0; bb < nb; bb++)
    again += screen_again (r, bb, k);
  if (!again)
    return;
  size_t coarse = r->screen_coarse < again ? r->screen_coarse : again;
  gc__buf_printf (b, "; then every coordinate of %zu %s where ", again,
                  again == 1 ? "block" : "blocks");
  if (!coarse)
    gc__buf_puts (b, "one did not pass (");
  else if (coarse == again)
    gc__buf_puts (b, "none resolved finely enough (");
  else
    gc__buf_printf (b, "one did not pass (%zu) or none resolved finely "
                    "enough (%zu): (", again - coarse, coarse);
  for (size_t bb = 0, said = 0; bb < nb && said < 6; bb++)
    if (screen_again (r, bb, k))
      {
        const char *nm = r->n_blocks && r->blocks[bb].name
                         ? r->blocks[bb].name : "x";
        gc__buf_puts (b, said++ ? ", " : "");
        gc__put_esc (b, nm, GC__ESC_TEXT);
      }
  gc__buf_puts (b, again > 6 ? ", ...)" : ")");
  if (r->screen_superseded)
    gc__buf_printf (b, ", whose %zu random direction%s %s coordinates "
                    "replace", r->screen_superseded,
                    r->screen_superseded == 1 ? "" : "s",
                    again == 1 ? "its" : "their");
}
