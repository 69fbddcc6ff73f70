/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* catalogue.h -- the diagnosis catalogue's model frame (issue 36),
   shared by check_diagnosis_catalogue.c (its driver and most models) and
   catalogue_flow.c (the recurrences, the attention, the staircase).  Manual:
   "Diagnosis".  */

#ifndef GC_CATALOGUE_H
#define GC_CATALOGUE_H

#include "gctest.h"
#include "gradcheck-check.h"

#include <stdbool.h>

typedef struct cat cat;
struct cat
{
  gc_model model;
  size_t n;
  float x[256];
  double c[256];              /* fixed cotangents / coefficients */
  double mask[16];
  gc_block blocks[24];
  char names[16][8];          /* block names made at run time */
  int bug;
  double (*loss) (const cat *m, const double *x, int path);
  /* the backward under test in PATH (32: the f32 path, 64: its twin) */
  void (*grad) (const cat *m, const double *x, double *g, int path);
  void (*round32) (float *g, size_t n);   /* the f32 path's end, or NULL */
};

/* M a model of N parameters named NAME, with its twin if TWIN, x and the
   coefficients drawn from the test seed, no block.  */
void cat_init (cat *m, const char *name, size_t n, bool twin);
/* Append a block NAME at OFFSET of shape [D0] (D1 0) or [D0, D1].  */
void cat_block (cat *m, const char *name, size_t offset, size_t d0,
                size_t d1);
/* Check M against the f64 reference; its line on stderr and in
   GC_CATALOGUE_TSV (bench/diagnosis.py's rows).  */
gc_result *cat_check (cat *m);
/* The twin's callback (gc_model.grad_f64).  */
int cat_grad64 (void *ctx, const double *x, double *g);

/* catalogue_flow.c: its tests added to TC; its correct models checked
   to pass (with the twin if TWIN).  */
void catalogue_flow (TCase *tc);
void catalogue_flow_pass (int twin);

#endif
