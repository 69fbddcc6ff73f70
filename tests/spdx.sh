#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# spdx.sh -- every source file of the project carries its licence: an SPDX
# line in its first three lines, and COPYING / COPYING.LESSER ship with it.
. "${srcdir:-.}/tests/tap.sh"
top=${srcdir:-.}
check "COPYING (the GPL, which the LGPL extends) is present" test -s "$top/COPYING"
check "COPYING.LESSER (the LGPL) is present" test -s "$top/COPYING.LESSER"
check "COPYING.LESSER is version 3 of the LGPL" \
  grep -q 'GNU LESSER GENERAL PUBLIC LICENSE' "$top/COPYING.LESSER"
n=0
missing=
for f in $(cd "$top" && find lib gradcheck models tests bench fuzz doc \
             \( -name corpus -prune \) -o -type f \
             \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.texi' \
                -o -name '*.am' -o -name '*.1' -o -name '*.py' \) -print 2>/dev/null \
           | grep -v -e '^doc/version\.texi$' -e '/config\.h$' | sort) \
         configure.ac Makefile.am bootstrap .ci/run gradcheck.pc.in; do
  [ -f "$top/$f" ] || continue
  n=$((n + 1))
  head -3 "$top/$f" | grep -q 'SPDX-License-Identifier: LGPL-3\.0-or-later' \
    || missing="$missing $f"
done
check "every one of the $n source files has an SPDX line (missing:${missing:- none})" \
  test -z "$missing"
check "at least 50 source files were looked at ($n)" test "$n" -ge 50
done_testing
