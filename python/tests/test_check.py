# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""gradcheck.check on a NumPy model: verdicts, bugs, results, reports."""

import json

import numpy as np
import pytest

import gradcheck
from gradcheck import Status, Verdict


def run(model, x, grad=None, **kw):
    return gradcheck.check(model.loss, grad or model.grad, x,
                           loss_f64=model.loss_f64, **model.depths, **kw)


def test_correct_backward_passes(model, point):
    r = run(model, point)
    assert r.verdict == Verdict.PASS and r.ok
    d = r.directions
    assert len(d) == point.size
    # every coordinate checked, in order, each within its bar
    assert list(d.index) == list(range(point.size))
    assert (d.nu <= 1).all()
    assert np.array_equal(d.diff <= d.bar, np.ones(point.size, bool))


def test_correct_backward_passes_with_twin(model, point):
    r = run(model, point, grad_f64=model.grad_f64)
    assert r.verdict == Verdict.PASS
    assert r.json["twin"]["n_failed_algorithm"] == 0
    # the twin's value is the f64 backward, exactly as grad_f64 gave it
    g64 = model.grad_f64(point.astype(np.float64))
    assert np.array_equal(r.directions.analytic_f64, g64)


@pytest.mark.parametrize("bug,diagnosis", [
    ("factor", "constant-factor"), ("sign", "sign-flip"),
    ("shift", None), ("drop", None)])
def test_bug_is_caught(model, point, bug, diagnosis):
    r = gradcheck.assert_gradient_fails(
        model.loss, model.bug(bug), point, loss_f64=model.loss_f64,
        diagnosis=diagnosis, **model.depths)
    assert r.n_failed > 0
    assert not r.ok


def test_bug_is_caught_by_random_directions(model, point):
    r = run(model, point, grad=model.bug("drop"), directions=4, seed=7)
    assert r.verdict == Verdict.FAIL
    assert (r.directions.index == -1).all()


def test_assert_gradient_message_is_the_report(model, point):
    with pytest.raises(AssertionError) as e:
        gradcheck.assert_gradient(model.loss, model.bug("factor"), point,
                                  loss_f64=model.loss_f64, **model.depths)
    msg = str(e.value)
    assert msg.startswith("expected verdict pass; got fail\n")
    assert "verdict: FAIL" in msg and "derivation" in msg


def test_assert_gradient_in_unittest(model, point):
    import unittest

    class T(unittest.TestCase):
        def test_ok(self):
            gradcheck.assert_gradient(model.loss, model.grad, point,
                                      loss_f64=model.loss_f64, **model.depths)

        def test_bug(self):
            gradcheck.assert_gradient(model.loss, model.bug("sign"), point,
                                      loss_f64=model.loss_f64, **model.depths)

    res = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(T).run(res)
    assert res.testsRun == 2 and not res.errors
    assert len(res.failures) == 1 and "test_bug" in str(res.failures[0][0])
    assert "verdict: FAIL" in res.failures[0][1]


def test_reports(model, point):
    r = run(model, point, blocks={"w": (3, 4)}, constants={"K": 4})
    text, md, tap = r.report("text"), r.report("markdown"), r.report("tap")
    j = json.loads(r.report("json"))
    assert j["verdict"] == "pass" and j["n"] == point.size
    assert text.startswith("gradcheck ") and "verdict: PASS" in text
    assert md.startswith("#")
    assert sum(1 for ln in tap.splitlines() if ln.startswith("ok ")) \
        == point.size
    assert r.param_name(5) == "w[1,1]"
    assert [b["name"] for b in j["blocks"]] == ["w"]
    assert "derivation" in r.derivation(0).lower() or "bar" in r.derivation(0)
    with pytest.raises(ValueError):
        r.report("xml")


def test_verdict_and_status_mirror_the_library(model, point):
    # the enums' names are the library's names (gc_verdict_name, and the
    # JSON report's status names) without their hyphens
    for v in Verdict:
        assert str(v).replace("-", "") == v.name.lower()
    with pytest.raises(gradcheck.CallbackError) as e:
        gradcheck.check(model.loss, lambda x: 1 / 0, point)
    assert e.value.status == Status.ECALLBACK
    assert e.value.result.json["status"] == Status.ECALLBACK.name


def test_threads_give_the_serial_result(model, point):
    serial = run(model, point, grad_f64=model.grad_f64)
    par = run(model, point, grad_f64=model.grad_f64, threads=3)
    assert par.verdict == serial.verdict == Verdict.PASS
    for f in ("analytic", "reference", "bar", "nu", "analytic_f64"):
        assert np.array_equal(getattr(par.directions, f),
                              getattr(serial.directions, f)), f
    bad = run(model, point, grad=model.bug("factor"), threads=3)
    assert bad.verdict == Verdict.FAIL


def test_x_of_any_shape_and_bad_x(model, point):
    x2 = point.reshape(3, 4)
    r = gradcheck.check(lambda x: model.loss(x.reshape(-1)),
                        lambda x: model.grad(x.reshape(-1)).reshape(3, 4),
                        x2, loss_f64=lambda x: model.loss_f64(x.reshape(-1)),
                        **model.depths)
    assert r.verdict == Verdict.PASS
    with pytest.raises(TypeError):
        gradcheck.check(model.loss, model.grad, point.astype(np.float64))
    bad = point.copy()
    bad[3] = np.nan
    with pytest.raises(gradcheck.CheckError) as e:
        run(model, bad)
    assert e.value.status == Status.EPOINT


def test_inconclusive_is_not_a_pass(model, point):
    # f32 central differences of an f32 forward cannot resolve a backward
    # of this size to its bar everywhere: whatever they say, it is never a
    # silent pass of a bug
    r = gradcheck.check(model.loss, model.bug("drop"), point,
                        reference="f32", **model.depths)
    assert r.verdict in (Verdict.FAIL, Verdict.INCONCLUSIVE)


def test_long_bf16_chain_can_be_declared(model, point):
    # issue 32: 150 bf16 roundings on one chain (150 2^-8 > 1/2) was
    # refused; the class's worst case ((1 + u)^d - 1) / u holds at every
    # depth (manual: "Chains past d u = 1/2"), and the check runs
    chain = [gradcheck.Precision.storage("bf16", 0, 150)]
    r = run(model, point, grad_f64=model.grad_f64, precisions=chain)
    assert r.verdict == Verdict.PASS
    # the correct f32 path rounds nothing to bf16: the class is unsupported
    assert "UNSUPPORTED: the declared class(es) bf16" in r.report("text")
    # refused only where (1 + u)^d >= 2^64: bf16 above 11378
    with pytest.raises(gradcheck.CheckError) as e:
        run(model, point, precisions=[
            gradcheck.Precision.storage("bf16", 0, 11379)])
    assert e.value.status == Status.EINVAL
    assert "at most 11378" in str(e.value)


def test_f64_forward_that_rounds_like_f32_is_named(model, point):
    """A loss_f64 that computes in float32 (a float32 array in its
    arithmetic: a new user's trial, whose x1e-4 bug then passed under the
    twin) has a reference spread of f32's size: the report warns, naming
    the likely cause; the honest f64 forward gets no such line."""
    want = "WARNING: the f64 reference forward's spread"
    honest = run(model, point, grad_f64=model.grad_f64)
    assert want not in honest.report()
    r = gradcheck.check(
        model.loss, model.grad, point,
        loss_f64=lambda p: np.float64(model.loss(p.astype(np.float32))),
        grad_f64=model.grad_f64, **model.depths)
    assert want in r.report(), r.report()
    assert "does loss_f64 compute in float32" in r.report()


def test_a_step_far_too_long_is_inconclusive_not_a_failure():
    """step=1e10 on parameters below 1 (a new user's trial): a bounded
    loss's difference quotients are 0 at h and 2h, and the correct
    backward failed as a logic error; f64 mode holds a user's step to the
    test of "What f64 mode cannot judge" (h / 2^8 still exceeds the
    element): INCONCLUSIVE, unconfirmed.  A step that fits still
    passes."""
    x = (0.1 * np.arange(8) - 0.35).astype(np.float32)

    def loss(p):
        return np.sum(np.tanh(p))

    def grad(p):
        return (1 - np.tanh(p) ** 2).astype(p.dtype)
    r = gradcheck.check(loss, grad, x, loss_f64=loss, step=1e10)
    assert r.verdict == Verdict.INCONCLUSIVE, r.report()
    assert "unconfirmed  f64's step does not resolve" in r.report()
    r = gradcheck.check(loss, grad, x, loss_f64=loss, step=1e-4)
    assert r.verdict == Verdict.PASS, r.report()
