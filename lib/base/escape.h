/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* escape.h -- render an untrusted string (a model, block, constant or term
   name from a plugin or a shard file) so that it cannot forge the structure
   of the text around it.  Not installed; compiled into the library and into
   the command (which does not see the library's gc__ symbols).  */

#ifndef GC_ESCAPE_H
#define GC_ESCAPE_H

#include <stddef.h>

typedef enum gc__escape_kind
{
  /* Text for people: control characters (C0, DEL, C1), bytes that are not
     UTF-8, and the backslash become \n, \t, \r, \\ or \xHH.  One line, no
     terminal escape sequences.  */
  GC__ESC_TEXT = 0,
  /* A TAP test description or comment: as text, and '#' becomes \# (a '#'
     would start a directive: "# TODO" turns a failure into a pass).  */
  GC__ESC_TAP,
  /* Markdown outside code spans: as text, and the ASCII punctuation that
     makes markup (` * _ | < > & ( ) ! # ~) is backslash-escaped; brackets
     are left as they are (no link forms without "](").  */
  GC__ESC_MARKDOWN,
  /* XML character data and attribute values (UTF-8 documents): as text,
     and & < > " ' become entities.  */
  GC__ESC_XML
} gc__escape_kind;

/* Write S escaped for KIND into OUT (at most SIZE bytes, always
   NUL-terminated when SIZE > 0), like snprintf; return the length of the
   whole escaped string (excluding the NUL), so that a caller may allocate
   that plus one.  S == NULL is rendered as "".  */
size_t gc__escape (char *out, size_t size, const char *s,
                   gc__escape_kind kind);

#endif
