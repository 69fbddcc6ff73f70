# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""The torch adapter's reach: which outputs enter the loss, what it
refuses by name, the device path (on the CPU through gc_options.device,
and on a GPU where one is present), and the package's entry points
(gradcheck.torch on first use, __version__, assert_function,
random_per_tensor)."""

import subprocess
import warnings
import sys

import pytest

torch = pytest.importorskip("torch")

import gradcheck                                    # noqa: E402
from gradcheck import Verdict                       # noqa: E402
from gradcheck.torch import (assert_function, assert_function_fails,  # noqa: E402
                             check_function)

HAS_CUDA = torch.cuda.is_available()
cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device here "
                          "(bench/gpu.sh runs these on a GPU)")


def point(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def with_stats(x, w):
    """A LayerNorm-like op returning, as torch's native_layer_norm does,
    statistics that do not require grad beside its output."""
    mu = x.mean(-1, keepdim=True)
    rstd = torch.rsqrt(((x - mu) ** 2).mean(-1, keepdim=True) + 1e-5)
    return (x - mu) * rstd * w, mu.detach(), rstd.detach()


def test_outputs_without_grad_are_left_out():
    # before: every floating output entered the loss, and the statistics'
    # missing gradient read as a logic error of the op
    r = check_function(with_stats, point(3, 8), point(8, seed=1))
    assert r.verdict == Verdict.PASS, r.report()
    assert r.outputs == [0]
    assert "\nloss from: output 0 of 3 (left out: 1, 2: no grad), as sum " \
           "<out, c>, c standard normal from seed 0\n" in r.report()
    assert r.json["loss_note"].startswith("output 0 of 3")


def test_adapter_fields_survive_copy_and_pickle():
    import copy
    import pickle
    r = check_function(with_stats, point(3, 8), point(8, seed=1))
    for c in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert (c.outputs, c.cotangent, c.skipped, c.device) == \
               (r.outputs, r.cotangent, r.skipped, r.device)
        assert c.report() == r.report()


def test_integer_outputs_are_named_as_left_out():
    r = check_function(lambda x: (x.sin(), x.argmax()), point(5))
    assert r.outputs == [0]
    assert "\nloss from: output 0 of 2 (left out: 1: not floating), as " \
           "sum <out, c>" in r.report()


def test_native_layer_norm_passes():
    if not hasattr(torch, "native_layer_norm"):
        pytest.skip("this torch has no torch.native_layer_norm")
    x, w, b = point(4, 8), point(8, seed=1), point(8, seed=2)
    r = check_function(lambda x, w, b: torch.native_layer_norm(
        x, (8,), w, b, 1e-5), x, w, b)
    assert r.verdict == Verdict.PASS, r.report()
    assert r.outputs == [0]
    assert "(left out: 1, 2: no grad)" in r.report()


def test_complex_output_is_refused_by_name():
    with pytest.raises(TypeError, match="output 1 is torch.complex64"):
        check_function(lambda x: (x.sum(), torch.fft.fft(x)), point(8))
    with pytest.raises(TypeError, match="output 0 is torch.complex64"):
        check_function(lambda x: torch.fft.fft(x), point(8))


def test_complex_input_is_refused_by_name():
    z = torch.randn(4, dtype=torch.complex64).requires_grad_()
    with pytest.raises(TypeError, match="input 1 is torch.complex64"):
        check_function(lambda x, z: (x * z.abs()).sum(), point(4), z)


def test_zero_size_input_is_skipped_and_named():
    r = check_function(lambda x, e: x.sin().sum() + e.sum(), point(5),
                       torch.zeros(0))
    assert r.verdict == Verdict.PASS, r.report()
    assert r.skipped == ["input1 (zero-size)"]
    assert r.n == 5
    # names: one per differentiable input, the zero-size one included
    r = check_function(lambda x, e: x.sin().sum() + e.sum(), point(5),
                       torch.zeros(0), names=["x", "empty"])
    assert r.skipped == ["empty (zero-size)"]
    assert [b["name"] for b in r.blocks] == ["x"]
    with pytest.raises(ValueError, match=r"input 1 \(zero-size\)"):
        check_function(lambda x, e: x.sin().sum() + e.sum(), point(5),
                       torch.zeros(0), names=["x"])
    with pytest.raises(TypeError, match="zero-size: input 0"):
        check_function(lambda e: e.sum(), torch.zeros(0, 3))


def test_no_floating_output_is_named():
    with pytest.raises(TypeError, match="fn returned a NoneType"):
        check_function(lambda x: None, point(3))
    with pytest.raises(TypeError, match="fn returned a torch.int64 tensor"):
        check_function(lambda x: (x > 0).long(), point(3))
    with pytest.raises(TypeError, match="none of fn's floating outputs"):
        check_function(lambda x: x.detach() * 2, point(3))


def test_inputs_on_two_devices_are_refused():
    meta = torch.empty(3, device="meta")
    with pytest.raises(ValueError, match="several devices"):
        check_function(lambda x, y: x.sum(), point(3), meta)


def test_device_option_is_reported():
    # the device path's library side, on any host: a named device puts
    # its line in the report and in the JSON, and the rounding line no
    # longer says the modes measured anything
    r = gradcheck.check(lambda x: float((x * x).sum()),
                        lambda x: 2 * x, point(6).numpy(),
                        loss_f64=lambda x: float((x * x).sum()),
                        grad_f64=lambda x: 2 * x, device="cuda:0 (test)")
    text = r.report("text")
    assert "device: cuda:0 (test): the model computes there" in text
    assert "measured under" not in text.split("\nverdict")[0]
    assert r.json["device"] == "cuda:0 (test)"
    assert "device" not in gradcheck.check(
        lambda x: float((x * x).sum()), lambda x: 2 * x, point(6).numpy(),
        loss_f64=lambda x: float((x * x).sum())).json


def test_device_name_is_validated():
    with pytest.raises(gradcheck.CheckError, match="printable ASCII"):
        gradcheck.check(lambda x: float(x.sum()), lambda x: x * 0 + 1,
                        point(3).numpy(), reference="f32",
                        device="x" * 64)


def test_lazy_torch_and_version():
    # "import gradcheck" alone reaches gradcheck.torch, and imports torch
    # only then
    code = ("import sys, gradcheck; assert 'torch' not in sys.modules; "
            "gradcheck.torch.check_function; assert 'torch' in sys.modules; "
            "print(gradcheck.__version__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True).stdout.strip()
    r = gradcheck.check(lambda x: float(x.sum()), lambda x: x * 0 + 1,
                        point(3).numpy(), reference="f32")
    assert out == gradcheck.__version__ == r.json["gradcheck"]


class Doubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x.cos()


def test_assert_function():
    assert_function(lambda x: x.sin(), point(6))
    with pytest.raises(AssertionError, match="expected verdict pass; got "
                       "fail\ngradcheck"):
        assert_function(Doubled.apply, point(6))


def test_assert_function_fails():
    r = assert_function_fails(Doubled.apply, point(6),
                              diagnosis="constant-factor")
    assert r.verdict == Verdict.FAIL
    with pytest.raises(AssertionError, match="expected verdict fail; got "
                       "pass"):
        assert_function_fails(lambda x: x.sin(), point(6))
    with pytest.raises(AssertionError, match="with diagnosis sign-flip; "
                       "got fail with diagnosis constant-factor"):
        assert_function_fails(Doubled.apply, point(6),
                              diagnosis="sign-flip")


def test_random_per_tensor():
    r = check_function(with_stats, point(3, 8), point(8, seed=1),
                       random_per_tensor=4)
    assert r.verdict == Verdict.PASS, r.report()
    assert r.random_per_block == 4 and r.n_directions == 8
    with pytest.raises(ValueError, match="random_per_tensor"):
        check_function(with_stats, point(3, 8), point(8, seed=1),
                       random_per_tensor=0)


@cuda
def test_cuda_correct_op_passes_and_names_the_device():
    x, w = point(3, 8).cuda(), point(8, seed=1).cuda()
    r = check_function(with_stats, x, w)
    assert r.verdict == Verdict.PASS, r.report()
    assert r.device.startswith("cuda:")
    assert "device: cuda:" in r.report("text")


@cuda
def test_cuda_scale_bug_is_caught():
    class Scaled(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.tanh()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (1 - x.tanh() ** 2) * (1 + 1e-6)
    r = check_function(Scaled.apply, point(16).cuda())
    assert r.verdict == Verdict.FAIL, r.report()


@cuda
def test_cuda_held_and_cpu_mixed_is_refused():
    with pytest.raises(ValueError, match="several devices"):
        check_function(lambda x, y: (x * y.cuda()).sum(), point(3).cuda(),
                       point(3))


def test_tf32_on_a_gpu_undeclared_warns():
    # the warning's logic on any host: TF32 read from torch's flag for a
    # CUDA device, silent on the CPU and with a tf32 class declared
    from gradcheck.torch import _tf32_warning
    was = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        with pytest.warns(UserWarning, match="TF32 is on"):
            _tf32_warning(torch.device("cuda"), None)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _tf32_warning(torch.device("cpu"), None)
            _tf32_warning(torch.device("cuda"), [
                gradcheck.Precision.arithmetic("tf32", 2, 2)])
            torch.backends.cuda.matmul.allow_tf32 = False
            _tf32_warning(torch.device("cuda"), None)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = was
