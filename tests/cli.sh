#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# cli.sh -- the gradcheck command: subcommands, formats, exit codes, bad
# arguments (a one-line message naming what is accepted, exit 2).
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
# bad arguments: exit 2 and one line on stderr that says what is accepted
bad () {
  d=$1; shift
  $G "$@" >/dev/null 2>"$TMPD/err"; rc=$?
  if [ "$rc" -eq 2 ] && grep -q 'accepted\|requires an argument\|unrecognized option\|unexpected\|does not apply\|ambiguous\|allow an argument' "$TMPD/err"; then
    ok "$d (exit 2)"
  else
    not_ok "$d (exit $rc: $(head -1 "$TMPD/err"))"
  fi
}

check "--help mentions the exit codes" sh -c "$G --help | grep -q 'Exit status'"
check "--version names the OpenBLAS kernel" sh -c "$G --version | grep -q 'OpenBLAS kernel'"

# GNU conventions: --version, --help's last lines (GNU Coding Standards,
# "--version" and "--help").
$G --version > "$TMPD/v"
check "--version: first line 'gradcheck (gradcheck) VERSION'" sh -c "head -1 '$TMPD/v' | grep -qx 'gradcheck (gradcheck) [0-9][0-9.]*'"
check "--version: copyright line" grep -qx 'Copyright (C) 2026 The gradcheck authors' "$TMPD/v"
check "--version: licence line with its URL" grep -q '^License LGPL-3.0-or-later: .*<https://gnu.org/licenses/lgpl.html>' "$TMPD/v"
check "--version: free software, no warranty" sh -c "grep -qx 'This is free software: you are free to change and redistribute it.' '$TMPD/v' && grep -qx 'There is NO WARRANTY, to the extent permitted by law.' '$TMPD/v'"
check "--version: the kernel on a line of its own, after the licence" sh -c "tail -1 '$TMPD/v' | grep -q '(OpenBLAS kernel [A-Za-z0-9]*)\$'"
for c in "" list run merge steps; do
  $G $c --help > "$TMPD/h"
  check "gradcheck $c --help ends with the bug-report address and home page" \
    sh -c "tail -2 '$TMPD/h' | head -1 | grep -qx 'Report bugs to: https://github.com/gradcheck/gradcheck/issues' && tail -1 '$TMPD/h' | grep -qx 'gradcheck home page: <https://github.com/gradcheck/gradcheck>'"
done
check "run --help lists --ref but not --index" sh -c "$G run --help | grep -q -- '--ref ' && ! $G run --help | grep -q -- '--index'"
check "merge --help lists --format and nothing that checks a model" sh -c "$G merge --help | grep -q -- '--format ' && ! $G merge --help | grep -q -- '--shape'"

# Write errors: every subcommand checks standard output when it ends.
full () {   # full DESCRIPTION ARGS...: stdout on /dev/full
  d=$1; shift
  $G "$@" > /dev/full 2> "$TMPD/err"; rc=$?
  if [ "$rc" -eq 3 ] && grep -qx 'gradcheck: write error: No space left on device' "$TMPD/err"; then
    ok "$d > /dev/full: write error reported, exit 3"
  else
    not_ok "$d > /dev/full: exit $rc: $(head -1 "$TMPD/err")"
  fi
}
if [ -w /dev/full ]; then
  full "--help" --help
  full "--version" --version
  full "list" list
  full "list --help" list --help
  full "run" run tanh-gemm
  full "run (a large JSON report)" run tanh-gemm --format json
  full "run of a failing check" run tanh-gemm --mutant dw-twice
  full "run --format tap" run tanh-gemm --format tap
  full "oracle" oracle kda
  full "explain" explain tanh-gemm --index 3
  full "steps" steps tanh-gemm --index 3 --output "$TMPD/full.svg"
  $G run tanh-gemm --format json > "$TMPD/whole.json"
  full "merge" merge "$TMPD/whole.json"
  $G sweep tanh-gemm --directions random:2 > /dev/full 2> "$TMPD/err"; rc=$?
  check "sweep > /dev/full: a write error, exit 3 (exit $rc)" sh -c "test $rc -eq 3 && grep -q '^gradcheck: write error' '$TMPD/err'"
else
  skip "write errors" "no /dev/full"
fi
$G run --frob >&- 2> "$TMPD/err"; rc=$?
check "a closed stdout with nothing written is no write error (exit $rc)" sh -c "test $rc -eq 2 && ! grep -q 'write error' '$TMPD/err'"
$G list >&- 2> "$TMPD/err"; rc=$?
check "list to a closed stdout: a write error, exit 3 (exit $rc)" sh -c "test $rc -eq 3 && grep -q '^gradcheck: write error: Bad file descriptor' '$TMPD/err'"

# getopt_long's own messages reach the user, with the hint to --help.
msg () {   # msg DESCRIPTION EXPECTED-MESSAGE ARGS...
  d=$1; want=$2; shift 2
  $G "$@" > /dev/null 2> "$TMPD/err"; rc=$?
  if [ "$rc" -eq 2 ] && head -1 "$TMPD/err" | grep -qF -- "$want" \
     && grep -qx "Try 'gradcheck --help' for more information." "$TMPD/err"; then
    ok "$d (exit 2)"
  else
    not_ok "$d (exit $rc: $(head -1 "$TMPD/err"))"
  fi
}
msg "an ambiguous abbreviation" "gradcheck: option '--s' is ambiguous; possibilities: '--shape' '--seed' '--step' '--shard'" run --s 3
msg "an argument to --help" "gradcheck: option '--help' doesn't allow an argument" --help=x
msg "an argument to run --help" "gradcheck: option '--help' doesn't allow an argument" run --help=x
msg "an unknown option" "gradcheck: unrecognized option '--frob'" run --frob
msg "an unknown short option" "gradcheck: invalid option -- 'x'" run -x
msg "a missing value" "gradcheck: option '--ref' requires an argument" run --ref
msg "an unknown top-level option" "gradcheck: unrecognized option '--frob'" --frob
expect_rc 0 "an unambiguous abbreviation (--mut)" $G run tanh-gemm --mut none --directions 1
expect_rc 0 "options after the model" $G run tanh-gemm --directions 1,2
expect_rc 0 "-- ends the options" $G run --directions 1 -- tanh-gemm

# Options that do not apply to a subcommand are refused, not ignored.
refused () {   # refused ARGS...
  $G "$@" > /dev/null 2> "$TMPD/err"; rc=$?
  if [ "$rc" -eq 2 ] && grep -q "does not apply to $1; it applies to: " "$TMPD/err"; then
    ok "$* is refused (exit 2)"
  else
    not_ok "$* is refused (exit $rc: $(head -1 "$TMPD/err"))"
  fi
}
refused run --index 3
refused run tanh-gemm --output x.svg
refused explain tanh-gemm --index 3 --directions 5
refused explain tanh-gemm --index 3 --threads 2
refused explain tanh-gemm --index 3 --shard 0/2
refused oracle kda --ref f32
refused oracle kda --step 0.1
refused oracle kda --directions 3
refused steps tanh-gemm --index 3 --format json
refused steps tanh-gemm --index 3 --false-alarm 0.1
refused steps tanh-gemm --index 3 --ref f32
refused sweep tanh-gemm --dump "$TMPD/d"
refused merge --shape M=2 "$TMPD/whole.json"
refused merge --index 3 "$TMPD/whole.json"
refused list --format json
bad "empty --mutant" run tanh-gemm --mutant ''
bad "empty --shape" run tanh-gemm --shape ''
bad "empty --plugin" run --plugin ''
bad "empty --output" steps tanh-gemm --index 1 --output ''
bad "empty --dump" run tanh-gemm --dump ''
bad "a shape key given twice" run tanh-gemm --shape K=8,K=9
bad "a shape key given twice (gdn)" run gdn --shape T=5,BT=4,T=6
bad "list with an argument" list gdn
check "run --help works" sh -c "$G run --help | grep -q -- '--ref'"
check "list names the default model and its mutants" sh -c "$G list | grep -q 'default' && $G list | grep -q 'dw-twice'"

$G run --threads 2 > "$TMPD/out" 2>&1; rc=$?
check "run with no model checks gdn and passes (exit 0)" test "$rc" -eq 0
check "run prints the verdict" grep -q '^verdict: PASS' "$TMPD/out"
check "run prints the derivation" grep -q 'adjoint rounding' "$TMPD/out"
check "run names the default model" grep -q 'model gdn, 2052 parameters' "$TMPD/out"
check "run names the OpenBLAS kernel in the report's first line, and on no line of its own" \
  sh -c "head -1 '$TMPD/out' | grep -q '^gradcheck .*, OpenBLAS kernel [A-Za-z0-9]*\$' && ! grep -q '^OpenBLAS kernel' '$TMPD/out'"
# README.md's sample is this output, under the kernel it names.
sed -n '/^\$ \.\/gradcheck\/gradcheck run$/,/^\$ /p' "${srcdir:-.}/README.md" | sed '1d;$d' > "$TMPD/readme"
readme_kernel=$(head -1 "$TMPD/readme" | sed -n 's/.*OpenBLAS kernel //p')
if [ -n "$readme_kernel" ] && head -1 "$TMPD/out" | grep -q "OpenBLAS kernel $readme_kernel\$"; then
  check "README.md's sample output is what gradcheck run prints (kernel $readme_kernel)" cmp -s "$TMPD/readme" "$TMPD/out"
else
  skip "README.md's sample output" "it shows kernel '$readme_kernel'; this run: $(head -1 "$TMPD/out" | sed 's/.*, //')"
fi

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
check "... naming what is missing (its outputs)" grep -q 'declares no outputs' "$TMPD/e"

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
# the twin against the f32 reference is judged at f32's resolution, and
# the report says so and what would judge it finer (a new user's trial
# gave a twin and no f64 forward); with the f64 reference it says nothing
$G run tanh-gemm --ref f32 > "$TMPD/tf" 2>&1
check "a twin under the f32 reference: the report says its resolution is f32's" grep -q "^  note: the reference is the f32 forward's central differences, so the twin's algorithm is judged at f32's resolution (median 0\.[0-9]*); with an f64 forward" "$TMPD/tf"
$G run tanh-gemm --ref f64 > "$TMPD/tf" 2>&1
check "... and under the f64 reference it does not" sh -c "! grep -q 'judged at f32.s resolution' $TMPD/tf"
expect_rc 0 "--directions list" $G run tanh-gemm --directions 0,5,200
expect_rc 0 "--directions random" $G run tanh-gemm --directions random:5 --seed 3
expect_rc 0 "--prec 200" $G run tanh-gemm --prec 200 --directions 1,2
expect_rc 0 "gdn, random directions" $G run gdn --directions random:4
expect_rc 0 "gdn, raw form (no norm, no sigmoid), f64" $G run gdn --shape NORM=0,SIGMOID=0,T=20 --ref f64
expect_rc 4 "gdn, raw form, f32: inconclusive (764 blind directions)" $G run gdn --shape NORM=0,SIGMOID=0,T=20 --ref f32

$G run tanh-gemm --threads 1 --format json > "$TMPD/t1"
$G run tanh-gemm --threads 2 --format json > "$TMPD/t2"
check "--threads 2 gives the same report as --threads 1" cmp -s "$TMPD/t1" "$TMPD/t2"

# bad arguments: exit 2 and one line on stderr that says what is accepted (bad, above)
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

# a format a subcommand cannot write is refused, never ignored
expect_rc 2 "sweep --format md is refused (sweep writes text or json)" $G sweep tanh-gemm --format md
expect_rc 2 "explain --format tap is refused" $G explain tanh-gemm --index 3 --format tap
# an index out of range says which indices are accepted
$G run tanh-gemm --directions 999 > /dev/null 2> "$TMPD/err"; rc=$?
check "a direction index out of range names the accepted range (exit $rc)" \
  sh -c "test $rc -eq 2 && grep -q '0 to 255' '$TMPD/err'"
# the oracle on a model without outputs says that, not "no reference"
$G oracle tanh-gemm > "$TMPD/out" 2> "$TMPD/err"; rc=$?
check "oracle on a model without outputs says it has none (exit $rc)" \
  sh -c "test $rc -eq 2 && grep -q 'declares no outputs' '$TMPD/err' && ! grep -q '0 bits' '$TMPD/out'"
# Progress on a non-terminal stderr (manual: "Invoking gradcheck"):
# nothing before GRADCHECK_PROGRESS_INTERVAL seconds, then a line at most
# every interval; --quiet none.  The interval 0 makes it independent of
# timing; the default (5 s) prints nothing for a check this short.
GRADCHECK_PROGRESS_INTERVAL=0 $G run tanh-gemm --shape M=2,K=2,N=2 \
  > /dev/null 2> "$TMPD/err"; rc=$?
check "progress on a non-terminal stderr: one line per update, a count of N (exit $rc)" \
  sh -c "test $rc -eq 0 && grep -q '^gradcheck: 8/8 directions in [0-9]* s\$' '$TMPD/err' && test \$(grep -c '^gradcheck: [0-9]*/8 directions' '$TMPD/err') -ge 2 && ! grep -q \"\$(printf '\\r')\" '$TMPD/err'"
GRADCHECK_PROGRESS_INTERVAL=0 $G run tanh-gemm --shape M=2,K=2,N=2 --quiet \
  > /dev/null 2> "$TMPD/err"; rc=$?
check "--quiet: no progress (exit $rc)" sh -c "test $rc -eq 0 && ! test -s '$TMPD/err'"
$G run tanh-gemm --shape M=2,K=2,N=2 > /dev/null 2> "$TMPD/err"; rc=$?
check "a check shorter than the default interval prints no progress (exit $rc)" \
  sh -c "test $rc -eq 0 && ! test -s '$TMPD/err'"
bad "--quiet takes no argument" run tanh-gemm --quiet=yes
check "run --help lists --quiet" sh -c "$G run --help | grep -q -- '--quiet '"
done_testing
