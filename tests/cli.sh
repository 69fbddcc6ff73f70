#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# cli.sh -- the gradcheck command: subcommands, formats, exit codes, bad
# arguments (a one-line message naming what is accepted, exit 2).
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK

check "--help mentions the exit codes" sh -c "$G --help | grep -q 'Exit status'"
check "--version names the OpenBLAS kernel" sh -c "$G --version | grep -q 'OpenBLAS kernel'"
check "run --help works" sh -c "$G run --help | grep -q -- '--ref'"
check "list names the default model and its mutants" sh -c "$G list | grep -q 'default' && $G list | grep -q 'dw-twice'"

$G run --threads 2 > "$TMPD/out" 2>&1; rc=$?
check "run with no model checks gdn and passes (exit 0)" test "$rc" -eq 0
check "run prints the verdict" grep -q '^verdict: PASS' "$TMPD/out"
check "run prints the derivation" grep -q 'adjoint rounding' "$TMPD/out"
check "run names the default model" grep -q 'model gdn, 2052 parameters' "$TMPD/out"

for m in scratch-zeros scratch-shift-chunk scratch-shift-row pad-leak no-read-scale no-dg-cumsum dbeta-sign a-transposed; do
  $G run gdn --mutant "$m" --threads 2 > "$TMPD/m" 2>&1; rc=$?
  check "gdn --mutant $m fails (exit $rc)" test "$rc" -eq 1
  [ "$m" = no-read-scale ] && check "no-read-scale is diagnosed as K^0.5 = 2.8284" grep -q '2.8284 = K^0.5' "$TMPD/m"
done

expect_rc 0 "kda (chunked) passes" $G run kda --shape T=20 --threads 2
expect_rc 0 "kda (recurrent) passes" $G run kda --shape T=20,CHUNK=0 --threads 2
expect_rc 0 "kda forward oracle passes" $G oracle kda
expect_rc 0 "gdn forward oracle passes" $G oracle gdn
$G oracle kda --mutant chunk-no-read-scale > "$TMPD/o" 2>&1; rc=$?
check "oracle: chunk-no-read-scale fails (exit $rc)" test "$rc" -eq 1
check "oracle: the missing read scale reads 2.8284 = K^0.5" grep -q '2.8284 = K^0.5' "$TMPD/o"
expect_rc 1 "kda --mutant gate-grad-no-sigmoid fails" $G run kda --shape T=20 --mutant gate-grad-no-sigmoid --threads 2
expect_rc 2 "kda: HV not a multiple of H" $G run kda --shape H=2,HV=3
$G oracle tanh-gemm > "$TMPD/e" 2>&1; rc=$?
check "oracle of a model without outputs: exit 2 (exit $rc)" test "$rc" -eq 2
check "... naming the missing reference" grep -q 'reference forward' "$TMPD/e"

G="$GRADCHECK"
$G run tanh-gemm --format json > "$TMPD/j" 2>&1
check "json report has the documented fields" sh -c "grep -q '\"verdict\":\"pass\"' $TMPD/j && grep -q '\"worst_index\":' $TMPD/j && grep -q '\"worst_nu\":' $TMPD/j && grep -q '\"n_failed\":0' $TMPD/j"
$G run tanh-gemm --format tap --shape M=2,K=3,N=2 > "$TMPD/t" 2>&1
check "tap report has a plan of 12" sh -c "head -1 $TMPD/t | grep -qx '1..12'"
check "tap report has 12 ok lines" sh -c "test \$(grep -c '^ok ' $TMPD/t) -eq 12"
check "md report is a derivation" sh -c "$G run tanh-gemm --format md | grep -q '^# Derivation of the pass bar'"

for m in no-tanh-derivative dw-twice dx-zero dw-sign; do
  expect_rc 1 "mutant $m fails" $G run tanh-gemm --mutant "$m"
done
for r in mpfr f64; do
  expect_rc 0 "--ref $r passes" $G run tanh-gemm --ref "$r"
done
# An f32 central difference at the default step cannot see a 100% error on
# 34 of tanh-gemm's 256 directions (resolution up to 24): inconclusive, exit
# 4, never a pass (manual: "Inconclusive directions").
expect_rc 4 "--ref f32 is inconclusive" $G run tanh-gemm --ref f32
$G run tanh-gemm --ref f32 --format tap > "$TMPD/ti" 2>&1
check "tap: an inconclusive direction is a not-ok TODO point, and the verdict is named" sh -c "grep -q '^not ok .* # TODO inconclusive' $TMPD/ti && grep -qx '# verdict: inconclusive' $TMPD/ti"
$G run gdn --ref f32 --mutant no-read-scale --step 1e-6 > "$TMPD/bl" 2>&1; rc=$?
check "gdn no-read-scale at PyTorch's eps in f32 is inconclusive, not a pass (exit $rc)" test "$rc" -eq 4
check "... and the summary shows the resolution's distribution" grep -q '^resolution: median .* blind' "$TMPD/bl"
expect_rc 0 "--directions list" $G run tanh-gemm --directions 0,5,200
expect_rc 0 "--directions random" $G run tanh-gemm --directions random:5 --seed 3
expect_rc 0 "--prec 200" $G run tanh-gemm --prec 200 --directions 1,2
expect_rc 0 "gdn, random directions" $G run gdn --directions random:4
expect_rc 0 "gdn, raw form (no norm, no sigmoid), f64" $G run gdn --shape NORM=0,SIGMOID=0,T=20 --ref f64
expect_rc 4 "gdn, raw form, f32: inconclusive (764 blind directions)" $G run gdn --shape NORM=0,SIGMOID=0,T=20 --ref f32

$G run tanh-gemm --threads 1 --format json > "$TMPD/t1"
$G run tanh-gemm --threads 2 --format json > "$TMPD/t2"
check "--threads 2 gives the same report as --threads 1" cmp -s "$TMPD/t1" "$TMPD/t2"

# bad arguments: exit 2 and one line on stderr that says what is accepted
bad () {
  d=$1; shift
  $G "$@" >/dev/null 2>"$TMPD/err"; rc=$?
  if [ "$rc" -eq 2 ] && grep -q 'accepted\|needs a value\|unknown option\|unexpected' "$TMPD/err"; then
    ok "$d (exit 2)"
  else
    not_ok "$d (exit $rc: $(head -1 "$TMPD/err"))"
  fi
}
bad "unknown command" frobnicate
bad "bad --ref" run --ref f16
bad "bad --format" run --format xml
bad "bad --prec" run --prec 3
bad "bad --step" run --step -1
bad "bad --seed" run --seed x
bad "bad --threads" run --threads 0
bad "bad --directions" run --directions random:
bad "bad --false-alarm" run --false-alarm 2
bad "unknown model" run nosuchmodel
bad "unknown mutant" run --mutant nosuchbug
bad "unknown shape key" run --shape Q=1
bad "bad shape value" run --shape T=0
bad "missing option value" run --ref
bad "unknown option" run --frob
bad "two models" run tanh-gemm tanh-gemm
expect_rc 2 "no command" $G
expect_rc 2 "direction index out of range" $G run --directions 100000
expect_rc 2 "bad gdn shape" $G run gdn --shape NORM=2

done_testing
