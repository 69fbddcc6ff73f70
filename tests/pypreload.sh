# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# pypreload.sh -- sourced by the Python tests (python.sh, pip.sh) with
# $lib the library under test: in a sanitizer build (.ci/run stage 3) the
# library needs the sanitizer runtimes first in the process, which
# python3 is not linked with; they are preloaded ($preload names them).
# LeakSanitizer runs, and reports without failing the process: the
# scripts fail only for a leak whose stack passes through libgradcheck
# (CPython and torch keep their own at exit).
preload=
if command -v ldd > /dev/null 2>&1; then
  preload=$(ldd "$lib" 2>/dev/null \
    | sed -n 's/^[[:space:]]*lib[a-z]*san\.so[.0-9]* => \([^ ]*\) .*/\1/p' | tr '\n' ' ')
fi
if [ -n "$preload" ]; then
  LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}"; export LD_PRELOAD
  LSAN_OPTIONS="exitcode=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"; export LSAN_OPTIONS
fi
