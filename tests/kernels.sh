#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# kernels.sh -- checks under every OpenBLAS kernel this CPU runs, each in its
# own process (OPENBLAS_CORETYPE is read when the library loads): the
# tanh-gemm example in MPFR and f32 modes, and the gdn and kda suites.
# A kernel that dies on a signal (SIGILL on a CPU without its instructions)
# is skipped, not failed.  Verdicts must be identical.  When the environment
# pins a kernel, only that kernel runs and the others are reported skipped.
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
CHECK_GDN=${CHECK_GDN:-tests/check_gdn}
CHECK_KDA=${CHECK_KDA:-tests/check_kda}
ARGS="run tanh-gemm --shape M=8,K=64,N=8 --format json --directions random:16 --seed 5"

one () {   # one CORETYPE NAME
  for ref in mpfr f32; do
    with_kernel "$1" $G $ARGS --ref $ref > "$TMPD/out" 2>/dev/null; rc=$?
    if [ "$rc" -ge 128 ]; then skip "kernel $2, tanh-gemm $ref" "the process died (signal $((rc - 128)))"; continue; fi
    verdict=$(grep -o '"verdict":"[a-z-]*"' "$TMPD/out" | head -1 | cut -d'"' -f4)
    nu=$(grep -o '"worst_nu":[^,]*' "$TMPD/out" | head -1 | cut -d: -f2)
    check "kernel $2, tanh-gemm $ref reference: verdict $verdict (worst nu $nu)" test "$verdict" = pass
  done
  # The model suites under this kernel: each asserts every verdict itself.
  for suite in "$CHECK_GDN" "$CHECK_KDA"; do
    name=$(basename "$suite" | sed 's/^check_//')
    CK_TAP_LOG_FILE_NAME=/dev/null CK_VERBOSITY=silent with_kernel "$1" "$suite" > "$TMPD/suite" 2>&1; rc=$?
    if [ "$rc" -ge 128 ]; then skip "kernel $2, $name suite" "the process died (signal $((rc - 128)))"
    else check "kernel $2, $name suite (correct model passes, every mutant caught)" test "$rc" -eq 0
    fi
  done
}
each_kernel one
done_testing
