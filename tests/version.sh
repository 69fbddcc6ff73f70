#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# version.sh -- the version is typed once, in configure.ac's AC_INIT; the
# installed header, the command, the library's reports, gradcheck.pc and
# the man page all say the same.
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
top=${abs_top_builddir:-.}
src=${srcdir:-.}
want=$(sed -n 's/^AC_INIT(\[gradcheck\], \[\([^]]*\)\].*/\1/p' "$src/configure.ac")
check "configure.ac's AC_INIT names a version ($want)" sh -c "echo '$want' | grep -qx '[0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*'"
h=$(sed -n 's/^#define GC_VERSION_STRING "\(.*\)"$/\1/p' "$top/lib/gradcheck-version.h")
check "the header's GC_VERSION_STRING is AC_INIT's ($h)" test "$h" = "$want"
check "gradcheck.h does not type a version of its own" sh -c "! grep -q '^#define GC_VERSION_STRING' '$src/lib/gradcheck.h'"
v=$($G --version | head -1 | sed -n 's/^gradcheck (gradcheck) //p')
check "gradcheck --version says $want ($v)" test "$v" = "$want"
j=$($G run tanh-gemm --shape M=1,K=1,N=1 --format json | grep -o '"gradcheck": *"[^"]*"' | head -1 | sed 's/.*"\([^"]*\)"$/\1/')
check "the library's reports say $want ($j)" test "$j" = "$want"
pc=$(sed -n 's/^Version: //p' "$top/gradcheck.pc")
check "gradcheck.pc says $want ($pc)" test "$pc" = "$want"
check "gradcheck.pc requires the MPFR configure demands" \
  sh -c "grep -q '^Requires: mpfr >= 4\.1\$' '$top/gradcheck.pc' && grep -q 'mpfr >= 4\.1' '$src/configure.ac'"
man=$(sed -n 's/^\.TH GRADCHECK 1 "[^"]*" "gradcheck \([^"]*\)".*/\1/p' "$src/doc/gradcheck.1")
check "the man page says $want ($man)" test "$man" = "$want"
done_testing
