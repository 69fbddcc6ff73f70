# tap.sh -- a few lines of TAP for the shell tests (sourced, not run).
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
tap_n=0
tap_failed=0
ok () { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok () { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }
skip () { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP ${2:-}"; }
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds
check () { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# expect_rc CODE DESCRIPTION COMMAND...: ok when COMMAND exits with CODE
expect_rc () {
  want=$1; d=$2; shift 2
  "$@" >/dev/null 2>&1; got=$?
  if [ "$got" -eq "$want" ]; then ok "$d (exit $got)"; else not_ok "$d (exit $got, want $want)"; fi
}
done_testing () { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }
GRADCHECK=${GRADCHECK:-gradcheck/gradcheck}
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/gctest.XXXXXX") || exit 99
trap 'rm -rf "$TMPD"' EXIT

# OpenBLAS kernels.  Which ones this CPU runs is decided once per script by
# `gradcheck kernels` (gradcheck/kernels.c: one probe process per kernel,
# the only list of kernel names); every test under a kernel then ends by
# one rule (under_kernel): exit 0 passes, SIGILL skips (the CPU lacks an
# instruction), anything else fails.
# A pinned kernel (rule: never override it): "" when the environment pins none.
pinned_kernel () {
  if [ -n "${OPENBLAS_CORETYPE+x}" ] || [ -n "${OPENBLAS_L2_SIZE+x}" ]; then
    echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-}"
  fi
}
# The plan, one line per kernel: CORETYPE KERNEL STATE GROUP FINGERPRINT
# REASON, tab-separated (gradcheck kernels --help).  Probed on first use.
kernel_plan () {
  if [ ! -s "$TMPD/kernel-plan" ]; then
    "$GRADCHECK" kernels --format tsv > "$TMPD/kernel-plan" 2> "$TMPD/kernel-plan.err"
    echo $? > "$TMPD/kernel-plan.rc"
  fi
  cat "$TMPD/kernel-plan"
}
# each_kernel FUNCTION LABEL...: call FUNCTION CORETYPE NAME once per kernel
# the plan runs (CORETYPE "" for a pinned one).  Every other kernel is
# reported: a kernel grouped with another or an alias of it as one skip
# naming the kernel that ran for it; an unsupported one as a skip of each
# LABEL (the tests FUNCTION would run), with the reason; a crashed probe as
# a failure.
each_kernel () {
  fn=$1; shift
  kernel_plan > "$TMPD/kernel-plan.use"
  if [ "$(cat "$TMPD/kernel-plan.rc")" -gt 1 ] || [ ! -s "$TMPD/kernel-plan.use" ]; then
    not_ok "gradcheck kernels gave a plan (exit $(cat "$TMPD/kernel-plan.rc"): $(head -1 "$TMPD/kernel-plan.err"))"
    return
  fi
  tab=$(printf '\t')
  while IFS=$tab read -r ct name state group fp reason; do
    [ "$ct" = - ] && ct=
    label=${ct:-pinned}
    case $state in
      run)
        "$fn" "$ct" "$name" < /dev/null ;;
      grouped|alias)
        skip "kernel $ct ($name)" "$state with $group: $reason; its tests ran once, under $group" ;;
      unsupported)
        for l in "$@"; do skip "kernel $ct, $l" "unsupported on this CPU: $reason"; done ;;
      not-run)
        skip "kernel $ct" "$reason" ;;
      *)
        not_ok "kernel $label: $reason" ;;
    esac
  done < "$TMPD/kernel-plan.use"
}
# with_kernel CORETYPE COMMAND...: run COMMAND with that kernel ("" keeps the environment's)
with_kernel () {
  k=$1; shift
  if [ -n "$k" ]; then OPENBLAS_CORETYPE=$k "$@"; else "$@"; fi
}
# kernel_rc RC: how a process under a kernel ended, by the rule of
# gradcheck kernels (cli_outcome_of): "ok" (exit 0), "unsupported"
# (SIGILL: 132 from the shell, or 77 from a Check suite whose forked test
# died of it), or "fail" (any other signal or status).
kernel_rc () {
  case $1 in
    0) echo ok ;;
    77|132) echo unsupported ;;
    *) echo fail ;;
  esac
}
# under_kernel CORETYPE NAME DESCRIPTION COMMAND...: one TAP line for
# COMMAND run under the kernel, by kernel_rc; a failure shows the end of
# its output as comments.
under_kernel () {
  uk_ct=$1; uk_name=$2; uk_d=$3; shift 3
  with_kernel "$uk_ct" "$@" > "$TMPD/under.out" 2>&1; uk_rc=$?
  case $(kernel_rc "$uk_rc") in
    ok) ok "kernel $uk_name, $uk_d" ;;
    unsupported) skip "kernel $uk_name, $uk_d" "unsupported on this CPU: it died of SIGILL (exit $uk_rc)" ;;
    *) not_ok "kernel $uk_name, $uk_d (exit $uk_rc)"; tail -20 "$TMPD/under.out" | sed 's/^/# /' ;;
  esac
}
