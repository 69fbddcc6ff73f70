#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# rust.sh -- the Rust crate's tests (rust/gradcheck: cargo test --offline
# --locked), its incident example and the README's example, with the
# in-tree library; one TAP line per Rust test.  Cargo writes only into the
# build tree: the target directory is rust/target, CARGO_HOME
# rust/cargo-home, and Cargo.lock is the committed one (--locked), so a
# read-only source tree (make distcheck) builds.  Skipped, with the reason,
# only where there is no cargo.  In a sanitizer build the sanitizer
# runtimes the library links are preloaded into the test binaries (not
# into cargo and rustc): a runner wrapper sets LD_PRELOAD.
. "${srcdir:-.}/tests/tap.sh"
CARGO=${CARGO:-cargo}
what="the Rust crate's tests (rust/gradcheck)"
if [ "$CARGO" = : ] || ! command -v "$CARGO" > /dev/null 2>&1; then
  skip "$what" "no cargo (CARGO is '$CARGO': none found by configure, or not runnable; Debian: cargo, which ./bootstrap installs; or ./configure CARGO=PATH)"
  done_testing; exit 0
fi
abs_srcdir=$(cd "${srcdir:-.}" && pwd)
build=${abs_top_builddir:-$(pwd)}
manifest=$abs_srcdir/rust/gradcheck/Cargo.toml
libdir=$build/lib/.libs
lib=${LIBGRADCHECK_SO:-$libdir/libgradcheck.so}
GRADCHECK_LIB_DIR=$libdir; export GRADCHECK_LIB_DIR
GRADCHECK_INCLUDE_DIRS=$abs_srcdir/lib:$build/lib; export GRADCHECK_INCLUDE_DIRS
CARGO_TARGET_DIR=$build/rust/target; export CARGO_TARGET_DIR
# (rustup's cargo proxy finds its toolchains through RUSTUP_HOME, not
# CARGO_HOME: moving CARGO_HOME keeps it working.)
CARGO_HOME=$build/rust/cargo-home; export CARGO_HOME
unset RUSTFLAGS CARGO_BUILD_RUSTFLAGS
cargo_flags="--offline --locked --manifest-path $manifest"
# A sanitizer build (.ci/run stage 3): the library needs the ASan runtime
# first in the process; the Rust test binaries are not instrumented, so it
# is preloaded into them (through cargo's runner), and LeakSanitizer fails
# the script only for a leak whose stack passes through libgradcheck.
preload=
if command -v ldd > /dev/null 2>&1; then
  preload=$(ldd "$lib" 2>/dev/null \
    | sed -n 's/^[[:space:]]*lib[a-z]*san\.so[.0-9]* => \([^ ]*\) .*/\1/p' | tr '\n' ' ')
fi
if [ -n "$preload" ]; then
  host=$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')
  [ -n "$host" ] || host=$("$CARGO" -vV 2>/dev/null | sed -n 's/^host: //p')
  runner=$TMPD/runner
  printf '#!/bin/sh\nLD_PRELOAD="%s${LD_PRELOAD:+ $LD_PRELOAD}" LSAN_OPTIONS="exitcode=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" exec "$@"\n' \
    "$preload" > "$runner"
  chmod +x "$runner"
  var=CARGO_TARGET_$(echo "$host" | tr 'a-z.-' 'A-Z__')_RUNNER
  eval "$var=\$runner; export $var"
fi
"$CARGO" --version > "$TMPD/version" 2>&1
echo "# $(cat "$TMPD/version")"
"$CARGO" test $cargo_flags --no-run > "$TMPD/build" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
  not_ok "cargo test --no-run builds the crate and its tests (exit $rc)"
  sed 's/^/# /' "$TMPD/build"
  done_testing; exit 1
fi
ok "cargo builds the crate and its tests ($(cat "$TMPD/version"))"
"$CARGO" test $cargo_flags -- --test-threads=2 > "$TMPD/out" 2>&1
rc=$?
# "test the_name ... ok" -> one test point each
sed -n 's/^test \([^ ]*\) \.\.\. \(ok\|FAILED\|ignored\)$/\2 \1/p' "$TMPD/out" > "$TMPD/list"
while read -r st name; do
  case $st in
    ok) ok "$name" ;;
    ignored) skip "$name" "ignored" ;;
    *) not_ok "$name" ;;
  esac
done < "$TMPD/list"
if [ "$rc" -ne 0 ] || [ ! -s "$TMPD/list" ]; then
  not_ok "cargo test exits 0 (exit $rc)"
  sed 's/^/# /' "$TMPD/out"
fi
for ex in incident readme; do
  "$CARGO" run -q $cargo_flags --example $ex > "$TMPD/$ex" 2>&1
  rc=$?
  check "cargo run --example $ex exits 0 (exit $rc)" test "$rc" -eq 0
  [ "$rc" -eq 0 ] || sed 's/^/# /' "$TMPD/$ex"
done
check "the README example prints a PASS" grep -q '^verdict: PASS' "$TMPD/readme"
if [ -n "$preload" ]; then
  cat "$TMPD/out" "$TMPD/incident" "$TMPD/readme" \
    | awk '/^(Direct|Indirect) leak/ { s = $0; next }
           s && /libgradcheck|in gc_/ { print s; s = "" }' > "$TMPD/leaks"
  check "under the sanitizers (preloaded: $preload), no leak through libgradcheck ($(wc -l < "$TMPD/leaks") found)" \
    test ! -s "$TMPD/leaks"
  sed 's/^/# /' "$TMPD/leaks"
  check "no sanitizer error report" sh -c "! grep -q 'ERROR: AddressSanitizer\|runtime error:' '$TMPD/out' '$TMPD/incident' '$TMPD/readme'"
fi
done_testing
