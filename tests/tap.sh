# tap.sh -- a few lines of TAP for the shell tests (sourced, not run).
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
