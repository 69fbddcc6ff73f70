#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# commands.sh -- explain, sweep, steps, merge with shards, --dump, plugins
# (the example round trip, and plugins that lie).
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
B=${TESTBIN:-tests}

# explain: the derivation of one direction as Markdown
$G explain tanh-gemm --index 19 > "$TMPD/ex" 2>&1; rc=$?
check "explain exits 0 (exit $rc)" test "$rc" -eq 0
check "explain prints the Markdown derivation of W[1,3]" grep -q '^# Derivation of the pass bar: W\[1,3\] (parameter 19)' "$TMPD/ex"
check "explain lists the three terms and the twin's term" test "$(grep -c '^## ' "$TMPD/ex")" -eq 4
check "explain derives the twin's adjoint term (manual: The f64 twin)" grep -q '^## twin adjoint rounding' "$TMPD/ex"
check "explain names the inputs" grep -q '| `lambda` |' "$TMPD/ex"
expect_rc 2 "explain without --index" $G explain tanh-gemm
expect_rc 2 "explain with an index out of range" $G explain tanh-gemm --index 100000
$G explain tanh-gemm --index 3 --format json > "$TMPD/exj"
check "explain --format json is JSON with terms" grep -q '"terms":\[{"name":"truncation"' "$TMPD/exj"
# explain derives the bar run derived for that coordinate: lambda shares
# the false-alarm rate among all n directions, as in run
$G run tanh-gemm --format json > "$TMPD/runj"
rb=$(sed -n 's/.*"results":\[//p' "$TMPD/runj" | tr '{' '\n' | grep '"index":3,' | sed -n 's/.*"bar":\([^,]*\),.*/\1/p')
eb=$(sed -n 's/.*"bar":\([^,]*\),.*/\1/p' "$TMPD/exj" | head -1)
check "explain's bar is run's for the same coordinate ($eb, $rb)" test -n "$rb" -a "$eb" = "$rb"
$G explain tanh-gemm --index 100000 > "$TMPD/exo" 2> "$TMPD/exe"
check "explain with an index out of range writes nothing on stdout and says why" \
  sh -c "test ! -s '$TMPD/exo' && grep -q 'out of range: the model has 256 parameters' '$TMPD/exe'"
$G explain tanh-gemm --index 3 --format text > "$TMPD/ext"
check "explain --format text starts with the direction and its verdict" \
  sh -c "head -1 '$TMPD/ext' | grep -q '^direction: W\[0,3\] (parameter 3), pass\$'"
check "explain --format text gives nu and the deciding reference" \
  sh -c "grep -q 'nu_32 = |diff| / bar = ' '$TMPD/ext' && grep -q '^  decided by   ' '$TMPD/ext'"
check "explain --format text ends with the derivation" grep -q '^bar = truncation + reference rounding' "$TMPD/ext"

# shards: the merged report equals the unsharded one, field for field
$G run tanh-gemm --format json > "$TMPD/whole.json"
for i in 0 1 2; do $G run tanh-gemm --shard $i/3 --format json > "$TMPD/s$i.json"; done
$G merge --format json "$TMPD/s2.json" "$TMPD/s0.json" "$TMPD/s1.json" > "$TMPD/merged.json"; rc=$?
check "merge of 3 shards exits 0 (exit $rc)" test "$rc" -eq 0
check "shard + merge equals the unsharded JSON report" cmp -s "$TMPD/whole.json" "$TMPD/merged.json"
# every report the command writes reads back (gradcheck merge reads it
# with gc_result_parse_json): a refusal's says the refusal again, exit 2,
# never "not a gradcheck JSON report"; the oracle's reads back too
readback () {   # readback WANT_RC DESCRIPTION ARGS...
  want=$1; d=$2; shift 2
  $G "$@" --format json --quiet > "$TMPD/rb.json" 2> /dev/null
  $G merge "$TMPD/rb.json" > /dev/null 2> "$TMPD/rb.err"; rc=$?
  if [ "$rc" -eq "$want" ] && ! grep -q 'not a gradcheck JSON report' "$TMPD/rb.err"; then
    ok "$d: its JSON report reads back (merge exits $rc)"
  else
    not_ok "$d: its JSON report reads back (merge exit $rc, want $want: $(head -1 "$TMPD/rb.err"))"
  fi
}
readback 2 "run --directions 99999 (the tiered reference, refused)" run tanh-gemm --directions 99999
readback 2 "jvp --directions 99999 (refused)" jvp tanh-gemm --directions 99999
readback 2 "oracle of a model without outputs (refused)" oracle tanh-gemm
readback 0 "oracle kda" oracle kda --shape T=3,H=1,HV=1,K=2,V=2,BT=2
readback 0 "jvp along random directions in MPFR" jvp tanh-gemm --shape M=2,K=2,N=2 --ref mpfr --directions random:2
# the call counters (GRADCHECK_PROFILE; manual: "Where the time goes"):
# the merged report's counts are the sums of its shards'
for i in 0 1 2; do GRADCHECK_PROFILE=1 $G run tanh-gemm --shard $i/3 --format json > "$TMPD/ps$i.json"; done
GRADCHECK_PROFILE=1 $G merge --format json "$TMPD/ps0.json" "$TMPD/ps1.json" "$TMPD/ps2.json" > "$TMPD/pmerged.json"
# calls KIND FILE: the count of KIND in FILE's "calls" object
calls () { sed -n 's/.*"calls":{\([^}]*\)}.*/\1/p' "$2" | tr ',' '\n' | sed -n "s/^\"$1\":\([0-9]*\)\$/\1/p"; }
for k in f32 f64 mpfr backward; do
  sum=$(( $(calls $k "$TMPD/ps0.json") + $(calls $k "$TMPD/ps1.json") + $(calls $k "$TMPD/ps2.json") ))
  got=$(calls $k "$TMPD/pmerged.json")
  check "merge sums the shards' $k calls (merged $got, shards $sum)" test -n "$got" -a "$got" = "$sum" -a "$sum" -gt 0
done
$G run tanh-gemm --mutant dw-twice --format json > "$TMPD/wm.json"
for i in 0 1; do $G run tanh-gemm --mutant dw-twice --shard $i/2 --format json > "$TMPD/m$i.json"; done
$G merge --format json "$TMPD/m0.json" "$TMPD/m1.json" > "$TMPD/mm.json"; rc=$?
check "merge of a failing check exits 1 (exit $rc)" test "$rc" -eq 1
check "merged failing report equals the unsharded one (diagnosis included)" cmp -s "$TMPD/wm.json" "$TMPD/mm.json"
# the tiered reference (the default): the merged report keeps which
# reference decided each direction, both of them here (manual: "The tiered
# reference"): f64 decides all of tanh-gemm dw-twice's failures ("Failures
# f64 decides"), gdn's a-transposed sends a few to MPFR
for i in 0 1; do $G run gdn --mutant a-transposed --quiet --shard $i/2 --format json > "$TMPD/ga$i.json"; done
$G merge --format json "$TMPD/ga0.json" "$TMPD/ga1.json" > "$TMPD/gam.json"
check "the merged tiered report has directions decided by f64 and by mpfr" \
  sh -c "grep -q '\"decided_by\":\"f64\"' '$TMPD/gam.json' && grep -q '\"decided_by\":\"mpfr\"' '$TMPD/gam.json' && grep -q '\"reference\":\"auto\"' '$TMPD/gam.json'"
$G merge "$TMPD/ga0.json" "$TMPD/ga1.json" > "$TMPD/gam.txt"
check "the merged text report counts the directions each reference decided" \
  grep -q '^tiered reference: f64 decided [1-9][0-9]* of [0-9]* directions, MPFR [1-9]' "$TMPD/gam.txt"
# under --ref mpfr the same failures are beyond doubt: no finer step
# (manual: "A failure beyond doubt"); each stays at level 0
$G run tanh-gemm --mutant dw-twice --ref mpfr --format json > "$TMPD/wmp.json"
$G run tanh-gemm --mutant dw-twice --ref mpfr > "$TMPD/wmp.txt"; rc=$?
check "--ref mpfr: dw-twice's 128 failures are beyond doubt, none confirmed at a finer step (exit $rc)" \
  sh -c "test $rc -eq 1 && grep -q '^confirmation: of 128 failing directions, 0 confirmed at finer steps (0 judged at a finer level); 128 not confirmed' '$TMPD/wmp.txt' && ! grep -q '\"level\":[1-9]' '$TMPD/wmp.json'"
$G merge "$TMPD/m0.json" "$TMPD/m1.json" > "$TMPD/mm.txt"
check "the failing report says how its failures were settled: dw-twice's 128 by f64" \
  grep -q '^confirmation: of 128 failing directions, 128 decided by f64' "$TMPD/mm.txt"
$G run tanh-gemm --mutant dw-twice --ref mpfr --format tap > "$TMPD/mp.tap"
$G run tanh-gemm --mutant dw-twice --format tap > "$TMPD/au.tap"
check "--ref auto and --ref mpfr: the same verdict in every direction (TAP)" \
  sh -c "sed -n 's/^\\(not ok\\|ok\\) \\([0-9]*\\) .*/\\1 \\2/p' '$TMPD/mp.tap' > '$TMPD/mp.v' && sed -n 's/^\\(not ok\\|ok\\) \\([0-9]*\\) .*/\\1 \\2/p' '$TMPD/au.tap' > '$TMPD/au.v' && test -s '$TMPD/mp.v' && cmp -s '$TMPD/mp.v' '$TMPD/au.v'"
check "TAP names the deciding reference of every direction" \
  test "$(grep -c ' ref=\(f64\|mpfr\)$' "$TMPD/au.tap")" -eq "$(sed -n 's/^1\.\.//p' "$TMPD/au.tap")"
$G run gdn --directions random:6 --format json > "$TMPD/gw.json"
for i in 0 1; do $G run gdn --directions random:6 --shard $i/2 --format json > "$TMPD/g$i.json"; done
$G merge --format json "$TMPD/g0.json" "$TMPD/g1.json" > "$TMPD/gm.json"
check "gdn random directions: shard + merge equals unsharded" cmp -s "$TMPD/gw.json" "$TMPD/gm.json"
# random directions per block: the merged report keeps each direction's
# tensor (the text names "random direction k within W")
$G run tanh-gemm --mutant dw-twice --directions random-per-block:3 --format json > "$TMPD/pw.json"
for i in 0 1; do $G run tanh-gemm --mutant dw-twice --directions random-per-block:3 --shard $i/2 --format json > "$TMPD/p$i.json"; done
$G merge --format json "$TMPD/p0.json" "$TMPD/p1.json" > "$TMPD/pm.json"
$G merge "$TMPD/p0.json" "$TMPD/p1.json" > "$TMPD/pm.txt"
check "random-per-block: shard + merge equals the unsharded JSON report" cmp -s "$TMPD/pw.json" "$TMPD/pm.json"
check "random-per-block: the merged report names the tensor of a direction" grep -q 'random direction [0-9]* within ' "$TMPD/pm.txt"
# screened directions (manual: "Screening"): a bug in W takes W's every
# coordinate, X keeps its random directions; never a shard
expect_rc 1 "screen:4 fails dw-twice" $G run tanh-gemm --mutant dw-twice --directions screen:4 --quiet
# manual: "Two verdicts, one report": an undeclared bf16 rounding of ds
# whose three findings in g read "constant factor 1.0005 +- 0.00027"
# (ratios 1.0002 to 1.001: its unit roundoff's scatter) is PRECISION (6),
# not a logic error's structure (the falsify cell that read FAIL).  Under
# every OpenBLAS kernel this CPU runs (a pinned one alone; SIGILL skips):
# the f32 path's sums differ by kernel, the verdict must not.
dsbf16 () {   # CORETYPE NAME
  with_kernel "$1" $G run gdn --shape B=1,T=37,H=1,K=4,V=4,BT=16,GATE=1 --seed 1 --mutant ds-bf16 --ref auto --quiet > /dev/null 2>&1
  rc=$?
  case $rc in
    132) skip "kernel $2, ds-bf16's scattered factor is precision" "unsupported on this CPU: it died of SIGILL" ;;
    6) ok "kernel $2, ds-bf16's scattered factor is precision (exit 6)" ;;
    *) not_ok "kernel $2, ds-bf16's scattered factor is precision (exit $rc, want 6)" ;;
  esac
}
each_kernel dsbf16 "ds-bf16's scattered factor is precision"
$G run tanh-gemm --mutant dw-twice --directions screen:4 --format json > "$TMPD/sc.json"
$G run tanh-gemm --mutant dw-twice --directions screen:4 > "$TMPD/sc.txt"
check "screen: the second round takes the failing tensor's coordinates" grep -q 'then every coordinate of 1 block where one did not pass (W)' "$TMPD/sc.txt"
check "screen: the diagnosis reads W's elements" grep -q '^diagnosis: constant factor: analytic / reference = 2 on all [0-9]* failing element(s) of [0-9]* checked (W\[' "$TMPD/sc.txt"
# a correct gdn: q, k and v pass their random directions, whose f32-path
# arithmetic resolves a scale error only to ~1e-2 (above 2^-10): their
# coordinates are taken, and the line says why (manual: "Finely enough")
$G run gdn --directions screen:8 > "$TMPD/sg.txt"
check "screen: gdn passes" grep -q '^verdict: PASS' "$TMPD/sg.txt"
check "screen: tensors re-checked for resolution are named so" grep -q 'then every coordinate of 3 blocks where none resolved finely enough (q, k, v)' "$TMPD/sg.txt"
expect_rc 2 "merge refuses a screened report" $G merge "$TMPD/sc.json"
check "merge says why" sh -c "$G merge '$TMPD/sc.json' 2>&1 | grep -q 'screened check.s report is whole'"
expect_rc 2 "screen refuses a shard" $G run tanh-gemm --directions screen:4 --shard 0/2
expect_rc 2 "screen:0 is a usage error" $G run tanh-gemm --directions screen:0
expect_rc 2 "merge with a shard missing" $G merge "$TMPD/s0.json" "$TMPD/s1.json"
expect_rc 2 "merge with a shard repeated" $G merge "$TMPD/s0.json" "$TMPD/s0.json" "$TMPD/s1.json"
expect_rc 2 "merge of shards of different checks" $G merge "$TMPD/s0.json" "$TMPD/m1.json"
printf '{"kind":"gradient","model":' > "$TMPD/bad.json"
expect_rc 2 "merge of a truncated report" $G merge "$TMPD/bad.json"
expect_rc 2 "merge of a missing file" $G merge "$TMPD/nonexistent.json"
expect_rc 2 "merge with no report" $G merge
# merge parses its options with getopt_long: anywhere, abbreviated, --
$G merge "$TMPD/s2.json" "$TMPD/s0.json" "$TMPD/s1.json" --format=json > "$TMPD/m2.json"; rc=$?
check "merge REPORT... --format=json (exit $rc)" cmp -s "$TMPD/whole.json" "$TMPD/m2.json"
$G merge --form json -- "$TMPD/s0.json" "$TMPD/s1.json" "$TMPD/s2.json" > "$TMPD/m3.json"; rc=$?
check "merge --form json -- REPORT... (exit $rc)" cmp -s "$TMPD/whole.json" "$TMPD/m3.json"
# merge reads regular files only, of at most 1 GiB, and says why not
unreadable () {   # unreadable DESCRIPTION MESSAGE FILE
  timeout 20 $G merge "$3" > /dev/null 2> "$TMPD/err"; rc=$?
  if [ "$rc" -eq 2 ] && grep -qF -- "gradcheck: cannot read $3: $2" "$TMPD/err"; then
    ok "merge of $1: exit 2, '$2'"
  else
    not_ok "merge of $1: exit $rc: $(head -1 "$TMPD/err")"
  fi
}
unreadable "a missing file" "No such file or directory" "$TMPD/nonexistent.json"
unreadable "a directory" "Is a directory" "$TMPD"
unreadable "/dev/zero" "not a regular file" /dev/zero
if mkfifo "$TMPD/fifo" 2>/dev/null; then
  unreadable "a FIFO nobody writes (it must not block)" "not a regular file" "$TMPD/fifo"
else
  skip "merge of a FIFO" "mkfifo failed"
fi
if truncate -s 1073741825 "$TMPD/big.json" 2>/dev/null; then
  unreadable "a file of 1 GiB + 1 byte (sparse)" "larger than 1 GiB" "$TMPD/big.json"
else
  skip "merge of a file above the limit" "truncate failed"
fi
if [ "$(id -u)" -ne 0 ]; then
  cp "$TMPD/s0.json" "$TMPD/locked.json" && chmod 000 "$TMPD/locked.json"
  unreadable "a file without read permission" "Permission denied" "$TMPD/locked.json"
else
  skip "merge of an unreadable file" "root reads every file"
fi
expect_rc 2 "bad --shard" $G run tanh-gemm --shard 3/3
expect_rc 2 "bad --shard syntax" $G run tanh-gemm --shard 1-3

# --threads: identical reports
$G run gdn --directions random:8 --threads 1 --format json > "$TMPD/t1"
$G run gdn --directions random:8 --threads 2 --format json > "$TMPD/t2"
check "gdn: --threads 2 equals --threads 1" cmp -s "$TMPD/t1" "$TMPD/t2"

# no progress on stderr when stderr is not a terminal
$G run tanh-gemm > /dev/null 2> "$TMPD/err"
check "no progress output when stderr is not a terminal" test ! -s "$TMPD/err"

# steps: a table and a well-formed SVG
$G steps tanh-gemm --index 19 --output "$TMPD/steps.svg" > "$TMPD/steps.txt"; rc=$?
check "steps exits 0 (exit $rc)" test "$rc" -eq 0
check "steps writes a well-formed SVG" "$B/svgcheck" "$TMPD/steps.svg"
check "the SVG has the four curves" test "$(grep -c '<polyline' "$TMPD/steps.svg")" -ge 4
check "steps prints 48 rows of data" test "$(grep -vc '^#' "$TMPD/steps.txt")" -eq 48
check "steps gives the twin's two questions at the exact derivative (manual: The f64 twin)" grep -q "^# twin: |g64 - exact| = .* (the algorithm); |g32 - g64| = " "$TMPD/steps.txt"
# The V: the smallest f32 error lies inside the range, and both ends
# (truncation at large h, rounding at small h) are ten times above it.
v=$(awk '!/^#/ && $2 != "nan" { e[++n] = $2 + 0 }
         END { m = 1; for (k = 2; k <= n; k++) if (e[k] < e[m]) m = k;
               print (m > 1 && m < n && e[1] > 10 * e[m] && e[n] > 10 * e[m]) ? "yes" : "no" }' "$TMPD/steps.txt")
check "the f32 error is V-shaped around the derived step" test "$v" = yes
# The MPFR error is D(h)'s at the h of its row: in the truncation range it
# falls as h^2, so each of the first 8 halvings divides it by more than 2
# (a direction judged at a finer step than its row's made it jump back up
# every eighth row).
t=$(awk '!/^#/ && $4 != "nan" { e[++n] = $4 + 0 }
         END { ok = n >= 9; for (k = 1; k < 9; k++) if (!(e[k] > 2 * e[k + 1])) ok = 0;
               print ok ? "yes" : "no" }' "$TMPD/steps.txt")
check "the MPFR error falls with h over the first 8 halvings (truncation, h^2)" test "$t" = yes
expect_rc 2 "steps without --index" $G steps tanh-gemm

# --dump: loadable .npy files whose shapes match the model's
rm -rf "$TMPD/dump"
$G run gdn --shape T=5,BT=4 --dump "$TMPD/dump" > /dev/null; rc=$?
check "--dump exits 0 (exit $rc)" test "$rc" -eq 0
for t in q:1,5,2,8 k:1,5,2,8 v:1,5,2,8 g:1,5,2 beta_logit:1,5,2 S0:1,2,8,8 \
         grad_q:1,5,2,8 grad_S0:1,2,8,8 ref_grad_v:1,5,2,8 dO:1,5,2,8 \
         dS_T:1,2,8,8 out_o:1,5,2,8 out_S_T:1,2,8,8; do
  f=${t%%:*}; want=${t#*:}
  got=$("$B/npycheck" "$TMPD/dump/$f.npy" 2>/dev/null)
  check "--dump $f.npy is a float32 .npy of shape ($want) (got $got)" test "$got" = "$want"
done

# plugins: the example round trip, and plugins that lie
# doc/examples/twin.c: a backward written once, its twin from the same
# source (manual: "Writing a twin"); ",bf16" keeps the f32 path's partial
# sums in bf16: the algorithm passes, the arithmetic does not.
if [ -n "${PLUGIN_TWIN:-}" ] && [ -f "$PLUGIN_TWIN" ]; then
  expect_rc 0 "the twin example plugin passes" $G run --plugin "$PLUGIN_TWIN" --shape 24
  $G run --plugin "$PLUGIN_TWIN" --shape 24,bf16 > "$TMPD/tw" 2>&1; rc=$?
  check "the twin example with bf16 partial sums is PRECISION, exit 6 (exit $rc)" test "$rc" -eq 6
  check "its algorithm passes: 0 failed of the g64 check" grep -q "algorithm:  g64 against the reference: 0 failed" "$TMPD/tw"
  expect_rc 1 "the same without its twin fails (--twin off)" $G run --plugin "$PLUGIN_TWIN" --shape 24,bf16 --twin off
  for s in 0 1 2; do $G run --plugin "$PLUGIN_TWIN" --shape 24,bf16 --shard $s/3 --format json > "$TMPD/tw$s.json"; done
  expect_rc 6 "shards of a PRECISION check merge to PRECISION (exit 6)" $G merge "$TMPD/tw0.json" "$TMPD/tw1.json" "$TMPD/tw2.json"
  $G run --plugin "$PLUGIN_TWIN" --shape 24,bf16 --format tap > "$TMPD/twtap"
  check "TAP marks a precision direction not ok, with both ratios" grep -q "^#   twin g64 .* arithmetic nu .*PRECISION" "$TMPD/twtap"
else
  skip "the twin example plugin" "PLUGIN_TWIN not built"
fi

if [ -n "$PLUGIN_EXAMPLE" ] && [ -f "$PLUGIN_EXAMPLE" ]; then
  $G run --plugin "$PLUGIN_EXAMPLE" --shape 12 > "$TMPD/pl" 2>&1; rc=$?
  check "the example plugin passes (exit $rc)" test "$rc" -eq 0
  check "... with its own model name and size" grep -q 'model example-plugin, 12 parameters' "$TMPD/pl"
  expect_rc 0 "the example plugin in f32 mode" $G run --plugin "$PLUGIN_EXAMPLE" --ref f32
  expect_rc 2 "the example plugin refuses a bad argument" $G run --plugin "$PLUGIN_EXAMPLE" --shape 0
else
  skip "plugin example" "not built"
fi
if [ -n "$PLUGIN_LIAR" ] && [ -f "$PLUGIN_LIAR" ]; then
  expect_rc 0 "an honest plugin passes" $G run --plugin "$PLUGIN_LIAR" --ref f64
  for lie in abi model-abi n null nullx none; do
    $G run --plugin "$PLUGIN_LIAR" --shape "$lie" > /dev/null 2> "$TMPD/le"; rc=$?
    check "a plugin that lies ($lie) is refused with exit 2 and a reason (exit $rc: $(head -1 "$TMPD/le"))" \
      sh -c "test $rc -eq 2 && grep -q 'refused\|lacks\|ABI' '$TMPD/le'"
  done
else
  skip "lying plugins" "not built"
fi
expect_rc 2 "a plugin file that does not exist" $G run --plugin /nonexistent.so
expect_rc 2 "a file that is not a plugin" $G run --plugin "$G"
expect_rc 2 "a model and a plugin" $G run gdn --plugin "$PLUGIN_LIAR"

# sweep: a table of kernels (a pinned kernel is respected)
$G sweep tanh-gemm --directions random:4 > "$TMPD/sw"; rc=$?
check "sweep exits 0 (exit $rc)" test "$rc" -eq 0
check "sweep prints a table with a verdict per kernel" grep -q ' pass ' "$TMPD/sw"
if [ -n "$(pinned_kernel)" ]; then
  check "sweep says the kernel is pinned" grep -q 'pins a kernel' "$TMPD/sw"
fi
$G sweep tanh-gemm --mutant dw-twice --directions random:4 > /dev/null; rc=$?
check "sweep of a mutant exits 1 (exit $rc)" test "$rc" -eq 1
# an inconclusive check under every kernel: the sweep is inconclusive too
# (exit 4), neither a pass nor a failure
expect_rc 4 "sweep of an inconclusive check (f32 reference, every coordinate)" $G sweep tanh-gemm --ref f32
# the sweep exits with the worst of its kernels' exit statuses, each the
# one run gives (manual: "Exit status"): a precision finding (dx-bf16-sum:
# the algorithm passes, the f32 arithmetic errs beyond its bound) exits 6
# under every kernel, as run does -- the sweep exited 1
$G run tanh-gemm --mutant dx-bf16-sum --directions random:4 > /dev/null; want=$?
$G sweep tanh-gemm --mutant dx-bf16-sum --directions random:4 > "$TMPD/swp"; rc=$?
check "run of dx-bf16-sum exits 6 (exit $want)" test "$want" -eq 6
check "... under every kernel the sweep runs, a precision finding" \
  sh -c "grep -q ' precision ' '$TMPD/swp' && ! grep -E ' (pass|fail|error|inconclusive|CRASH|non-smooth) ' '$TMPD/swp'"
check "sweep of a precision finding exits 6, as run (exit $rc)" test "$rc" -eq 6
# a refused check and a model that fails: as run (2, 5), not 1
expect_rc 2 "sweep of a refused check (--directions 99999) exits 2, as run" $G sweep tanh-gemm --directions 99999
expect_rc 5 "sweep of a model whose forward gives NaN exits 5, as run" $G sweep --plugin "$PLUGIN_LIAR" --ref f64 --shape nan
$G sweep tanh-gemm --directions random:4 --format json > "$TMPD/swj"
check "sweep --format json" grep -q '"kernels":\[{"coretype"' "$TMPD/swj"

# every subcommand has --help
for c in list run oracle explain sweep steps merge; do
  check "gradcheck $c --help" sh -c "$G $c --help | grep -q '^Usage: gradcheck $c'"
done
done_testing
