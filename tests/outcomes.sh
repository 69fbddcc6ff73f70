#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# outcomes.sh -- the rule by which a process under an OpenBLAS kernel ends
# as skip or fail, proved without a CPU that lacks an instruction: helpers
# die of SIGILL (skip: the CPU lacks an instruction) and of other signals
# (fail: a finding), by themselves and inside a forked Check test, under
# the same runner logic as tests/kernels.sh (tests/tap.sh's under_kernel)
# and as gradcheck sweep (gradcheck/kernels.c's cli_outcome_of, through a
# plugin whose backward dies).
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
D=${TESTBIN:-tests}/sigdie
export CK_TAP_LOG_FILE_NAME=/dev/null CK_VERBOSITY=silent

# expect WANT DESCRIPTION COMMAND...: the line under_kernel prints for
# COMMAND is a skip (WANT skip), a failure (fail) or a pass (pass).
expect () {
  want=$1; d=$2; shift 2
  line=$( (tap_n=0; tap_failed=0; under_kernel "" helper "$d" "$@") | head -1)
  case $line in
    "not ok "*) got=fail ;;
    "ok "*"# SKIP"*) got=skip ;;
    "ok "*) got=pass ;;
    *) got="no line" ;;
  esac
  echo "# under_kernel: $line"
  check "$d comes out as $want (got $got)" test "$got" = "$want"
}
expect skip "a process killed by SIGILL" "$D" raw ILL
expect fail "a process killed by SIGSEGV" "$D" raw SEGV
expect fail "a process killed by SIGABRT" "$D" raw ABRT
expect fail "a process killed by SIGBUS" "$D" raw BUS
expect fail "a process that exits 1" "$D" exit 1
expect fail "a process that exits 3" "$D" exit 3
expect pass "a process that exits 0" "$D" exit 0
expect skip "a Check suite whose forked test dies of SIGILL" "$D" check ILL
expect fail "a Check suite whose forked test dies of SIGSEGV" "$D" check SEGV
expect fail "a Check suite whose forked test dies of SIGABRT" "$D" check ABRT
expect fail "a Check suite with a SIGILL beside a real failure" "$D" check2 ILL
expect pass "a Check suite whose tests pass" "$D" check NONE
# Check without fork: the signal kills the suite's process itself.
CK_FORK=no expect skip "a Check suite run without fork, SIGILL" "$D" check ILL
CK_FORK=no expect fail "a Check suite run without fork, SIGSEGV" "$D" check SEGV

# gradcheck sweep reads its children by the same rule.  The liar plugin
# is honest but its backward raises the signal (f64 reference: it has no
# MPFR forward).
SW="sweep --plugin $PLUGIN_LIAR --ref f64"
$G $SW --shape die:ILL > "$TMPD/ill" 2>&1; rc=$?
sed 's/^/# /' "$TMPD/ill" | head -8
check "sweep: a check that dies of SIGILL under every kernel is 'unsupported'" \
  grep -q 'unsupported (the check died: Illegal instruction' "$TMPD/ill"
check "sweep: ... and never a crash" sh -c "! grep -q CRASH '$TMPD/ill'"
check "sweep: ... and exits neither 0 nor 1: nothing was checked (exit $rc)" \
  test "$rc" -ne 0 -a "$rc" -ne 1
$G $SW --shape die:SEGV > "$TMPD/segv" 2>&1; rc=$?
sed 's/^/# /' "$TMPD/segv" | head -4
# (under AddressSanitizer the child reports the SEGV itself and exits 1:
# still a crash, with another account)
check "sweep: a check that dies of SIGSEGV is a CRASH" \
  sh -c "grep -q 'CRASH (' '$TMPD/segv' && ! grep -q 'unsupported (the check' '$TMPD/segv'"
check "sweep: ... and the sweep fails (exit $rc)" test "$rc" -eq 1
$G $SW --shape die:ABRT --format json > "$TMPD/abrt" 2>&1; rc=$?
check "sweep --format json: SIGABRT is a crash (exit $rc)" \
  sh -c "grep -q '\"crash\":true' '$TMPD/abrt' && test $rc -eq 1"
if [ -z "$(pinned_kernel)" ]; then
  # One kernel dies, the others pass: only that one is marked.
  k=$(kernel_plan | awk -F'\t' '$3 == "run" { print $1; exit }')
  $G $SW --shape "die:ILL@$k" > "$TMPD/one" 2>&1; rc=$?
  check "sweep: SIGILL under $k alone marks $k unsupported and passes the rest (exit $rc)" \
    sh -c "grep -q '^$k .*unsupported' '$TMPD/one' && grep -q ' pass ' '$TMPD/one' && test $rc -eq 0"
  $G $SW --shape "die:SEGV@$k" > "$TMPD/one" 2>&1; rc=$?
  check "sweep: SIGSEGV under $k alone is a crash and fails the sweep (exit $rc)" \
    sh -c "grep -q '^$k .*CRASH' '$TMPD/one' && test $rc -eq 1"
else
  skip "sweep: one kernel of several dies" "the environment pins a kernel ($(pinned_kernel))"
fi
done_testing
