/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* tanh_gemm_backward.h -- tanh-gemm's backward, written once over the
   element type (real.h) and included twice by tanh_gemm.c: as
   backward_f32, the backward under test, and as backward_f64, its f64 twin
   (manual: "Writing a twin").  Each mutant is one marked line, in both.  */

#include "real.h"

/* The backward; with MAGNITUDE it runs on absolute values (Higham's
   |x|^T |y| bound of each gradient element's computation).  */
static int
R_ (backward) (tg *t, const real *x, real *g, bool magnitude)
{
  size_t m = t->m, k = t->k, n = t->n;
  const real *w = x, *xx = x + m * k;
  real *z = malloc (m * n * sizeof *z);
  real *aw = NULL, *ax = NULL;
  if (!z)
    return -1;
  r_gemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) m, (int) n,
          (int) k, 1, w, (int) k, xx, (int) n, 0, z, (int) n);
  for (size_t i = 0; i < m * n; i++)
    {
      real th = r_tanh (z[i]);
      real d = t->mutant == MUT_NO_TANH_DERIV ? 1 : 1 - th * th;
      /* The magnitude of the computation 1 - th*th is 1 + th^2, not its
         value: at z = 5.2 the difference cancels to 1.2e-4 and its
         rounding errs by thousands of ulps of itself (manual: "Adjoint
         rounding").  */
      real dm = t->mutant == MUT_NO_TANH_DERIV ? 1 : 1 + th * th;
      z[i] = magnitude ? r_fabs ((real) t->dout[i]) * dm
                       : (real) t->dout[i] * d;
    }
  if (magnitude)
    {
      aw = malloc (m * k * sizeof *aw);
      ax = malloc (k * n * sizeof *ax);
      if (!aw || !ax)
        {
          free (z);
          free (aw);
          free (ax);
          return -1;
        }
      for (size_t i = 0; i < m * k; i++)
        aw[i] = r_fabs (w[i]);
      for (size_t i = 0; i < k * n; i++)
        ax[i] = r_fabs (xx[i]);
      w = aw;
      xx = ax;
    }
  /* dW = dZ X^T  [M,K];  dX = W^T dZ  [K,N]  */
  r_gemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) m, (int) k,
          (int) n, 1, z, (int) n, xx, (int) n, 0, g, (int) k);
  if (t->mutant == MUT_DX_BF16_SUM && !magnitude)
    /* MUTANT: dX's inner products summed with their partial sums stored
       in bf16 (r_lowp); the twin sums exactly what the algorithm says */
    for (size_t l = 0; l < k; l++)
      for (size_t j = 0; j < n; j++)
        {
          real acc = 0;
          for (size_t i = 0; i < m; i++)
            acc = r_lowp (acc + w[i * k + l] * z[i * n + j]);
          g[m * k + l * n + j] = acc;
        }
  else
    r_gemm (CblasRowMajor, CblasTrans, CblasNoTrans, (int) k, (int) n,
            (int) m, 1, w, (int) k, z, (int) n, 0, g + m * k, (int) n);
  if (!magnitude)
    {
      if (t->mutant == MUT_DW_TWICE)
        r_scal ((int) (m * k), 2, g, 1);                       /* MUTANT */
      if (t->mutant == MUT_DW_SIGN)
        r_scal ((int) (m * k), -1, g, 1);                      /* MUTANT */
      if (t->mutant == MUT_DX_ZERO)
        memset (g + m * k, 0, k * n * sizeof *g);              /* MUTANT */
      if (t->mutant == MUT_DW_SCALE_1E6)
        r_scal ((int) (m * k), (real) (1 + 1e-6), g, 1);       /* MUTANT */
    }
  free (z);
  free (aw);
  free (ax);
  return 0;
}
