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


def f32_only_factor(fn, dfn, factor):
    """fn with its hand-written backward dfn, times FACTOR in float32 only
    (the twin, float64, correct): the f32 path's logic error."""
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return fn(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            d = g * dfn(x)
            return d * factor if x.dtype == torch.float32 else d
    return F


# one element: no structure across elements to read (manual: "A factor
# the point does not move"); sigmoid's gradient moves with the point, a
# scale's does not (the rounding modes decide there: 0.3 times the factor
# is inexact in float32, so the modes reach the product)
ONE_ELEMENT_OPS = {
    "sigmoid": (torch.sigmoid,
                lambda x: torch.sigmoid(x) * (1 - torch.sigmoid(x))),
    "scale": (lambda x: x * 0.3, lambda x: torch.full_like(x, 0.3)),
}


@pytest.mark.parametrize("name", sorted(ONE_ELEMENT_OPS))
@pytest.mark.parametrize("factor", [1.0, 1.01, 1 + 2 ** -7])
def test_one_element_f32_factor_fails(name, factor):
    fn, dfn = ONE_ELEMENT_OPS[name]
    x = torch.tensor([0.37])
    r = check_function(f32_only_factor(fn, dfn, factor).apply, x)
    if factor == 1.0:
        assert r.verdict == Verdict.PASS, r.report()
        return
    assert r.verdict == Verdict.FAIL, r.report()
    d = r.json["results"][0]
    assert d["arith"] == "mismatch"
    # the factor found: within the bar's share of |g64| of the injected one
    assert abs(d["arith_factor"] - factor) <= 2 * d["arith_bar"] / abs(
        d["analytic_f64"]), r.report()
    # the points (4 to 12 of them and the centre) or the modes (1)
    if name == "sigmoid":
        assert d["arith_factor_points"] >= 5
    else:
        assert d["arith_factor_points"] == 1
    assert "constant factor" in r.json["diagnosis"]["text"], r.report()


def test_one_element_tanh_saturation_stays_precision():
    """1 - tanh^2 from a float32 tanh at x = 7.7 (1 - t ~ 4e-7, t within
    3e-8 of it: ~10 % of the gradient, nu_arith ~ 840) on one element: a
    precision loss whose rounding moves with the point, not a factor."""
    class T(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.tanh(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            t = torch.tanh(x)
            return g * (1 - t * t)
    r = check_function(T.apply, torch.tensor([7.7]))
    assert r.verdict == Verdict.PRECISION, r.report()
    d = r.json["results"][0]
    assert d["arith_factor_points"] >= 5
    assert str(d["arith_factor"]) == "nan"      # none held


def test_exact_factor_on_fixed_gradient_undecided():
    """The identity's gradient times 1 + 2^-7 in float32 only: exact in
    every rounding mode (spread 0) and unmoved by the point -- neither
    can tell the factor from a rounding of fixed data, and the report
    says so rather than guess (manual: "A factor the point does not
    move")."""
    fn = f32_only_factor(lambda x: x * 1, torch.ones_like, 1 + 2 ** -7)
    r = check_function(fn.apply, torch.tensor([0.37]))
    assert r.verdict == Verdict.PRECISION, r.report()
    assert r.json["results"][0]["arith_factor_points"] == 1
    assert "neither the points" in r.report()


def test_permutation_element_doubled_fails():
    """A flip whose float32 backward doubles one element (the twin
    correct): exact in every rounding mode and unmoved by the point, off
    by its whole value -- no rounding of any format (manual: "A factor the
    point does not move").  Correct, it passes."""
    for bug in (False, True):
        class Flip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return torch.flip(x, [0])

            @staticmethod
            def backward(ctx, g):
                d = torch.flip(g, [0])
                if bug and d.dtype == torch.float32:
                    # the smallest element: off by its value, a small
                    # share of the tensor's largest (nu_arith < 2^16:
                    # within a precision finding's reach without the rule)
                    d = d.clone()
                    d[d.abs().argmin()] *= 2
                return d
        x = torch.randn(6, generator=torch.Generator().manual_seed(3))
        r = check_function(Flip.apply, x)
        if not bug:
            assert r.verdict == Verdict.PASS, r.report()
            continue
        assert r.verdict == Verdict.FAIL, r.report()
        bad = [d for d in r.json["results"] if d["arith"] != "ok"]
        assert len(bad) == 1, r.report()
        assert bad[0]["arith"] == "mismatch", r.report()
        assert bad[0]["nu_arith"] < 2 ** 16, r.report()
        assert bad[0]["arith_factor_points"] == 1
        assert bad[0]["arith_factor"] == 2.0


class _CumprodBf16(torch.autograd.Function):
    """cumprod whose float32 backward rounds its reverse cumulative sum to
    bfloat16 (a precision loss, no logic error): on one element, or along
    a length-1 axis, g64 = g does not move with x, while the bf16
    rounding of g * x does."""
    @staticmethod
    def forward(ctx, x):
        y = torch.cumprod(x, -1)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        rc = (g * y).flip(-1).cumsum(-1).flip(-1)
        if rc.dtype == torch.float32:
            rc = rc.to(torch.bfloat16).to(torch.float32)
        return rc / x


@pytest.mark.parametrize("shape", [(1,), (8, 1)])
def test_bf16_intermediate_twin_unmoved_is_not_failure(shape):
    """A new user's trial (issue 32): the points left g64 as it was, and
    the modes' rule read the bf16 rounding as a factor (FAIL on 17 of 20
    seeds).  g32's discrepancy moved with the point: rounding, a precision
    finding (manual: "A factor the point does not move")."""
    for seed in range(5):
        gen = torch.Generator().manual_seed(seed)
        x = 0.5 + torch.rand(shape, generator=gen)
        r = check_function(_CumprodBf16.apply, x)
        assert r.verdict != Verdict.FAIL, r.report()


def test_bf16_copy_of_fixed_gradient_scatter_is_not_failure():
    """A fixed linear map whose float32 backward rounds the incoming
    gradient to bfloat16 before g @ W: the gradient does not depend on x
    and no mode reaches the bf16 conversion, so each element reads as a
    factor the modes do not move -- but the factors scatter across the
    tensor (0.997 to 1.015 in the trial), which no one logic error makes."""
    W = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))

    class Lin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x @ W.to(x.dtype).T

        @staticmethod
        def backward(ctx, g):
            if g.dtype == torch.float32:
                g = g.to(torch.bfloat16).to(torch.float32)
            return g @ W.to(g.dtype)
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(2))
    r = check_function(Lin.apply, x)
    assert r.verdict != Verdict.FAIL, r.report()


_BF16_OPS = {
    "layer_norm": (lambda x: torch.nn.functional.layer_norm(x, (8,)),
                   [(4, 8)]),
    "matmul": (torch.matmul, [(4, 8), (8, 3)]),
    "softmax": (lambda x: torch.softmax(x, -1), [(4, 8)]),
}


def _bf16_inputs(shapes, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g).to(torch.bfloat16).requires_grad_()
            for s in shapes]


def _bf16_storage(depth):
    from gradcheck import Precision
    return [Precision.storage("bf16", forward_depth=depth,
                              backward_depth=depth)]


@pytest.mark.parametrize("name", sorted(_BF16_OPS))
def test_bf16_op_underdeclared_is_not_failure(name):
    """torch's own bfloat16 ops with the one bf16 rounding every such op
    makes (its output's) declared: where they round more, their scatter
    of a few u_bf16 read as "constant factor 1.0171 +- 0.011" over three
    of 32 elements of layer_norm (seed 39 here; 1 of these 120 checks)
    and failed (manual: "The f64 twin", a factor below O(1) on at most
    half a tensor under declared classes).  Under-declared, they may be
    precision findings; never failures."""
    fn, shapes = _BF16_OPS[name]
    for seed in range(40):
        r = check_function(fn, *_bf16_inputs(shapes, seed),
                           precisions=_bf16_storage(1))
        assert r.verdict != Verdict.FAIL, r.report()


class _ScaledBf16(torch.autograd.Function):
    """x * w in bfloat16 whose backward multiplies one element, or every
    element, by FACTOR in the bf16 path only (the float64 twin is right)."""
    factor, every = 1.0, False

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = g * w
        if gx.dtype == torch.bfloat16:
            f = _ScaledBf16.factor
            if _ScaledBf16.every:
                gx = gx * f
            else:
                gx = gx.clone()
                gx.view(-1)[3] = gx.view(-1)[3] * f
        return gx, g * x


@pytest.mark.parametrize("factor,every", [(1.25, True), (1.05, True)])
def test_bf16_logic_error_still_fails(factor, every):
    """The other side of the rule above: under the same declaration, every
    element of the bf16 path times 1.25 or 1.05 (a factor on the whole
    tensor, not the tails of a scatter) is its logic error, FAIL (manual:
    "The f64 twin")."""
    _ScaledBf16.factor, _ScaledBf16.every = factor, every
    try:
        for seed in range(3):
            x, w = _bf16_inputs([(16,), (16,)], seed)
            r = check_function(_ScaledBf16.apply, x, w,
                               precisions=_bf16_storage(1))
            assert r.verdict == Verdict.FAIL, r.report()
    finally:
        _ScaledBf16.factor, _ScaledBf16.every = 1.0, False
