#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# gpu.sh OUTDIR [SECONDS] -- what a machine with a CUDA GPU proves of the
# device path (manual: "Device arithmetic"), from a built tree: the torch
# adapter's tests on the GPU (python/tests/test_adapter.py and
# test_torch.py; their CUDA cases skip elsewhere), then
# bench/gpu_side.py's side-by-side table (torch's kernels and custom
# Functions in float32, TF32, bfloat16 and float16, correct and with bugs,
# against torch.autograd.gradcheck in float64 and FLA's rms constant)
# for at most SECONDS (default 420).  Writes OUTDIR/gpu-tests.log,
# OUTDIR/gpu-side.json and OUTDIR/gpu-side.md.  The library is
# GRADCHECK_LIBRARY, else the in-tree lib/.libs/libgradcheck.so.
set -u
out=${1:?usage: bench/gpu.sh OUTDIR [SECONDS]}
secs=${2:-420}
top=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
mkdir -p "$out"
GRADCHECK_LIBRARY=${GRADCHECK_LIBRARY:-$top/lib/.libs/libgradcheck.so}
PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}"
export GRADCHECK_LIBRARY PYTHONPATH
"$PY" -c 'import torch; assert torch.cuda.is_available(), "no CUDA device"; print("gpu.sh:", torch.cuda.get_device_name(0), "torch", torch.__version__)' \
  || { echo "gpu.sh: this machine has no CUDA device torch can use" >&2; exit 77; }
"$PY" -m pytest -q -p no:cacheprovider -rs "$top/python/tests/test_adapter.py" \
  "$top/python/tests/test_torch.py" > "$out/gpu-tests.log" 2>&1
trc=$?
tail -5 "$out/gpu-tests.log"
PYTHONUNBUFFERED=1 "$PY" "$top/bench/gpu_side.py" "$out" "$secs"
brc=$?
[ "$trc" -eq 0 ] && [ "$brc" -eq 0 ]
