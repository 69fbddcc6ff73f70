#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# python-side.sh -- make bench's Python side-by-side table (make bench
# BENCH_ONLY=python runs only it): bench/python_side.py with the package
# from the source tree and the library from the build tree, written to
# bench/results/python-side.{json,md}, which report.md includes.
#   BENCH_PYTHON       the interpreter (else the first python3 on PATH or
#                      /usr/bin/python3 that imports torch and numpy)
#   BENCH_PYTHON_REPS  runs per cell (3), interleaved; medians reported
#   BENCH_OUT          the results directory (bench/results)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${BENCH_OUT:-bench/results}
mkdir -p "$out"
PY=
for p in ${BENCH_PYTHON:-} python3 /usr/bin/python3; do
  if "$p" -c 'import torch, numpy' >/dev/null 2>&1; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
  echo "python-side: skipped: no python3 here imports torch and numpy (Debian: python3-torch; or set BENCH_PYTHON)"
  exit 0
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
GRADCHECK_LIBRARY=${GRADCHECK_LIBRARY:-$PWD/lib/.libs/libgradcheck.so} \
PYTHONPATH="$here/../python${PYTHONPATH:+:$PYTHONPATH}" \
  "$PY" "$here/python_side.py" "$out" "${BENCH_PYTHON_REPS:-3}"
