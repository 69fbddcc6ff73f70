# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""README.md's Python example runs as printed, and passes."""

import contextlib
import io
import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_readme_example_runs_and_passes():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- python-example -->\n```python\n(.*?)```", text, re.S)
    assert m, "README.md has no python-example block"
    code = m.group(1)
    assert len(code.strip().splitlines()) == 5
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert "\nverdict: PASS" in out.getvalue()
