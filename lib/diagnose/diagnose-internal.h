/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* diagnose-internal.h -- the one interface between the diagnosis driver
   (diagnose.c: the lead tensor, the order the patterns are tried in, the
   text around them) and the patterns: diagnose_patterns.c (rounding
   class, too few, zero region, constant factor, unexplained) and
   diagnose_shift.c (exact shift, offset along an axis, approximate
   shift).  Manual: "Diagnosis".  Internal: the library exports no gc__
   name.  */

#ifndef GC_DIAGNOSE_INTERNAL_H
#define GC_DIAGNOSE_INTERNAL_H

#include "base/internal.h"

/* The fewest failures that establish a pattern (manual: "Diagnosis"): one
   or two failures agree with almost any pattern.  */
#define GC__EVIDENCE_MIN 3

/* The state the patterns share: the failures considered (those of the lead
   tensor) with their ratios, and the words of the text.  */
typedef struct diag
{
  gc_result *r;
  gc_diagnosis *dg;
  const gc_block *blk;          /* the lead tensor's block, or NULL */
  const gc_direction **fails;   /* its failures, in index order */
  double *ratios;               /* analytic / reference; NaN where it is 0 */
  size_t nf, checked;
  const gc_direction *worst;    /* its worst failure */
  const char *an, *what, *elts;
  char where[200];
} diag;


/* The patterns (manual: "Diagnosis"), each claimed only on the evidence
   its text states.  Each returns true when it applies, its finding in
   G->dg; the driver tries them in the order diagnose.c documents, and the
   last always applies.  */
bool gc__diag_rounding_class (diag *g);       /* diagnose_patterns.c */
bool gc__diag_too_few (diag *g);
bool gc__diag_zero_region (diag *g);
bool gc__diag_constant_factor (diag *g);
bool gc__diag_exact_shift (diag *g);          /* diagnose_shift.c */
bool gc__diag_axis_offset (diag *g);
bool gc__diag_approximate_shift (diag *g);
bool gc__diag_unexplained (diag *g);          /* diagnose_patterns.c */

/* diagnose_group.c (manual: "Where the error enters").  Append the
   printf-formatted text to DG's text, as far as it fits.  */
void gc__diag_append (gc_diagnosis *dg, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
/* Whether tensor A is named before B (the lead order).  */
int gc__lead_before (const gc__tensor *a, const gc__tensor *b);
/* After the finding on tensor DIAGNOSED of T[0..NT): the other tensors,
   those failing wholly alike with it as one group said after the
   finding's kind, where the error enters, those that pass.  */
void gc__diag_other_tensors (gc_diagnosis *dg, const gc_result *r,
                             const gc__tensor *t, size_t nt,
                             size_t diagnosed);
/* "the error enters at step t (...)" in OUT when the failures of R's
   tensors T[0..NT) split cleanly by step: over blocks numbered by step,
   or (AXES: where shared tensors fail wholly, the recurrence's mark)
   along an axis of a tensor failing in part; false otherwise.  */
bool gc__diag_step_line (const gc_result *r, const gc__tensor *t, size_t nt,
                         bool axes, char *out, size_t size);

/* (diagnose_patterns.c) Manual: "Two verdicts, one report": whether R's
   diagnosis of the FOUND precision findings of block BB (SIZE_MAX: all;
   CHECKED directions there) is a constant factor rounding makes, not a
   logic error's structure: within gamma_d(u) of 1, below O(1) on at most
   half the tensor with classes declared, or scattered (the findings'
   ratios g32 / g64 spread by more than a quarter of |c - 1|).  */
bool gc__rounding_factor (const gc_result *r, size_t found, size_t checked,
                          size_t bb);

#endif
