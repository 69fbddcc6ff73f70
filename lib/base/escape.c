/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* escape.c -- untrusted names rendered so that they cannot forge a report's
   structure (escape.h).  */

#include "base/escape.h"

#include <stdio.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at P (RFC 3629: no
   overlong forms, no surrogates, nothing above U+10FFFF), or 0.  */
static size_t
utf8_length (const unsigned char *p)
{
  if (p[0] < 0x80)
    return 1;
  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    return (p[1] & 0xc0) == 0x80 ? 2 : 0;
  if (p[0] >= 0xe0 && p[0] <= 0xef)
    {
      unsigned lo = p[0] == 0xe0 ? 0xa0 : 0x80;
      unsigned hi = p[0] == 0xed ? 0x9f : 0xbf;
      return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
    }
  if (p[0] >= 0xf0 && p[0] <= 0xf4)
    {
      unsigned lo = p[0] == 0xf0 ? 0x90 : 0x80;
      unsigned hi = p[0] == 0xf4 ? 0x8f : 0xbf;
      return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80
             && (p[3] & 0xc0) == 0x80 ? 4 : 0;
    }
  return 0;
}

typedef struct out
{
  char *s;
  size_t size, len;
} out;

static void
put (out *o, const char *t, size_t n)
{
  for (size_t k = 0; k < n; k++, o->len++)
    if (o->len + 1 < o->size)
      o->s[o->len] = t[k];
}

static void
put_hex (out *o, const unsigned char *p, size_t n)
{
  for (size_t k = 0; k < n; k++)
    {
      char hex[5];
      snprintf (hex, sizeof hex, "\\x%02X", p[k]);
      put (o, hex, 4);
    }
}

size_t
gc__escape (char *buf, size_t size, const char *s, gc__escape_kind kind)
{
  out o = { buf, size, 0 };
  const unsigned char *p = (const unsigned char *) (s ? s : "");
  while (*p)
    {
      size_t n = utf8_length (p);
      if (n == 0)
        {
          put_hex (&o, p, 1);          /* not UTF-8 */
          p++;
          continue;
        }
      if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
        {
          put_hex (&o, p, 2);          /* C1 control, U+0080..U+009F */
          p += 2;
          continue;
        }
      if (n > 1)
        {
          put (&o, (const char *) p, n);
          p += n;
          continue;
        }
      unsigned char c = *p++;
      const char *rep = NULL;
      switch (c)
        {
        case '\n': rep = "\\n"; break;
        case '\t': rep = "\\t"; break;
        case '\r': rep = "\\r"; break;
        case '\\': rep = "\\\\"; break;
        default: break;
        }
      if (!rep && kind == GC__ESC_TAP && c == '#')
        rep = "\\#";
      if (!rep && kind == GC__ESC_MARKDOWN && c && strchr ("`*_|<>&()!#~", c))
        {
          char two[2] = { '\\', (char) c };
          put (&o, two, 2);
          continue;
        }
      if (!rep && kind == GC__ESC_XML)
        rep = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;"
              : c == '"' ? "&quot;" : c == '\'' ? "&apos;" : NULL;
      if (rep)
        put (&o, rep, strlen (rep));
      else if (c < 0x20 || c == 0x7f)
        put_hex (&o, &c, 1);
      else
        put (&o, (const char *) &c, 1);
    }
  if (size > 0)
    buf[o.len < size ? o.len : size - 1] = 0;
  return o.len;
}
