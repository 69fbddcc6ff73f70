/* SPDX-License-Identifier: LGPL-3.0-or-later
   Copyright (C) 2026 The gradcheck authors */
/* gradcheck-version.h -- the version of libgradcheck this header belongs
   to, written by configure from AC_INIT (configure.ac), the one place the
   version is typed.  Included by gradcheck.h; installed beside it.  */

#ifndef GRADCHECK_VERSION_H
#define GRADCHECK_VERSION_H

#define GC_VERSION_STRING "0.1.0"

#endif
