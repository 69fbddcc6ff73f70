#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# speed.sh -- the side-by-side speed table of make bench: gradcheck's check
# of gdn against torch.autograd.gradcheck on the same function, at the same
# point, in the same run, on one thread.  Run by bench/run.sh (the whole
# bench) or alone:
#
#   bench/run.sh speed          (or: make bench BENCH_ONLY=speed)
#
# Rows: gdn at T in BENCH_SPEED_T (default "37 257 1024 4096"; T=37 is the
# model's default shape, 2,052 parameters), the other shape keys default.
# Columns: gradcheck run gdn --ref mpfr, --ref f64, --ref auto (when the
# binary accepts it: it is tried, and the column is dropped with a note when
# refused), torch.autograd.gradcheck in float64 with its defaults (full
# Jacobian) and with fast_mode=True (bench/torch_gdn.py).
#
# Each cell is the median of BENCH_SPEED_REPS (3) whole-process runs
# (bench time: wall and CPU seconds), gradcheck with --threads 1 and
# OPENBLAS_NUM_THREADS=1, torch with torch.set_num_threads(1) and
# OMP_NUM_THREADS=1.  A full-coordinate cell runs only when its estimate
# (one run) is at most BENCH_SPEED_BUDGET seconds (300): for gradcheck, from
# timing 1 and 32 evenly spaced coordinates (--directions I,J,...), for
# torch, 2n forwards at the measured cost of one (its numerical Jacobian).
# Above it the cell is skipped, and says its estimate.  An estimate is
# one wall-clock run (torch's from the median of a few forwards): the
# cells measured so far came out within about 2x of theirs, either way
# (machine load moves them most).  Every T also gets
# --directions random:32 for each gradcheck reference.  Ratios: torch f64
# full's median over the cell's (how many times faster than torch full, in
# the same run); where torch full is skipped, the ratio against its estimate,
# marked "est.".
#
# The point: gradcheck run gdn --dump writes the tensors it checks (the f32
# parameters and the seeded cotangents); torch_gdn.py reads them as float64
# and must reproduce gradcheck's reference loss (--ref mpfr and --ref f64)
# to 1e-12 relative before anything is timed, else the torch columns are
# skipped: a benchmark of another function proves nothing.  torch comes
# from Debian's python3-torch (BENCH_PYTHON, else the first python3 on PATH
# or /usr/bin/python3 that imports torch and numpy); without it the torch
# columns are skipped with a message.  Neither make check nor .ci/run needs
# torch.
#
# At scale: gdn at each T of BENCH_SPEED_SCALE (default "1024 4096"; empty:
# none), --ref auto, full and random:32, twin on and off, --threads on every
# core, one run each, its own table.
#
# Writes $out/speed-gdn.tsv (one line per cell) and $out/speed-gdn.md.
set -u
BENCH=${BENCH:-bench/bench}
GRADCHECK=${GRADCHECK:-gradcheck/gradcheck}
out=${BENCH_OUT:-bench/results}
TS=${BENCH_SPEED_T:-37 257 1024 4096}
REPS=${BENCH_SPEED_REPS:-3}
BUDGET=${BENCH_SPEED_BUDGET:-300}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gc-speed.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
tsv="$out/speed-gdn.tsv"
md="$out/speed-gdn.md"
tab=$(printf '\t')
load0=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

# ------------------------------------------------------------- torch?
PY=
notes=
for p in ${BENCH_PYTHON:-} python3 /usr/bin/python3; do
  if "$p" -c 'import torch, numpy' >/dev/null 2>&1; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
  torchv=$("$PY" -c 'import torch; print(torch.__version__)')
  echo "speed: torch $torchv ($PY)"
else
  torchv=
  notes="$notes
- torch columns skipped: no python3 here imports torch and numpy (install Debian's python3-torch, or set BENCH_PYTHON)."
  echo "speed: torch columns skipped: python3-torch is not importable (set BENCH_PYTHON, or apt-get install python3-torch)"
fi

# ------------------------------------------------------------- --ref auto?
refs="mpfr f64"
if "$GRADCHECK" run gdn --ref auto --directions random:1 --threads 1 >/dev/null 2>"$tmp/auto.err"; then
  refs="mpfr f64 auto"
else
  rc=$?
  if [ $rc -eq 2 ]; then
    notes="$notes
- --ref auto column skipped: this gradcheck refuses it ($(head -1 "$tmp/auto.err"))."
    echo "speed: --ref auto column skipped: $(head -1 "$tmp/auto.err")"
  else
    refs="mpfr f64 auto"
  fi
fi

# ------------------------------------------------------------- helpers
# timed LABEL REPS CMD...: "median_wall median_cpu runs_wall runs_cpu exit"
# of bench time, the last run's output in $tmp/LABEL.out
timed () {
  label=$1; reps=$2; shift 2
  "$BENCH" time "$reps" "$tmp/$label.out" "$@"
}
# the verdict and the median and worst resolution of a text report
verdict_of () { sed -n 's/^verdict: \([A-Z-]*\).*/\1/p' "$1" | head -1 | tr 'A-Z' 'a-z'; }
resol_of () { sed -n 's/^resolution: median \([^,]*\), worst \([^;]*\);.*/\1 \2/p' "$1" | head -1; }
fnum () { awk -v x="$1" 'BEGIN { printf "%.3g", x }'; }

printf 'T\tn\tdirections\ttool\tref\tmedian_wall_s\tmedian_cpu_s\truns_wall_s\truns_cpu_s\texit\tverdict\tresolution_median\tresolution_worst\ttorch_full_over_this_wall\ttorch_full_over_this_cpu\tnote\n' > "$tsv.tmp"
# a cell: T n dirs tool ref timing(5 fields) verdict rmed rworst note
cell () {
  c_head="$1$tab$2$tab$3$tab$4$tab$5" c_v=$7 c_r1=$8 c_r2=$9 c_note=${10}
  set -- $6
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t-\t-\t%s\n' \
    "$c_head" "$1" "$2" "$3" "$4" "$5" "$c_v" "$c_r1" "$c_r2" "$c_note" >> "$tsv.tmp"
}
skip () {
  printf '%s\t%s\t%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >> "$tsv.tmp"
}

for T in $TS; do
  shape="T=$T"
  # the point, and gradcheck's reference losses there
  d="$tmp/dump-$T"
  if ! "$GRADCHECK" run gdn --shape "$shape" --directions random:1 --threads 1 \
       --dump "$d" --format json > "$tmp/point-$T.json" 2> "$tmp/point-$T.err"; then
    echo "speed: T=$T: gradcheck run --dump failed: $(head -1 "$tmp/point-$T.err")" >&2
    skip "$T" - - gradcheck all "the point could not be written: $(head -1 "$tmp/point-$T.err")"
    continue
  fi
  n=$(sed -n 's/.*"n":\([0-9]*\).*/\1/p' "$tmp/point-$T.json" | head -1)
  lm=$(sed -n 's/.*"loss_reference":\([^,]*\).*/\1/p' "$tmp/point-$T.json" | head -1)
  lf=$("$GRADCHECK" run gdn --shape "$shape" --directions random:1 --ref f64 --threads 1 --format json \
       | sed -n 's/.*"loss_reference":\([^,]*\).*/\1/p' | head -1)
  echo "speed: T=$T, n=$n: gradcheck reference loss $lm (MPFR), $lf (f64)"

  # ---- torch
  tfull=; tfull_est=; tcpu=
  if [ -n "$PY" ]; then
    same=1
    for l in "$lm" "$lf"; do
      if ! "$PY" "$here/torch_gdn.py" "$d" --check-loss "$l" > "$tmp/loss-$T.txt" 2>&1; then same=0; fi
      sed 's/^/speed:   /' "$tmp/loss-$T.txt"
    done
    if [ $same = 0 ]; then
      notes="$notes
- T=$T: torch columns skipped: torch_gdn.py's loss differs from gradcheck's at the same point ($(tr '\n' ' ' < "$tmp/loss-$T.txt"))."
      skip "$T" "$n" all torch f64 "its loss differs from gradcheck's"
    else
      tl=$(sed -n 's/^torch f64 loss \([^ ]*\).*/\1/p' "$tmp/loss-$T.txt")
      notes="$notes
- T=$T ($n parameters): loss at the point, gradcheck MPFR $lm, gradcheck f64 $lf, torch f64 $tl; $(sed -n 's/^torch autograd gradient/torch autograd gradient/p' "$tmp/loss-$T.txt")."
      tfull_est=$("$PY" "$here/torch_gdn.py" "$d" --estimate | sed -n 's/.*full_gradcheck_estimate_s \([^ ]*\).*/\1/p')
      if awk "BEGIN { exit !($tfull_est <= $BUDGET) }"; then
        echo "speed: T=$T torch full (estimate $(fnum "$tfull_est") s) x $REPS"
        tm=$(timed torch-full-$T "$REPS" "$PY" "$here/torch_gdn.py" "$d" --gradcheck full)
        v=$(sed -n 's/.* result \([A-Za-z]*\) .*/\1/p' "$tmp/torch-full-$T.out")
        cell "$T" "$n" all torch f64 "$tm" "$v" - - "full Jacobian, defaults; in-process $(sed -n 's/.*in_process_s \(.*\)/\1/p' "$tmp/torch-full-$T.out") s"
        set -- $tm; tfull=$1; tcpu=$2
      else
        skip "$T" "$n" all torch f64 "skipped: estimate $(fnum "$tfull_est") s > budget $BUDGET s (2n = $((2 * n)) forwards)"
        echo "speed: T=$T torch full skipped: estimate $(fnum "$tfull_est") s > $BUDGET s"
      fi
      echo "speed: T=$T torch fast_mode x $REPS"
      tm=$(timed torch-fast-$T "$REPS" "$PY" "$here/torch_gdn.py" "$d" --gradcheck fast)
      v=$(sed -n 's/.* result \([A-Za-z]*\) .*/\1/p' "$tmp/torch-fast-$T.out")
      cell "$T" "$n" fast torch f64 "$tm" "$v" - - "fast_mode=True; in-process $(sed -n 's/.*in_process_s \(.*\)/\1/p' "$tmp/torch-fast-$T.out") s"
    fi
  fi

  # ---- gradcheck
  idx=$(awk -v n="$n" 'BEGIN { for (k = 0; k < 32; k++) printf "%s%d", k ? "," : "", int((k + 0.5) * n / 32) }')
  for ref in $refs; do
    g="$GRADCHECK run gdn --shape $shape --ref $ref --threads 1"
    t1=$(timed est1 1 $g --directions 0); set -- $t1; t1=$1
    t32=$(timed est32 1 $g --directions "$idx"); set -- $t32; t32=$1
    est=$(awk -v a="$t1" -v b="$t32" -v n="$n" 'BEGIN { d = (b - a) / 31; if (d < 0) d = 0; print a + d * (n - 1) }')
    if awk "BEGIN { exit !($est <= $BUDGET) }"; then
      echo "speed: T=$T gradcheck --ref $ref all (estimate $(fnum "$est") s) x $REPS"
      tm=$(timed gc-$ref-$T "$REPS" $g --directions all)
      set -- $(resol_of "$tmp/gc-$ref-$T.out") - -
      cell "$T" "$n" all gradcheck "$ref" "$tm" "$(verdict_of "$tmp/gc-$ref-$T.out")" "$1" "$2" "estimate was $(fnum "$est") s"
    else
      skip "$T" "$n" all gradcheck "$ref" "skipped: estimate $(fnum "$est") s > budget $BUDGET s (from 1 and 32 coordinates)"
      echo "speed: T=$T gradcheck --ref $ref all skipped: estimate $(fnum "$est") s > $BUDGET s"
    fi
    echo "speed: T=$T gradcheck --ref $ref random:32 x $REPS"
    tm=$(timed gc-$ref-r-$T "$REPS" $g --directions random:32)
    set -- $(resol_of "$tmp/gc-$ref-r-$T.out") - -
    cell "$T" "$n" random:32 gradcheck "$ref" "$tm" "$(verdict_of "$tmp/gc-$ref-r-$T.out")" "$1" "$2" ""
  done

  # ---- ratios against torch full of this T (measured, else its estimate)
  awk -F'\t' -v OFS='\t' -v T="$T" -v w="$tfull" -v c="$tcpu" -v e="$tfull_est" '
    $1 == T && $6 != "-" {
      if (w != "") { $14 = sprintf("%.3g", w / $6); $15 = sprintf("%.3g", c / $7) }
      else if (e != "") { $14 = sprintf("est. %.3g", e / $6) }
    }
    { print }' "$tsv.tmp" > "$tsv.tmp2" && mv "$tsv.tmp2" "$tsv.tmp"
done
mv "$tsv.tmp" "$tsv"

# ---- at scale (issue 39): gdn at each T of BENCH_SPEED_SCALE (default
# "1024 4096"; empty: none), --ref auto, full and --directions random:32,
# the twin on and --twin off, on every core, one run each (the issue's
# target: a full-coordinate check at T = 4096 within 15 minutes on 2 cores,
# within 1.5x of --twin off).  GRADCHECK_PROFILE=1 adds the call counts
# (manual: "Where the time goes") to the reports the rows are read from.
SCALE=${BENCH_SPEED_SCALE-1024 4096}
scale_md=
nth=$(getconf _NPROCESSORS_ONLN)
GRADCHECK_PROFILE=1
export GRADCHECK_PROFILE
for S in $SCALE; do
  for dirs in all random:32; do
    for twin in on off; do
      tag=gc-scale-$S-$(echo "$dirs" | tr -d :)-$twin
      echo "speed: T=$S gradcheck --ref auto --directions $dirs --twin $twin, --threads $nth, one run"
      tm=$(timed "$tag" 1 "$GRADCHECK" run gdn \
           --shape "T=$S" --ref auto --threads "$nth" --directions "$dirs" \
           --twin "$twin")
      o="$tmp/$tag.out"
      set -- $tm
      nd=$(sed -n 's/^verdict: .* of \([0-9]*\);.*/\1/p' "$o" | head -1)
      tier=$(sed -n 's/^tiered reference: \(f64 decided [0-9]* of [0-9]* directions, MPFR [0-9]*\).*/\1/p' "$o" | head -1)
      per=$(sed -n 's/^  per direction judged ([0-9]*): forward \([^ ]*\).*/\1/p' "$o" | head -1)
      set -- $1 $2 $5 $(resol_of "$o") - -
      scale_md="$scale_md
| $S | $dirs | $twin | ${nd:-?} | $nth | $(fnum "$1") s | $(fnum "$2") s | $3 | $(verdict_of "$o") | $4 | $5 | ${per:-?} | ${tier:-?} |"
    done
  done
done
unset GRADCHECK_PROFILE
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ------------------------------------------------------------- Markdown
# one table cell: "S s (R x)" from the tsv row of (T, dirs, tool, ref)
{
  echo "### Side by side with torch.autograd.gradcheck (gdn, 1 thread)"
  echo
  echo "Written by \`bench/run.sh speed\` (bench/speed.sh) from $started to $(date -u '+%H:%M UTC'), $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(getconf _NPROCESSORS_ONLN) cores, load average $load0 at the start and $load1 at the end (the machine may be shared: the CPU-time table below is the steadier measure). gradcheck $("$GRADCHECK" --version | head -1 | sed 's/.* //'), OpenBLAS kernel ${OPENBLAS_CORETYPE:-not pinned}; torch ${torchv:-not installed}."
  echo
  echo "Each cell: the median of $REPS whole-process runs in seconds, and (in parentheses) how many times faster than torch.autograd.gradcheck f64 full at the same T in this run (*est.*: against the estimate of a torch full run that was skipped). Full-coordinate cells run when their one-run estimate is at most $BUDGET s."
  echo
  awk -F'\t' -v refs="$refs" -v col=6 -v rcol=14 -f - "$tsv" <<'EOF'
function cellv(k) { if (!(k in s)) return "n/a"; if (s[k] == "-") { e = note[k]; sub(/ s > .*/, "", e); sub(/.*estimate /, "", e); return "skipped (est. " e " s)" } return sprintf("%.3g", s[k]) " s" (r[k] != "-" && r[k] != "" ? " (" r[k] "x)" : "") (v[k] != "" && v[k] != "pass" && v[k] != "True" ? " " v[k] : "") }
NR > 1 { k = $1 SUBSEP $3 SUBSEP $4 SUBSEP $5; s[k] = $col; r[k] = $rcol; note[k] = $16; v[k] = $11; n[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++nt] = $1 } }
END {
  nr = split(refs, R, " ")
  for (pass = 1; pass <= 2; pass++) {
    d = pass == 1 ? "all" : "random:32"
    print (pass == 1 ? "Full-coordinate check (every parameter a direction):" : "Random directions (`--directions random:32`; torch has no such mode, its fast_mode checks one random direction):")
    print ""
    h = "| T | n |"; sep = "|---|---|"
    for (i = 1; i <= nr; i++) { h = h " gradcheck --ref " R[i] " |"; sep = sep "---|" }
    if (pass == 1) { h = h " torch f64 full | torch fast_mode |"; sep = sep "---|---|" }
    print h; print sep
    for (t = 1; t <= nt; t++) {
      T = order[t]; line = "| " T " | " n[T] " |"
      for (i = 1; i <= nr; i++) line = line " " cellv(T SUBSEP d SUBSEP "gradcheck" SUBSEP R[i]) " |"
      if (pass == 1) line = line " " cellv(T SUBSEP "all" SUBSEP "torch" SUBSEP "f64") " | " cellv(T SUBSEP "fast" SUBSEP "torch" SUBSEP "f64") " |"
      print line
    }
    print ""
  }
}
EOF
  echo "The same runs in CPU seconds (user + system of the process; ratios against torch full's CPU seconds):"
  echo
  awk -F'\t' -v refs="$refs" -v col=7 -v rcol=15 -f - "$tsv" <<'EOF'
function cellv(k) { if (!(k in s)) return "n/a"; if (s[k] == "-") return "skipped"; return sprintf("%.3g", s[k]) " s" (r[k] != "-" && r[k] != "" ? " (" r[k] "x)" : "") }
NR > 1 { k = $1 SUBSEP $3 SUBSEP $4 SUBSEP $5; s[k] = $col; r[k] = $rcol; n[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++nt] = $1 } }
END {
  nr = split(refs, R, " ")
  h = "| T | directions |"; sep = "|---|---|"
  for (i = 1; i <= nr; i++) { h = h " gradcheck --ref " R[i] " |"; sep = sep "---|" }
  h = h " torch f64 full | torch fast_mode |"; sep = sep "---|---|"
  print h; print sep
  for (t = 1; t <= nt; t++) for (pass = 1; pass <= 2; pass++) {
    T = order[t]; d = pass == 1 ? "all" : "random:32"; line = "| " T " | " d " |"
    for (i = 1; i <= nr; i++) line = line " " cellv(T SUBSEP d SUBSEP "gradcheck" SUBSEP R[i]) " |"
    if (pass == 1) line = line " " cellv(T SUBSEP "all" SUBSEP "torch" SUBSEP "f64") " | " cellv(T SUBSEP "fast" SUBSEP "torch" SUBSEP "f64") " |"
    else line = line " | |"
    print line
  }
  print ""
}
EOF
  if [ -n "$scale_md" ]; then
    echo "At scale: the default reference (\`--ref auto\`), full and random:32, the twin on and off, on every core, one run each (the resolution is the f32 check's; forward calls per direction from GRADCHECK_PROFILE):"
    echo
    echo "| T | directions | twin | n | threads | wall | CPU | exit | verdict | resolution median | worst | forward calls / direction | tiered reference |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "$scale_md" | sed '/^$/d'
    echo
  fi
  echo "Verdicts and resolutions (median, worst) of the gradcheck cells:"
  echo
  echo "| T | directions | ref | verdict | resolution median | worst |"
  echo "|---|---|---|---|---|---|"
  awk -F'\t' 'NR > 1 && $4 == "gradcheck" && $6 != "-" { printf "| %s | %s | %s | %s | %s | %s |\n", $1, $3, $5, $11, $12, $13 }' "$tsv"
  echo
  echo "Notes:"
  printf '%s\n' "$notes" | sed '/^$/d'
  awk -F'\t' 'NR > 1 && $6 == "-" { printf "- T=%s, %s %s (%s): %s\n", $1, $4, $5, $3, $16 }' "$tsv"
  echo
  echo "Data: $tsv (runs, exit statuses, notes). Settings: BENCH_SPEED_T=\"$TS\" BENCH_SPEED_REPS=$REPS BENCH_SPEED_BUDGET=$BUDGET. Rerun: \`bench/run.sh speed\`."
} > "$md"
echo "speed: wrote $tsv and $md"
