/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* hvp_confirm.c -- the HVP check's descent (manual: "The HVP check", a
   step too large for the function): elements whose failure rests on the
   reference, confirmed at finer steps along the same v, as the gradient
   check confirms a direction ("Confirming a direction").  hvp.c calls it
   (hvp-internal.h).  */

#include "higher/hvp-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Manual: "The HVP check", confirming an element: whether element D's
   verdict rests on its reference (it fails -- the algorithm's verdict
   with a twin, whose arithmetic verdict does not need the reference --
   and the failure is not beyond doubt).  */
static bool
needs_confirmation (const gc_result *r, const gc_direction *d)
{
  bool fails = r->twin ? d->verdict_algorithm == GC_FAIL
                       : d->verdict == GC_FAIL;
  return fails && !gc__failure_beyond_doubt (d, 0);
}

/* One level of the descent: D(h_k), D(2h_k) and B (the gradient's
   rounding at the level's points) of element i.  */
typedef struct hvp_level
{
  double d1, d2, b;
} hvp_level;

/* Manual: "Confirming a direction", for an HVP element: levels A and B
   are consistent when neither's truncation term exceeds the rest of its
   bar and their differences agree within both levels' T and E.  */
static bool
hvp_consistent (const hvp_level *a, const hvp_level *b, double ha, double hb,
                double adj)
{
  double ta = fabs (a->d2 - a->d1), tb = fabs (b->d2 - b->d1);
  double ea = a->b / ha + GC_U64 * fabs (a->d1);
  double eb = b->b / hb + GC_U64 * fabs (b->d1);
  return ta <= ea + adj && tb <= eb + adj
         && fabs (a->d1 - b->d1) <= ta + tb + ea + eb;
}

/* Manual: "The HVP check", a step too large for the function: the
   elements of vector POS (step H) whose failure rests on the reference
   are confirmed at h_k = h / 2^(8k), k = 1 .. 8, along the same v, as
   the gradient check confirms a direction ("Confirming a direction"):
   judged at the first level j with (j, j+1) and (j+1, j+2) consistent,
   or (k-1, k) where the descent stops at k; no consistent pair:
   inconclusive (level -1).  The descent stops where a point of the level
   is not exact along v (or is x itself), or before the reference's
   rounding B / h_k exceeds the HVP's term.  */
gc_status
gc__hvp_confirm_vector (gc_result *r, const gc_model *m, const gc__env *e,
                const float *x, hvp_work *w, size_t pos, double h, bool twin,
                size_t db, int *code, char *what, size_t size)
{
  size_t n = m->n;
  gc_direction *dirs = &r->dirs[pos * n];
  bool any = false;
  for (size_t i = 0; i < n && !any; i++)
    any = needs_confirmation (r, &dirs[i]);
  if (!any)
    return GC_OK;
  hvp_level *lv = malloc (9 * n * sizeof *lv);
  if (!lv)
    {
      snprintf (what, size, "the confirmation of an HVP vector cannot be "
                "allocated");
      return GC_ENOMEM;
    }
  for (size_t i = 0; i < n; i++)
    lv[i] = (hvp_level) { dirs[i].reference, dirs[i].d2h,
                          gc__term_input (&dirs[i].terms[GC_TERM_REFERENCE],
                                          "B_i", 0) };
  int last = 0;
  gc_status st = GC_OK;
  for (int k = 1; k <= 8; k++)
    {
      double hk = ldexp (h, -8 * k);
      /* the reference's rounding at level k, B / h_k, against the largest
         HVP term of the elements to confirm (each element stops at its
         own below) */
      bool useful = false;
      for (size_t i = 0; i < n && !useful; i++)
        useful = needs_confirmation (r, &dirs[i])
                 && lv[i].b / hk <= dirs[i].terms[GC_TERM_ADJOINT].value;
      if (!useful || !gc__hvp_points_exact (x, w->v, hk, twin, n))
        break;
      static const double sign[4] = { 1, -1, 2, -2 };
      for (int p = 0; p < 4 && st == GC_OK; p++)
        {
          st = gc__hvp_gradient_at (m, e, x, w, sign[p] * hk, twin, w->g[p], code,
                            what, size);
          if (st == GC_OK)
            {
              gc__block_max (m, w->g[p], w->tmp);
              for (size_t i = 0; i < n; i++)
                w->mag[i] = p == 0 ? w->tmp[i] : fmax (w->mag[i], w->tmp[i]);
            }
        }
      if (st != GC_OK)
        break;
      for (size_t i = 0; i < n; i++)
        lv[k * n + i] = (hvp_level) {
          (w->g[0][i] - w->g[1][i]) / (2 * hk),
          (w->g[2][i] - w->g[3][i]) / (4 * hk),
          gc__gradient_rounding (twin, r->lambda_forward, db, w->mag[i]) };
      last = k;
    }
  for (size_t i = 0; i < n && st == GC_OK; i++)
    {
      gc_direction *d = &dirs[i];
      if (!needs_confirmation (r, d))
        continue;
      double adj = d->terms[GC_TERM_ADJOINT].value;
      /* this element's own last level: before its B / h_k exceeds A */
      int li = 0;
      while (li < last && lv[i].b / ldexp (h, -8 * (li + 1)) <= adj)
        li++;
      if (li == 0)
        continue;                /* no finer level: stands unconfirmed */
      int j = -1;
      for (int a = 0; a + 2 <= li && j < 0; a++)
        if (hvp_consistent (&lv[a * n + i], &lv[(a + 1) * n + i],
                            ldexp (h, -8 * a), ldexp (h, -8 * (a + 1)), adj)
            && hvp_consistent (&lv[(a + 1) * n + i], &lv[(a + 2) * n + i],
                               ldexp (h, -8 * (a + 1)),
                               ldexp (h, -8 * (a + 2)), adj))
          j = a;
      if (j < 0 && hvp_consistent (&lv[(li - 1) * n + i], &lv[li * n + i],
                                   ldexp (h, -8 * (li - 1)),
                                   ldexp (h, -8 * li), adj))
        j = li - 1;
      if (j == 0)
        continue;                /* confirmed: the verdict stands */
      if (j < 0)
        {
          /* no two levels agreed: the reference is not trustworthy */
          d->level = -1;
          d->verdict = GC_INCONCLUSIVE;
        }
      else
        {
          const hvp_level *l = &lv[j * n + i];
          double hj = ldexp (h, -8 * j);
          d->reference = l->d1;
          d->d2h = l->d2;
          d->step = hj;
          d->level = j;
          d->bar_worst_case
            = gc__terms_hvp (d->terms, l->d1, l->d2, l->d2 - l->d1, hj, l->b,
                             r->lambda_backward, r->backward_depth,
                             w->magh[i], w->spread[i]);
          gc__judge (d, INFINITY);
          gc__judge_resolution (d);
        }
      if (r->twin)
        gc__hvp_twin_element (r, d, w, i);
    }
  free (lv);
  return st;
}
