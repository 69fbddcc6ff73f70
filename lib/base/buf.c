/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* buf.c -- a growable string for the report renderers.  */

#include "base/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
reserve (gc__buf *b, size_t extra)
{
  if (b->failed)
    return false;
  if (b->len + extra + 1 <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *s = realloc (b->s, cap);
  if (!s)
    {
      b->failed = true;
      return false;
    }
  b->s = s;
  b->cap = cap;
  return true;
}

void
gc__buf_printf (gc__buf *b, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (NULL, 0, fmt, ap);
  va_end (ap);
  if (n < 0 || !reserve (b, (size_t) n))
    {
      b->failed = true;
      return;
    }
  va_start (ap, fmt);
  vsnprintf (b->s + b->len, (size_t) n + 1, fmt, ap);
  va_end (ap);
  b->len += (size_t) n;
}

void
gc__buf_puts (gc__buf *b, const char *s)
{
  size_t n = strlen (s);
  if (!reserve (b, n))
    return;
  memcpy (b->s + b->len, s, n + 1);
  b->len += n;
}

/* RFC 3629: the length of the valid UTF-8 sequence at P (1 to 4), or 0
   when P starts none (a stray continuation byte, an overlong form, a
   surrogate, a code point beyond U+10FFFF, a cut sequence, NUL).  */
size_t
gc__utf8_len (const unsigned char *p)
{
  unsigned c = p[0];
  if (c == 0)
    return 0;
  if (c < 0x80)
    return 1;
  size_t n;
  unsigned lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    {
      n = 3;
      if (c == 0xe0)
        lo = 0xa0;
      else if (c == 0xed)
        hi = 0x9f;
    }
  else if (c >= 0xf0 && c <= 0xf4)
    {
      n = 4;
      if (c == 0xf0)
        lo = 0x90;
      else if (c == 0xf4)
        hi = 0x8f;
    }
  else
    return 0;
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (size_t k = 2; k < n; k++)
    if (p[k] < 0x80 || p[k] > 0xbf)
      return 0;
  return n;
}

/* Append S to B as valid UTF-8: each byte that starts no valid sequence
   becomes U+FFFD.  */
void
gc__buf_utf8 (gc__buf *b, const char *s)
{
  const unsigned char *p = (const unsigned char *) (s ? s : "");
  while (*p)
    {
      size_t l = gc__utf8_len (p);
      if (!l)
        {
          gc__buf_puts (b, "\xef\xbf\xbd");
          p++;
          continue;
        }
      if (!reserve (b, l))
        return;
      memcpy (b->s + b->len, p, l);
      b->len += l;
      b->s[b->len] = 0;
      p += l;
    }
}

/* SRC as valid UTF-8 into DST of SIZE bytes (SIZE > 0), cut at a
   character boundary when it does not fit.  */
void
gc__utf8_copy (char *dst, size_t size, const char *src)
{
  const unsigned char *p = (const unsigned char *) (src ? src : "");
  size_t used = 0;
  while (*p)
    {
      size_t l = gc__utf8_len (p);
      const void *c = l ? (const void *) p : "\xef\xbf\xbd";
      size_t cl = l ? l : 3;
      if (used + cl + 1 > size)
        break;
      memmove (dst + used, c, cl);
      used += cl;
      p += l ? l : 1;
    }
  dst[used] = 0;
}

char *
gc__buf_take (gc__buf *b)
{
  char *s = b->failed ? NULL : b->s;
  if (b->failed)
    free (b->s);
  else if (!s)
    s = calloc (1, 1);
  b->s = NULL;
  b->len = b->cap = 0;
  return s;
}

/* A ratio R of two values with DIGITS significant digits, or, where those
   would show 1 for a ratio that is not 1 (a failure of 1e-5 relative),
   as 1 + (R - 1): a report never prints "= 1" for values that differ.  */
const char *
gc__ratio_text (char *buf, size_t size, double r, int digits)
{
  snprintf (buf, size, "%.*g", digits, r);
  if (isfinite (r) && r != 1 && strcmp (buf, "1") == 0)
    snprintf (buf, size, "1 %c %.3g", r > 1 ? '+' : '-', fabs (r - 1));
  return buf;
}

/* A range of ratios LO to HI (issue 36: "numbers with the digits that
   show the difference"): each with the fewest significant digits, at
   least 4, at which the two read differently (up to 17, where only
   their last bits differ), each as 1 +- d where it would print 1; "LO
   to HI", and "X to X (all equal)" when they are equal.  */
const char *
gc__range_text (char *buf, size_t size, double lo, double hi)
{
  char a[40], b[40];
  if (lo == hi || !isfinite (lo) || !isfinite (hi))
    {
      if (lo == hi)
        snprintf (buf, size, "%s to %s (all equal)",
                  gc__ratio_text (a, sizeof a, lo, 6),
                  gc__ratio_text (b, sizeof b, lo, 6));
      else
        snprintf (buf, size, "%.4g to %.4g", lo, hi);
      return buf;
    }
  int digits = 4;
  for (; digits < 17; digits++)
    {
      gc__ratio_text (a, sizeof a, lo, digits);
      gc__ratio_text (b, sizeof b, hi, digits);
      if (strcmp (a, b) != 0)
        break;
    }
  gc__ratio_text (a, sizeof a, lo, digits);
  gc__ratio_text (b, sizeof b, hi, digits);
  /* both near 1: their offsets from 1, to the digits that tell them
     apart */
  if (strncmp (a, "1 ", 2) == 0 && strncmp (b, "1 ", 2) == 0
      && strcmp (a, b) == 0)
    for (int p = 3; p < 17 && strcmp (a, b) == 0; p++)
      {
        snprintf (a, sizeof a, "1 %c %.*g", lo > 1 ? '+' : '-', p,
                  fabs (lo - 1));
        snprintf (b, sizeof b, "1 %c %.*g", hi > 1 ? '+' : '-', p,
                  fabs (hi - 1));
      }
  snprintf (buf, size, "%s to %s", a, b);
  return buf;
}
