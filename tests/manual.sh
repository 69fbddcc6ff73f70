#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# manual.sh -- the manual renders for its readers: no raw TeX reaches the
# Info manual, plain text or the HTML manual without MathJax; with MathJax
# every formula is handed to it, in TeX it knows; and the indices list every
# public function, type and status code of <gradcheck.h>.  Where TeX is
# installed, the manual typesets without an error.  doc/math.texi says how
# one formula source gives the three renderings.
. "${srcdir:-.}/tests/tap.sh"
top=${srcdir:-.}
info=$top/doc/gradcheck.info

# raw_tex FILE...: the lines holding a TeX control word (\lambda, \sqrt{,
# \, \|) or a $$ display: math that reached the reader unrendered.  One
# letter after a backslash alone (\n in C code) is not TeX.
# Text quoted as code (‘\xHH’, makeinfo's rendering of @samp and @code) is
# what the reader types, not a formula: it is left out.
raw_tex () { sed "s/‘[^’]*’//g" "$@" | grep -nE '\\[A-Za-z]{2,}|\\[A-Za-z]+\{|\\[,;!|]|\$\$'; }
# report NAME: print a file's first lines as TAP diagnostics
report () { sed -n '1,15s/^/# /p' "$1"; }

# The detector itself: raw TeX as makeinfo writes it when a formula has no
# plain rendering (the state of the manual before doc/math.texi).
cat > "$TMPD/raw.texi" <<'EOF'
\input texinfo
@setfilename raw.info
@settitle raw
@node Top
@top raw
The budget @math{\varepsilon = \lambda\sqrt{d_f}\,\mathrm{ulp}_p(M_L)}.
@bye
EOF
MAKEINFO=$(command -v makeinfo || :)
if [ -n "$MAKEINFO" ]; then
  "$MAKEINFO" --no-split -o "$TMPD/raw.info" "$TMPD/raw.texi" 2>/dev/null
  check "the detector finds the raw TeX makeinfo writes for an unrendered formula" \
    eval 'raw_tex "$TMPD/raw.info" > /dev/null'
else
  skip "the detector finds raw TeX in makeinfo's output" "makeinfo not found"
fi

# The Info manual as built (and as distributed).
if [ -f "$info" ]; then
  ok "the Info manual exists ($info)"
  raw_tex "$info"* > "$TMPD/info.raw"
  check "no raw TeX in the Info manual ($(wc -l < "$TMPD/info.raw") lines)" \
    test ! -s "$TMPD/info.raw"
  report "$TMPD/info.raw"
  # A formula from "Reference rounding", rendered: the budget of one forward
  # evaluation.
  check "the Info manual renders the reference rounding budget as λ√d_f·ulp_p(M_L)" \
    grep -q 'ε = λ√d_f·ulp_p(M_L)' "$info"
  check "the Info manual renders the pass criterion display" \
    grep -q 'nu = |a - r| / bar <= 1' "$info"
else
  not_ok "the Info manual exists ($info)"
fi

# Indices: every public function (a declaration "gc_name (" at the start of
# a line's name), every gc_ type and every status code of <gradcheck.h>
# is in the function index.
sed -n '/Node: Function index/,/\x1f/p' "$info" 2>/dev/null \
  | sed -n 's/^\* \([A-Za-z_0-9]*\):.*/\1/p' | sort -u > "$TMPD/fn.index"
check "the Info manual has a concept index with entries" \
  eval 'sed -n "/Node: Concept index/,/\x1f/p" "$info" | grep -q "^\* rpath:"'
{
  sed -n 's/^\(gc_[a-z_0-9]*\) (.*/\1/p; s/^[a-z_ ]*[ *]\(gc_[a-z_0-9]*\) (.*/\1/p' \
    "$top/lib/gradcheck.h"
  sed -n 's/^} \(gc_[a-z_0-9]*\);$/\1/p' "$top/lib/gradcheck.h" | grep -v '^gc_[a-z_]*_fn$'
  sed -n '/^typedef enum gc_status$/,/^} gc_status;$/s/^  \(GC_[A-Z]*\)\b.*/\1/p' \
    "$top/lib/gradcheck.h" | grep -v '^GC_STATUS_COUNT$'
} | sort -u > "$TMPD/public"
comm -23 "$TMPD/public" "$TMPD/fn.index" > "$TMPD/unindexed"
check "$(wc -l < "$TMPD/public") public names of <gradcheck.h> looked at" \
  test "$(wc -l < "$TMPD/public")" -ge 30
check "every public function, type and status code is in the function index (missing: $(tr '\n' ' ' < "$TMPD/unindexed"))" \
  test ! -s "$TMPD/unindexed"

# The other renderings, built here from the sources with makeinfo.
if [ -z "$MAKEINFO" ]; then
  for t in "Info, no warnings" "plain text" "HTML without MathJax" "HTML with MathJax"; do
    skip "$t" "makeinfo not found"
  done
  done_testing
  exit
fi
mi () { "$MAKEINFO" -I "$top/doc" --no-split "$@" "$top/doc/gradcheck.texi"; }

mi -o "$TMPD/m.info" 2> "$TMPD/info.err"
check "makeinfo writes the Info manual without a warning" test ! -s "$TMPD/info.err"
report "$TMPD/info.err"

mi --plaintext -o "$TMPD/m.txt" 2> "$TMPD/txt.err"
raw_tex "$TMPD/m.txt" > "$TMPD/txt.raw"
check "the plain-text manual: no warning, no raw TeX ($(wc -l < "$TMPD/txt.raw") lines)" \
  test ! -s "$TMPD/txt.err" -a ! -s "$TMPD/txt.raw" -a -s "$TMPD/m.txt"
report "$TMPD/txt.err"; report "$TMPD/txt.raw"

mi --html -o "$TMPD/plain.html" 2> "$TMPD/html.err"
raw_tex "$TMPD/plain.html" > "$TMPD/html.raw"
check "the HTML manual without MathJax: no warning, no raw TeX ($(wc -l < "$TMPD/html.raw") lines)" \
  test ! -s "$TMPD/html.err" -a ! -s "$TMPD/html.raw" -a -s "$TMPD/plain.html"
report "$TMPD/html.err"; report "$TMPD/html.raw"

# With MathJax (configure's flags when it finds libjs-mathjax): the TeX
# source of each formula goes to MathJax, inside its tex2jax_process
# elements, and nowhere else.
mi --html -D mathjax -c HTML_MATH=mathjax \
  -c MATHJAX_SCRIPT=/usr/share/javascript/mathjax/MathJax.js?config=TeX-AMS_CHTML \
  -o "$TMPD/mj.html" 2> "$TMPD/mj.err"
check "the HTML manual with MathJax: no warning" test ! -s "$TMPD/mj.err" -a -s "$TMPD/mj.html"
report "$TMPD/mj.err"
n_math=$(grep -o "tex2jax_process'>\\\\(" "$TMPD/mj.html" | wc -l)
n_disp=$(grep -o 'class="tex2jax_process">\\\[' "$TMPD/mj.html" | wc -l)
check "the HTML manual with MathJax hands $n_math formulas and $n_disp displays to MathJax" \
  test "$n_math" -ge 100 -a "$n_disp" -ge 10
# A formula holding HTML markup (an @var inside @math) is not given to
# MathJax and shows its TeX.
check "no formula falls back to raw TeX outside MathJax (class math)" \
  eval '! grep -q "class=.math." "$TMPD/mj.html"'
perl -0pe 's/<em class=.tex2jax_process.>.*?<\/em>//gs' "$TMPD/mj.html" > "$TMPD/mj.rest"
raw_tex "$TMPD/mj.rest" > "$TMPD/mj.raw"
check "the HTML manual with MathJax: no TeX outside MathJax's elements" test ! -s "$TMPD/mj.raw"
report "$TMPD/mj.raw"
# Every control word MathJax gets is one the sources spell out (math.texi's
# TeX side, the @tex displays): a macro glued to the next letter (\Vertx)
# would be an unknown word.
{
  sed -n '/^@ifset mathjax$/,/^@end ifset$/p' "$top/doc/math.texi"
  sed -n '/^@tex$/,/^@end tex$/p' "$top/doc/bar.texi" "$top/doc/gradcheck.texi"
} | grep -oE '\\[A-Za-z]+' | sed 's/^\\\\*/\\/' | sort -u > "$TMPD/known"
perl -0ne 'while (/tex2jax_process.>(.*?)<\/em>/gs) { my $m = $1; print "$1\n" while $m =~ /(\\[A-Za-z]+)/g }' \
  "$TMPD/mj.html" | sort -u > "$TMPD/used"
comm -23 "$TMPD/used" "$TMPD/known" > "$TMPD/unknown"
check "every TeX control word given to MathJax is a known one ($(wc -l < "$TMPD/used") used, $(wc -l < "$TMPD/unknown") unknown)" \
  test ! -s "$TMPD/unknown" -a -s "$TMPD/used"
report "$TMPD/unknown"

# TeX (where it is installed: the build machines have none): the manual
# typesets without an error, the TeX side of math.texi included.
if command -v texi2dvi > /dev/null && command -v tex > /dev/null; then
  abs_top=$(cd "$top" && pwd)
  mkdir "$TMPD/tex"
  (cd "$TMPD/tex" && TEXINPUTS="$abs_top/build-aux:" texi2dvi --batch -q \
     -I "$abs_top/doc" -o m.dvi "$abs_top/doc/gradcheck.texi" > tex.out 2>&1)
  tex_rc=$?
  grep -E '^!|:[0-9]+: ' "$TMPD/tex/gradcheck.log" > "$TMPD/tex.err" 2>/dev/null
  check "TeX typesets the manual without an error (texi2dvi exit $tex_rc)" \
    test "$tex_rc" -eq 0 -a ! -s "$TMPD/tex.err" -a -s "$TMPD/tex/m.dvi"
  report "$TMPD/tex.err"
else
  skip "TeX typesets the manual" "texi2dvi or tex not found"
fi
done_testing
