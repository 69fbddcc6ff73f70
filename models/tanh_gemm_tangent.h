/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* tanh_gemm_tangent.h -- tanh-gemm's forward-mode tangent (jvp) and
   Hessian-vector product (hvp), written once over the element type
   (real.h) like tanh_gemm_backward.h (manual: "Beyond the gradient").
   L = sum dO (.) tanh(Z), Z = W X; along v = (dW, dX):
     dZ = dW X + W dX,  T = tanh Z,  G = dO (.) (1 - T^2)
     jvp  = sum G (.) dZ
     dG   = -2 dO (.) T (.) (1 - T^2) (.) dZ        (the second-order term)
     H v  = (dG X^T + G dX^T,  dW^T G + W^T dG).
   Each mutant is one marked line.  */

#include "real.h"

/* Z = W X, T = tanh Z, dZ = dW X + W dX, G = dO (1 - T^2) into the four
   M x N arrays; -1 when memory runs out.  JVP: for the tangent (its
   mutant's), else for the HVP.  */
static int
R_ (tangent_prologue) (tg *t, const real *x, const real *v, real **zt,
                       real **dz, real **gg, bool jvp)
{
  size_t m = t->m, k = t->k, n = t->n;
  const real *w = x, *xx = x + m * k, *dw = v, *dx = v + m * k;
  *zt = malloc (m * n * sizeof **zt);
  *dz = malloc (m * n * sizeof **dz);
  *gg = malloc (m * n * sizeof **gg);
  if (!*zt || !*dz || !*gg)
    {
      free (*zt);
      free (*dz);
      free (*gg);
      return -1;
    }
  r_gemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) m, (int) n,
          (int) k, 1, w, (int) k, xx, (int) n, 0, *zt, (int) n);
  r_gemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) m, (int) n,
          (int) k, 1, dw, (int) k, xx, (int) n, 0, *dz, (int) n);
  if (!(jvp && t->mutant == MUT_JVP_NO_DX))
    r_gemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) m, (int) n,
            (int) k, 1, w, (int) k, dx, (int) n, 1, *dz, (int) n);
  /* MUTANT jvp-no-dx (above): the tangent forgets W dX */
  for (size_t i = 0; i < m * n; i++)
    {
      real th = r_tanh ((*zt)[i]);
      (*zt)[i] = th;
      (*gg)[i] = (real) t->dout[i] * (1 - th * th);
    }
  return 0;
}

/* The directional derivative of L along V (inline: the f64 instantiation
   has no caller).  */
static inline int
R_ (jvp) (tg *t, const real *x, const real *v, real *out)
{
  real *zt, *dz, *gg;
  if (R_ (tangent_prologue) (t, x, v, &zt, &dz, &gg, true))
    return -1;
  *out = r_dot ((int) (t->m * t->n), gg, 1, dz, 1);
  free (zt);
  free (dz);
  free (gg);
  return 0;
}

/* H V into HV (n values).  */
static int
R_ (hvp) (tg *t, const real *x, const real *v, real *hv)
{
  size_t m = t->m, k = t->k, n = t->n;
  const real *w = x, *xx = x + m * k, *dw = v, *dx = v + m * k;
  real *zt, *dz, *gg;
  if (R_ (tangent_prologue) (t, x, v, &zt, &dz, &gg, false))
    return -1;
  /* dG, in place of dZ */
  for (size_t i = 0; i < m * n; i++)
    {
      real th = zt[i];
      dz[i] = t->mutant == MUT_HVP_NO_SECOND_ORDER ? 0         /* MUTANT */
              : -2 * (real) t->dout[i] * th * (1 - th * th) * dz[i];
    }
  real *hw = hv, *hx = hv + m * k;
  real sw = t->mutant == MUT_HVP_SCALE_1E6 ? (real) (1 + 1e-6) : 1;
  /* dW part: dG X^T + G dX^T  [M,K] */
  r_gemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) m, (int) k,
          (int) n, sw, dz, (int) n, xx, (int) n, 0, hw, (int) k);
  /* MUTANT hvp-scale-1e-6 (above, SW): dG X^T scaled by 1 + 1e-6, in both
     instantiations (a bug of the algorithm, below f32's resolution) */
  if (t->mutant == MUT_HVP_TRANSPOSED)
    /* MUTANT: G dX^T with dX's [K,N] storage read as an [N,K] matrix (the
       transpose flag dropped, the leading dimension adjusted to fit) */
    r_gemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) m, (int) k,
            (int) n, 1, gg, (int) n, dx, (int) k, 1, hw, (int) k);
  else
    r_gemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) m, (int) k,
            (int) n, 1, gg, (int) n, dx, (int) n, 1, hw, (int) k);
  /* dX part: dW^T G + W^T dG  [K,N] */
  r_gemm (CblasRowMajor, CblasTrans, CblasNoTrans, (int) k, (int) n,
          (int) m, 1, dw, (int) k, gg, (int) n, 0, hx, (int) n);
  r_gemm (CblasRowMajor, CblasTrans, CblasNoTrans, (int) k, (int) n,
          (int) m, 1, w, (int) k, dz, (int) n, 1, hx, (int) n);
  free (zt);
  free (dz);
  free (gg);
  return 0;
}
