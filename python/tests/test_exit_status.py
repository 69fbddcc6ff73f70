# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""Result.exit_status is the exit status `gradcheck run` gives the same
check: each built-in check below runs in the command (its exit status and
its JSON report), the report is read back into a Result, and the two are
compared; the cases cover every verdict's status and the two kinds of
refusal.  Then checks run from Python: their exit_status against the
command's for a check of the same outcome."""

import os
import subprocess

import pytest

import gradcheck


def _cli():
    """The in-tree command: GRADCHECK_CLI (tests/python.sh sets it), else
    beside the library GRADCHECK_LIBRARY names (lib/.libs ->
    gradcheck/gradcheck)."""
    p = os.environ.get("GRADCHECK_CLI")
    if not p:
        lib = os.environ.get("GRADCHECK_LIBRARY", "")
        top = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(lib)))) if lib else ""
        p = os.path.join(top, "gradcheck", "gradcheck") if top else ""
    if not p or not os.access(p, os.X_OK):
        pytest.skip("no in-tree gradcheck command (set GRADCHECK_CLI)")
    return p


def run_cli(*args):
    """(exit status, Result read back from the JSON report) of
    `gradcheck run ARGS --format json`."""
    p = subprocess.run([_cli(), "run", *args, "--format", "json"],
                       capture_output=True, text=True, timeout=600)
    assert p.stdout, "no report from gradcheck run %s: %s" % (args, p.stderr)
    return p.returncode, gradcheck.Result.from_json(p.stdout)


# (the command's arguments, the verdict or status the case is there for):
# the second column makes sure the cases do cover what they are named
# for, so that a change of a built-in model cannot leave the test
# comparing one outcome seven times.
CASES = [
    (("tanh-gemm",), gradcheck.Verdict.PASS),
    (("tanh-gemm", "--mutant", "dw-twice"), gradcheck.Verdict.FAIL),
    (("tanh-gemm", "--mutant", "dx-bf16-sum"), gradcheck.Verdict.PRECISION),
    (("tanh-gemm", "--twin", "off", "--mutant", "dx-bf16-sum"),
     gradcheck.Verdict.FAIL),
    (("tanh-gemm", "--ref", "f32"), gradcheck.Verdict.INCONCLUSIVE),
    (("tanh-gemm", "--timeout", "0.000001"), gradcheck.Status.ETIMEOUT),
    (("tanh-gemm", "--ref", "f32", "--step", "1e-30"),
     gradcheck.Status.ESTEP),
]


@pytest.mark.parametrize("args,what", CASES,
                         ids=[" ".join(a) for a, _ in CASES])
def test_exit_status_is_the_commands(args, what):
    rc, r = run_cli(*args)
    if isinstance(what, gradcheck.Status):
        assert r.status == what, r.report()
    else:
        assert r.status == gradcheck.Status.OK and r.verdict == what, \
            r.report()
    assert r.exit_status == rc, (
        "gradcheck run %s exits %d; its Result (%s, %s) says %d"
        % (" ".join(args), rc, r.status, r.verdict, r.exit_status))


def test_exit_status_of_checks_from_python(model, point):
    # the same outcomes from Python's own checks: a pass, a logic error, a
    # callback that raises (a model failure, as the command's time limit)
    r = gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, **model.depths)
    assert r.verdict == gradcheck.Verdict.PASS
    assert r.exit_status == run_cli("tanh-gemm")[0]
    r = gradcheck.check(model.loss, model.bug("sign"), point,
                        loss_f64=model.loss_f64, **model.depths)
    assert r.verdict == gradcheck.Verdict.FAIL
    assert r.exit_status == run_cli("tanh-gemm", "--mutant", "dw-twice")[0]

    def boom(x):
        raise RuntimeError("the backward exploded")
    with pytest.raises(gradcheck.CallbackError) as e:
        gradcheck.check(model.loss, boom, point, loss_f64=model.loss_f64)
    assert e.value.result.status == gradcheck.Status.ECALLBACK
    assert e.value.result.exit_status == run_cli(
        "tanh-gemm", "--timeout", "0.000001")[0]
