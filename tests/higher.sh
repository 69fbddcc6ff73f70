#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# higher.sh -- gradcheck jvp, hvp and taylor (manual: "Beyond the
# gradient"): exit statuses on the correct models and their mutants, list,
# shards of a JVP and an HVP check merged, refusals.
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK

check "list shows tanh-gemm's checks" sh -c "$G list | grep -q 'checks: gradient (with its f64 twin), jvp, hvp, taylor'"
check "list shows gdn's tangent" sh -c "$G list | awk '/^gdn/ { g = 1 } g && /checks:/ { print; exit }' | grep -q jvp"
expect_rc 0 "jvp on tanh-gemm passes" $G jvp tanh-gemm
expect_rc 1 "jvp catches jvp-no-dx" $G jvp tanh-gemm --mutant jvp-no-dx
expect_rc 0 "run does not see jvp-no-dx (it never calls the tangent)" $G run tanh-gemm --mutant jvp-no-dx
expect_rc 0 "jvp on gdn passes" $G jvp gdn --shape T=9
expect_rc 1 "jvp catches gdn's jvp-no-dk" $G jvp gdn --shape T=9 --mutant jvp-no-dk
expect_rc 0 "hvp on tanh-gemm passes" $G hvp tanh-gemm --directions random:2
expect_rc 1 "hvp catches hvp-no-second-order" $G hvp tanh-gemm --directions random:2 --mutant hvp-no-second-order
expect_rc 1 "hvp catches hvp-transposed" $G hvp tanh-gemm --directions 3,200 --mutant hvp-transposed
expect_rc 0 "taylor on tanh-gemm passes" $G taylor tanh-gemm
# the worse of its two rate tests' exit statuses (manual: "Exit status")
expect_rc 1 "taylor sees hvp-transposed (the HVP's rate)" $G taylor tanh-gemm --mutant hvp-transposed
expect_rc 5 "taylor of a model whose forward gives NaN exits 5, as run" $G taylor --plugin "$PLUGIN_LIAR" --ref f64 --shape nan
expect_rc 1 "taylor sees dw-twice" $G taylor tanh-gemm --mutant dw-twice
# one direction: a --directions naming more would be used in part only
for d in all 3,5 random:2 random-per-block:1 screen:2; do
  expect_rc 2 "taylor refuses --directions $d" $G taylor tanh-gemm --directions $d
done
check "taylor's refusal says what it takes" sh -c "$G taylor tanh-gemm --directions all 2>&1 | grep -q 'along one direction: --directions I'"
expect_rc 0 "taylor along coordinate 3" $G taylor tanh-gemm --directions 3
expect_rc 0 "taylor along random:1" $G taylor tanh-gemm --directions random:1
expect_rc 2 "hvp on a model without one" $G hvp kda
expect_rc 2 "hvp refuses a shard past its count" $G hvp tanh-gemm --shard 2/2
$G hvp tanh-gemm --directions random:1 --format json > "$TMPD/h.json"
check "hvp's JSON report has kind hvp" grep -q '"kind": *"hvp"' "$TMPD/h.json"
$G taylor tanh-gemm --format json > "$TMPD/t.json"
check "taylor's JSON report has its rates" grep -q '"rate1"' "$TMPD/t.json"
$G taylor tanh-gemm --format tap > "$TMPD/t.tap"
check "taylor's TAP has two points" grep -q '^1\.\.2$' "$TMPD/t.tap"
# shards of an HVP check (by vectors), merged: the unsharded JSON report
$G hvp tanh-gemm --directions 3,9,200 --mutant hvp-transposed --format json > "$TMPD/hw.json"
$G hvp tanh-gemm --directions 3,9,200 --mutant hvp-transposed --shard 0/2 --format json > "$TMPD/h0.json"
$G hvp tanh-gemm --directions 3,9,200 --mutant hvp-transposed --shard 1/2 --format json > "$TMPD/h1.json"
$G merge --format json "$TMPD/h1.json" "$TMPD/h0.json" > "$TMPD/hm.json"; rc=$?
check "merge of two HVP shards exits 1, the mutant's (exit $rc)" test "$rc" -eq 1
check "the merged HVP report is the unsharded one" cmp -s "$TMPD/hw.json" "$TMPD/hm.json"
expect_rc 2 "an HVP shard does not merge alone" $G merge "$TMPD/h0.json"
# shards of a JVP check, merged: the unsharded JSON report
$G jvp tanh-gemm --format json > "$TMPD/whole.json"
$G jvp tanh-gemm --shard 0/2 --format json > "$TMPD/s0.json"
$G jvp tanh-gemm --shard 1/2 --format json > "$TMPD/s1.json"
$G merge --format json "$TMPD/s0.json" "$TMPD/s1.json" > "$TMPD/merged.json"; rc=$?
check "merge of two JVP shards exits 0 (exit $rc)" test "$rc" -eq 0
check "the merged JVP report is the unsharded one" cmp -s "$TMPD/whole.json" "$TMPD/merged.json"
$G run tanh-gemm --shard 1/2 --format json > "$TMPD/g1.json"
expect_rc 2 "a JVP shard does not merge with a gradient shard" $G merge "$TMPD/s0.json" "$TMPD/g1.json"
done_testing
