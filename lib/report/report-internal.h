/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* report-internal.h -- the one interface between report.c (the shared
   pieces of every rendering, and the dispatch of gc_report and
   gc_derivation) and the files of the formats: report_text.c (text, whose
   tensor table TAP shares) with report_derivation.c (one direction as
   text), report_json.c, report_md.c and report_tap.c.
   Each renderer appends to a gc__buf and marks it failed when memory runs
   out; none prints.  Internal: the library exports no gc__ name.  */

#ifndef GC_REPORT_INTERNAL_H
#define GC_REPORT_INTERNAL_H

#include "base/internal.h"
#include "base/escape.h"

/* --- shared pieces (report.c) --- */

/* The name of a direction kind as the reports write it.  */
const char *gc__direction_kind_name (gc_direction_kind k);
/* How many directions of R reference REF decided (manual: "The tiered
   reference").  */
size_t gc__decided_count (const gc_result *r, gc_reference ref);
/* Manual: "Where the time goes": whether the reports carry R's call
   counts (GRADCHECK_PROFILE), the directions judged, and the text
   report's lines of them.  */
bool gc__profile_on (const gc_result *r);
size_t gc__judged_count (const gc_result *r);
void gc__calls_text (gc__buf *b, const gc_result *r);
/* Manual: "Screening": what a screened check R took, appended to the
   directions line: ", K random per block of more than K elements, every
   coordinate of the others[; then every coordinate of B blocks where one
   did not pass (NAMES)]".  */
void gc__screen_text (gc__buf *b, const gc_result *r);
/* The reference of R in words ("tiered: f64 central differences, ...").  */
void gc__describe_reference (gc__buf *b, const gc_result *r);
/* Append S escaped for KIND (escape.h), padded with spaces to WIDTH
   bytes; gc__put_esc does not pad.  */
void gc__put_esc_pad (gc__buf *b, const char *s, gc__escape_kind kind,
                      size_t width);
void gc__put_esc (gc__buf *b, const char *s, gc__escape_kind kind);
/* Direction D of R by name: "NAME (parameter I)" or "random direction K
   [within BLOCK]", escaped for KIND.  */
void gc__put_label (gc__buf *b, const gc_result *r, const gc_direction *d,
                    gc__escape_kind kind);
/* The arithmetic class's words (manual: "Two verdicts, one report").  */
const char *gc__arith_words (gc_arith a, bool classes);
/* The tensors of R, or NULL: none to show, or memory ran out (which fails
   the report: B is marked failed).  */
gc__tensor *gc__tensors_of (gc__buf *b, const gc_result *r, size_t *nt);
/* The diagnosis kind K as JSON names it ("constant-factor").  */
const char *gc__diagnosis_name (gc_diagnosis_kind k);

/* --- the formats: each appends R's report (or the derivation of D) --- */

/* report_text.c */
void gc__report_text (gc__buf *b, const gc_result *r);
/* report_twin.c: the text report's twin: block (nothing without a
   twin).  */
void gc__twin_text (gc__buf *b, const gc_result *r);
/* report_derivation.c: one direction as text; the worst one as the text
   report ends.  */
void gc__derivation_text (gc__buf *b, const gc_result *r,
                          const gc_direction *d);
void gc__worst_text (gc__buf *b, const gc_result *r, const gc_direction *d);
/* report_measured.c: the text report's lines on the measurement: the
   forward's agreement, the rounding modes' findings, would f64 do; what
   R's measured depth is of (its name in *DNAME).  */
void gc__forward_agreement_text (gc__buf *b, const gc_result *r);
void gc__rounding_text (gc__buf *b, const gc_result *r);
void gc__f64_text (gc__buf *b, const gc_result *r);
const char *gc__depth_of (const gc_result *r, const char **dname);
/* The per-tensor summary as text, each line after PREFIX (TAP: "# ").  */
void gc__tensors_text (gc__buf *b, const gc_result *r, const char *prefix);
/* report_json.c: one line of compact JSON.  */
void gc__report_json (gc__buf *b, const gc_result *r);
void gc__derivation_json (gc__buf *b, const gc_result *r,
                          const gc_direction *d);
/* report_md.c */
void gc__report_markdown (gc__buf *b, const gc_result *r);
void gc__derivation_markdown (gc__buf *b, const gc_result *r,
                              const gc_direction *d);
/* report_tap.c */
void gc__report_tap (gc__buf *b, const gc_result *r);

#endif
