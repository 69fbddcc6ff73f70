#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# op-corpus.sh -- make bench BENCH_ONLY=ops: torch's operator library
# checked with no declarations beside torch's float64 gradcheck
# (bench/op_corpus.py, whose docstring says what and why), with the
# package from the source tree and the library from the build tree,
# written to bench/results/op-corpus[-KIND].{json,md}.  Not part of the
# whole bench (tens of minutes).
#   BENCH_PYTHON       the interpreter (else the first python3 on PATH or
#                      /usr/bin/python3 that imports torch and numpy)
#   BENCH_OPS_ARGS     op_corpus.py's options, e.g. "--limit 120 --inject
#                      scale3" or "--ops sigmoid,softmax"
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
  echo "op-corpus: skipped: no python3 here imports torch and numpy (Debian: python3-torch; or set BENCH_PYTHON)"
  exit 0
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
GRADCHECK_LIBRARY=${GRADCHECK_LIBRARY:-$PWD/lib/.libs/libgradcheck.so} \
PYTHONPATH="$here/../python${PYTHONPATH:+:$PYTHONPATH}" \
  "$PY" -W ignore "$here/op_corpus.py" --out "$out" ${BENCH_OPS_ARGS:-}
