#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# hostile.sh -- the command against hostile input: directions and memory
# that cannot fit, plugins that lie about their sizes or misbehave in their
# callbacks (overrun, NaN, exit, hang), --timeout, long plugin paths, and
# --dump over bad descriptions, planted symlinks, a size limit, SIGINT and
# a concurrent dump.  Each must end with a message and the documented exit
# status (0 pass, 1 fail, 2 usage or input, 3 internal, 4 inconclusive, 5 the model failed),
# never a crash or a status that claims a pass the command did not print.
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
B=${TESTBIN:-tests}
L=$PLUGIN_LIAR
P=$PLUGIN_HOSTILE

# outcome CODE PATTERN DESCRIPTION COMMAND...: exit CODE and PATTERN on stderr
outcome () {
  want=$1; pat=$2; d=$3; shift 3
  "$@" > "$TMPD/out" 2> "$TMPD/err"; got=$?
  if [ "$got" -eq "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$TMPD/err"; }; then
    ok "$d (exit $got)"
  else
    not_ok "$d (exit $got, want $want; stderr: $(head -c 300 "$TMPD/err"))"
  fi
}

# Directions that cannot be allocated: a message and exit 3, the JSON
# report still well-formed (it once dereferenced a NULL array).
outcome 3 "directions of this check cannot be allocated" \
  "random:100000000 --format json: out of memory, no crash" \
  $G run tanh-gemm --directions random:100000000 --format json
check "... and its JSON report says ENOMEM" grep -q '"status":"ENOMEM"' "$TMPD/out"

# An address-space limit: the MPFR working set is refused before GMP could
# abort.  (AddressSanitizer cannot start under such a limit: skipped there.)
if (ulimit -v 500000; "$G" --version) > /dev/null 2>&1; then
  outcome 3 "MPFR working set" "ulimit -v 500000, T=4096 K=256: refused, not aborted" \
    sh -c "ulimit -v 500000; exec $G run gdn --shape T=4096,K=256 --directions 0"
else
  skip "ulimit -v 500000" "the command cannot start under an address-space limit (sanitizer build)"
fi

# Address-space limits that leave no room for OpenBLAS's work buffer: it
# retried its mmap forever (every command hung at 60 and 120 MB).  Each
# command ends with exit 3 and a message; a limit with room still checks.
if (ulimit -v 60000; "$G" --version) > /dev/null 2>&1; then
  for lim in 60000 120000; do
    for c in "run" "run --threads 2" "explain --index 0" "oracle" \
             "steps --index 0 --output $TMPD/lim.svg" "run --dump $TMPD/lim$lim"; do
      outcome 3 "out of memory" "ulimit -v $lim, $c: exit 3, no hang" \
        timeout 120 sh -c "ulimit -v $lim; exec $G $c"
    done
  done
  outcome 0 "" "ulimit -v 400000: the default check runs and passes" \
    timeout 120 sh -c "ulimit -v 400000; exec $G run"
else
  skip "ulimit -v 60000" "the command cannot start under an address-space limit (sanitizer build)"
fi

# Steps and points
outcome 2 "overflows" "--step 1e308 is the step's fault, exit 2" $G run tanh-gemm --step 1e308
outcome 2 "overflows" "--step 1e308 --ref f32 likewise" $G run tanh-gemm --step 1e308 --ref f32

# --shard: digits/digits only, a space on either side of the slash refused
for s in '0/ 2' ' 0/2' '0 /2' '0/2 ' '0/+2' '/2' '0/'; do
  outcome 2 "bad --shard" "--shard '$s' is refused" $G run tanh-gemm --shard "$s"
done
outcome 0 "" "--shard 1/2 is accepted" $G run tanh-gemm --shard 1/2

# steps --output where it cannot be written: a write error (3), not usage
outcome 3 "cannot write" "steps --output into a missing directory exits 3" \
  $G steps tanh-gemm --index 0 --output "$TMPD/no/such/dir/s.svg"
check "... naming the errno" grep -q 'No such file or directory' "$TMPD/err"

# --timeout: refused values
for t in 0 -1 nan inf abc 1e9; do
  expect_rc 2 "bad --timeout $t" $G run tanh-gemm --timeout "$t"
done
expect_rc 0 "a generous --timeout does not change a pass" $G run tanh-gemm --timeout 600

# --plugin paths longer than PATH_MAX are refused, never cut to another file
long=$TMPD
while [ ${#long} -lt 4070 ]; do long=$long/.; done
if [ -n "$L" ] && [ -f "$L" ]; then
  ln -s "$L" "$TMPD/p"
  cut=$long/p
  outcome 0 "" "a plugin path of ${#cut} characters loads" $G run --plugin "$cut" --ref f64
  # the same path with more after it: the old code cut it back to $cut
  pad=$cut
  while [ ${#pad} -lt 4095 ]; do pad=$pad/; done
  pad=${pad}xx
  outcome 2 "File name too long" "a plugin path of ${#pad} characters is refused" \
    $G run --plugin "$pad" --ref f64
else
  skip "long plugin paths" "liar plugin not built"
fi

if [ -z "$L" ] || [ ! -f "$L" ]; then
  skip "hostile plugins" "liar plugin not built"
  done_testing
  exit $?
fi

# Plugins whose sizes lie
outcome 2 "too large to allocate" "n = x_count = SIZE_MAX is refused" $G run --plugin "$L" --ref f64 --shape nmax
outcome 2 "cannot be read" "n = x_count = 2^28 over 4 floats is refused" $G run --plugin "$L" --ref f64 --shape xcount
outcome 2 "the point x holds NaN or Inf" "NaN in the point is named as such, exit 2" $G run --plugin "$L" --ref f64 --shape nanx
check "... naming the element" grep -q 'x\[1\]' "$TMPD/err"
# Issue 35: a backward that never writes g[2] is named, exit 5 (it was
# judged on the buffer's content); once on a terminal-like shared file
outcome 5 "grad_f32 did not write x\[2\] (1 of 4)" "an unwritten gradient element is named, exit 5" $G run --plugin "$L" --ref f64 --shape unwritten
check "... on the report's verdict line, not as NaN" grep -q 'verdict: ERROR: a model callback left elements of its output unwritten' "$TMPD/out"
$G run --plugin "$L" --ref f64 --shape unwritten > "$TMPD/both" 2>&1
check "... said once when the report and stderr share a file" test "$(grep -c 'did not write' "$TMPD/both")" -eq 1

# Callbacks that misbehave: exit 5, the model's failure
outcome 5 "grad_f32 wrote outside" "a backward writing 16 floats past n" $G run --plugin "$L" --ref f64 --shape overrun
outcome 5 "grad_f32 wrote outside" "a backward writing 2 floats past n" $G run --plugin "$L" --ref f64 --shape overrun2
outcome 5 "non-finite" "a forward giving NaN exits 5, not 2" $G run --plugin "$L" --ref f64 --shape nan
outcome 5 "called exit()" "a backward calling exit(0) does not exit 0" $G run --plugin "$L" --ref f64 --shape exit0
check "... and printed no verdict" sh -c "! grep -q 'verdict' '$TMPD/out'"
outcome 5 "time limit" "slow callbacks stop at --timeout 0.2" $G run --plugin "$L" --ref f64 --shape slow --timeout 0.2
start=$(date +%s)
outcome 5 "has not returned" "a callback that never returns: the watchdog ends it" \
  $G run --plugin "$L" --ref f64 --shape hang --timeout 0.5
took=$(( $(date +%s) - start ))
check "... within seconds ($took s)" test "$took" -le 10
if (ulimit -v 4000000; "$G" --version) > /dev/null 2>&1; then
  outcome 3 "out of memory inside GMP" "GMP's failed allocation ends with a message, not SIGABRT" \
    sh -c "ulimit -v 4000000; exec $G run --plugin $L --shape mpfrbig"
else
  skip "GMP out of memory" "the command cannot start under an address-space limit (sanitizer build)"
fi

# FP traps (issue 26): a plugin that enables them while it loads (its set-up
# function, its ELF constructor) or in its backward is checked as without
# them, never ended by SIGFPE; an exit() in its constructor is caught.
outcome 0 "" "a plugin enabling FP traps in set-up and backward: no SIGFPE" \
  $G run --plugin "$L" --ref f64 --shape traps
check "... and its verdict is printed" grep -q '^verdict: PASS' "$TMPD/out"
outcome 0 "" "... in its ELF constructor: no SIGFPE" \
  env LIAR_CONSTRUCTOR=traps $G run --plugin "$L" --ref f64 --format json
check "... and its JSON report says pass" grep -q '"verdict":"pass"' "$TMPD/out"
outcome 0 "" "explain under a plugin's traps" $G explain --plugin "$L" --ref f64 --shape traps --index 1
outcome 0 "" "steps under a plugin's traps" \
  $G steps --plugin "$P" --shape traps --index 0 --output "$TMPD/steps.svg"
outcome 5 "called exit()" "exit(0) in a plugin's constructor does not exit 0" \
  env LIAR_CONSTRUCTOR=exit0 $G run --plugin "$L" --ref f64
check "... and printed nothing on stdout" test ! -s "$TMPD/out"

# Shards of one plugin with other arguments (--shape selects a plugin's
# model) or from another file are of another check: merge refuses them.
# Two spellings of one built-in shape are one model.
for part in 0 1; do
  $G run --plugin "$P" --shard $part/2 --format json > "$TMPD/p$part.json" 2> /dev/null
  $G run --plugin "$P" --shape x-bug --shard $part/2 --format json > "$TMPD/q$part.json" 2> /dev/null
done
outcome 0 "" "shards of one plugin with the same arguments merge" $G merge "$TMPD/p0.json" "$TMPD/p1.json"
outcome 2 "do not belong together" "shards of a plugin with other --shape do not merge" \
  $G merge "$TMPD/p0.json" "$TMPD/q1.json"
outcome 2 "do not belong together" "... either way round" $G merge "$TMPD/q0.json" "$TMPD/p1.json"
cp "$P" "$TMPD/other.so" && printf x >> "$TMPD/other.so"
$G run --plugin "$TMPD/other.so" --shard 1/2 --format json > "$TMPD/o1.json" 2> /dev/null
outcome 2 "do not belong together" "shards of another plugin file do not merge" \
  $G merge "$TMPD/p0.json" "$TMPD/o1.json"
$G run gdn --shape T=5 --shard 0/2 --format json > "$TMPD/b0.json" 2> /dev/null
$G run gdn --shape T=5,BT=16 --shard 1/2 --format json > "$TMPD/b1.json" 2> /dev/null
$G run gdn --shape T=5,BT=4 --shard 1/2 --format json > "$TMPD/c1.json" 2> /dev/null
outcome 0 "" "built-in shards of one shape spelt two ways merge" $G merge "$TMPD/b0.json" "$TMPD/b1.json"
outcome 2 "do not belong together" "built-in shards of two shapes do not merge" \
  $G merge "$TMPD/b0.json" "$TMPD/c1.json"
# a report whose top-level version is not its identity's
sed 's/^{"gradcheck":"[^"]*"/{"gradcheck":"9.9.9"/' "$TMPD/p1.json" > "$TMPD/v1.json"
check "(the edited report differs)" sh -c "! cmp -s '$TMPD/p1.json' '$TMPD/v1.json'"
outcome 2 "disagrees with itself" "a shard whose version is not its identity's is refused" \
  $G merge "$TMPD/p0.json" "$TMPD/v1.json"

# --dump over descriptions the library does not check
for lie in nullname:"no name" collide:"a_b.npy" gradq:"grad_q.npy" \
           ndim:"dimensions" outcount:"partition"; do
  name=${lie%%:*}; pat=${lie#*:}
  rm -rf "$TMPD/d"
  outcome 2 "$pat" "--dump refuses $name" $G run --plugin "$L" --ref f64 --shape "$name" --dump "$TMPD/d"
  check "... and writes nothing" test -z "$(ls -A "$TMPD/d" 2>/dev/null)"
done

# --dump: a complete set with its manifest
rm -rf "$TMPD/d"
outcome 0 "" "--dump of honest outputs" $G run --plugin "$L" --ref f64 --shape outputs --dump "$TMPD/d"
check "the manifest names the check" grep -q '^model liar$' "$TMPD/d/manifest.txt"
for f in x grad_x ref_grad_x out_o; do
  check "the manifest lists $f.npy, which is a valid .npy" \
    sh -c "grep -q '^file $f.npy ' '$TMPD/d/manifest.txt' && '$B/npycheck' '$TMPD/d/$f.npy' > /dev/null"
done
check "no temporary file is left" test -z "$(ls -A "$TMPD/d" | grep -v '\.npy$\|^manifest.txt$')"

# a planted symlink is replaced, its target untouched
rm -rf "$TMPD/d"; mkdir "$TMPD/d"
echo secret > "$TMPD/target"
ln -s "$TMPD/target" "$TMPD/d/grad_x.npy"
outcome 0 "" "--dump into a directory with a planted symlink" $G run --plugin "$L" --ref f64 --dump "$TMPD/d"
check "the symlink's target is untouched" grep -qx secret "$TMPD/target"
check "grad_x.npy is now a regular file" sh -c "test -f '$TMPD/d/grad_x.npy' && test ! -L '$TMPD/d/grad_x.npy'"

# a file-size limit: EFBIG reported, the verdict's status kept, nothing left
rm -rf "$TMPD/d"; mkdir "$TMPD/d"
# (stderr goes through a pipe: a file would be under the limit too)
limited () {
  ( sh -c "ulimit -f 0; exec $*" 2>&1 > /dev/null; echo "exit $?" ) | cat > "$TMPD/err"
  rc=$(sed -n 's/^exit //p' "$TMPD/err")
}
limited $G run gdn --shape T=5,BT=4 --dump "$TMPD/d"
check "a pass whose dump hits a size limit exits 3 (exit $rc)" test "$rc" -eq 3
check "... with the errno text" grep -q 'File too large' "$TMPD/err"
check "... and leaves no file" test -z "$(ls -A "$TMPD/d")"
limited $G run gdn --shape T=5,BT=4 --mutant dbeta-sign --dump "$TMPD/d"
check "a FAIL whose dump fails still exits 1 (exit $rc)" test "$rc" -eq 1
check "... and says the dump failed" grep -q 'cannot write' "$TMPD/err"

# SIGINT during the dump (the outputs, computed mid-dump, raise it): the
# report is out, the temporary files are gone, nothing under a final name
rm -rf "$TMPD/d"
$G run --plugin "$L" --ref f64 --shape sigint --dump "$TMPD/d" > "$TMPD/out" 2> /dev/null; rc=$?
check "SIGINT during --dump ends the command by SIGINT (exit $rc)" test "$rc" -eq 130
check "... after the report was printed" grep -q '^verdict: PASS' "$TMPD/out"
check "... leaving no file in the directory" test -z "$(ls -A "$TMPD/d")"

# two dumps at once into one directory: one whole set, its manifest's
rm -rf "$TMPD/d"; mkdir "$TMPD/d"
$G run gdn --shape T=5,BT=4 --seed 1 --dump "$TMPD/d" > /dev/null 2>&1 &
p1=$!
$G run gdn --shape T=5,BT=4 --seed 2 --dump "$TMPD/d" > /dev/null 2>&1; r2=$?
wait $p1; r1=$?
check "two concurrent dumps both succeed (exit $r1, $r2)" test "$r1" -eq 0 -a "$r2" -eq 0
check "... and leave no temporary file" test -z "$(ls -A "$TMPD/d" | grep -v '\.npy$\|^manifest.txt$')"
listed=$(sed -n 's/^file \([^ ]*\) .*/\1/p' "$TMPD/d/manifest.txt" | sort | tr '\n' ' ')
present=$(ls "$TMPD/d" | grep '\.npy$' | sort | tr '\n' ' ')
check "... and the manifest lists exactly the files present" test "$listed" = "$present"
# the files are the set of the check the manifest names: the same check
# again (its seed) gives the same bytes
seed=$(sed -n 's/^seed //p' "$TMPD/d/manifest.txt")
rm -rf "$TMPD/e"
$G run gdn --shape T=5,BT=4 --seed "$seed" --dump "$TMPD/e" > /dev/null 2>&1
same=yes
for f in $present; do cmp -s "$TMPD/d/$f" "$TMPD/e/$f" || same="no ($f)"; done
check "... every file belongs to the check of seed $seed: $same" test "$same" = yes
done_testing
