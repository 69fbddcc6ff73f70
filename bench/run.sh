#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# run.sh -- make bench: the falsify matrix, resolution and speed, written to
# bench/results/ as TSV/JSON data and a Markdown report (report.md).
#
#   BENCH_SEEDS (100)        seeds per cell of the correct backward
#   BENCH_MUTANT_SEEDS (20)  seeds per cell of each mutant
#   BENCH_MODELS ("gdn kda") the models whose matrix runs (the others' data
#                            already in bench/results is kept)
#   BENCH_REPORT_ONLY=1      rewrite the report from the data already there
#   BENCH_ALL_KERNELS=1      sweep every kernel even when the environment
#                            pins one (an explicit decision of the person
#                            running the bench; tests and CI never do)
#
# The mixed-precision matrix (bench/mixed.sh) runs too; its header lists
# its variables.
# bench/run.sh python (make bench BENCH_ONLY=python) runs only the Python
# side-by-side table of custom torch ops (bench/python-side.sh).
# bench/run.sh speed (make bench BENCH_ONLY=speed) runs only the side-by-side
# speed table against torch.autograd.gradcheck (bench/speed.sh, whose header
# lists its variables), which the whole bench also runs and its report
# includes.
# bench/run.sh ops (make bench BENCH_ONLY=ops) runs only the corpus of
# torch's operators checked with no declarations (bench/op-corpus.sh;
# BENCH_OPS_ARGS passes op_corpus.py's options), which the whole bench
# does not run.
set -u
if [ "${1:-}" = speed ]; then
  exec sh "$(dirname "$0")/speed.sh"
elif [ "${1:-}" = python ]; then
  exec sh "$(dirname "$0")/python-side.sh"
elif [ "${1:-}" = ops ]; then
  exec sh "$(dirname "$0")/op-corpus.sh"
elif [ -n "${1:-}" ]; then
  echo "bench/run.sh: unknown part '$1' (only 'speed', 'python', 'ops', or nothing for all)" >&2
  exit 2
fi
BENCH=${BENCH:-bench/bench}
GRADCHECK=${GRADCHECK:-gradcheck/gradcheck}
out=${BENCH_OUT:-bench/results}
SEEDS=${BENCH_SEEDS:-100}
MSEEDS=${BENCH_MUTANT_SEEDS:-20}
mkdir -p "$out"
pinned=
if [ -n "${OPENBLAS_CORETYPE+x}" ] || [ -n "${OPENBLAS_L2_SIZE+x}" ]; then
  pinned="OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-}"
fi

if [ "${BENCH_REPORT_ONLY:-0}" != 1 ]; then
# the distinct kernels this CPU runs
run_kernels=
skipped=
if [ -n "$pinned" ] && [ "${BENCH_ALL_KERNELS:-0}" != 1 ]; then
  run_kernels=pinned
  skipped="every kernel but the pinned one ($pinned)"
else
  # Which kernels this CPU runs: gradcheck kernels decides (one probe
  # process per kernel; gradcheck/kernels.c).  The bench groups the ones
  # it runs by its own cells below (bench fingerprint), so every kernel
  # that is not an alias or unsupported is a candidate here.
  if [ -n "$pinned" ]; then
    plan=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$GRADCHECK" kernels --format tsv)
  else
    plan=$("$GRADCHECK" kernels --format tsv)
  fi
  tab=$(printf '\t')
  while IFS=$tab read -r k name state group fp reason; do
    case $state in
      run|grouped) run_kernels="$run_kernels $k" ;;
      alias) ;;
      *) skipped="$skipped $k($state: $reason)" ;;
    esac
  done <<EOT
$plan
EOT
fi
echo "bench: kernels:$run_kernels; skipped: ${skipped:-none}"

start=$(date +%s)
for model in ${BENCH_MODELS:-gdn kda}; do
  sed -i "/^$model /d" "$out/kernel-groups.txt" 2>/dev/null
  # Kernels computing this model's cells bit for bit alike run once, under
  # the first of their names (bench fingerprint).
  groups=
  for k in $run_kernels; do
    if [ "$k" = pinned ]; then fp=$("$BENCH" fingerprint $model)
    else fp=$(OPENBLAS_CORETYPE=$k "$BENCH" fingerprint $model); fi
    echo "$model $fp $k" >> "$out/kernel-groups.txt"
    case " $groups " in *" $fp:"*) ;; *) groups="$groups $fp:$k" ;; esac
  done
  reps=$(for g in $groups; do echo "${g#*:}"; done)
  # two kernels at a time, one per core
  set -- $reps
  while [ $# -gt 0 ]; do
    for k in "$1" "${2:-}"; do
      [ -n "$k" ] || continue
      if [ "$k" = pinned ]; then
        "$BENCH" falsify $model "$SEEDS" "$MSEEDS" > "$out/falsify-$model-$k.tmp" &
      else
        OPENBLAS_CORETYPE=$k "$BENCH" falsify $model "$SEEDS" "$MSEEDS" > "$out/falsify-$model-$k.tmp" &
      fi
    done
    wait
    shift; [ $# -gt 0 ] && shift
  done
  cat "$out"/falsify-$model-*.tmp > "$out/falsify-$model.tsv"
  rm -f "$out"/falsify-$model-*.tmp
done
cat "$out"/falsify-gdn.tsv "$out"/falsify-kda.tsv > "$out/falsify.tsv" 2>/dev/null
falsify_s=$(( $(date +%s) - start ))
# manual: "Beyond the gradient": the JVP, HVP and Taylor rows (bench/higher.c)
# under every kernel run, BENCH_HIGHER_SEEDS (10) seeds per correct cell
hseeds=${BENCH_HIGHER_SEEDS:-10}
for model in tanh-gemm gdn; do
  for k in $run_kernels; do
    if [ "$k" = pinned ]; then
      "$BENCH" falsify-higher $model "$hseeds" 3
    else
      OPENBLAS_CORETYPE=$k "$BENCH" falsify-higher $model "$hseeds" 3
    fi
  done
done > "$out/falsify-higher.tsv"
"$BENCH" summarize-higher "$out/falsify-higher.tsv" > "$out/falsify-higher-summary.tsv"
"$BENCH" resolution gdn > "$out/resolution-gdn.json"
"$BENCH" resolution kda > "$out/resolution-kda.json"
"$BENCH" speed > "$out/speed.json"
sh "$(dirname "$0")/speed.sh"
sh "$(dirname "$0")/python-side.sh"
"$BENCH" absgrowth > "$out/absgrowth.json"
# manual: "The f64 twin": each model's default check with and without its
# twin, side by side, and every mutant both ways
for m in gdn kda tanh-gemm; do
  "$BENCH" twin $m > "$out/twin-$m.json"
done
# manual: "Rounding classes": the mixed-precision matrix beside the
# constants (bench/mixed.md, included in the report below)
MIXED=${MIXED:-bench/mixed} BENCH_OUT="$out" sh "$(dirname "$0")/mixed.sh" > /dev/null
printf '%s\n%s\n%s\n%s\n%s\n' "$falsify_s" "$run_kernels" "$skipped" "$SEEDS" "$MSEEDS" > "$out/run-info.txt"
fi
falsify_s=$(sed -n 1p "$out/run-info.txt")
run_kernels=$(sed -n 2p "$out/run-info.txt")
skipped=$(sed -n 3p "$out/run-info.txt")
SEEDS=$(sed -n 4p "$out/run-info.txt")
MSEEDS=$(sed -n 5p "$out/run-info.txt")
"$BENCH" summarize "$out/falsify.tsv" > "$out/falsify-summary.tsv"
"$BENCH" misses "$out/falsify.tsv" > "$out/falsify-misses.tsv"
# cells where the tiered reference's verdict is not MPFR's (must be none)
"$BENCH" tiered "$out/falsify.tsv" > "$out/falsify-tiered.tsv"

# ------------------------------------------------------------ the report
num () { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1" | head -1; }
sub () { sed -n "s/.*\"$2\":{\([^}]*\)}.*/\1/p" "$1" | head -1; }
{
  echo "# gradcheck evidence ($(date -u +%Y-%m-%d), $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
  echo
  echo "Written by \`make bench\` (bench/run.sh, bench/bench.c) in ${falsify_s} s of falsify matrix."
  echo "Kernels run:$run_kernels. Not run: ${skipped:-none}."
  echo
  echo "Kernels that compute a model's cells bit for bit alike (same f32 loss and gradient on every shape and gate at seed 1) run the matrix once, under the first name; the groups (model, fingerprint, kernel):"
  echo
  echo '```'
  cat "$out/kernel-groups.txt"
  echo '```'
  echo
  echo "## 1. Falsify matrix"
  echo
  echo "Cells: {gdn, kda} x kernels x 3 shapes (T = 5 with BT = 4, T = 16 with BT = 16, T = 37 with BT = 16; K = V = 4; kda with HV = 2H) x {mild, strong gates} x seeds ($SEEDS for the correct backward, $MSEEDS per mutant) x {MPFR, f32, tiered (auto) reference}; every coordinate checked."
  echo "A number is the count of cells whose verdict is *fail* (for the correct backward: false alarms, must be 0; for a mutant: catches, should be all)."
  echo
  echo "| model | ref | backward | cells | derived bar | rel <= 5e-2 | rel <= 0.25 | torch 1e-5 + 1e-3 | forward oracle | worst nu (correct) |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  tail -n +2 "$out/falsify-summary.tsv" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, ($3 == "none" ? $10 : "") }'
  echo
  echo "Mutant cells that passed the derived bar, by mutant and by which check passed them (nu = |a - r| / bar of the same cell under each reference; *both (no effect)*: the MPFR check passes too, so the mutant does not change the cell's gradient beyond the adjoint rounding; *f32 only*: caught in MPFR mode, under the f32 floor, or invisible to a check against the mutant's own forward). Every cell is in bench/results/falsify-misses.tsv."
  echo
  echo "| model | mutant | missed by | cells | shapes | nu MPFR (min .. max) | nu f32 (min .. max) |"
  echo "|---|---|---|---|---|---|---|"
  tail -n +2 "$out/falsify-misses.tsv" | awk -F'\t' '
    { k = $1 "|" $6 "|" $9; n[k]++; sh[k] = sh[k] (index(sh[k], $3) ? "" : " " $3)
      if (!(k in lo1) || $7 < lo1[k]) lo1[k] = $7; if ($7 > hi1[k]) hi1[k] = $7
      if (!(k in lo2) || $8 < lo2[k]) lo2[k] = $8; if ($8 > hi2[k]) hi2[k] = $8 }
    END { for (k in n) { split(k, p, "|")
            printf "| %s | %s | %s | %d | %s | %s .. %s | %s .. %s |\n", p[1], p[2], p[3], n[k], sh[k], lo1[k], hi1[k], lo2[k], hi2[k] } }' | sort
  echo
  echo "Shapes: 0 = T 5, BT 4 (padded); 1 = T 16, BT 16 (no padding); 2 = T 37, BT 16 (padded)."
  echo
  if [ -s "$out/falsify-higher-summary.tsv" ]; then
    echo "### Beyond the gradient: JVP, HVP and the Taylor test (manual: \"Beyond the gradient\")"
    echo
    echo "bench/higher.c, every kernel run; tanh-gemm shapes M,K,N = 8,16,8 / 24,4,3 / 5,5,5; gdn's as above, both gates.  HVP: 3 random vectors per cell.  Taylor: one random direction, 24 levels; it calls the gradient and the HVP, not the tangent."
    echo
    echo "| model | check | backward | cells | fail | pass | inconclusive | worst nu (pass) |"
    echo "|---|---|---|---|---|---|---|---|"
    tail -n +2 "$out/falsify-higher-summary.tsv" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $9 }'
    echo
  fi
  echo "## 2. Resolution (default shapes, MPFR reference)"
  echo
  echo "| model | n | verdict | worst nu | median bar/|r| | p90 | worst | median smallest caught delta | spot checks agreeing |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for m in gdn kda; do
    f="$out/resolution-$m.json"
    s=$(sub "$f" mpfr)
    g () { echo "$s" | sed -n "s/.*\"$1\":\([^,]*\).*/\1/p"; }
    echo "| $m | $(num "$f" n) | $(g verdict | tr -d '"') | $(g worst_nu) | $(g resolution_median) | $(g resolution_p90) | $(g resolution_worst) | $(g delta_median) | $(g spot_checks_agree)/$(g spot_checks) |"
  done
  echo
  echo "f32 reference at the default step, same shapes:"
  echo
  for m in gdn kda; do
    f="$out/resolution-$m.json"
    s=$(sub "$f" f32)
    echo "- $m: $(echo "$s" | tr ',' ' ')"
  done
  echo
  echo "## 3. Speed (gdn, B=1, T=37, H=2, K=V=8, 2052 parameters)"
  echo
  f="$out/speed.json"
  echo "| measure | value |"
  echo "|---|---|"
  for k in full_check_1_thread_s full_check_2_threads_s full_check_1_thread_median_s full_check_2_threads_median_s speedup_2_threads random_direction_check_s f32_forward_s mpfr_forward_full_s mpfr_over_f32 mpfr_calls mpfr_mean_call_s time_in_callbacks_s check_time_s library_overhead peak_rss_mib kernel; do
    echo "| $k | $(num "$f" $k | tr -d '"') |"
  done
  echo
  if [ -f "$out/speed-gdn.md" ]; then
    cat "$out/speed-gdn.md"
    echo
  fi
  if [ -f "$out/python-side.md" ]; then
    cat "$out/python-side.md"
    echo
  fi
  echo "## The f64 twin (default shapes, seed 1, 1 thread; manual: \"The f64 twin\")"
  echo
  echo "The default check with the model's twin and without it (--twin off), in one run (interleaved, medians of 7 CPU times of the checking process after one warm-up each); the algorithm's resolution beside the f32 check's; every mutant both ways (bench twin MODEL; bench/results/twin-MODEL.json)."
  echo
  echo "| model | verdict (with / without) | CPU with / without (s) | ratio | algorithm resolution median / worst | f32 resolution median / worst | coordinates on Richardson | re-judged in MPFR |"
  echo "|---|---|---|---|---|---|---|---|"
  for m in gdn kda tanh-gemm; do
    tf="$out/twin-$m.json"
    [ -f "$tf" ] || continue
    v () { sed 's/,"mutants".*//' "$tf" | sed -n "s/.*\"$1\":\"*\([^,\"}]*\).*/\1/p"; }
    echo "| $m | $(v verdict) / $(v verdict_without) | $(v cpu_with_s) / $(v cpu_without_s) | $(v ratio) | $(v resolution_algorithm_median) / $(v resolution_algorithm_worst) | $(v resolution_f32_median) / $(v resolution_f32_worst) | $(v richardson_used) of $(v n) | $(v decided_mpfr) |"
  done
  echo
  echo "| model | mutant | precision-only | with the twin | without | algorithm failures | precision | beyond any rounding | of |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for m in gdn kda tanh-gemm; do
    tf="$out/twin-$m.json"
    [ -f "$tf" ] || continue
    sed 's/.*"mutants":\[//; s/\]}$//; s/},{/}\n{/g' "$tf" | while read -r line; do
      g () { echo "$line" | sed -n "s/.*\"$1\":\"*\([^,\"}]*\).*/\1/p"; }
      echo "| $m | $(g mutant) | $(g precision_only) | $(g verdict) | $(g verdict_without) | $(g failed_algorithm) | $(g precision) | $(g mismatch) | $(g of) |"
    done
  done
  echo
  echo "## 4. Targets"
  echo
  fa=$(awk -F'\t' 'NR > 1 && $3 == "none" { s += $5 } END { print s + 0 }' "$out/falsify-summary.tsv")
  missed=$(awk -F'\t' 'NR > 1 && $9 != "both (no effect)" && !($6 ~ /softplus-outside|chunk-no-read-scale|double-scale/) { n++ } END { print n + 0 }' "$out/falsify-misses.tsv")
  r1=$(sub "$out/resolution-gdn.json" mpfr | sed -n 's/.*"resolution_median":\([^,]*\).*/\1/p')
  r2=$(sub "$out/resolution-kda.json" mpfr | sed -n 's/.*"resolution_median":\([^,]*\).*/\1/p')
  t2=$(num "$f" full_check_2_threads_median_s)
  sp=$(num "$f" speedup_2_threads)
  ov=$(num "$f" library_overhead)
  verdict () { if awk "BEGIN { exit !($1) }"; then echo met; else echo "**missed**"; fi; }
  echo "| target | measured | |"
  echo "|---|---|---|"
  echo "| 0 false alarms (correct backward, derived bar) | $fa | $(verdict "$fa == 0") |"
  tc=$(sed -n 's/^# \([0-9]*\) cells.*/\1/p' "$out/falsify-tiered.tsv")
  td=$(sed -n 's/.*, \([0-9]*\) verdicts differ/\1/p' "$out/falsify-tiered.tsv")
  echo "| --ref auto gives MPFR's verdict in every cell | $td of $tc cells differ (bench/results/falsify-tiered.tsv) | $(verdict "${td:-1} == 0") |"
  echo "| every mutant caught where its reference can see it | $missed cells missed by a check that could see them (f32 cells under the f32 floor) | see the table of misses |"
  echo "| MPFR median resolution <= 1e-4, gdn | $r1 | $(verdict "$r1 <= 1e-4") |"
  echo "| MPFR median resolution <= 1e-4, kda | $r2 | $(verdict "$r2 <= 1e-4") |"
  echo "| 2052-parameter gdn full check <= 3 s, 2 threads (median) | $t2 s | $(verdict "$t2 <= 3") |"
  echo "| 2 threads >= 1.8x faster than 1 (medians) | $sp | $(verdict "$sp >= 1.8") |"
  echo "| library overhead <= 10 % of the reference forwards' time | $(awk "BEGIN { printf \"%.2f %%\", 100 * $ov }") | $(verdict "$ov <= 0.1") |"
  # manual: "The f64 twin"
  for m in gdn kda; do
    tf="$out/twin-$m.json"
    [ -f "$tf" ] || continue
    tv () { sed 's/,"mutants".*//' "$tf" | sed -n "s/.*\"$1\":\"*\([^,\"}]*\).*/\1/p"; }
    rm_=$(tv resolution_algorithm_median); rw_=$(tv resolution_algorithm_worst); ra_=$(tv ratio)
    echo "| $m with its twin: the algorithm's median resolution <= 1e-8 | $rm_ | $(verdict "$rm_ <= 1e-8") |"
    echo "| $m with its twin: the algorithm's worst resolution <= 1e-5 | $rw_ | $(verdict "$rw_ <= 1e-5") |"
    echo "| $m: the default check with its twin <= 3x without (CPU) | $ra_ | $(verdict "$ra_ <= 3") |"
  done
  echo
  rs1=$(sub "$out/resolution-gdn.json" row_scale)
  rs2=$(sub "$out/resolution-kda.json" row_scale)
  wn1=$(sub "$out/resolution-gdn.json" mpfr | sed -n 's/.*"worst_nu":\([^,]*\).*/\1/p')
  wn2=$(sub "$out/resolution-kda.json" mpfr | sed -n 's/.*"worst_nu":\([^,]*\).*/\1/p')
  field () { echo "$1" | sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p"; }
  g="$out/absgrowth.json"
  echo "The resolution is set by the adjoint term (lambda * sqrt(d_b) * u * m_i), and m_i is the largest gradient of element i's tensor: the bar is tight where it matters most (the worst nu of the correct backward over the matrix is below 1 by a factor of two or less, table 1), but a typical element is a tenth of its tensor's largest, and so is resolved ten times more coarsely than the largest.  Two ways to sharpen it, measured (\`bench resolution MODEL\`, \`bench absgrowth\`):"
  echo
  echo "- A finer scale, the largest gradient of the element's row (all indices but the last) instead of its tensor: median resolution $(field "$rs1" resolution_median) (gdn) and $(field "$rs2" resolution_median) (kda), under the target, but on the same check the worst nu of the correct backward rises from $wn1 to $(field "$rs1" worst_nu) (gdn) and from $wn2 to $(field "$rs2" worst_nu) (kda): the row scale spends the margin that covers cancellation inside a row, and the falsify matrix's worst cell has nu $(awk -F'\t' 'NR > 1 && $2 == "mpfr" && $3 == "none" && $10 > w { w = $10 } END { print w + 0 }' "$out/falsify-summary.tsv") with the tensor scale, so a rise of that order there would be false alarms (not measured: the matrix has not been run with the row scale).  We keep the tensor scale."
  echo "- The rigorous first-order bound, the backward run on absolute values (Higham's |x|^T|y|, gc_model.grad_magnitude_f32), is looser, not tighter, for these models: the delta rule's transition alpha (I - beta k k^T) contracts, but its absolute value grows by up to alpha (1 + beta) per step.  At gdn's default K = $(field "$(cat "$g")" K), T = $(field "$(cat "$g")" T) and mild gates, max(|M_T|...|M_1|) / max|M_T...M_1| has median $(field "$(cat "$g")" ratio_median) over $(field "$(cat "$g")" seeds) seeds (from $(field "$(cat "$g")" ratio_min) to $(field "$(cat "$g")" ratio_max)).  kda uses it only for the last stage of its two reductions (A_log, dt_bias): a sum of |terms|, each term at the tensor scale of its factor."
  echo
  echo "What would move it: a per-element estimate of the f32 backward's own rounding that is neither of these, such as the same backward run in f64 (the difference is the f32 rounding itself, to within 2^-53), at the price of a second implementation of the backward that a bug must not share."
  if [ -f "$out/mixed.md" ]; then echo; cat "$out/mixed.md"; fi
} > "$out/report.md"
{
  printf '{"kernels":"%s","skipped":"%s","seeds":%s,"mutant_seeds":%s,' "$run_kernels" "$skipped" "$SEEDS" "$MSEEDS"
  printf '"resolution_gdn":%s,' "$(cat "$out/resolution-gdn.json")"
  printf '"resolution_kda":%s,' "$(cat "$out/resolution-kda.json")"
  printf '"speed":%s}\n' "$(cat "$out/speed.json")"
} > "$out/summary.json"
echo "bench: wrote $out/report.md"
