#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# kernels.sh -- checks under every OpenBLAS kernel this CPU runs, each in its
# own process (OPENBLAS_CORETYPE is read when the library loads): the
# tanh-gemm example in MPFR and f32 modes, and the gdn and kda suites.
# Which kernels run is decided once, by `gradcheck kernels` (one probe
# process per kernel; tests/tap.sh's each_kernel): a kernel whose probe
# dies of SIGILL is skipped with the reason, each of its tests named; a
# kernel with the same f32 results as another on every cell of the suites
# runs once, in its group, and is named with it; a probe that dies
# otherwise fails.  Every test under a kernel ends by one rule
# (under_kernel): SIGILL -- also inside a forked Check test, which the
# suites report with exit 77 -- skips, any other death or failure fails.
# When the environment pins a kernel, only that kernel runs.
# Two kernels run at a time (one per core); each kernel's lines are
# printed when it is done, with a progress comment when it starts.
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
CHECK_GDN=${CHECK_GDN:-tests/check_gdn}
CHECK_KDA=${CHECK_KDA:-tests/check_kda}
CHECK_HARD=${CHECK_HARD:-tests/check_hard}
ARGS="run tanh-gemm --shape M=8,K=64,N=8 --format json --directions random:16 --seed 5"
LABELS="tanh-gemm-mpfr tanh-gemm-f32 gdn-suite kda-suite hard-blas"
JOBS=${GC_KERNEL_JOBS:-2}
exec 4>&1   # progress comments from the kernels running in the background

# verdict CORETYPE REF: the tanh-gemm check of the correct model under the
# kernel passes -- or, with the f32 reference, is inconclusive (exit 4):
# the f32 difference quotient cannot see some directions (manual:
# "Inconclusive directions"), and that is never a failure.  A signal is
# returned as the shell's 128 + N for under_kernel's rule.
verdict () {
  with_kernel "$1" $G $ARGS --ref "$2" > "$TMPD/v.$1.$2" 2>/dev/null; rc=$?
  if [ "$rc" -eq 0 ]; then grep -q '"verdict":"pass"' "$TMPD/v.$1.$2"; return; fi
  if [ "$rc" -eq 4 ] && [ "$2" = f32 ]; then
    grep -q '"verdict":"inconclusive"' "$TMPD/v.$1.$2"; return
  fi
  return "$rc"
}

# one CORETYPE NAME: the kernel's tests, into $TMPD/k.CORETYPE (TAP lines
# without numbers, numbered when printed)
one () {
  out="$TMPD/k.${1:-pinned}"
  (
    tap_n=0
    for ref in mpfr f32; do
      under_kernel "$1" "$2" "tanh-gemm-$ref: the correct model passes (f32: or is inconclusive)" verdict "$1" $ref
      echo "# kernel ${1:-pinned}: tanh-gemm-$ref done (exit $uk_rc)" >&4
    done
    # The model suites under this kernel: each asserts every verdict itself.
    for suite in "$CHECK_GDN" "$CHECK_KDA"; do
      name=$(basename "$suite" | sed 's/^check_//')
      CK_TAP_LOG_FILE_NAME=/dev/null CK_VERBOSITY=silent \
        under_kernel "$1" "$2" "$name-suite: correct model passes, every mutant caught" "$suite"
      echo "# kernel ${1:-pinned}: $name-suite done (exit $uk_rc)" >&4
    done
    # The hard catalogue's cases that call OpenBLAS (check_hard, case blas):
    # correct models pass, twins and mutants do not.
    CK_TAP_LOG_FILE_NAME=/dev/null CK_VERBOSITY=silent CK_RUN_CASE=blas \
      under_kernel "$1" "$2" "hard-blas: hard correct models pass, their twins never do" "$CHECK_HARD"
    echo "# kernel ${1:-pinned}: hard-blas done (exit $uk_rc)" >&4
  ) > "$out.tmp" 2>&1
  mv "$out.tmp" "$out"
}

# Start each kernel's tests in the background, JOBS at a time; print each
# kernel's lines, in plan order, as soon as it is done.
pending=
started=0
flush () {   # print the finished kernels at the head of the queue
  while [ -n "$pending" ]; do
    k=${pending%% *}
    [ -f "$TMPD/k.$k" ] || break
    while IFS= read -r line; do
      case $line in
        "ok "*|"not ok "*)
          tap_n=$((tap_n + 1))
          case $line in "not ok "*) tap_failed=$((tap_failed + 1)) ;; esac
          echo "$line" | sed "s/^\(not \)\{0,1\}ok [0-9]*/\1ok $tap_n/" ;;
        *) echo "$line" ;;
      esac
    done < "$TMPD/k.$k"
    case $pending in
      *" "*) pending=${pending#* } ;;
      *) pending= ;;
    esac
  done
}
running () {   # how many started kernels have not finished
  r=0
  for k in $pending; do [ -f "$TMPD/k.$k" ] || r=$((r + 1)); done
  echo "$r"
}
run_one () {   # run_one CORETYPE NAME (each_kernel's callback)
  key=${1:-pinned}
  while [ "$(running)" -ge "$JOBS" ]; do
    sleep 1
    flush
  done
  echo "# kernel ${1:-pinned} ($2): started"
  one "$1" "$2" &
  pending="$pending $key"
  pending=${pending# }
  flush
}
each_kernel run_one $LABELS
while [ -n "$pending" ]; do
  flush
  [ -n "$pending" ] && sleep 1
done
wait
done_testing
