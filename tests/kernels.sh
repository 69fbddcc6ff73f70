#!/bin/sh
# kernels.sh -- one check under every OpenBLAS kernel this CPU runs, each in
# its own process (OPENBLAS_CORETYPE is read when the library loads).  A
# kernel that dies on a signal (SIGILL on a CPU without its instructions) is
# skipped, not failed.  Verdicts must be identical.  When the environment
# pins a kernel (OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE set), only the pinned
# kernel runs; the others are reported as skipped.
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
KERNELS="Prescott Core2 Penryn Dunnington Nehalem Sandybridge Haswell Zen SkylakeX Cooperlake SapphireRapids Atom Barcelona Bulldozer Piledriver Steamroller Excavator Opteron"
ARGS="run tanh-gemm --shape M=8,K=64,N=8 --format json --directions random:16 --seed 5"

pinned=
if [ -n "${OPENBLAS_CORETYPE+x}" ] || [ -n "${OPENBLAS_L2_SIZE+x}" ]; then
  pinned="OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-}"
fi

seen=
first=
runone () {   # runone LABEL REF: sets verdict; returns 1 if the process died
  $G $ARGS --ref "$2" > "$TMPD/out" 2>/dev/null; rc=$?
  if [ "$rc" -ge 128 ]; then return 1; fi
  verdict=$(grep -o '"verdict":"[a-z-]*"' "$TMPD/out" | head -1 | cut -d'"' -f4)
  nu=$(grep -o '"worst_nu":[^,]*' "$TMPD/out" | head -1 | cut -d: -f2)
  loss=$(grep -o '"loss_f32":[^,]*' "$TMPD/out" | head -1 | cut -d: -f2)
  return 0
}

if [ -n "$pinned" ]; then
  core=$($G --version | sed -n 's/.*OpenBLAS kernel \(.*\))/\1/p')
  for ref in mpfr f32; do
    if runone "$core" $ref; then
      check "pinned kernel $core ($pinned), $ref reference: verdict $verdict (worst nu $nu)" test "$verdict" = pass
    else
      not_ok "pinned kernel $core died"
    fi
  done
  for k in $KERNELS; do skip "kernel $k" "the environment pins a kernel ($pinned)"; done
  done_testing
  exit $?
fi

for k in $KERNELS; do
  core=$(OPENBLAS_CORETYPE=$k $G --version 2>/dev/null | sed -n 's/.*OpenBLAS kernel \(.*\))/\1/p')
  if [ -z "$core" ]; then
    skip "kernel $k" "unsupported on this CPU (the process died)"
    continue
  fi
  case " $seen " in *" $core "*) skip "kernel $k" "maps to $core, already run"; continue ;; esac
  seen="$seen $core"
  for ref in mpfr f32; do
    if OPENBLAS_CORETYPE=$k runone "$k" $ref; then
      [ -z "$first" ] && first=$verdict
      echo "# $core $ref: verdict $verdict, worst nu $nu, f32 loss $loss"
      check "kernel $core, $ref reference: verdict $verdict equals $first" test "$verdict" = "$first" -a "$verdict" = pass
    else
      skip "kernel $core, $ref reference" "unsupported on this CPU (the process died)"
    fi
  done
done
done_testing
