# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""What the package says when a user's call is off: which blocks, which
argument, which library path; the per-direction rows; the f32 default's
warning.  (Found by a new user's trial.)"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gradcheck
from gradcheck import Status


def test_blocks_not_covering_x_say_their_sizes(model, point):
    with pytest.raises(ValueError) as e:
        gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, blocks={"a": 5, "b": (2, 3)})
    msg = str(e.value)
    assert "a: 5" in msg and "b: 6" in msg and "11" in msg
    assert "x has %d" % point.size in msg


def test_directions_rows(model, point):
    r = gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, **model.depths)
    d = r.directions
    row = d[2]
    assert set(row) == set(d.fields)
    assert row["nu"] == d.nu[2] and row["index"] == d.index[2]
    assert d[-1]["index"] == d.index[len(d) - 1]
    assert len(list(d)) == len(d)
    with pytest.raises(IndexError):
        d[len(d)]
    with pytest.raises(TypeError):
        d["nu"]


def test_missing_reference_advice_is_in_python_words(model, point):
    with pytest.raises(gradcheck.CheckError) as e:
        gradcheck.check(model.loss, model.grad, point, reference="mpfr")
    assert e.value.status == Status.ENOREF
    msg = str(e.value)
    assert 'reference="f32"' in msg and "--ref" not in msg
    assert "gc_options" not in msg
    assert "--ref f32" in e.value.detail      # the library's own sentence


def test_f32_default_warns(model, point):
    with pytest.warns(UserWarning, match="no loss_f64"):
        gradcheck.check(model.loss, model.grad, point, **model.depths)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck.check(model.loss, model.grad, point, reference="f32",
                        **model.depths)
        gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, **model.depths)


def test_library_not_found_names_the_path_once():
    env = dict(os.environ, GRADCHECK_LIBRARY="/nonexistent/libgc-test.so")
    p = subprocess.run([sys.executable, "-c", "import gradcheck"], env=env,
                       capture_output=True, text=True)
    assert p.returncode != 0
    # the ImportError line, wherever it is: in a sanitizer build the
    # preloaded LeakSanitizer reports the interpreter's own leaks after it
    errs = [l for l in p.stderr.splitlines() if l.startswith("ImportError")]
    assert len(errs) == 1, p.stderr
    assert errs[0].count("/nonexistent/libgc-test.so") == 1


def test_callbacks_named_as_python_names_them(model, point):
    """A new user's trial: messages named the library's C callbacks
    (grad_f32 returned 20569) beside the Python one (grad)."""
    def grad(x):
        raise ValueError("bad")
    with pytest.raises(gradcheck.CallbackError) as e:
        gradcheck.check(model.loss, grad, point, loss_f64=model.loss_f64)
    msg = str(e.value)
    assert "grad failed" in msg and "_f32" not in msg, msg
    assert str(gradcheck.CALLBACK_FAILED) not in msg, msg


def test_check_function_names_fn():
    torch = pytest.importorskip("torch")
    from gradcheck.torch import check_function

    class NanBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")
    x = torch.randn(4, requires_grad=True)
    with pytest.raises(gradcheck.CheckError) as e:
        check_function(NanBackward.apply, x)
    msg = str(e.value)
    assert "fn's backward gave a non-finite value" in msg, msg
    assert "grad_f32" not in msg, msg
