# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""Screened directions, check_function's default (manual: "Screening")."""
import numpy as np
import pytest
torch = pytest.importorskip("torch")
import gradcheck                                    # noqa: E402
from gradcheck import Verdict                       # noqa: E402
from gradcheck.torch import check_function          # noqa: E402


def scaled_matmul_tanh(scale_w=1.0, scale_x=1.0):
    """tanh(x @ w), its backward hand-written; SCALE_* multiply one
    input's gradient (1: correct)."""
    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            y = torch.tanh(x @ w)
            ctx.save_for_backward(x, w, y)
            return y

        @staticmethod
        def backward(ctx, go):
            x, w, y = ctx.saved_tensors
            gz = go * (1 - y * y)
            return scale_x * (gz @ w.t()), scale_w * (x.t() @ gz)
    return Op


def point(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(6, 12, generator=g), torch.randn(12, 5, generator=g)


def test_default_is_screened_and_all_is_one_option_away():
    x, w = point(0)
    r = check_function(scaled_matmul_tanh().apply, x, w, names=["x", "w"])
    assert r.verdict == Verdict.PASS, r.report()
    assert r.json["directions"] == "screen"
    # 8 random directions within each tensor (72 and 60 elements), none
    # of their coordinates
    assert len(r.directions) == 16
    assert (r.directions.index == -1).all()
    assert "a pass rules out" in r.report()
    full = check_function(scaled_matmul_tanh().apply, x, w, directions="all")
    assert full.json["directions"] == "all"
    assert len(full.directions) == x.numel() + w.numel()


@pytest.mark.parametrize("eps", [1e-3, 1e-6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scale_errors_the_full_check_catches_are_caught(eps, seed):
    # a x(1 + eps) error on one tensor's gradient: the screened default
    # fails that tensor's random directions (their resolution is below
    # 2^-20, or the tensor's coordinates are taken), then takes its
    # coordinates, which name it; the other tensor is spared them
    x, w = point(seed)
    r = check_function(scaled_matmul_tanh(scale_w=1 + eps).apply, x, w,
                       names=["x", "w"])
    assert r.verdict == Verdict.FAIL, r.report()
    assert r.json["diagnosis"]["block"] == "w"
    assert r.json["screen_superseded"] == 8
    assert len(r.directions) == 8 + w.numel()
    full = check_function(scaled_matmul_tanh(scale_w=1 + eps).apply, x, w,
                          names=["x", "w"], directions="all")
    assert full.verdict == Verdict.FAIL


def test_screen_k_and_bad_values():
    x, w = point(0)
    r = check_function(scaled_matmul_tanh().apply, x, w, directions="screen:3")
    assert len(r.directions) == 6
    for bad in ("screen:", "screen:x", "screen:-1", "screens"):
        with pytest.raises(ValueError, match="screen"):
            check_function(scaled_matmul_tanh().apply, x, w, directions=bad)
    with pytest.raises(ValueError, match="screen:K takes 1"):
        check_function(scaled_matmul_tanh().apply, x, w, directions="screen:0")
    # random_per_tensor still replaces the default
    r = check_function(scaled_matmul_tanh().apply, x, w, random_per_tensor=2)
    assert r.json["directions"] == "random" and len(r.directions) == 4


def test_numpy_check_takes_screen():
    # gradcheck.check (NumPy) takes it too; a model without blocks is one
    # block: 50 elements, 8 random directions
    rng = np.random.default_rng(0)
    x = rng.standard_normal(50).astype(np.float32)

    def loss(v):
        return float(np.sum(np.tanh(v) ** 2))

    def grad(v):
        t = np.tanh(v)
        return (2 * t * (1 - t * t)).astype(np.float32)

    def loss64(v):
        return float(np.sum(np.tanh(v) ** 2))

    def grad64(v):
        t = np.tanh(v)
        return 2 * t * (1 - t * t)
    r = gradcheck.check(loss, grad, x, loss_f64=loss64, grad_f64=grad64,
                        directions="screen")
    assert r.verdict == Verdict.PASS, r.report()
    assert len(r.directions) == 8
