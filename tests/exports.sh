#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# exports.sh -- libgradcheck exports gc_ names only.
. "${srcdir:-.}/tests/tap.sh"
so=${LIBGRADCHECK_SO:-lib/.libs/libgradcheck.so}
if [ ! -f "$so" ]; then
  skip "export list" "no shared library at $so"
  done_testing
  exit 0
fi
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' > "$TMPD/syms"
check "the library exports symbols" test -s "$TMPD/syms"
grep -v '^gc_[a-z]' "$TMPD/syms" > "$TMPD/bad"
check "every exported symbol has the gc_ prefix (none of: $(tr '\n' ' ' < "$TMPD/bad"))" test ! -s "$TMPD/bad"
for s in gc_check gc_strerror gc_report gc_derivation gc_result_free gc_options_init gc_param_name gc_exit_status; do
  check "$s is exported" grep -qx "$s" "$TMPD/syms"
done
done_testing
