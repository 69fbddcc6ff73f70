#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# mixed.sh -- the falsify matrix of the mixed-precision models (gdn-bf16,
# gdn-fp16) under each kernel group, with the derived bar (manual:
# "Rounding classes") and the constants kernel authors use today applied
# to the same data, side by side (bench/mixed.c says how).  Writes
# bench/results/mixed-MODEL.tsv, mixed-summary.json and mixed.md (which
# bench/run.sh's report includes).
#
#   BENCH_MIXED_SEEDS (20)        seeds per cell of the correct kernel
#   BENCH_MIXED_MUTANT_SEEDS (5)  seeds per cell of each mutant
#
# The kernel groups are the f32 gdn matrix's (bench/results/
# kernel-groups.txt: kernels computing gdn bit for bit alike run once);
# a pinned OPENBLAS_CORETYPE is never overridden: only it runs then.
set -u
MIXED=${MIXED:-bench/mixed}
out=${BENCH_OUT:-bench/results}
SEEDS=${BENCH_MIXED_SEEDS:-20}
MSEEDS=${BENCH_MIXED_MUTANT_SEEDS:-5}
if [ -n "${OPENBLAS_CORETYPE+x}" ]; then
  kernels=pinned
else
  kernels=$(awk '$1 == "gdn" && !seen[$2]++ { printf "%s%s", (n++ ? " " : ""), $3 }' "$out/kernel-groups.txt")
fi
start=$(date +%s)
for model in gdn-bf16 gdn-fp16; do
  set -- $kernels
  while [ $# -gt 0 ]; do
    for k in "$1" "${2:-}"; do
      [ -n "$k" ] || continue
      if [ "$k" = pinned ]; then
        "$MIXED" $model "$SEEDS" "$MSEEDS" > "$out/mixed-$model-$k.tmp" &
      else
        OPENBLAS_CORETYPE=$k "$MIXED" $model "$SEEDS" "$MSEEDS" > "$out/mixed-$model-$k.tmp" &
      fi
    done
    wait
    shift; [ $# -gt 0 ] && shift
  done
  cat "$out"/mixed-$model-*.tmp > "$out/mixed-$model.tsv"
  rm -f "$out"/mixed-$model-*.tmp
done
secs=$(( $(date +%s) - start ))

# per model and mutant: cells; the derived bar's pass / caught (fail or
# precision) / inconclusive; the constants' failures (catches, or for the
# correct kernel false alarms); the worst FLA ratio
cat "$out"/mixed-gdn-bf16.tsv "$out"/mixed-gdn-fp16.tsv | awk -F '\t' -v secs="$secs" -v kernels="$kernels" '
{ key = $1 "\t" $6
  if (!(key in n)) order[++m] = key
  n[key]++
  if ($7 == "pass") dp[key]++
  else if ($7 == "inconclusive") di[key]++
  else dc[key]++
  if ($9 == "fail") f5[key]++
  if ($10 == "fail") f10[key]++
  if ($11 == "fail") t[key]++
  if ($12 + 0 > rw[key]) rw[key] = $12 + 0
  kern[$2] = 1 }
END {
  printf "{\"seconds\":%d,\"kernels\":\"%s\",\"rows\":[", secs, kernels > "/dev/stderr"
  print "| model | backward | cells | derived: pass | derived: caught | derived: inconclusive | FLA rms < 5e-3: fail | FLA rms < 1e-2: fail | assert_close bf16: fail | worst rms(a-r)/rms(r) |"
  print "|---|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= m; i++) {
    k = order[i]; split(k, a, "\t")
    printf "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %.3g |\n", a[1], a[2], n[k], dp[k], dc[k], di[k], f5[k], f10[k], t[k], rw[k]
    printf "%s{\"model\":\"%s\",\"backward\":\"%s\",\"cells\":%d,\"derived_pass\":%d,\"derived_caught\":%d,\"derived_inconclusive\":%d,\"fla_5e-3_fail\":%d,\"fla_1e-2_fail\":%d,\"assert_close_fail\":%d,\"rms_worst\":%.6g}", (i > 1 ? "," : ""), a[1], a[2], n[k], dp[k], dc[k], di[k], f5[k], f10[k], t[k], rw[k] > "/dev/stderr"
  }
  printf "]}\n" > "/dev/stderr"
}' > "$out/mixed-table.md" 2> "$out/mixed-summary.json"

{
  echo "## Mixed precision: the derived bar beside the constants"
  echo
  echo "Written by \`bench/mixed.sh\` (bench/mixed.c) in ${secs} s; kernels:" $kernels "(one per gdn kernel group)."
  echo "Cells: {gdn-bf16, gdn-fp16} x kernels x 3 shapes (T = 5 with BT = 4, T = 16 with BT = 16, T = 37 with BT = 16; K = V = 4, H = 1) x {mild, strong gates} x seeds ($SEEDS for the correct kernel, $MSEEDS per mutant); every coordinate."
  echo "*derived*: the default check (tiered reference, f64 twin, the bar of the declared rounding classes, manual \"Rounding classes\"); *caught* is fail or precision."
  echo "The constants are applied to the same data, the kernel's gradient a against the check's reference r per tensor: FLA's relative RMS error rms(a - r)/rms(r) above 5e-3 or 1e-2 in any tensor, and torch.testing.assert_close's bf16 defaults |a - r| > 1e-5 + 1.6e-2 |r| at any element."
  echo "For the correct kernel (backward *none*) every failure is a false alarm; for a mutant a catch. A mutant can have no effect in a cell (pad-leak where T is a multiple of BT): there a pass is right."
  echo
  cat "$out/mixed-table.md"
  # the wider run of the correct kernels, when it was made (by hand)
  [ -f "$out/mixed-wide.md" ] && cat "$out/mixed-wide.md"
} > "$out/mixed.md"
cat "$out/mixed.md"
