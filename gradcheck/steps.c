/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* steps.c -- gradcheck steps: the error of the central difference against
   the step h, for the f32 and the MPFR reference, beside the derived
   reference terms (truncation + reference rounding).  The f32 curve is the
   classic V: truncation falls as h^2 to the right, rounding rises as 1/h
   to the left; the MPFR curve has no left arm at any step the f32 point
   can resolve.  A table on standard output, an SVG plot in a file.  */

#include "cli.h"
#include "base/escape.h"

#include <cblas.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NSTEPS = 48 };

typedef struct point
{
  double h;
  double err[2];     /* f32, MPFR: |D(h) - exact|; NAN: not available */
  double bar[2];     /* truncation + reference rounding */
} point;

static gc_status
one (const cli_model *cm, gc_reference ref, mpfr_prec_t prec, double h,
     size_t index, gc_direction *out, gc_result **keep)
{
  gc_options o;
  gc_options_init (&o);
  o.reference = ref;
  o.precision = prec;
  o.step = h;
  o.exact_step = 1;   /* D(h) at this h: no confirmation at finer steps */
  /* coordinate INDEX as the check of every coordinate sees it (shard
     INDEX of n): its lambda shares the false-alarm rate among n
     directions, as run's does (manual: "The confidence factor") */
  o.directions = GC_DIR_ALL;
  o.shard_index = index;
  o.shard_count = cm->model->n;
  gc_result *r = NULL;
  cli_watch_begin (0);   /* model code: an exit() in it is caught */
  gc_status st = gc_check (cm->model, cm->x, &o, &r);
  cli_watch_end ();
  if (st == GC_OK)
    *out = r->dirs[0];
  if (keep && st == GC_OK)
    *keep = r;
  else
    gc_result_free (r);
  return st;
}

/* x and y of the plot: log10 of h and of the error.  */
typedef struct frame
{
  double x0, x1, y0, y1;
  int w, h, l, r, t, b;
} frame;

static double
px (const frame *f, double lx)
{
  return f->l + (lx - f->x0) / (f->x1 - f->x0) * (f->w - f->l - f->r);
}

static double
py (const frame *f, double ly)
{
  if (ly < f->y0)
    ly = f->y0;
  return f->t + (f->y1 - ly) / (f->y1 - f->y0) * (f->h - f->t - f->b);
}

static void
polyline (FILE *o, const frame *f, const point *pt, size_t n, int which,
          bool bar, const char *color, const char *dash)
{
  bool open = false;
  for (size_t k = 0; k < n; k++)
    {
      double v = bar ? pt[k].bar[which] : pt[k].err[which];
      if (isnan (v))
        {
          if (open)
            fprintf (o, "\"/>\n");
          open = false;
          continue;
        }
      double ly = v > 0 ? log10 (v) : f->y0;
      if (!open)
        fprintf (o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s"
                 " points=\"", color, dash);
      fprintf (o, "%.1f,%.1f ", px (f, log10 (pt[k].h)), py (f, ly));
      open = true;
    }
  if (open)
    fprintf (o, "\"/>\n");
}

static bool
svg (const char *path, const char *model, size_t index, const char *name,
     const point *pt, size_t n, double adjoint, double exact)
{
  FILE *o = fopen (path, "w");
  if (!o)
    return false;
  frame f = { log10 (pt[n - 1].h), log10 (pt[0].h), 0, 0, 760, 480, 80, 170,
              50, 60 };
  double lo = INFINITY, hi = -INFINITY;
  for (size_t k = 0; k < n; k++)
    for (int w = 0; w < 2; w++)
      {
        double vals[2] = { pt[k].err[w], pt[k].bar[w] };
        for (int q = 0; q < 2; q++)
          if (vals[q] > 0 && isfinite (vals[q]))
            {
              lo = fmin (lo, log10 (vals[q]));
              hi = fmax (hi, log10 (vals[q]));
            }
      }
  if (adjoint > 0)
    {
      lo = fmin (lo, log10 (adjoint));
      hi = fmax (hi, log10 (adjoint));
    }
  if (!isfinite (lo))
    lo = -20, hi = 0;
  f.y0 = floor (lo) - 1;
  f.y1 = ceil (hi) + 1;
  fprintf (o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
           "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
           "font-size=\"12\">\n", f.w, f.h, f.w, f.h);
  fprintf (o, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  /* The names come from the model (a plugin's): XML-escaped.  */
  char xmodel[1024], xname[1024];
  gc__escape (xmodel, sizeof xmodel, model, GC__ESC_XML);
  gc__escape (xname, sizeof xname, name, GC__ESC_XML);
  fprintf (o, "<text x=\"%d\" y=\"24\" font-size=\"15\">gradcheck steps: "
           "%s, %s (parameter %zu); exact derivative %.9g</text>\n", f.l,
           xmodel, xname, index, exact);
  /* decades */
  for (double y = f.y0; y <= f.y1; y += 1)
    {
      fprintf (o, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"#ddd\"/>\n", f.l, f.w - f.r, py (&f, y), py (&f, y));
      fprintf (o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n",
               f.l - 6, py (&f, y) + 4, (int) y);
    }
  for (double x = ceil (f.x0); x <= f.x1; x += 2)
    {
      fprintf (o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
               "stroke=\"#eee\"/>\n", px (&f, x), px (&f, x), f.t,
               f.h - f.b);
      fprintf (o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1e%d"
               "</text>\n", px (&f, x), f.h - f.b + 16, (int) x);
    }
  fprintf (o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
           "fill=\"none\" stroke=\"black\"/>\n", f.l, f.t, f.w - f.l - f.r,
           f.h - f.t - f.b);
  fprintf (o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">step h</text>\n",
           (f.l + f.w - f.r) / 2, f.h - 20);
  fprintf (o, "<text x=\"18\" y=\"%d\" transform=\"rotate(-90 18 %d)\" "
           "text-anchor=\"middle\">|D(h) - exact| and the derived terms</text>\n",
           (f.t + f.h - f.b) / 2, (f.t + f.h - f.b) / 2);
  if (adjoint > 0)
    fprintf (o, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
             "stroke=\"#888\" stroke-dasharray=\"2,4\" stroke-width=\"2\"/>\n",
             f.l, f.w - f.r, py (&f, log10 (adjoint)), py (&f, log10 (adjoint)));
  polyline (o, &f, pt, n, 0, false, "#c0392b", "");
  polyline (o, &f, pt, n, 0, true, "#c0392b", " stroke-dasharray=\"6,4\"");
  polyline (o, &f, pt, n, 1, false, "#2471a3", "");
  polyline (o, &f, pt, n, 1, true, "#2471a3", " stroke-dasharray=\"6,4\"");
  static const struct { const char *label, *color, *dash; } legend[] = {
    { "f32 error", "#c0392b", "" },
    { "f32 bar (T + E)", "#c0392b", "6,4" },
    { "MPFR error", "#2471a3", "" },
    { "MPFR bar (T + E)", "#2471a3", "6,4" },
    { "adjoint term", "#888", "2,4" } };
  for (int k = 0; k < 5; k++)
    {
      int y = f.t + 14 + 22 * k, x = f.w - f.r + 14;
      fprintf (o, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
               "stroke-width=\"2\"%s%s%s/>\n", x, x + 30, y, y,
               legend[k].color, legend[k].dash[0] ? " stroke-dasharray=\"" : "",
               legend[k].dash, legend[k].dash[0] ? "\"" : "");
      fprintf (o, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 36, y + 4,
               legend[k].label);
    }
  fprintf (o, "</svg>\n");
  bool failed = ferror (o) != 0;
  return fclose (o) == 0 && !failed;
}

/* The f32 and MPFR references' errors against EXACT and their bars at
   the NSTEPS steps from TOP / 2 down, into PT.  GC_OK, or the status of a
   check that failed other than by its step vanishing.  */
static gc_status
measure (const cli_args *a, const cli_model *cm, size_t idx, double top,
         double exact, point *pt)
{
  for (size_t k = 0; k < NSTEPS; k++)
    {
      pt[k].h = ldexp (top, -(int) k - 1);
      for (int w = 0; w < 2; w++)
        {
          gc_direction d;
          gc_status st = one (cm, w ? GC_REF_MPFR : GC_REF_F32,
                              a->opts.precision, pt[k].h, idx, &d, NULL);
          if (st == GC_OK)
            {
              pt[k].err[w] = fabs (d.reference - exact);
              pt[k].bar[w] = d.terms[GC_TERM_TRUNCATION].value
                             + d.terms[GC_TERM_REFERENCE].value;
            }
          else if (st == GC_ESTEP || st == GC_ENONFINITE)
            pt[k].err[w] = pt[k].bar[w] = NAN;   /* the step vanished */
          else
            return st;
        }
    }
  return GC_OK;
}

/* The plot's default file, steps-MODEL-IDX.svg, in DEF (SIZE bytes).  */
static const char *
default_path (const char *model, size_t idx, char *def, size_t size)
{
  /* A file name in the current directory, whatever the model's name
     holds ("../x", "a/b", control characters): other bytes become _.  */
  char safe[64];
  size_t k = 0;
  for (const char *p = model; *p && k + 1 < sizeof safe; p++)
    safe[k++] = (isalnum ((unsigned char) *p) || strchr ("+-_", *p))
                && (unsigned char) *p < 0x80 ? *p : '_';
  safe[k] = 0;
  snprintf (def, size, "steps-%s-%zu.svg", safe, idx);
  return def;
}

int
cli_steps (const cli_args *a, const cli_model *cm)
{
  if ((size_t) a->index >= cm->model->n)
    {
      usage_error ("--index %ld is out of range: the model has %zu "
                   "parameters", a->index, cm->model->n);
      return EXIT_USAGE;
    }
  size_t idx = (size_t) a->index;
  if (!cm->model->loss_mpfr)
    {
      fprintf (stderr, "%s: steps needs a model with an MPFR forward\n",
               progname);
      return EXIT_USAGE;
    }
  /* The exact derivative: MPFR at 256 bits, the derived step (its error is
     about 2^-170 of the gradient's scale).  */
  gc_direction ex;
  gc_result *er = NULL;
  gc_status st = one (cm, GC_REF_MPFR, 256, 0, idx, &ex, &er);
  if (st != GC_OK)
    {
      fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
      return cli_status_exit (st);
    }
  char name[96];
  gc_param_name (er, idx, name, sizeof name);
  double exact = ex.reference, adjoint = ex.terms[GC_TERM_ADJOINT].value;
  gc_result_free (er);
  double xi = fabs ((double) cm->x[idx]);
  /* From twice the parameter's scale (at least 1/4, so that the
     truncation arm shows for small parameters) down 48 halvings.  */
  double top = ldexp (1.0, (int) ceil (log2 (fmax (xi, 0x1p-3))) + 2);
  point pt[NSTEPS];
  st = measure (a, cm, idx, top, exact, pt);
  if (st != GC_OK)
    {
      fprintf (stderr, "%s: %s\n", progname, gc_strerror (st));
      return cli_status_exit (st);
    }
  const char *model = cm->model->name ? cm->model->name : "model";
  char tmodel[1024], tname[1024];
  gc__escape (tmodel, sizeof tmodel, model, GC__ESC_TEXT);
  gc__escape (tname, sizeof tname, name, GC__ESC_TEXT);
  printf ("# gradcheck steps: %s, %s (parameter %zu)\n", tmodel, tname, idx);
  printf ("# exact derivative %.17g (MPFR, 256 bits); adjoint term %.3e\n",
          exact, adjoint);
  /* manual: "The f64 twin": the two questions at the exact derivative */
  if (!isnan (ex.analytic_f64))
    printf ("# twin: |g64 - exact| = %.3e against the twin's adjoint term "
            "%.3e (the algorithm); |g32 - g64| = %.3e against the f32 "
            "arithmetic's bound %.3e (the arithmetic)\n",
            fabs (ex.analytic_f64 - exact), ex.adjoint_f64.value,
            ex.arith_diff, ex.arith_bar);
  printf ("# h\tf32_error\tf32_bar\tmpfr_error\tmpfr_bar\n");
  for (size_t k = 0; k < NSTEPS; k++)
    printf ("%.6e\t%.6e\t%.6e\t%.6e\t%.6e\n", pt[k].h, pt[k].err[0],
            pt[k].bar[0], pt[k].err[1], pt[k].bar[1]);
  char def[256];
  const char *path = a->output;
  if (!path)
    path = default_path (model, idx, def, sizeof def);
  errno = 0;
  if (!svg (path, model, idx, name, pt, NSTEPS, adjoint, exact))
    {
      /* a write error, not a usage error (manual: "Exit status") */
      fprintf (stderr, "%s: cannot write %s%s%s\n", progname, path,
               errno ? ": " : "", errno ? strerror (errno) : "");
      return EXIT_INTERNAL;
    }
  char tpath[4 * 256];
  gc__escape (tpath, sizeof tpath, path, GC__ESC_TEXT);
  printf ("# plot: %s\n", tpath);
  return EXIT_PASS;   /* a write error on stdout: cli_close_stdout */
}

/* gradcheck steps MODEL --index I.  */
int
cli_cmd_steps (int argc, char **argv)
{
  cli_args a;
  memset (&a, 0, sizeof a);
  int rc = cli_parse_options (argc, argv, &a);
  if (rc < 0)
    rc = cli_model_operand (&a);
  if (rc < 0)
    {
      cli_model cm;
      if (a.index < 0)
        {
          usage_error ("steps needs --index I");
          rc = EXIT_USAGE;
        }
      else if ((rc = cli_blas_room (1)) < 0
               && (rc = cli_model_open (&a, &cm)) < 0)
        {
          openblas_set_num_threads (1);
          rc = cli_steps (&a, &cm);
          cli_model_close (&cm);
        }
    }
  free (a.indices);
  return rc;
}
