#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# python.sh -- the Python package's tests (python/tests, pytest) with the
# in-tree library, once, under python3 -X dev; one TAP line per pytest
# test.  Skipped, with the reason, only where configure found no Python 3
# or that Python lacks pytest or numpy; the torch tests skip themselves
# (with their reason) where torch is absent.  In a sanitizer build the
# sanitizer runtimes the library links are preloaded into python3.
. "${srcdir:-.}/tests/tap.sh"
PY=${PYTHON:-python3}
what="the Python package's tests (python/tests)"
if [ "$PY" = : ] || ! command -v "$PY" > /dev/null 2>&1; then
  skip "$what" "configure found no Python 3 (Debian: python3; ./bootstrap installs it)"
  done_testing; exit 0
fi
for mod in numpy pytest; do
  if ! "$PY" -c "import $mod" > /dev/null 2>&1; then
    skip "$what" "$PY cannot import $mod (Debian: python3-$mod, which ./bootstrap installs; or ./configure PYTHON=/usr/bin/python3)"
    done_testing; exit 0
  fi
done
lib=${LIBGRADCHECK_SO:-$abs_top_builddir/lib/.libs/libgradcheck.so}
. "$srcdir/tests/sanitizers.sh"
preload_all
# the command, for the tests that compare with it (test_exit_status.py)
GRADCHECK_CLI=$abs_top_builddir/gradcheck/gradcheck; export GRADCHECK_CLI
GRADCHECK_LIBRARY=$lib PYTHONPATH="$srcdir/python${PYTHONPATH:+:$PYTHONPATH}" \
  PYTHONDONTWRITEBYTECODE=1 \
  "$PY" -X dev -m pytest -v -rs -p no:cacheprovider -o console_output_style=classic \
  "$srcdir/python/tests" > "$TMPD/out" 2>&1
rc=$?
if [ -n "$preload" ]; then
  awk '/^(Direct|Indirect) leak/ { s = $0; next }
       s && /libgradcheck|in gc_/ { print s; s = "" }' "$TMPD/out" > "$TMPD/leaks"
  check "under the sanitizers (preloaded: $preload), no leak through libgradcheck ($(wc -l < "$TMPD/leaks") found)" \
    test ! -s "$TMPD/leaks"
  sed 's/^/# /' "$TMPD/leaks"
fi
# "python/tests/test_x.py::test_y[a] PASSED" -> one test point each
sed -n 's/^\([^ ]*::[^ ]*\) \(PASSED\|FAILED\|ERROR\|SKIPPED\|XFAIL\|XPASS\).*/\2 \1/p' \
  "$TMPD/out" > "$TMPD/list"
while read -r st name; do
  name=${name#"$srcdir/"}
  case $st in
    PASSED|XFAIL) ok "$name" ;;
    SKIPPED) skip "$name" "$(grep -m1 "^SKIPPED.*$(basename "${name%%::*}")" "$TMPD/out" | sed 's/^SKIPPED \[[0-9]*\] //')" ;;
    *) not_ok "$name ($st)" ;;
  esac
done < "$TMPD/list"
if [ "$rc" -ne 0 ] || [ ! -s "$TMPD/list" ]; then
  not_ok "pytest exits 0 (exit $rc)"
  sed 's/^/# /' "$TMPD/out"
fi
done_testing
