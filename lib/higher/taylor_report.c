/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* taylor_report.c -- the Taylor test's reports (manual: "The Taylor
   test"): text, Markdown, JSON and TAP.  */

#include "higher/higher.h"
#include "base/escape.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Manual: "The Taylor test": an inconclusive verdict with a range of
   judged rates is a failing run above the derived first step.  */
static void
too_large_note (gc__buf *b, gc_verdict v, double range_hi)
{
  if (v == GC_INCONCLUSIVE && range_hi > 0)
    gc__buf_puts (b, "  the rates there are below the window, but every "
                  "judged level lies above the first step derived from x's "
                  "scale: a step too large for the function, whose "
                  "nonlinearity can make the rate 1 as a wrong gradient "
                  "would; a smaller --step decides\n");
}

static const char *
verdict_upper (gc_verdict v)
{
  return v == GC_PASS ? "PASS" : v == GC_FAIL ? "FAIL"
         : v == GC_INCONCLUSIVE ? "INCONCLUSIVE" : "ERROR";
}

/* A rate as %.3f, or "-" where it was not judged (NaN), in a column of
   WIDTH characters (0: no padding).  */
static void
put_rate (gc__buf *b, double v, int width)
{
  if (isnan (v))
    gc__buf_printf (b, "%-*s", width, "-");
  else
    gc__buf_printf (b, "%-*.3f", width, v);
}

static void
text_report (gc__buf *b, const gc_taylor *t, bool markdown)
{
  char name[256];
  gc__escape (name, sizeof name, t->model_name,
              markdown ? GC__ESC_MARKDOWN : GC__ESC_TEXT);
  gc__buf_printf (b, "%sgradcheck %s: Taylor test, model %s, %zu parameters\n",
                  markdown ? "# " : "", GC_VERSION_STRING, name, t->n);
  if (markdown)
    gc__buf_puts (b, "\n");
  if (t->status != GC_OK)
    {
      char d[400];
      gc__escape (d, sizeof d, t->detail, markdown ? GC__ESC_MARKDOWN
                  : GC__ESC_TEXT);
      char lead[128];
      gc__buf_printf (b, "verdict: ERROR: %s\n", gc__status_lead
                      (t->status, t->detail, lead, sizeof lead));
      if (t->detail[0])
        gc__buf_printf (b, "  %s\n", d);
      return;
    }
  if (t->direction != SIZE_MAX)
    gc__buf_printf (b, "direction: coordinate %zu", t->direction);
  else
    gc__buf_printf (b, "direction: random (seed %llu)",
                    (unsigned long long) t->seed);
  gc__buf_printf (b, "; reference: %s", gc_reference_name (t->reference));
  if (t->precision)
    gc__buf_printf (b, " at %ld bits", (long) t->precision);
  bool hvp = t->verdict_hvp != GC_ERROR;
  if (hvp)
    gc__buf_printf (b, "\n<g, v> = %.9g; <v, H v> = %.9g; A = %.3g; "
                    "A^H = %.3g; e = %.3g (manual: \"The Taylor test\")\n",
                    t->slope, t->curvature, t->adjoint, t->adjoint_hvp,
                    t->eval_error);
  else
    gc__buf_printf (b, "\n<g, v> = %.9g; A = %.3g; e = %.3g; no r2: the "
                    "model gives no Hessian-vector product (hvp_f32) "
                    "(manual: \"The Taylor test\")\n", t->slope, t->adjoint,
                    t->eval_error);
  gc__buf_printf (b, "verdict: %s (r1, rate 2 expected)", verdict_upper
                  (t->verdict));
  if (t->range1_hi > 0)
    gc__buf_printf (b, " over eps in [%.3g, %.3g]", t->range1_lo,
                    t->range1_hi);
  gc__buf_puts (b, "\n");
  too_large_note (b, t->verdict, t->range1_hi);
  if (t->verdict_hvp != GC_ERROR)
    {
      gc__buf_printf (b, "verdict: %s (r2 with the HVP, rate 3 expected)",
                      verdict_upper (t->verdict_hvp));
      if (t->range2_hi > 0)
        gc__buf_printf (b, " over eps in [%.3g, %.3g]", t->range2_lo,
                        t->range2_hi);
      gc__buf_puts (b, "\n");
      too_large_note (b, t->verdict_hvp, t->range2_hi);
    }
  /* the columns of r2 only with an HVP; a rate not judged (its
     remainders below 16 floors) is "-", as JSON's null */
  if (markdown)
    gc__buf_puts (b, hvp ? "\n| eps | r1 | floor1 | rate1 | r2 | floor2 "
                  "| rate2 |\n|---|---|---|---|---|---|---|\n"
                  : "\n| eps | r1 | floor1 | rate1 |\n|---|---|---|---|\n");
  else
    gc__buf_puts (b, hvp ? "  eps         r1          floor1      rate1   "
                  "r2           floor2      rate2\n"
                  : "  eps         r1          floor1      rate1\n");
  for (size_t k = 0; k < t->n_levels; k++)
    {
      gc__buf_printf (b, markdown ? "| %.4g | %.4g | %.4g | "
                      : "  %-11.4g %-11.4g %-11.4g ", t->eps[k], t->r1[k],
                      t->floor1[k]);
      put_rate (b, t->rate1[k], !markdown && hvp ? 7 : 0);
      if (hvp)
        {
          gc__buf_printf (b, markdown ? " | %.4g | %.4g | "
                          : " %-11.4g  %-11.4g ", t->r2[k], t->floor2[k]);
          put_rate (b, t->rate2[k], 0);
        }
      gc__buf_puts (b, markdown ? " |\n" : "\n");
    }
}

static json_t *
jnum (double v)
{
  return isfinite (v) ? json_real (v) : json_null ();
}

static json_t *
jarr (const double *a, size_t n)
{
  json_t *j = json_array ();
  for (size_t k = 0; k < n; k++)
    json_array_append_new (j, jnum (a[k]));
  return j;
}

static char *
json_report (const gc_taylor *t)
{
  json_t *o = json_object ();
  json_object_set_new (o, "gradcheck", json_string (GC_VERSION_STRING));
  json_object_set_new (o, "kind", json_string ("taylor"));
  char name[256];
  gc__utf8_copy (name, sizeof name, t->model_name);
  json_object_set_new (o, "model", json_string (name));
  json_object_set_new (o, "n", json_integer ((json_int_t) t->n));
  json_object_set_new (o, "status", json_string (gc__status_name
                                                 (t->status)));
  gc__utf8_copy (name, sizeof name, t->detail);
  json_object_set_new (o, "detail", json_string (name));
  json_object_set_new (o, "reference", json_string (gc_reference_name
                                                    (t->reference)));
  json_object_set_new (o, "precision", json_integer (t->precision));
  json_object_set_new (o, "direction", t->direction == SIZE_MAX
                       ? json_null () : json_integer ((json_int_t)
                                                      t->direction));
  json_object_set_new (o, "seed", json_integer ((json_int_t) t->seed));
  json_object_set_new (o, "slope", jnum (t->slope));
  json_object_set_new (o, "curvature", jnum (t->curvature));
  json_object_set_new (o, "adjoint", jnum (t->adjoint));
  json_object_set_new (o, "adjoint_hvp", jnum (t->adjoint_hvp));
  json_object_set_new (o, "eval_error", jnum (t->eval_error));
  json_object_set_new (o, "verdict", json_string (gc_verdict_name
                                                  (t->verdict)));
  json_object_set_new (o, "verdict_hvp", t->verdict_hvp == GC_ERROR
                       ? json_null () : json_string (gc_verdict_name
                                                     (t->verdict_hvp)));
  json_object_set_new (o, "range1", jarr ((double[2]) { t->range1_lo,
                                                        t->range1_hi }, 2));
  json_object_set_new (o, "range2", jarr ((double[2]) { t->range2_lo,
                                                        t->range2_hi }, 2));
  json_object_set_new (o, "eps", jarr (t->eps, t->n_levels));
  json_object_set_new (o, "r1", jarr (t->r1, t->n_levels));
  json_object_set_new (o, "floor1", jarr (t->floor1, t->n_levels));
  json_object_set_new (o, "rate1", jarr (t->rate1, t->n_levels));
  json_object_set_new (o, "r2", jarr (t->r2, t->n_levels));
  json_object_set_new (o, "floor2", jarr (t->floor2, t->n_levels));
  json_object_set_new (o, "rate2", jarr (t->rate2, t->n_levels));
  char *s = json_dumps (o, JSON_INDENT (2) | JSON_PRESERVE_ORDER
                        | JSON_REAL_PRECISION (17));
  json_decref (o);
  if (!s)
    return NULL;
  /* a string of the C library's allocator, as every report */
  char *c = malloc (strlen (s) + 2);
  if (c)
    {
      strcpy (c, s);
      strcat (c, "\n");
    }
  free (s);
  return c;
}

static void
tap_report (gc__buf *b, const gc_taylor *t)
{
  size_t np = t->verdict_hvp == GC_ERROR ? 1 : 2;
  gc__buf_printf (b, "1..%zu\n", np);
  char name[256];
  gc__escape (name, sizeof name, t->model_name, GC__ESC_TAP);
  const gc_verdict vs[2] = { t->verdict, t->verdict_hvp };
  for (size_t k = 0; k < np; k++)
    {
      gc_verdict v = vs[k];
      gc__buf_printf (b, "%s %zu - %s Taylor %s rate%s\n",
                      v == GC_PASS || v == GC_INCONCLUSIVE ? "ok" : "not ok",
                      k + 1, name, k ? "r2" : "r1",
                      v == GC_INCONCLUSIVE ? " # SKIP inconclusive"
                      : t->status != GC_OK ? " # error" : "");
    }
}

char *
gc_taylor_report (const gc_taylor *t, gc_format format)
{
  if (!t)
    return NULL;
  if (format == GC_FMT_JSON)
    return json_report (t);
  gc__buf b = { 0 };
  if (format == GC_FMT_TAP)
    tap_report (&b, t);
  else
    text_report (&b, t, format == GC_FMT_MARKDOWN);
  return gc__buf_take (&b);
}
