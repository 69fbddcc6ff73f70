/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* buf.c -- a growable string for the report renderers.  */

#include "internal.h"

#include <math.h>
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

void
gc__buf_json_string (gc__buf *b, const char *s)
{
  gc__buf_puts (b, "\"");
  for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
    {
      if (*p == '"' || *p == '\\')
        gc__buf_printf (b, "\\%c", *p);
      else if (*p < 0x20)
        gc__buf_printf (b, "\\u%04x", *p);
      else
        {
          char c[2] = { (char) *p, 0 };
          gc__buf_puts (b, c);
        }
    }
  gc__buf_puts (b, "\"");
}

/* JSON has no NaN or Inf: they are written as null.  17 significant digits
   make every double round-trip.  */
void
gc__buf_json_number (gc__buf *b, double v)
{
  if (isfinite (v))
    gc__buf_printf (b, "%.17g", v);
  else
    gc__buf_puts (b, "null");
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
