/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* npycheck.c -- print the shape of a float32 .npy file ("37,2,8") after
   checking its format: magic, version 1.0, a header dict naming '<f4',
   C order and a shape, and exactly the data the shape calls for.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
  if (argc != 2)
    return 2;
  FILE *f = fopen (argv[1], "rb");
  if (!f)
    return 1;
  unsigned char pre[10];
  if (fread (pre, 1, 10, f) != 10 || memcmp (pre, "\x93NUMPY\x01\x00", 8))
    return 1;
  size_t hl = pre[8] | (size_t) pre[9] << 8;
  char *h = calloc (1, hl + 1);
  if (!h || fread (h, 1, hl, f) != hl || (10 + hl) % 64 || h[hl - 1] != '\n')
    return 1;
  if (!strstr (h, "'descr': '<f4'") || !strstr (h, "'fortran_order': False"))
    return 1;
  char *s = strstr (h, "'shape': (");
  if (!s)
    return 1;
  s += 10;
  size_t count = 1, dims = 0;
  char out[256] = "";
  while (*s && *s != ')')
    {
      char *end;
      unsigned long d = strtoul (s, &end, 10);
      if (end == s)
        return 1;
      count *= d;
      snprintf (out + strlen (out), sizeof out - strlen (out), "%s%lu",
                dims++ ? "," : "", d);
      s = end;
      while (*s == ',' || *s == ' ')
        s++;
    }
  long here = ftell (f);
  fseek (f, 0, SEEK_END);
  long size = ftell (f);
  fclose (f);
  if ((size_t) (size - here) != count * 4)
    return 1;
  printf ("%s\n", out);
  free (h);
  return 0;
}
