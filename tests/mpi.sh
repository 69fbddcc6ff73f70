#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# mpi.sh -- mpirun -n 2 gradcheck run: the directions spread over 2 ranks,
# one report, identical to the single-process one.  Skipped when the command
# was built without MPI or mpirun is missing.
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
if [ -z "$MPIRUN" ] || ! command -v "$MPIRUN" > /dev/null 2>&1; then
  skip "mpirun -n 2 gradcheck run" "built without MPI (./configure --with-mpi, Debian libopenmpi-dev openmpi-bin)"
  done_testing
  exit 0
fi
# OpenMPI refuses to run as root unless told that it is meant.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI="$MPIRUN -n 2 --oversubscribe"
$G run tanh-gemm --format json > "$TMPD/one.json"
$MPI $G run tanh-gemm --format json > "$TMPD/two.json" 2> "$TMPD/err"; rc=$?
check "mpirun -n 2 gradcheck run exits 0 (exit $rc)" test "$rc" -eq 0
check "2 ranks give the single-process report, byte for byte" cmp -s "$TMPD/one.json" "$TMPD/two.json"
$G run gdn --directions random:8 --format json > "$TMPD/g1.json"
$MPI $G run gdn --directions random:8 --format json > "$TMPD/g2.json" 2>/dev/null
check "gdn: 2 ranks give the single-process report" cmp -s "$TMPD/g1.json" "$TMPD/g2.json"
$MPI $G run tanh-gemm --mutant dw-twice > "$TMPD/m" 2>/dev/null; rc=$?
check "a failing check under mpirun exits 1 (exit $rc)" test "$rc" -eq 1
check "... with one report" test "$(grep -c '^verdict:' "$TMPD/m")" -eq 1
done_testing
