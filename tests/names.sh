#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# names.sh -- model, block and constant names come from plugins and shard
# files: they must not forge the structure of a report.  The hostile plugin
# (tests/hostile_plugin.c) names its model and blocks with new lines and
# TAP test points ("tap"), terminal escape sequences and bytes that are not
# UTF-8 ("esc"), and XML markup with a path ("xml").
. "${srcdir:-.}/tests/tap.sh"
G=$GRADCHECK
H=$PLUGIN_HOSTILE
B=${TESTBIN:-tests}
if [ -z "$H" ] || [ ! -f "$H" ]; then
  skip "hostile names" "the hostile plugin is not built"
  done_testing
  exit $?
fi
ESC=$(printf '\033')
BEL=$(printf '\007')

# TAP: every line is the plan, a test point or a comment; the plan counts
# the test points; no forged point; no directive smuggled into a failure.
tap_shape () {   # tap_shape FILE PLAN
  awk -v want="$2" '
    /^1\.\.[0-9]+$/ { plans++; plan = substr($0, 4) + 0; next }
    /^(not )?ok [0-9]+ - / { points++; if ($2 == "99" || $2 == "98" || $3 == "99" || $3 == "98") bad = 1; next }
    /^#/ { next }
    { bad = 1 }
    END { exit !(plans == 1 && plan == want && points == want && !bad) }' "$1"
}
for mode in tap tap-bug esc-bug xml-bug; do
  $G run --plugin "$H" --shape "$mode" --format tap > "$TMPD/t" 2> "$TMPD/e"; rc=$?
  check "TAP of a model named to forge ($mode): 4 test points and nothing else (exit $rc)" tap_shape "$TMPD/t" 4
  check "... no TODO or SKIP directive from a name ($mode)" \
    sh -c "! grep '^not ok' '$TMPD/t' | grep -q ' # '"
done
$G run --plugin "$H" --shape tap-bug --format tap > "$TMPD/t"; rc=$?
check "the hostile model's bug still fails (exit $rc)" test "$rc" -eq 1
check "... with 2 failing test points" test "$(grep -c '^not ok' "$TMPD/t")" -eq 2

# Text and Markdown: no terminal control reaches the output; names stay on
# their lines.
for mode in tap-bug esc-bug bytes-bug xml-bug; do
  for fmt in text md; do
    $G run --plugin "$H" --shape "$mode" --format $fmt > "$TMPD/o" 2> "$TMPD/e"
    check "$fmt report ($mode): no ESC or BEL byte on stdout or stderr" \
      sh -c "! grep -q '[$ESC$BEL]' '$TMPD/o' '$TMPD/e'"
    check "$fmt report ($mode): no line starts with a forged test point" \
      sh -c "! grep -q '^ok 9[789]' '$TMPD/o'"
  done
done
$G run --plugin "$H" --shape esc-bug > "$TMPD/o"
check "text report: the escape sequence is shown, escaped" grep -q 'hostile\\x1B\[2J' "$TMPD/o"
$G run --plugin "$H" --shape bytes-bug > "$TMPD/o"
check "text report: a C1 control (CSI) and bytes that are not UTF-8 are shown as \\xHH" \
  sh -c "grep -q 'model hostile\\\\xC2\\\\x9B\\[2J' '$TMPD/o' && grep -q 'a\\\\xFF\\\\xC0\\\\x80\\[0\\]' '$TMPD/o'"
RAW=$(printf '\233\377')
check "... and none of those bytes is written raw" sh -c "! LC_ALL=C grep -q '[$RAW]' '$TMPD/o'"
$G run --plugin "$H" --shape tap-bug > "$TMPD/o"
check "text report: one verdict line and one diagnosis line" \
  sh -c "test \$(grep -c '^verdict:' '$TMPD/o') -eq 1 && test \$(grep -c '^diagnosis:' '$TMPD/o') -eq 1"
$G explain --plugin "$H" --shape tap-bug --index 0 > "$TMPD/md"
check "explain (Markdown): one title and three term sections, whatever the names" \
  sh -c "test \$(grep -c '^# ' '$TMPD/md') -eq 1 && test \$(grep -c '^## ' '$TMPD/md') -eq 3"

# JSON stays valid, and names read back from a shard file are escaped too.
for mode in tap-bug esc-bug xml-bug; do
  $G run --plugin "$H" --shape "$mode" --format json > "$TMPD/j.json"
  $G merge --format tap "$TMPD/j.json" > "$TMPD/mt"; rc=$?
  check "a JSON report of the $mode model reads back (exit $rc)" test "$rc" -eq 1
  check "... and its TAP has 4 test points and nothing else" tap_shape "$TMPD/mt" 4
  $G merge "$TMPD/j.json" > "$TMPD/mo" 2>&1
  check "... and its text report no ESC byte" sh -c "! grep -q '[$ESC$BEL]' '$TMPD/mo'"
done

# SVG of gradcheck steps: well-formed whatever the names; the default file
# name stays in the current directory.
for mode in esc bytes; do
  $G steps --plugin "$H" --shape $mode --index 1 --output "$TMPD/e.svg" > "$TMPD/st"
  check "steps on a model named with $mode writes a well-formed SVG" "$B/svgcheck" "$TMPD/e.svg"
  check "... and a table without ESC bytes" sh -c "! grep -q '[$ESC$BEL]' '$TMPD/st'"
done
$G steps --plugin "$H" --shape xml --index 0 --output "$TMPD/x.svg" > "$TMPD/st"; rc=$?
check "steps on a model named 'R&D <model>' exits 0 (exit $rc)" test "$rc" -eq 0
check "... and writes a well-formed SVG" "$B/svgcheck" "$TMPD/x.svg"
check "... naming the model escaped" grep -q 'R&amp;D &lt;model&gt;' "$TMPD/x.svg"
mkdir "$TMPD/cwd"
(cd "$TMPD/cwd" && "$G" steps --plugin "$H" --shape xml --index 0 > out) ; rc=$?
check "steps' default file name from a model named '.../../x' stays here (exit $rc)" \
  test -f "$TMPD/cwd/steps-R_D__model_____x-0.svg"
check "... and is well-formed" "$B/svgcheck" "$TMPD/cwd/steps-R_D__model_____x-0.svg"
done_testing
