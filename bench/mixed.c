/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* mixed.c -- the falsify matrix of a mixed-precision model (gdn-bf16,
   gdn-fp16), side by side with the constants kernel authors use today
   (manual: "Rounding classes"; bench/mixed.sh runs it under each kernel
   group and writes the table).

     mixed MODEL SEEDS MUTANT_SEEDS   one TSV line per cell:
       model kernel shape gate seed mutant verdict worst_nu_arith
       fla5 fla10 torch rms_worst

   Each cell checks every coordinate with the default check (the tiered
   reference and the twin: the derived bar), and applies the constants to
   the same data: the kernel's gradient a against the check's reference r
   (central differences of the exact function at the kernel's bf16- or
   fp16-exact inputs, accurate to 1e-9 of r or better), per tensor:
     fla5, fla10  FLA's relative RMS error rms(a - r) / rms(r) of a tensor
                  above 5e-3, above 1e-2 (fail if any tensor is);
     torch        torch.testing.assert_close's bf16 defaults, |a - r| >
                  1e-5 + 1.6e-2 |r| at any element.
   A verdict other than pass is a catch for a mutant and a false alarm for
   the correct kernel; inconclusive is reported as such.  */

#include "gradcheck.h"
#include "models.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *openblas_get_corename (void);
void openblas_set_num_threads (int);

static gcm_instance *
make (const char *model, const char *shape, uint64_t seed, int mutant)
{
  const gcm_spec *spec = gcm_find (model);
  long v[GCM_MAX_KEYS];
  char err[256];
  if (!spec || gcm_parse_shape (spec, shape, v, err, sizeof err) != GC_OK)
    {
      fprintf (stderr, "mixed: %s %s: %s\n", model, shape, err);
      exit (2);
    }
  gcm_instance *inst = NULL;
  if (gcm_create (spec, v, seed, mutant, &inst) != GC_OK)
    exit (2);
  return inst;
}

/* The constants on R's directions (coordinates), tensor by tensor.  */
static void
constants (const gc_result *r, int *fla5, int *fla10, int *torch,
           double *rms_worst)
{
  *fla5 = *fla10 = *torch = 0;
  *rms_worst = 0;
  size_t nb = r->n_blocks ? r->n_blocks : 1;
  for (size_t b = 0; b < nb; b++)
    {
      size_t lo = r->n_blocks ? r->blocks[b].offset : 0;
      size_t hi = r->n_blocks ? lo + r->blocks[b].count : r->n;
      double se = 0, sr = 0;
      for (size_t k = 0; k < r->n_directions; k++)
        {
          const gc_direction *d = &r->dirs[k];
          if (d->index < lo || d->index >= hi)
            continue;
          double e = d->analytic - d->reference;
          se += e * e;
          sr += d->reference * d->reference;
          *torch |= fabs (e) > 1e-5 + 1.6e-2 * fabs (d->reference);
        }
      double rel = sr > 0 ? sqrt (se / sr) : se > 0 ? INFINITY : 0;
      *fla5 |= rel > 5e-3;
      *fla10 |= rel > 1e-2;
      if (rel > *rms_worst)
        *rms_worst = rel;
    }
}

int
main (int argc, char **argv)
{
  if (argc < 4)
    {
      fprintf (stderr, "usage: mixed MODEL SEEDS MUTANT_SEEDS\n");
      return 2;
    }
  const char *model = argv[1];
  int seeds = atoi (argv[2]), mseeds = atoi (argv[3]);
  static const char *const shapes[] = {
    "B=1,T=5,H=1,K=4,V=4,BT=4", "B=1,T=16,H=1,K=4,V=4,BT=16",
    "B=1,T=37,H=1,K=4,V=4,BT=16" };
  const gcm_spec *spec = gcm_find (model);
  if (!spec)
    return 2;
  const char *kernel = openblas_get_corename ();
  openblas_set_num_threads (1);
  for (int sh = 0; sh < 3; sh++)
    for (int gate = 0; gate < 2; gate++)
      for (int mut = 0; mut <= (int) spec->n_mutants; mut++)
        for (int s = 0; s < (mut ? mseeds : seeds); s++)
          {
            char shape[160];
            snprintf (shape, sizeof shape, "%s,GATE=%d", shapes[sh], gate);
            gcm_instance *inst = make (model, shape, (uint64_t) s + 1, mut);
            gc_options o;
            gc_options_init (&o);
            gc_result *r = NULL;
            gc_check (&inst->model, inst->x, &o, &r);
            int f5, f10, t;
            double rms;
            constants (r, &f5, &f10, &t, &rms);
            printf ("%s\t%s\t%d\t%d\t%d\t%s\t%s\t%.6g\t%s\t%s\t%s\t%.6g\n",
                    model, kernel, sh, gate, s + 1,
                    mut ? spec->mutants[mut - 1].name : "none",
                    gc_verdict_name (r->verdict), r->worst_nu_arith,
                    f5 ? "fail" : "pass", f10 ? "fail" : "pass",
                    t ? "fail" : "pass", rms);
            fflush (stdout);
            gc_result_free (r);
            gcm_destroy (inst);
          }
  return 0;
}
