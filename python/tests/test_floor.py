# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""The measured floor (manual: "The measured floor") through the torch
adapter, no declarations: a correct two-pass LayerNorm over rows offset
by +-300 and a correct one-element erfc are no arithmetic finding; the
same LayerNorm with its variance as E[x^2] - mu^2 is a precision finding;
nothing asks for grad_magnitude_f32."""

import pytest

torch = pytest.importorskip("torch")

from gradcheck import Verdict                       # noqa: E402
from gradcheck.torch import check_function          # noqa: E402


def layernorm(one_pass):
    class LayerNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mu = x.mean(-1, keepdim=True)
            if one_pass:
                var = (x * x).mean(-1, keepdim=True) - mu * mu
            else:
                var = ((x - mu) ** 2).mean(-1, keepdim=True)
            rstd = 1 / torch.sqrt(var + 1e-5)
            xh = (x - mu) * rstd
            ctx.save_for_backward(xh, rstd)
            return xh

        @staticmethod
        def backward(ctx, go):
            xh, rstd = ctx.saved_tensors
            return rstd * (go - go.mean(-1, keepdim=True)
                           - xh * (go * xh).mean(-1, keepdim=True))
    return LayerNorm


def offset_rows(seed):
    g = torch.Generator().manual_seed(seed)
    off = torch.tensor([300.0, -300.0, 300.0, -300.0]).unsqueeze(1)
    return off + torch.randn(4, 16, generator=g)


def arith_classes(r):
    return {d["arith"] for d in r.json["results"] if "arith" in d}


@pytest.mark.parametrize("seed", [0, 1])
def test_two_pass_layernorm_offset_rows_no_arith_finding(seed):
    r = check_function(layernorm(False).apply, offset_rows(seed))
    # inconclusive only on the algorithm's side: a blind direction of the
    # f64 reference (a Richardson step across rows at +-300, issue 32
    # item 5), never the arithmetic's
    assert r.verdict in (Verdict.PASS, Verdict.INCONCLUSIVE), r.report()
    assert arith_classes(r) == {"ok"}, r.report()
    assert r.json["twin"]["n_precision"] == 0
    assert r.json["twin"]["n_mismatch"] == 0
    assert r.json["twin"]["floor_draws"] == 4
    assert "declare grad_magnitude_f32" not in r.report()


@pytest.mark.parametrize("seed", [0, 1])
def test_one_pass_variance_is_precision(seed):
    r = check_function(layernorm(True).apply, offset_rows(seed))
    assert r.verdict == Verdict.PRECISION, r.report()


def test_one_element_erfc_passes():
    x = torch.tensor([1.7])
    r = check_function(torch.special.erfc, x)
    assert r.verdict == Verdict.PASS, r.report()
    assert "declare grad_magnitude_f32" not in r.report()


def gelu_tanh():
    c = 0.7978845608028654        # sqrt(2 / pi)

    class GeluTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * x ** 3)))

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            t = torch.tanh(c * (x + 0.044715 * x ** 3))
            return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c
                        * (1 + 3 * 0.044715 * x * x))
    return GeluTanh


def test_default_depth_not_called_declared():
    """A new user's report (issue 32's trial): with nothing declared, the
    note on a depth far above the implied one said "the declared d_b";
    the depth is n, the default, and the report must say so."""
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(0)) * 1.5
    r = check_function(gelu_tanh().apply, x)
    assert r.verdict == Verdict.PASS, r.report()
    notes = [ln for ln in r.report().splitlines() if "note:" in ln
             and "times the depth the measured spreads imply" in ln]
    for ln in notes:
        assert "declared d_b" not in ln, ln
        assert "the default d_b" in ln, ln
