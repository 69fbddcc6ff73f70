#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# layout.sh -- lib/ keeps the shape the manual's "Inside gradcheck" draws:
# every source in a room, each room small enough to read (at most 20
# files), every file at most 600 lines, and no room calling a room above
# it.  The calls are read from the compiled objects (nm: the gc_ symbols
# each object defines and the ones it needs), not from the sources, so a
# call hidden behind a macro counts too.
. "${srcdir:-.}/tests/tap.sh"
top=${srcdir:-.}
# The rooms, lowest first (manual: "Inside gradcheck").
ROOMS="base bar kit model judge diagnose reference check higher report shards"

loose=$(cd "$top/lib" && { ls *.c 2>/dev/null; ls *.h 2>/dev/null \
        | grep -v -e '^gradcheck\.h$' -e '^gradcheck-check\.h$' \
                  -e '^gradcheck-mp\.h$' -e '^gradcheck-version\.h$'; })
check "every source of lib/ lies in a room; only public headers at the top (loose:${loose:+ }$(echo $loose))" \
  test -z "$loose"
unknown=
for d in "$top"/lib/*/; do
  r=$(basename "$d")
  case " $ROOMS " in *" $r "*) ;; *) unknown="$unknown $r" ;; esac
done
check "every folder of lib/ is a room of the documented order (unknown:${unknown:- none})" \
  test -z "$unknown"
big=
long=
for r in $ROOMS; do
  k=$(ls "$top/lib/$r" | grep -c -e '\.c$' -e '\.h$')
  [ "$k" -le 20 ] || big="$big $r($k)"
  for f in "$top/lib/$r"/*.[ch]; do
    l=$(wc -l < "$f")
    [ "$l" -le 600 ] || long="$long $r/$(basename "$f")($l)"
  done
done
check "every room holds at most 20 files (larger:${big:- none})" test -z "$big"
check "every file of lib/ has at most 600 lines (longer:${long:- none})" test -z "$long"

# The symbols: ROOM DEF|USE NAME, one line each, from each room's objects.
: > "$TMPD/syms"
nobj=0
for r in $ROOMS; do
  for o in lib/$r/.libs/*.o lib/$r/*.o; do
    [ -f "$o" ] || continue
    nobj=$((nobj + 1))
    nm "$o" 2>/dev/null | awk -v r="$r" '
      $1 == "U" && $2 ~ /^gc_/ { print r, "USE", $2; next }
      NF == 3 && $2 ~ /^[TDBR]$/ && $3 ~ /^gc_/ { print r, "DEF", $3 }' \
      >> "$TMPD/syms"
  done
done
if [ "$nobj" -lt 20 ] || ! command -v nm > /dev/null; then
  skip "no room calls a room above it" "the library's objects are not here ($nobj) or nm is missing"
else
  up=$(awk -v order="$ROOMS" '
    BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) rank[o[i]] = i }
    $2 == "DEF" { home[$3] = $1; next }
    $2 == "USE" { use[++k] = $1 " " $3 }
    END {
      for (i = 1; i <= k; i++) {
        split(use[i], p, " ")
        h = home[p[2]]
        if (h != "" && rank[h] > rank[p[1]]) out = out " " p[1] "->" h ":" p[2]
      }
      print out
    }' "$TMPD/syms")
  check "no room calls a room above it, read from $nobj objects (upward:${up:- none})" \
    test -z "$up"
fi
done_testing
