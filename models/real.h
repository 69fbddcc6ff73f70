/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* real.h -- the element type of a backward written once and compiled
   twice (manual: "Writing a twin").  A model's template header includes
   this file after defining GCM_REAL as 32 or 64; it (re)defines

     real          float or double
     R_(name)      name_f32 or name_f64: the instantiation's own names
     r_exp, r_tanh, r_sqrt, r_fabs   the libm functions of that type
     r_gemm, r_scal, r_dot           OpenBLAS's s- or d- routine
     r_mm, r_sigmoid                 delta.h's gcm_mm / gcm_sigmoidf, or
                                     gcm_mm_d / gcm_sigmoid
     r_lowp(x)     in f32, X rounded to bf16 where a precision-only mutant
                   stores it so (gcm_bf16_round); in f64, X itself: a
                   precision choice of the f32 path, not of the algorithm

   and may be included any number of times.  */

#undef real
#undef R_
#undef R__
#undef r_exp
#undef r_tanh
#undef r_sqrt
#undef r_fabs
#undef r_gemm
#undef r_scal
#undef r_dot
#undef r_lowp
#undef r_mm
#undef r_sigmoid

#if GCM_REAL == 32
# define real float
# define R__(name, sfx) name##sfx
# define R_(name) R__ (name, _f32)
# define r_exp expf
# define r_tanh tanhf
# define r_sqrt sqrtf
# define r_fabs fabsf
# define r_gemm cblas_sgemm
# define r_scal cblas_sscal
# define r_dot cblas_sdot
# define r_lowp(x) gcm_bf16_round (x)
# define r_mm gcm_mm
# define r_sigmoid gcm_sigmoidf
#elif GCM_REAL == 64
# define real double
# define R__(name, sfx) name##sfx
# define R_(name) R__ (name, _f64)
# define r_exp exp
# define r_tanh tanh
# define r_sqrt sqrt
# define r_fabs fabs
# define r_gemm cblas_dgemm
# define r_scal cblas_dscal
# define r_dot cblas_ddot
# define r_lowp(x) (x)
# define r_mm gcm_mm_d
# define r_sigmoid gcm_sigmoid
#else
# error "define GCM_REAL as 32 or 64 before including real.h"
#endif
