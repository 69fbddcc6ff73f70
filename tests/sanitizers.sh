# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# sanitizers.sh -- sourced by the binding tests (python.sh, pip.sh,
# rust.sh) with $lib the library under test.  In a sanitizer build (.ci/run
# stage 3) the library needs the sanitizer runtimes first in the process,
# which python3 and the Rust test binaries are not linked with: $preload
# names them (as ldd lists them; empty in a plain build), and
# preload_all exports them into every process the script starts (python3;
# rust.sh preloads them into its test binaries alone, through cargo's
# runner).  LeakSanitizer then runs and reports without failing the
# process: the scripts fail only for a leak whose stack passes through
# libgradcheck (CPython, torch and Rust's runtime keep their own at exit).
preload=
if command -v ldd > /dev/null 2>&1; then
  preload=$(ldd "$lib" 2>/dev/null \
    | sed -n 's/^[[:space:]]*lib[a-z]*san\.so[.0-9]* => \([^ ]*\) .*/\1/p' | tr '\n' ' ')
fi
san_lsan_options="exitcode=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
preload_all () {
  if [ -n "$preload" ]; then
    LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}"; export LD_PRELOAD
    LSAN_OPTIONS=$san_lsan_options; export LSAN_OPTIONS
  fi
}
