#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# mixed-wide.sh -- the wider run of the correct mixed-precision kernels
# (gdn-bf16, gdn-fp16): bench/mixed MODEL SEEDS 0 under each kernel group
# bench/mixed.sh runs (a pinned OPENBLAS_CORETYPE alone), 6 x SEEDS cells
# per model and kernel.  Writes bench/results/mixed-wide-MODEL.tsv and
# mixed-wide.md (which bench/mixed.sh's mixed.md includes).  Not part of
# make bench (about 20 minutes on two cores): run by hand.
#
#   BENCH_MIXED_WIDE_SEEDS (100)  seeds per shape and gate
set -u
MIXED=${MIXED:-bench/mixed}
out=${BENCH_OUT:-bench/results}
SEEDS=${BENCH_MIXED_WIDE_SEEDS:-100}
if [ -n "${OPENBLAS_CORETYPE+x}" ]; then
  kernels=pinned
else
  kernels=$(awk '$1 == "gdn" && !seen[$2]++ { printf "%s%s", (n++ ? " " : ""), $3 }' "$out/kernel-groups.txt")
fi
start=$(date +%s)
for model in gdn-bf16 gdn-fp16; do
  for k in $kernels; do
    if [ "$k" = pinned ]; then
      "$MIXED" $model "$SEEDS" 0 > "$out/mixed-wide-$model-$k.tmp" &
    else
      OPENBLAS_CORETYPE=$k "$MIXED" $model "$SEEDS" 0 > "$out/mixed-wide-$model-$k.tmp" &
    fi
  done
  wait
  cat "$out"/mixed-wide-$model-*.tmp > "$out/mixed-wide-$model.tsv"
  rm -f "$out"/mixed-wide-$model-*.tmp
done
secs=$(( $(date +%s) - start ))
# per model and kernel: cells, the derived bar's pass / caught (a false
# alarm: fail or precision) / inconclusive, the worst arithmetic ratio;
# the constants' false alarms
cat "$out"/mixed-wide-gdn-bf16.tsv "$out"/mixed-wide-gdn-fp16.tsv | awk -F '\t' -v secs="$secs" -v kernels="$kernels" -v seeds="$SEEDS" '
{ key = $1 "\t" $2
  if (!(key in n)) order[++m] = key
  n[key]++
  if ($7 == "pass") dp[key]++
  else if ($7 == "inconclusive") di[key]++
  else { dc[key]++; alarms[key] = alarms[key] sprintf(" %s (shape %d, gate %d, seed %d, ratio %.3g);", $7, $3, $4, $5, $8) }
  if ($7 != "inconclusive" && $8 + 0 > wr[key]) wr[key] = $8 + 0
  if ($7 == "inconclusive") incl[key] = incl[key] sprintf(" shape %d, gate %d, seed %d (ratio %.3g);", $3, $4, $5, $8)
  if ($9 == "fail") f5[key]++
  if ($10 == "fail") f10[key]++
  if ($11 == "fail") t[key]++ }
END {
  print "### The wider run of the correct kernels"
  print ""
  printf "Written by `bench/mixed-wide.sh` in %d s (`bench/mixed MODEL %d 0` under each kernel: %s; 6 x %d cells per model and kernel; `mixed-wide-*.tsv`). Shapes: 0 is T = 5, BT = 4; 1 is T = 16, BT = 16; 2 is T = 37, BT = 16. Every verdict other than pass or inconclusive is a false alarm; the worst arithmetic ratio is over the cells not inconclusive.\n\n", secs, seeds, kernels, seeds
  print "| model | kernel | cells | derived: pass | derived: false alarm | derived: inconclusive | worst arithmetic ratio (judged cells) | FLA rms < 5e-3: fail | FLA rms < 1e-2: fail | assert_close bf16: fail |"
  print "|---|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= m; i++) {
    k = order[i]; split(k, a, "\t")
    printf "| %s | %s | %d | %d | %d | %d | %.3g | %d | %d | %d |\n", a[1], a[2], n[k], dp[k], dc[k], di[k], wr[k], f5[k], f10[k], t[k]
  }
  print ""
  for (i = 1; i <= m; i++) {
    k = order[i]; split(k, a, "\t")
    if (alarms[k] != "") printf "- %s under %s, false alarms:%s\n", a[1], a[2], alarms[k]
    if (incl[k] != "") printf "- %s under %s, inconclusive:%s\n", a[1], a[2], incl[k]
  }
}' > "$out/mixed-wide.md"
cat "$out/mixed-wide.md"
