#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# pip.sh -- the Python package installed the way Python users install
# (manual: "Installing the package"): python3 -m pip install of a
# copy of python/ (pyproject.toml, the distribution's setuptools, no
# network, no build isolation) into a temporary venv that sees the
# system's packages; then, from outside the source tree, the installed
# package checks a function with the in-tree library.  Skipped, with the
# reason, only where configure found no Python 3 or that Python has no
# venv, pip or setuptools (Debian: python3-venv, python3-pip,
# python3-setuptools, which ./bootstrap installs).
. "${srcdir:-.}/tests/tap.sh"
PY=${PYTHON:-python3}
what="pip install of python/ into a venv"
if [ "$PY" = : ] || ! command -v "$PY" > /dev/null 2>&1; then
  skip "$what" "configure found no Python 3 (Debian: python3; ./bootstrap installs it)"
  done_testing; exit 0
fi
for mod in venv ensurepip setuptools numpy; do
  if ! "$PY" -c "import $mod" > /dev/null 2>&1; then
    skip "$what" "$PY cannot import $mod (Debian: python3-venv, python3-pip, python3-setuptools, python3-numpy; ./bootstrap installs them)"
    done_testing; exit 0
  fi
done
lib=${LIBGRADCHECK_SO:-$abs_top_builddir/lib/.libs/libgradcheck.so}
. "$srcdir/tests/pypreload.sh"
# a copy: the source tree may be read-only (make distcheck), and a
# setuptools build writes beside the sources
cp -R "$srcdir/python" "$TMPD/src" && chmod -R u+w "$TMPD/src"
rm -rf "$TMPD/src/tests"
# LD_PRELOAD (a sanitizer build) only where the library is loaded
check "a venv with the system's packages" \
  env -u LD_PRELOAD "$PY" -m venv --system-site-packages "$TMPD/venv"
VPY=$TMPD/venv/bin/python
env -u LD_PRELOAD PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$VPY" -m pip install --no-build-isolation --no-deps -q "$TMPD/src" \
  > "$TMPD/pip.log" 2>&1
rc=$?
check "pip install --no-build-isolation of python/ exits 0 offline (exit $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/# /' "$TMPD/pip.log"
cat > "$TMPD/use.py" <<'PYEOF'
import os, sys
import numpy as np
import gradcheck
where = os.path.dirname(gradcheck.__file__)
assert where.startswith(sys.prefix), "imported from %s" % where
x = np.linspace(-2, 2, 16, dtype=np.float32)
loss = lambda x: np.sum(np.tanh(x) ** 2)
grad = lambda x: 2 * np.tanh(x) * (1 - np.tanh(x) ** 2)
r = gradcheck.check(loss, grad, x, loss_f64=loss)
print(where)
print(gradcheck.__version__, r.json["gradcheck"], r.verdict)
PYEOF
(cd "$TMPD" && GRADCHECK_LIBRARY=$lib "$VPY" use.py > "$TMPD/use.out" 2> "$TMPD/use.err")
rc=$?
check "the installed package imports from the venv and checks a function (exit $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/# /' "$TMPD/use.err" | grep -v 'leak\|^#   *#' | head -20
set -- $(sed -n 2p "$TMPD/use.out")
check "its __version__ ($1) is the library's ($2) and the check passes ($3)" \
  test "$1" = "$2" -a "$3" = pass
done_testing
