/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* svgcheck.c -- is FILE a well-formed XML document with an <svg> root?
   A small checker so that the tests need no XML tools: tags balance and
   nest, attributes are quoted, entities are known, one root element.  */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
fail (const char *why, long at)
{
  fprintf (stderr, "svgcheck: %s at byte %ld\n", why, at);
  return 1;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    return 2;
  FILE *f = fopen (argv[1], "rb");
  if (!f)
    return fail ("cannot open", 0);
  static char buf[1 << 22];
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = 0;
  char stack[64][64];
  int depth = 0, roots = 0;
  char root[64] = "";
  for (size_t i = 0; i < n;)
    {
      if (buf[i] == '&')
        {
          const char *ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
          size_t k;
          for (k = 0; k < 5; k++)
            if (!strncmp (buf + i, ents[k], strlen (ents[k])))
              break;
          if (k == 5)
            return fail ("unknown entity", (long) i);
          i += strlen (ents[k]);
          continue;
        }
      if (buf[i] != '<')
        {
          if (buf[i] == '>')
            return fail ("stray >", (long) i);
          if (depth == 0 && !isspace ((unsigned char) buf[i]))
            return fail ("text outside the root", (long) i);
          i++;
          continue;
        }
      if (!strncmp (buf + i, "<?", 2))
        {
          char *e = strstr (buf + i, "?>");
          if (!e)
            return fail ("unterminated declaration", (long) i);
          i = (size_t) (e - buf) + 2;
          continue;
        }
      int closing = buf[i + 1] == '/';
      size_t j = i + 1 + (size_t) closing, s = j;
      while (isalnum ((unsigned char) buf[j]) || buf[j] == '-' || buf[j] == ':')
        j++;
      if (j == s || j - s >= 63)
        return fail ("bad tag name", (long) i);
      char name[64];
      memcpy (name, buf + s, j - s);
      name[j - s] = 0;
      /* attributes */
      for (;;)
        {
          while (isspace ((unsigned char) buf[j]))
            j++;
          if (buf[j] == '>' || (buf[j] == '/' && buf[j + 1] == '>'))
            break;
          if (closing || !isalpha ((unsigned char) buf[j]))
            return fail ("bad attribute", (long) j);
          while (isalnum ((unsigned char) buf[j]) || buf[j] == '-'
                 || buf[j] == ':')
            j++;
          if (buf[j] != '=' || (buf[j + 1] != '"' && buf[j + 1] != '\''))
            return fail ("unquoted attribute", (long) j);
          char q = buf[j + 1];
          char *e = strchr (buf + j + 2, q);
          if (!e || memchr (buf + j + 2, '<', (size_t) (e - buf - j - 2)))
            return fail ("bad attribute value", (long) j);
          j = (size_t) (e - buf) + 1;
        }
      int empty = buf[j] == '/';
      i = j + (empty ? 2 : 1);
      if (closing)
        {
          if (depth == 0 || strcmp (stack[depth - 1], name))
            return fail ("mismatched closing tag", (long) s);
          depth--;
        }
      else
        {
          if (depth == 0)
            {
              roots++;
              snprintf (root, sizeof root, "%s", name);
            }
          if (!empty)
            {
              if (depth == 64)
                return fail ("too deep", (long) s);
              snprintf (stack[depth++], 64, "%s", name);
            }
        }
    }
  if (depth)
    return fail ("unclosed element", (long) n);
  if (roots != 1 || strcmp (root, "svg"))
    return fail ("the root is not one <svg>", 0);
  return 0;
}
