/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* status.c -- names of status codes, verdicts and references, and the
   exit status of a check.  */

#include "base/internal.h"

#include <string.h>

const char *
gc_strerror (gc_status status)
{
  switch (status)
    {
    case GC_OK: return "success";
    case GC_EINVAL: return "invalid argument (a NULL pointer or an option out of range)";
    case GC_EEMPTY: return "the model has no parameters (n = 0)";
    case GC_ENOMEM: return "out of memory";
    case GC_ECALLBACK: return "a model callback reported a failure";
    case GC_ENONFINITE: return "a model callback produced NaN or Inf";
    case GC_ESTEP: return "unusable step: x + h rounds to x, or overflows, in the reference's format";
    case GC_EPREC: return "unusable precision (below 24 bits or beyond MPFR's range)";
    case GC_ENOREF:
      return "the model does not provide what the check needs (the "
             "reference forward asked for, or the callback the check checks)";
    case GC_EDIRECTION: return "a direction index is out of range";
    case GC_EABI: return "the model description has another ABI version";
    case GC_EFORMAT: return "malformed input";
    case GC_EMISMATCH: return "shard reports that do not belong together";
    case GC_EOVERRUN: return "a model callback wrote outside its buffers (past its output, or into its input)";
    case GC_ETIMEOUT: return "the check ran past its time limit";
    case GC_EPOINT: return "the point x holds NaN or Inf";
    case GC_EUNWRITTEN: return "a model callback left elements of its output unwritten";
    case GC_STATUS_COUNT: break;
    }
  return "unknown status";
}

/* Manual: "Status codes": STATUS's sentence for a refusal whose DETAIL
   names its cause: gc_strerror's without its gloss of the usual causes
   (the part from " (" or ": " on: "invalid argument (a NULL pointer or an
   option out of range)" would name a cause that was not the one), or the
   whole sentence when DETAIL is empty or the sentence itself.  */
const char *
gc__status_lead (gc_status status, const char *detail, char *buf,
                 size_t size)
{
  const char *s = gc_strerror (status);
  if (!detail || !detail[0] || strcmp (detail, s) == 0 || size == 0)
    return s;
  size_t n = strlen (s);
  const char *p = strstr (s, " (");
  const char *c = strstr (s, ": ");
  if (p && (size_t) (p - s) < n)
    n = (size_t) (p - s);
  if (c && (size_t) (c - s) < n)
    n = (size_t) (c - s);
  if (n >= size)
    n = size - 1;
  memcpy (buf, s, n);
  buf[n] = 0;
  return buf;
}

static const char *const status_names[] = {
  "ok", "EINVAL", "EEMPTY", "ENOMEM", "ECALLBACK", "ENONFINITE", "ESTEP",
  "EPREC", "ENOREF", "EDIRECTION", "EABI", "EFORMAT", "EMISMATCH",
  "EOVERRUN", "ETIMEOUT", "EPOINT", "EUNWRITTEN" };

const char *
gc__status_name (gc_status s)
{
  return (unsigned) s < sizeof status_names / sizeof status_names[0]
         ? status_names[s] : "unknown";
}

int
gc__status_from_name (const char *name)
{
  for (size_t k = 0; k < sizeof status_names / sizeof status_names[0]; k++)
    if (strcmp (status_names[k], name) == 0)
      return (int) k;
  return -1;
}

const char *
gc_verdict_name (gc_verdict v)
{
  switch (v)
    {
    case GC_PASS: return "pass";
    case GC_FAIL: return "fail";
    case GC_NONSMOOTH: return "non-smooth";
    case GC_ERROR: return "error";
    case GC_INCONCLUSIVE: return "inconclusive";
    case GC_NONDETERMINISTIC: return "non-deterministic";
    case GC_PRECISION: return "precision";
    }
  return "unknown";
}

int
gc__verdict_from_name (const char *name)
{
  for (int v = GC_PASS; v <= GC_PRECISION; v++)
    if (strcmp (gc_verdict_name ((gc_verdict) v), name) == 0)
      return v;
  return -1;
}

/* Manual: "Exit status".  */
int
gc_exit_status (gc_status status, gc_verdict verdict)
{
  switch (status)
    {
    case GC_OK:
      break;
    case GC_ENOMEM:
      return GC_EXIT_INTERNAL;
    case GC_ECALLBACK:
    case GC_ENONFINITE:
    case GC_EOVERRUN:
    case GC_ETIMEOUT:
    case GC_EUNWRITTEN:
      return GC_EXIT_MODEL;
    default:
      return GC_EXIT_USAGE;
    }
  switch (verdict)
    {
    case GC_PASS: return GC_EXIT_PASS;
    case GC_INCONCLUSIVE: return GC_EXIT_INCONCLUSIVE;
    case GC_PRECISION: return GC_EXIT_PRECISION;
    default: return GC_EXIT_FAIL;
    }
}

const char *
gc_reference_name (gc_reference r)
{
  switch (r)
    {
    case GC_REF_MPFR: return "mpfr";
    case GC_REF_F32: return "f32";
    case GC_REF_F64: return "f64";
    case GC_REF_AUTO: return "auto";
    }
  return "unknown";
}

const char *
gc__arith_name (gc_arith a)
{
  switch (a)
    {
    case GC_ARITH_NONE: return "none";
    case GC_ARITH_OK: return "ok";
    case GC_ARITH_PRECISION: return "precision";
    case GC_ARITH_MISMATCH: return "mismatch";
    case GC_ARITH_INCONCLUSIVE: return "inconclusive";
    }
  return "unknown";
}

int
gc__arith_from_name (const char *name)
{
  for (int a = GC_ARITH_NONE; a <= GC_ARITH_INCONCLUSIVE; a++)
    if (strcmp (gc__arith_name ((gc_arith) a), name) == 0)
      return a;
  return -1;
}
