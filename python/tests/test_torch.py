# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""gradcheck.torch.check_function on custom torch.autograd.Functions."""

import copy
import pickle

import pytest

torch = pytest.importorskip("torch")

import gradcheck                                    # noqa: E402
from gradcheck import Verdict                       # noqa: E402
from gradcheck.torch import check_function          # noqa: E402


def layernorm(bug=None):
    class LayerNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            mu = x.mean(-1, keepdim=True)
            xc = x - mu
            rstd = 1 / torch.sqrt((xc * xc).mean(-1, keepdim=True) + 1e-5)
            xh = xc * rstd
            ctx.save_for_backward(xh, rstd, w)
            return xh * w + b

        @staticmethod
        def backward(ctx, go):
            xh, rstd, w = ctx.saved_tensors
            gxh = go * w
            a = gxh.mean(-1, keepdim=True)
            if bug == "mean":
                a = 0 * a                       # the mean's term dropped
            gx = rstd * (gxh - a - xh * (gxh * xh).mean(-1, keepdim=True))
            gw = (go * xh).sum(0)
            if bug == "factor":
                gw = 2 * gw
            if bug == "shape":
                gw = gw[:-1]
            if bug == "raise":
                raise ArithmeticError("backward failed")
            return gx, gw, go.sum(0)
    return LayerNorm


@pytest.fixture
def inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(4, 8, generator=g), torch.randn(8, generator=g),
            torch.randn(8, generator=g))


@pytest.mark.filterwarnings("ignore:Input #")
def test_correct_op_passes_where_torch_gradcheck_f32_does_not(inputs):
    op = layernorm()
    r = check_function(op.apply, *inputs, names=["x", "w", "b"])
    assert r.verdict == Verdict.PASS, r.report()
    assert r.json["twin"]["n_failed_algorithm"] == 0
    assert "cotangent" in r.cotangent
    assert [b["name"] for b in r.blocks] == ["x", "w", "b"]
    # torch.autograd.gradcheck, float32 with its defaults, rejects the same
    # correct op (eps 1e-6 is below f32's resolution of this loss)
    ins = [t.clone().requires_grad_() for t in inputs]
    assert not torch.autograd.gradcheck(op.apply, ins, raise_exception=False)


@pytest.mark.parametrize("bug", ["mean", "factor"])
def test_bug_is_caught(inputs, bug):
    r = check_function(layernorm(bug).apply, *inputs)
    assert r.verdict == Verdict.FAIL
    assert r.n_failed > 0


def test_scalar_output_is_the_loss(inputs):
    op = layernorm()

    def f(x, w, b):
        return (op.apply(x, w, b) ** 2).sum()
    r = check_function(f, *inputs)
    assert r.verdict == Verdict.PASS
    assert r.cotangent.startswith("none")
    # the f32 loss is f's value as it computes it on one thread (the check
    # sets one: module gradcheck.torch), bit for bit
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert r.loss_f32 == float(f(*inputs))
    finally:
        torch.set_num_threads(n)


@pytest.mark.parametrize("bug,cause", [("raise", ArithmeticError),
                                       ("shape", RuntimeError)])
def test_failing_backward_is_a_clean_error(inputs, bug, cause):
    n = torch.get_num_threads()
    with pytest.raises(gradcheck.CallbackError) as e:
        check_function(layernorm(bug).apply, *inputs)
    assert isinstance(e.value.__cause__, cause)
    assert e.value.callback == "grad"
    assert torch.get_num_threads() == n
    # the check turns grad mode off for its forwards: restored on error
    assert torch.is_grad_enabled()


@pytest.mark.parametrize("mode", [True, False])
def test_grad_mode_per_callback_and_restored(inputs, mode):
    """The forwards run without grad, the backward with it, whatever the
    caller's mode; the caller's mode is back after the check."""
    seen = {}

    def f(x, w, b):
        seen.setdefault(x.dtype, set()).add(torch.is_grad_enabled())
        return layernorm().apply(x, w, b)

    with torch.set_grad_enabled(mode):
        r = check_function(f, *inputs)
        assert torch.is_grad_enabled() is mode
    assert r.verdict == Verdict.PASS
    # float32 and float64 runs each saw both modes: forwards without
    # grad, backwards with it
    assert seen == {torch.float32: {False, True},
                    torch.float64: {False, True}}


def test_non_differentiable_inputs_are_held(inputs):
    x, w, b = inputs
    op = layernorm()
    r = check_function(op.apply, x.requires_grad_(), w, b)
    assert r.n == x.numel()
    assert r.verdict == Verdict.PASS


def test_threads(inputs):
    op = layernorm()
    one = check_function(op.apply, *inputs)
    two = check_function(op.apply, *inputs, threads=2)
    assert two.verdict == one.verdict == Verdict.PASS
    assert (two.directions.analytic == one.directions.analytic).all()
    assert (two.directions.reference == one.directions.reference).all()


def test_nonfinite_point_is_named_by_its_tensor(inputs):
    # the library names the element by the tensor that holds it, with the
    # flat index as the parameter's: input1[3], not x[35]
    x, w, b = inputs
    w = w.clone()
    w[3] = float("inf")
    with pytest.raises(gradcheck.CheckError) as e:
        check_function(layernorm().apply, x, w, b)
    assert e.value.status == gradcheck.Status.EPOINT
    assert "input1[3] = inf (parameter %d)" % (x.numel() + 3) in e.value.detail


def rmsnorm(bug=None):
    class RMSNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            r = torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6)
            ctx.save_for_backward(x, w, r)
            return x * r * w

        @staticmethod
        def backward(ctx, go):
            x, w, r = ctx.saved_tensors
            gxh = go * w
            gx = r * gxh - x * r ** 3 * (gxh * x).mean(-1, keepdim=True)
            if x.dtype == torch.float32:        # the f32 path only
                if bug == "term":
                    gx = gx + 0.3 * r * go      # a wrong term
                if bug == "bf16":
                    gx = gx.bfloat16().float()  # a precision loss
            return gx, (go * x * r).sum(0)
    return RMSNorm


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_f32_path_term_fails(seed):
    # manual: "A term the point does not redraw": a wrong term in the
    # float32 path alone scatters across the tensor like rounding and read
    # PRECISION; at points moved by 2^-5 to 2^-4 it moves smoothly, where
    # a bf16 rounding in the same place is redrawn
    g = torch.Generator().manual_seed(seed)
    x, w = torch.randn(6, 16, generator=g), torch.randn(16, generator=g)
    r = check_function(rmsnorm("term").apply, x, w)
    assert r.verdict == Verdict.FAIL, r.report()
    assert "in the f32 path only" in r.diagnosis["text"]
    drifts = [d["arith_drift"] for d in r.json["results"]
              if "arith_drift" in d]
    assert min(drifts) <= 0.125                 # GC_TERM_DRIFT
    r = check_function(rmsnorm("bf16").apply, x, w)
    assert r.verdict == Verdict.PRECISION, r.report()
    assert check_function(rmsnorm().apply, x, w).verdict == Verdict.PASS


def test_refused_inputs():
    with pytest.raises(TypeError):
        check_function(lambda x: x.sum(), torch.ones(3, dtype=torch.float64))
    with pytest.raises(TypeError):
        check_function(lambda x: x, torch.ones(3, dtype=torch.int64))


def test_rounding_measurement_reaches_torch(inputs):
    # the library measures the backward under the three other rounding
    # modes by setting the calling thread's; on one torch thread the
    # kernels run there, and LayerNorm's backward (sums of rounded
    # products) moves under them: a non-zero spread, an implied depth
    r = check_function(layernorm().apply, *inputs)
    assert r.rounding_modes == 3
    assert r.depth_implied is not None and r.depth_implied > 0


def test_outputs_changing_shape_are_refused(inputs):
    op = layernorm()
    calls = [0]

    def f(x, w, b):
        calls[0] += 1
        y = op.apply(x, w, b)
        return y if calls[0] < 5 else y[:-1]
    with pytest.raises(gradcheck.CallbackError) as e:
        check_function(f, *inputs)
    assert isinstance(e.value.__cause__, ValueError)
    assert "changed shape" in str(e.value.__cause__)


def test_zero_dim_input_is_a_block(inputs):
    # a 0-d input among the leaves: its own block, of shape ()
    op = layernorm()
    x, w, b = inputs
    s = torch.tensor(1.5)

    def f(x, s, w, b):
        return op.apply(x * s, w, b)
    r = check_function(f, x, s, w, b, names=["x", "s", "w", "b"])
    assert r.n == x.numel() + 1 + w.numel() + b.numel()
    assert [bl["name"] for bl in r.blocks] == ["x", "s", "w", "b"]
    assert r.param_name(x.numel()).startswith("s")
    assert r.json["twin"]["n_failed_algorithm"] == 0
    # its analytic value is torch's f32 gradient of s (one thread, as the
    # check runs), bit for bit
    leaves = [t.clone().requires_grad_() for t in (x, s, w, b)]
    c = torch.randn(x.shape, generator=torch.Generator().manual_seed(0),
                    dtype=torch.float64).to(torch.float32)
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        gs = torch.autograd.grad((f(*leaves) * c).sum(), leaves[1])[0]
    finally:
        torch.set_num_threads(n)
    # the default screens (manual: "Screening"): s, one element, is
    # checked along its coordinate, wherever it lies among the directions
    at = [k for k in range(len(r.directions))
          if r.directions.index[k] == x.numel()]
    assert len(at) == 1
    assert r.directions.analytic[at[0]] == float(gs)


# ------------------------------------------------------------ bf16, fp16
# A bfloat16 or float16 op, checked in its own dtype: its backward's
# rounding to the format is declared as a rounding class (manual:
# "Rounding classes"), and the float64 twin judges the algorithm at f64
# resolution, so a 1% bug far below the format's resolution is caught.

def silu(bug=None):
    class SiLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            # the sigmoid in float32, stored in x's format (torch 1.13 has
            # no float16 sigmoid on the CPU)
            s = torch.sigmoid(x.float()).to(x.dtype)
            ctx.save_for_backward(x, s)
            return x * s

        @staticmethod
        def backward(ctx, go):
            x, s = ctx.saved_tensors
            d = s * (1 + x * (1 - s))
            if bug == "scale":
                d = d * 1.01
            return go * d
    return SiLU


# forward: sigmoid and the product, each stored in the format (2); backward:
# 1 - s, x (1 - s), 1 + ..., s (...), go * d, each stored (5), with the
# forward's s before them (6 on the longest chain)
def silu_classes(fmt):
    return [gradcheck.Precision.storage(fmt, forward_depth=2,
                                        backward_depth=6)]


LOW = [(torch.bfloat16, "bf16"), (torch.float16, "fp16")]


@pytest.mark.parametrize("dtype,fmt", LOW)
def test_low_precision_correct_op_passes(dtype, fmt):
    x = torch.linspace(-3, 3, 24).reshape(4, 6).to(dtype)
    r = check_function(silu().apply, x, precisions=silu_classes(fmt))
    assert r.verdict == Verdict.PASS, r.report()
    assert [p["name"] for p in r.json["precisions"]][-1] == fmt + " storage"
    # the check's bar is the format's: a 1% error is below its resolution
    # on most coordinates, the twin's algorithm resolves far below it
    assert r.json["twin"]["n_failed_algorithm"] == 0


@pytest.mark.parametrize("dtype,fmt", LOW)
def test_low_precision_small_bug_is_caught_by_the_twin(dtype, fmt):
    x = torch.linspace(-3, 3, 24).reshape(4, 6).to(dtype)
    r = check_function(silu("scale").apply, x, precisions=silu_classes(fmt))
    assert r.verdict == Verdict.FAIL
    assert r.json["twin"]["n_failed_algorithm"] > 0
    # without the twin the same bug is below the format's bar somewhere:
    # never a blind pass, but not a failure everywhere either
    r = check_function(silu("scale").apply, x, precisions=silu_classes(fmt),
                       twin=False)
    assert r.verdict != Verdict.PASS


def test_low_precision_needs_its_classes():
    x = torch.linspace(-3, 3, 24).to(torch.bfloat16)
    with pytest.raises(TypeError, match="precisions="):
        check_function(silu().apply, x)
    with pytest.raises(TypeError, match="not a gradcheck.Precision"):
        check_function(silu().apply, x, precisions=["bf16"])
    with pytest.raises(ValueError, match="format"):
        gradcheck.Precision.storage("bf8", 1, 1)
    # a single class, not in a list
    with pytest.raises(TypeError, match=r"precisions=\[Precision"):
        check_function(silu().apply, x,
                       precisions=silu_classes("bf16")[0])
    # fields a new user got wrong: each a clear error, none wrapped or
    # taken for truthy
    with pytest.raises(ValueError, match="forward_depth is -3"):
        gradcheck.Precision.storage("bf16", -3, 1)
    with pytest.raises(TypeError, match="whole number"):
        gradcheck.Precision.storage("bf16", 2.5, 1)
    with pytest.raises(TypeError, match="mode_reached is True or False"):
        gradcheck.Precision.storage("bf16", 1, 1, mode_reached="no")
    with pytest.raises(TypeError, match="name"):
        gradcheck.Precision(None, "storage", 2 ** -8, 0, 1, 1)
    with pytest.raises(ValueError, match="backward_depth is -1"):
        check_function(silu().apply, x, precisions=silu_classes("bf16"),
                       backward_depth=-1)


def test_invalid_class_is_the_library_s_einval():
    x = torch.linspace(-3, 3, 24).to(torch.bfloat16)
    # (1 + u)^d >= 2^64 (bf16: u = 2^-8, d = 20000): the library refuses it
    bad = [gradcheck.Precision.storage("bf16", forward_depth=20000,
                                       backward_depth=6)]
    with pytest.raises(gradcheck.CheckError) as e:
        check_function(silu().apply, x, precisions=bad)
    assert e.value.status == gradcheck.Status.EINVAL
    # the same class twice would be counted twice
    with pytest.raises(gradcheck.CheckError) as e:
        check_function(silu().apply, x, precisions=silu_classes("bf16") * 2)
    assert e.value.status == gradcheck.Status.EINVAL
    assert "no earlier class has" in str(e.value)


def scaled_sin(x, a):
    return (a * torch.sin(x)).sum()


def test_blind_note_without_the_twin_names_the_twin():
    # L = sum a_i sin x_i, a_i = 2^-4i: the gradient spans 2^0 .. 2^-28,
    # and the defaulted magnitude of x (its largest |g|) makes the
    # smallest elements blind (manual: "Defaulted magnitudes do not make
    # a blind pass").  With twin=False the note on them names what a torch
    # caller can do -- turn the twin back on -- and not grad_magnitude_f32,
    # a field of a C model.
    a = torch.tensor([2.0 ** (-4 * i) for i in range(8)])
    x = torch.linspace(-1, 1, 8).requires_grad_()
    r = check_function(scaled_sin, x, a, twin=False)
    assert r.verdict == Verdict.INCONCLUSIVE, r.report()
    assert r.n_blind_defaulted > 0
    assert r.twin_unused is True
    notes = [ln for ln in r.report().splitlines()
             if "blind direction(s) INCONCLUSIVE" in ln]
    assert len(notes) == 1, r.report()
    assert "check with the model's f64 twin on" in notes[0]
    assert "grad_magnitude_f32" not in r.report()
    # read back from its JSON report alone (Result.from_json, and so a
    # copy or a pickle), every direction judged again from its numbers
    # (manual: "JSON report": the counts are recomputed when a report is
    # read back): the same count and the same note (it read 0, no note)
    back = gradcheck.Result.from_json(r.report("json"))
    for b in (back, copy.copy(r), pickle.loads(pickle.dumps(r))):
        assert b.verdict == r.verdict
        assert b.n_blind_defaulted == r.n_blind_defaulted
        assert b.report() == r.report()
    # the action it names works: with the twin on (the default) the twin
    # measures, no direction is blind by a defaulted magnitude, it passes
    r = check_function(scaled_sin, x, a)
    assert r.verdict == Verdict.PASS, r.report()
    assert r.n_blind_defaulted == 0
    assert "makes the blindness" not in r.report()


def test_options_check_function_sets_are_refused_by_name():
    """A new user's trial: device="cuda" raised "check() got multiple
    values for keyword argument 'device'" from inside the package, and an
    unknown option named check(), not check_function()."""
    x = torch.randn(4, requires_grad=True)
    with pytest.raises(TypeError, match=r"check_function\(\) sets device"):
        check_function(torch.sin, x, device="cuda")
    with pytest.raises(TypeError, match=r"check_function\(\) got an "
                       r"unexpected keyword argument 'bogus'"):
        check_function(torch.sin, x, bogus=1)


def test_fn_raising_at_once_is_a_callback_error():
    """fn that raises on its first run, before the check begins, is a
    CallbackError with the exception as its cause, as one that raises
    inside the check is (manual: "From Python")."""
    from gradcheck import CallbackError
    x = torch.randn(4, requires_grad=True)
    with pytest.raises(CallbackError) as e:
        check_function(lambda t: 1 / 0, x)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert e.value.callback == "fn"


def test_meta_tensor_is_refused():
    x = torch.randn(3, device="meta", requires_grad=True)
    with pytest.raises(TypeError, match="meta device"):
        check_function(torch.sin, x)


@pytest.mark.parametrize("op", ["sgn", "sign", "floor"])
def test_gradient_without_storage_is_read_as_zeros(op):
    # torch.sgn's backward returns an efficient zero tensor (no storage,
    # torch >= 1.13): read as it stands (a NumPy view of it) its values
    # are whatever memory is there, and the check read a deterministic op
    # as NON-DETERMINISTIC (found by the op corpus); the adapter copies
    # every gradient into the vector it returns
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(3))
    r = check_function(getattr(torch, op), x)
    assert r.verdict == Verdict.PASS, r.report()
    assert len(r.directions) and (r.directions.analytic == 0).all()


def test_inconclusive_line_names_the_twin_s_numbers():
    # element 0's gradient (1.5e-12) is far below what f64 differences
    # of a loss of ~1e3 resolve: the twin's algorithm cannot judge it, and
    # the report's inconclusive line says so with the twin's bar_64 and
    # g64 (before: the f32 side's bar alone, which did not decide); the
    # resolution line counts the references of 0 behind its "inf"
    def fn(x):
        return torch.stack([x[0] * 1e-12, (x[1:] ** 2).sum() * 1e3])
    r = check_function(fn, torch.tensor([0.7, 1.1, -0.4, 0.9]))
    assert r.verdict == Verdict.INCONCLUSIVE, r.report()
    d = r.directions
    k = int(d.index.tolist().index(0))
    assert d.verdict[k] == "inconclusive"
    lines = r.report().splitlines()
    inc = next(ln for ln in lines if ln.startswith("inconclusive:"))
    assert "the twin's algorithm could not judge it: bar_64 %.3e" % \
        d.bar_f64[k] in inc
    assert "twin g64 %.3e" % d.analytic_f64[k] in inc
    res = next(ln for ln in lines if ln.startswith("resolution:"))
    zero = int((d.reference == 0).sum())
    assert zero >= 1     # element 0's: a loss of 1e3 does not move by it
    assert "(%d of %d directions have a reference of 0" % (
        zero, len(d)) in res
