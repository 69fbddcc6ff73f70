/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* json.c -- a small JSON reader for the reports gradcheck writes (shard
   reports read back by merge).  The input is untrusted: every length and
   depth is bounded, every failure is GC_EFORMAT, nothing is read past the
   end.  Not a general JSON library: numbers are doubles, strings are kept
   with their escapes resolved to UTF-8 (BMP only).  */

#include "internal.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

typedef struct parser
{
  const char *p, *end;
  gc_status st;
} parser;

static void
ws (parser *ps)
{
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'
                             || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static gc__json *
node (gc__json_type t)
{
  gc__json *j = calloc (1, sizeof *j);
  if (j)
    j->type = t;
  return j;
}

void
gc__json_free (gc__json *j)
{
  if (!j)
    return;
  for (size_t k = 0; k < j->n; k++)
    {
      gc__json_free (j->items[k]);
      if (j->keys)
        free (j->keys[k]);
    }
  free (j->items);
  free (j->keys);
  free (j->str);
  free (j);
}

static bool
append (gc__json *j, char *key, gc__json *item)
{
  if (j->n == j->cap)
    {
      size_t cap = j->cap ? 2 * j->cap : 8;
      gc__json **items = realloc (j->items, cap * sizeof *items);
      if (!items)
        return false;
      j->items = items;
      if (j->type == GC__JSON_OBJECT)
        {
          char **keys = realloc (j->keys, cap * sizeof *keys);
          if (!keys)
            return false;
          j->keys = keys;
        }
      j->cap = cap;
    }
  j->items[j->n] = item;
  if (j->type == GC__JSON_OBJECT)
    j->keys[j->n] = key;
  j->n++;
  return true;
}

static int
hexval (char c)
{
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static char *
string (parser *ps)
{
  if (ps->p >= ps->end || *ps->p != '"')
    return NULL;
  ps->p++;
  size_t cap = 16, len = 0;
  char *s = malloc (cap);
  if (!s)
    {
      ps->st = GC_ENOMEM;
      return NULL;
    }
  while (ps->p < ps->end && *ps->p != '"')
    {
      unsigned char c = (unsigned char) *ps->p++;
      unsigned cp = c;
      if (c < 0x20)
        goto bad;
      if (c == '\\')
        {
          if (ps->p >= ps->end)
            goto bad;
          char e = *ps->p++;
          switch (e)
            {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
              if (ps->end - ps->p < 4)
                goto bad;
              cp = 0;
              for (int k = 0; k < 4; k++)
                {
                  int h = hexval (ps->p[k]);
                  if (h < 0)
                    goto bad;
                  cp = cp * 16 + (unsigned) h;
                }
              ps->p += 4;
              if (cp == 0)
                goto bad;
              break;
            default:
              goto bad;
            }
        }
      char enc[3];
      size_t el;
      if (c != '\\' || cp < 0x80)
        {
          enc[0] = (char) cp;
          el = 1;
        }
      else if (cp < 0x800)
        {
          enc[0] = (char) (0xc0 | (cp >> 6));
          enc[1] = (char) (0x80 | (cp & 0x3f));
          el = 2;
        }
      else
        {
          enc[0] = (char) (0xe0 | (cp >> 12));
          enc[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
          enc[2] = (char) (0x80 | (cp & 0x3f));
          el = 3;
        }
      if (len + el + 1 > cap)
        {
          cap *= 2;
          char *t = realloc (s, cap);
          if (!t)
            {
              free (s);
              ps->st = GC_ENOMEM;
              return NULL;
            }
          s = t;
        }
      memcpy (s + len, enc, el);
      len += el;
    }
  if (ps->p >= ps->end)
    goto bad;
  ps->p++;
  s[len] = 0;
  return s;
bad:
  free (s);
  ps->st = GC_EFORMAT;
  return NULL;
}

static gc__json *value (parser *ps, int depth);

static gc__json *
number (parser *ps)
{
  const char *start = ps->p;
  if (ps->p < ps->end && *ps->p == '-')
    ps->p++;
  size_t digits = 0;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
    ps->p++, digits++;
  if (!digits)
    return NULL;
  if (ps->p < ps->end && *ps->p == '.')
    {
      ps->p++;
      size_t fd = 0;
      while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
        ps->p++, fd++;
      if (!fd)
        return NULL;
    }
  if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E'))
    {
      ps->p++;
      if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
        ps->p++;
      size_t ed = 0;
      while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
        ps->p++, ed++;
      if (!ed)
        return NULL;
    }
  char buf[64];
  size_t len = (size_t) (ps->p - start);
  if (len >= sizeof buf)
    return NULL;
  memcpy (buf, start, len);
  buf[len] = 0;
  gc__json *j = node (GC__JSON_NUMBER);
  if (!j)
    {
      ps->st = GC_ENOMEM;
      return NULL;
    }
  j->num = strtod (buf, NULL);
  return j;
}

static bool
literal (parser *ps, const char *word)
{
  size_t l = strlen (word);
  if ((size_t) (ps->end - ps->p) < l || memcmp (ps->p, word, l) != 0)
    return false;
  ps->p += l;
  return true;
}

static gc__json *
container (parser *ps, int depth, bool obj)
{
  gc__json *j = node (obj ? GC__JSON_OBJECT : GC__JSON_ARRAY);
  if (!j)
    {
      ps->st = GC_ENOMEM;
      return NULL;
    }
  ps->p++;
  ws (ps);
  char close = obj ? '}' : ']';
  if (ps->p < ps->end && *ps->p == close)
    {
      ps->p++;
      return j;
    }
  for (;;)
    {
      char *key = NULL;
      if (obj)
        {
          ws (ps);
          if (!(key = string (ps)))
            goto bad;
          ws (ps);
          if (ps->p >= ps->end || *ps->p != ':')
            {
              free (key);
              goto bad;
            }
          ps->p++;
        }
      gc__json *item = value (ps, depth + 1);
      if (!item || !append (j, key, item))
        {
          if (item)
            ps->st = GC_ENOMEM;
          gc__json_free (item);
          free (key);
          goto bad;
        }
      ws (ps);
      if (ps->p < ps->end && *ps->p == ',')
        {
          ps->p++;
          continue;
        }
      if (ps->p < ps->end && *ps->p == close)
        {
          ps->p++;
          return j;
        }
      goto bad;
    }
bad:
  gc__json_free (j);
  return NULL;
}

static gc__json *
value (parser *ps, int depth)
{
  if (depth > MAX_DEPTH)
    return NULL;
  ws (ps);
  if (ps->p >= ps->end)
    return NULL;
  switch (*ps->p)
    {
    case '{':
      return container (ps, depth, true);
    case '[':
      return container (ps, depth, false);
    case '"':
      {
        char *s = string (ps);
        if (!s)
          return NULL;
        gc__json *j = node (GC__JSON_STRING);
        if (!j)
          {
            free (s);
            ps->st = GC_ENOMEM;
            return NULL;
          }
        j->str = s;
        return j;
      }
    default:
      break;
    }
  bool t = literal (ps, "true");
  if (t || literal (ps, "false"))
    {
      gc__json *j = node (GC__JSON_BOOL);
      if (j)
        j->num = t;
      else
        ps->st = GC_ENOMEM;
      return j;
    }
  if (literal (ps, "null"))
    {
      gc__json *j = node (GC__JSON_NULL);
      if (!j)
        ps->st = GC_ENOMEM;
      return j;
    }
  return number (ps);
}

gc_status
gc__json_parse (const char *text, size_t len, gc__json **out)
{
  *out = NULL;
  parser ps = { text, text + len, GC_OK };
  gc__json *j = value (&ps, 0);
  if (j)
    {
      ws (&ps);
      if (ps.p != ps.end)
        {
          gc__json_free (j);
          j = NULL;
        }
    }
  if (!j)
    return ps.st == GC_ENOMEM ? GC_ENOMEM : GC_EFORMAT;
  *out = j;
  return GC_OK;
}

const gc__json *
gc__json_get (const gc__json *obj, const char *key)
{
  if (!obj || obj->type != GC__JSON_OBJECT)
    return NULL;
  for (size_t k = 0; k < obj->n; k++)
    if (strcmp (obj->keys[k], key) == 0)
      return obj->items[k];
  return NULL;
}
