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

# OpenBLAS kernels to sweep; a name the library does not know maps to the
# default kernel, and the sweep runs each distinct kernel once.
KERNELS="Prescott Core2 Penryn Dunnington Nehalem Sandybridge Haswell Zen SkylakeX Cooperlake SapphireRapids Atom Barcelona Bulldozer Piledriver Steamroller Excavator Opteron"
# A pinned kernel (rule: never override it): "" when the environment pins none.
pinned_kernel () {
  if [ -n "${OPENBLAS_CORETYPE+x}" ] || [ -n "${OPENBLAS_L2_SIZE+x}" ]; then
    echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-}"
  fi
}
# The kernel OpenBLAS actually loads for CORETYPE $1 ("" if the process dies).
kernel_name () {
  if [ -n "$1" ]; then
    OPENBLAS_CORETYPE=$1 "$GRADCHECK" --version 2>/dev/null | sed -n 's/.*OpenBLAS kernel \(.*\))/\1/p'
  else
    "$GRADCHECK" --version 2>/dev/null | sed -n 's/.*OpenBLAS kernel \(.*\))/\1/p'
  fi
}
# each_kernel FUNCTION: call FUNCTION CORETYPE NAME once per distinct kernel
# this CPU runs (CORETYPE "" for the pinned one), skipping the rest.
each_kernel () {
  fn=$1
  pin=$(pinned_kernel)
  if [ -n "$pin" ]; then
    "$fn" "" "$(kernel_name "")"
    for k in $KERNELS; do skip "kernel $k" "the environment pins a kernel ($pin)"; done
    return
  fi
  seen=
  for k in $KERNELS; do
    name=$(kernel_name "$k")
    if [ -z "$name" ]; then skip "kernel $k" "unsupported on this CPU (the process died)"; continue; fi
    case " $seen " in *" $name "*) continue ;; esac
    seen="$seen $name"
    "$fn" "$k" "$name"
  done
}
# with_kernel CORETYPE COMMAND...: run COMMAND with that kernel ("" keeps the environment's)
with_kernel () {
  k=$1; shift
  if [ -n "$k" ]; then OPENBLAS_CORETYPE=$k "$@"; else "$@"; fi
}
