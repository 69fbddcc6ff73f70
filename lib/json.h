/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* json.h -- the small JSON reader of json.c (internal).  */

#ifndef GC_JSON_H
#define GC_JSON_H

#include "gradcheck.h"

typedef enum
{
  GC__JSON_NULL, GC__JSON_BOOL, GC__JSON_NUMBER, GC__JSON_STRING,
  GC__JSON_ARRAY, GC__JSON_OBJECT
} gc__json_type;

typedef struct gc__json
{
  gc__json_type type;
  double num;                  /* NUMBER; BOOL as 0 or 1 */
  char *str;                   /* STRING */
  size_t n, cap;               /* ARRAY, OBJECT */
  struct gc__json **items;
  char **keys;                 /* OBJECT */
} gc__json;

/* Parse LEN bytes of TEXT as one JSON value: GC_OK, GC_EFORMAT or
   GC_ENOMEM.  */
gc_status gc__json_parse (const char *text, size_t len, gc__json **out);
void gc__json_free (gc__json *j);
/* The member KEY of object OBJ, or NULL.  */
const gc__json *gc__json_get (const gc__json *obj, const char *key);

#endif
