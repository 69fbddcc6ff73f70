/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* magkit.c -- helpers for magnitude backwards (gradcheck.h; manual:
   "Magnitude backwards"): the magnitude of the usual formula of a
   nonlinearity's derivative (each term's absolute value, each subtraction
   counted as an addition), and the product of absolute values that every
   linear op's magnitude backward is.  Computed in double and rounded once
   to f32: a magnitude bounds a rounding error, a relative error of 2^-24
   in it changes no bar.  */

#include "gradcheck.h"

#include <math.h>

/* The constants of the GELU tanh form.  */
static const double gelu_c = 0.79788456080286535588;   /* sqrt(2 / pi) */
static const double gelu_a = 0.044715;

float
gc_mag_dtanh (float x)
{
  double t = tanh ((double) x);
  return (float) (1 + t * t);                  /* of 1 - t^2 */
}

float
gc_mag_dsigmoid (float x)
{
  double s = 1 / (1 + exp (-(double) x));
  return (float) (s * (1 + s));                /* of s (1 - s) */
}

float
gc_mag_dsilu (float x)
{
  double v = x, s = 1 / (1 + exp (-v));
  return (float) (s * (1 + fabs (v) * (1 + s)));   /* of s (1 + x (1 - s)) */
}

float
gc_mag_dgelu_tanh (float x)
{
  /* of 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2),
     t = tanh(c (x + a x^3)) */
  double v = x, t = tanh (gelu_c * (v + gelu_a * v * v * v));
  return (float) (0.5 * (1 + fabs (t))
                  + 0.5 * fabs (v) * (1 + t * t) * gelu_c
                    * (1 + 3 * gelu_a * v * v));
}

float
gc_mag_dgelu_erf (float x)
{
  /* of Phi(x) + x phi(x); Phi(x) = erfc(-x / sqrt 2) / 2 >= 0 */
  double v = x;
  double phi = exp (-v * v / 2) * 0.39894228040143267794;   /* 1/sqrt(2 pi) */
  return (float) (0.5 * erfc (-v / sqrt (2.0)) + fabs (v) * phi);
}

void
gc_mag_gemm (float *c, int transa, int transb, size_t m, size_t n, size_t k,
             const float *a, size_t lda, const float *b, size_t ldb)
{
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++)
      {
        double s = 0;
        for (size_t l = 0; l < k; l++)
          {
            double x = transa ? a[l * lda + i] : a[i * lda + l];
            double y = transb ? b[j * ldb + l] : b[l * ldb + j];
            s += fabs (x) * fabs (y);
          }
        c[i * n + j] = (float) s;
      }
}
