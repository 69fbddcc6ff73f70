/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* parse-internal.h -- reading a JSON report back (manual: "JSON
   report"): parse_value.c reads its values and directions, parse.c the
   whole report (gc_result_parse_json); merge.c keeps the names it copies
   the way they are read.  Internal: the library exports no gc__ name.  */

#ifndef GC_PARSE_INTERNAL_H
#define GC_PARSE_INTERNAL_H

#include "base/internal.h"

#include <jansson.h>

/* A term text or input name of a report read back: the library's static
   string when it is one, a copy kept with R otherwise (NULL: out of
   memory).  */
const char *gc__read_name (gc_result *r, const char *s);

/* Typed access.  A double is a JSON number or one of the strings "nan",
   "inf", "-inf"; a count is a JSON integer >= 0, or beyond 2^53 a string
   of decimal digits; a digest is a string of 16 hex digits.  Each returns
   false when the value is absent or of another form.  J is a value, O an
   object whose member KEY is read.  */
bool gc__get_num_value (const json_t *j, double *v);
bool gc__get_num (const json_t *o, const char *key, double *v);
bool gc__get_u64_value (const json_t *j, uint64_t *v);
bool gc__get_size (const json_t *o, const char *key, size_t *v);
bool gc__get_hex (const json_t *o, const char *key, uint64_t *v);
/* Manual: "Screening": a screened report's counts (screen_first,
   screen_room, screen_superseded, screen_coarse) from its object J into
   R; false where one is missing or not a count.  */
bool gc__read_screen (const json_t *j, gc_result *r);
/* The string member KEY of O, or NULL.  */
const char *gc__get_str (const json_t *o, const char *key);
/* The index of S among the N NAMES, or -1.  */
int gc__get_lookup (const char *s, const char *const *names, int n);

/* The report J's call counts and seconds ("calls", written with
   GRADCHECK_PROFILE; manual: "Where the time goes") into R, which keeps
   its zeros where J has none: GC_OK or GC_EFORMAT.  */
gc_status gc__read_calls (gc_result *r, const json_t *j);

/* Read one direction object O into D (FULL: with its terms, as the worst
   direction and a derivation carry them): GC_OK, GC_EFORMAT or
   GC_ENOMEM.  */
gc_status gc__read_direction (gc_result *r, const json_t *o,
                              gc_direction *d, bool full);

/* (merge.c) Every direction of R judged again from its own numbers --
   its analytic value, reference, term values and the adjoint term's
   inputs -- by the judge gc_check uses, its stored verdicts not read
   (manual: "Merging shards").  For a result of status GC_OK; its counts
   are then gc__summarise's.  */
void gc__judge_stored (gc_result *r);

#endif
