/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* higher.c -- the falsify matrix's rows of the checks beyond the gradient
   (manual: "Beyond the gradient"): every cell of shape x gate x seed x
   mutant, checked by the JVP check, the HVP check and the Taylor test of
   the built-in models that have them; and their summary.

     bench falsify-higher MODEL SEEDS MUTANT_SEEDS   one line per cell, TSV:
       model kernel check shape gate seed mutant verdict worst_nu n_dirs
     bench summarize-higher FILE                     one line per (model,
       check, mutant): cells, fail, pass, inconclusive, other, worst nu of
       the passing cells, kernels  */

#include "gradcheck.h"
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Which mutants a check is judged on: the correct model and the mutants
   of what it calls (jvp-*, hvp-*); the Taylor test, every mutant that is
   not precision-only (it calls the gradient and the HVP).  */
static bool
applies (const char *check, const gcm_mutant *mu)
{
  if (!mu)
    return true;
  if (!strcmp (check, "jvp") || !strcmp (check, "hvp"))
    return mu->only && !strcmp (mu->only, check);
  return !mu->precision;
}

static const char *
cell (const char *check, gcm_instance *in, uint64_t seed, double *nu,
      size_t *ndirs)
{
  gc_options o;
  gc_options_init (&o);
  o.seed = seed;
  *nu = NAN;
  *ndirs = 0;
  if (!strcmp (check, "taylor"))
    {
      gc_taylor *t = NULL;
      gc_taylor_test (&in->model, in->x, &o, 0, &t);
      if (!t)
        return "error";
      gc_verdict v = t->status != GC_OK ? GC_ERROR
                     : t->verdict == GC_FAIL || t->verdict_hvp == GC_FAIL
                     ? GC_FAIL
                     : t->verdict == GC_INCONCLUSIVE
                       || t->verdict_hvp == GC_INCONCLUSIVE
                     ? GC_INCONCLUSIVE : GC_PASS;
      *ndirs = t->n_levels;
      free (t);
      return gc_verdict_name (v);
    }
  gc_result *r = NULL;
  if (!strcmp (check, "hvp"))
    {
      o.directions = GC_DIR_RANDOM;
      o.n_random = 3;
      gc_hvp_check (&in->model, in->x, &o, &r);
    }
  else
    gc_jvp_check (&in->model, in->x, &o, &r);
  if (!r)
    return "error";
  const char *v = gc_verdict_name (r->verdict);
  *nu = r->worst_nu;
  *ndirs = r->n_directions;
  gc_result_free (r);
  return v;
}

int
falsify_higher (const char *model, int seeds, int mutant_seeds)
{
  static const char *const shapes_gdn[] = {
    "B=1,T=5,H=1,K=4,V=4,BT=4", "B=1,T=16,H=1,K=4,V=4,BT=16",
    "B=1,T=37,H=1,K=4,V=4,BT=16" };
  static const char *const shapes_tg[] = { "M=8,K=16,N=8", "M=24,K=4,N=3",
                                           "M=5,K=5,N=5" };
  static const char *const checks[] = { "jvp", "hvp", "taylor" };
  bool gdn = !strcmp (model, "gdn");
  const char *const *shapes = gdn ? shapes_gdn : shapes_tg;
  const gcm_spec *spec = gcm_find (model);
  if (!spec)
    return 2;
  const char *kernel = openblas_get_corename ();
  openblas_set_num_threads (1);
  for (int sh = 0; sh < 3; sh++)
    for (int gate = 0; gate < (gdn ? 2 : 1); gate++)
      for (int mut = 0; mut <= (int) spec->n_mutants; mut++)
        for (int s = 0; s < (mut ? mutant_seeds : seeds); s++)
          {
            char shape[160];
            snprintf (shape, sizeof shape, "%s%s", shapes[sh],
                      gdn ? (gate ? ",GATE=1" : ",GATE=0") : "");
            const gcm_mutant *mu = mut ? &spec->mutants[mut - 1] : NULL;
            gcm_instance *in = NULL;
            for (int c = 0; c < 3; c++)
              {
                if (!applies (checks[c], mu))
                  continue;
                if (!in)
                  in = make (model, shape, (uint64_t) s + 1, mut);
                if ((c == 0 && !in->model.jvp_f32)
                    || (c == 1 && !in->model.hvp_f32))
                  continue;
                double nu;
                size_t nd;
                const char *v = cell (checks[c], in, (uint64_t) s + 1, &nu,
                                      &nd);
                printf ("%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%.6g\t%zu\n", model,
                        kernel, checks[c], sh, gate, s + 1,
                        mu ? mu->name : "none", v, nu, nd);
              }
            fflush (stdout);
            if (in)
              gcm_destroy (in);
          }
  return 0;
}

/* The summary: rows in the order of their first cell.  */
typedef struct row
{
  char model[32], check[16], mutant[48];
  size_t cells, fail, pass, inconclusive, other;
  double worst_nu;
  char kernels[128];
} row;

int
summarize_higher (const char *file)
{
  FILE *f = fopen (file, "r");
  if (!f)
    return 2;
  row *rows = NULL;
  size_t nr = 0;
  char line[512];
  while (fgets (line, sizeof line, f))
    {
      char model[32], kernel[32], check[16], mutant[48], verdict[32];
      int sh, gate, seed;
      double nu;
      size_t nd;
      if (sscanf (line, "%31s %31s %15s %d %d %d %47s %31s %lf %zu", model,
                  kernel, check, &sh, &gate, &seed, mutant, verdict, &nu,
                  &nd) != 10)
        continue;
      row *r = NULL;
      for (size_t k = 0; k < nr && !r; k++)
        if (!strcmp (rows[k].model, model) && !strcmp (rows[k].check, check)
            && !strcmp (rows[k].mutant, mutant))
          r = &rows[k];
      if (!r)
        {
          row *g = realloc (rows, (nr + 1) * sizeof *rows);
          if (!g)
            break;
          rows = g;
          r = &rows[nr++];
          memset (r, 0, sizeof *r);
          snprintf (r->model, sizeof r->model, "%s", model);
          snprintf (r->check, sizeof r->check, "%s", check);
          snprintf (r->mutant, sizeof r->mutant, "%s", mutant);
        }
      r->cells++;
      if (!strcmp (verdict, "fail"))
        r->fail++;
      else if (!strcmp (verdict, "pass"))
        {
          r->pass++;
          if (!(nu <= r->worst_nu))
            r->worst_nu = nu;
        }
      else if (!strcmp (verdict, "inconclusive"))
        r->inconclusive++;
      else
        r->other++;
      char pad[40];
      snprintf (pad, sizeof pad, " %s ", kernel);
      char have[140];
      snprintf (have, sizeof have, " %s ", r->kernels);
      if (!strstr (have, pad) && strlen (r->kernels) + strlen (kernel) + 2
                                 < sizeof r->kernels)
        {
          if (r->kernels[0])
            strcat (r->kernels, " ");
          strcat (r->kernels, kernel);
        }
    }
  fclose (f);
  printf ("model\tcheck\tbackward\tcells\tfail\tpass\tinconclusive\tother"
          "\tworst_nu_pass\tkernels\n");
  for (size_t k = 0; k < nr; k++)
    printf ("%s\t%s\t%s\t%zu\t%zu\t%zu\t%zu\t%zu\t%.3g\t%s\n", rows[k].model,
            rows[k].check, rows[k].mutant, rows[k].cells, rows[k].fail,
            rows[k].pass, rows[k].inconclusive, rows[k].other,
            rows[k].worst_nu, rows[k].kernels);
  free (rows);
  return 0;
}
