# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""Callbacks that raise, return the wrong shape or type, or NaN: a clean
error with the library's status and detail, never a crash, nothing kept
alive after the error is dropped."""

import gc
import weakref

import numpy as np
import pytest

import gradcheck
from gradcheck import Status


class Boom(Exception):
    pass


def raiser(*a):
    raise Boom("model exploded")


CALLBACKS = ["loss", "grad", "loss_f64", "grad_f64", "grad_magnitude",
             "loss_magnitude"]


def kwargs(model, which, fn):
    kw = dict(loss=model.loss, grad=model.grad, loss_f64=model.loss_f64,
              grad_f64=model.grad_f64,
              grad_magnitude=lambda x: np.abs(model.grad(x)),
              loss_magnitude=lambda x: abs(model.loss(x)))
    kw[which] = fn
    return kw


@pytest.mark.parametrize("which", CALLBACKS)
@pytest.mark.parametrize("threads", [1, 2])
def test_raising_callback(model, point, which, threads):
    kw = kwargs(model, which, raiser)
    with pytest.raises(gradcheck.CallbackError) as e:
        gradcheck.check(x=point, threads=threads, **kw)
    err = e.value
    assert isinstance(err.__cause__, Boom)
    assert err.callback == which
    assert err.status == Status.ECALLBACK
    assert err.result.callback_code == gradcheck.CALLBACK_FAILED
    assert "model exploded" in str(err) and "Boom" in str(err)
    # the library's detail names the C callback that failed
    assert "returned %d" % gradcheck.CALLBACK_FAILED in err.detail
    assert err.result.report("json")        # the result is still whole


@pytest.mark.parametrize("which,value", [
    ("grad", np.zeros(3, np.float32)),
    ("grad", np.zeros((12, 1), np.float32)),
    ("grad", None),
    ("grad", "abc"),
    ("grad", np.zeros(12, np.complex64)),
    ("grad_f64", np.zeros(13)),
    ("grad_magnitude", [1.0, 2.0]),
    ("loss", np.zeros(2, np.float32)),
    ("loss", None),
    ("loss", "1.0"),
    ("loss_f64", np.ones(3)),
    ("loss_magnitude", object()),
])
def test_wrong_shape_or_type(model, point, which, value):
    kw = kwargs(model, which, lambda x: value)
    with pytest.raises(gradcheck.CallbackError) as e:
        gradcheck.check(x=point, **kw)
    assert isinstance(e.value.__cause__, (ValueError, TypeError))
    assert e.value.callback == which
    assert e.value.status == Status.ECALLBACK


@pytest.mark.parametrize("which", ["loss", "grad", "loss_f64", "grad_f64"])
def test_nan(model, point, which):
    def nan(x):
        v = (model.grad_f64 if which.startswith("grad") else
             model.loss_f64)(x.astype(np.float64))
        return np.full_like(np.asarray(v), np.nan)
    kw = kwargs(model, which, nan)
    del kw["grad_magnitude"], kw["loss_magnitude"]
    with pytest.raises(gradcheck.CheckError) as e:
        gradcheck.check(x=point, **kw)
    assert not isinstance(e.value, gradcheck.CallbackError)
    assert e.value.status == Status.ENONFINITE
    assert e.value.detail


def test_raise_later_in_the_check(model, point):
    # a callback that fails on its 30th call, in the middle of the stencils
    calls = [0]

    def grad(x):
        return model.grad(x)

    def loss(x):
        calls[0] += 1
        if calls[0] == 30:
            raise Boom("thirtieth call")
        return model.loss(x)
    with pytest.raises(gradcheck.CallbackError) as e:
        gradcheck.check(loss, grad, point, reference="f32")
    assert "thirtieth" in str(e.value)


def test_keyboard_interrupt_propagates(model, point):
    def stop(x):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        gradcheck.check(model.loss, stop, point, loss_f64=model.loss_f64)


def test_writing_x_is_refused(model, point):
    def grad(x):
        x[0] = 0            # read-only: a ValueError, a callback failure
        return model.grad(x)
    with pytest.raises(gradcheck.CallbackError) as e:
        gradcheck.check(model.loss, grad, point, loss_f64=model.loss_f64)
    assert isinstance(e.value.__cause__, ValueError)


def test_kept_x_stays_valid(model, point):
    # x is the callback's own copy: keeping it past the call is safe
    kept = []

    def grad(x):
        kept.append(x)
        return model.grad(x)
    gradcheck.check(model.loss, grad, point, loss_f64=model.loss_f64,
                    **model.depths)
    assert all(np.isfinite(k).all() for k in kept)
    assert any(np.array_equal(k, point) for k in kept)


def test_nothing_kept_alive(model, point):
    # the model's callables, the result and the exception are freed by
    # reference counting alone once the caller drops them: no cycle
    class Loss:
        def __call__(self, x):
            raise Boom("x")
    gc.disable()
    try:
        loss = Loss()
        wl = weakref.ref(loss)
        try:
            gradcheck.check(loss, model.grad, point)
        except gradcheck.CallbackError as e:
            wr = weakref.ref(e.result)
        del loss
        assert wl() is None and wr() is None
        r = gradcheck.check(model.loss, model.grad, point,
                            loss_f64=model.loss_f64)
        wr = weakref.ref(r)
        del r
        assert wr() is None
    finally:
        gc.enable()


def test_closed_result(model, point):
    r = gradcheck.check(model.loss, model.grad, point, loss_f64=model.loss_f64)
    r.close()
    r.close()
    with pytest.raises(ValueError):
        r.report()


@pytest.mark.parametrize("kw,exc", [
    (dict(reference="mpfr"), gradcheck.CheckError),
    (dict(reference="nope"), ValueError),
    (dict(directions=[0, 99]), gradcheck.CheckError),
    (dict(directions="some"), ValueError),
    (dict(false_alarm=2.0), gradcheck.CheckError),
    (dict(blocks={"w": (5,)}), ValueError),   # names the sizes
    (dict(blocks={"w": (1,) * 7}), ValueError),
    (dict(backward_depth=2**25), gradcheck.CheckError),
])
def test_bad_options(model, point, kw, exc):
    with pytest.raises(exc) as e:
        gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, **kw)
    if exc is gradcheck.CheckError:
        assert e.value.status != Status.OK
        assert str(e.value).startswith("gradcheck: ")


@pytest.mark.parametrize("kw", [dict(false_alarm=2.0), dict(step=-1.0),
                                dict(timeout=float("nan"))])
def test_option_out_of_range_is_named(model, point, kw):
    """A new user's trial: a float option out of range read "invalid
    argument (...): invalid argument (...)", naming nothing, twice.  The
    message names the argument and its value, once."""
    (name, value), = kw.items()
    with pytest.raises(gradcheck.CheckError) as e:
        gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, **kw)
    msg = str(e.value)
    assert "%s %g" % (name, value) in msg, msg
    assert "gc_options" not in msg, msg
    what = msg.split(": ")[1]
    assert msg.count(what) == 1, msg


def test_no_parameters_said_once(model):
    with pytest.raises(gradcheck.CheckError) as e:
        gradcheck.check(model.loss, model.grad, np.zeros(0, np.float32),
                        loss_f64=model.loss_f64)
    assert str(e.value).count("no parameters") == 1, str(e.value)


@pytest.mark.parametrize("which", ["loss", "loss_f64"])
def test_number_forms_agree(model, point, which):
    # the trampoline takes a Python float as it is and anything else through
    # NumPy's checks: each form of the same value gives the same report
    reports = set()
    for form in (float, np.float64, np.asarray, lambda v: np.asarray([v])):
        kw = kwargs(model, which, None)
        f = getattr(model, which)
        kw[which] = lambda x, f=f, form=form: form(float(f(x)))
        del kw["grad_magnitude"], kw["loss_magnitude"]
        r = gradcheck.check(x=point, **kw)
        reports.add(r.report("json"))
    assert len(reports) == 1


@pytest.mark.parametrize("which", ["loss", "loss_f64"])
def test_nan_as_python_float(model, point, which):
    kw = kwargs(model, which, lambda x: float("nan"))
    del kw["grad_magnitude"], kw["loss_magnitude"]
    with pytest.raises(gradcheck.CheckError) as e:
        gradcheck.check(x=point, **kw)
    assert not isinstance(e.value, gradcheck.CallbackError)
    assert e.value.status == Status.ENONFINITE


# -- Issue 35: copies of a Result, integers that would wrap ---------------

FORMATS = ("text", "json", "markdown", "tap")


def _reports(r):
    return {f: r.report(f) for f in FORMATS}


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_result_copy_owns_its_report(model, point, how):
    # A copy used to share the C pointer: the first close () or finaliser
    # freed it under the other (a use after free, or glibc's double free).
    import copy
    import pickle
    r = gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, grad_f64=model.grad_f64)
    want = _reports(r)
    c = {"copy": copy.copy, "deepcopy": copy.deepcopy,
         "pickle": lambda v: pickle.loads(pickle.dumps(v))}[how](r)
    assert c._ptr != r._ptr
    r.close()
    del r
    gc.collect()
    assert _reports(c) == want
    assert c.verdict == gradcheck.Verdict.PASS and c.status == Status.OK
    c.close()


def test_closed_result_is_not_copied(model, point):
    import copy
    import pickle
    r = gradcheck.check(model.loss, model.grad, point, loss_f64=model.loss_f64)
    r.close()
    for op in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(ValueError):
            op(r)


def test_result_from_json_refuses_garbage():
    with pytest.raises(ValueError):
        gradcheck.Result.from_json('{"gradcheck": 1')
    with pytest.raises(TypeError):
        gradcheck.Result.from_json(3)


def _pool_check(seed):
    # runs in a worker process: the Result goes back pickled, with the
    # reports the worker saw, to be compared there
    from conftest import Model
    x = (0.1 * np.arange(12) - 0.3 + 0.01 * seed).astype(np.float32)
    r = gradcheck.check(Model.loss, Model.grad, x, loss_f64=Model.loss_f64,
                        grad_f64=Model.grad_f64)
    return r, _reports(r)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_result_from_a_pool_worker(method):
    import multiprocessing
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as pool:
        got = pool.map(_pool_check, [0, 1, 2])
    for r, want in got:
        assert _reports(r) == want
        assert r.ok
    del got
    gc.collect()


@pytest.mark.parametrize("kw,name", [
    (dict(backward_depth=2**64 + 1), "backward_depth"),
    (dict(forward_depth=-1), "forward_depth"),
    (dict(directions=2**64 + 3), "directions"),
    (dict(directions=0), "directions"),
    (dict(directions=[0, 2**64 + 1]), "directions"),
    (dict(directions=[0, -1]), "directions"),
    (dict(seed=-1), "seed"),
    (dict(seed=2**64), "seed"),
    (dict(threads=-1), "threads"),
    (dict(threads=2**32 + 1), "threads"),
    (dict(threads=1025), "threads"),
    (dict(precision=2**64 + 128), "precision"),
    (dict(precision=24), "precision"),
    (dict(blocks={"w": (2**64 + 12,)}), "shape"),
])
def test_integers_out_of_range(model, point, kw, name):
    # ctypes passes a Python int to size_t / uint64_t / unsigned modulo
    # 2^w: each is refused before it reaches C, naming the argument
    with pytest.raises(ValueError) as e:
        gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, **kw)
    assert name in str(e.value)


def test_integer_limits_accepted(model, point):
    # the edges themselves are accepted and reach C as given
    r = gradcheck.check(model.loss, model.grad, point,
                        loss_f64=model.loss_f64, seed=2**64 - 1, threads=0,
                        directions=[0, 11])
    assert r.status == Status.OK and len(r.directions) == 2


@pytest.mark.parametrize("fd,bd", [(2**64 + 2, 3), (2, 2**64 + 3), (-1, 0)])
def test_precision_depths_out_of_range(fd, bd):
    with pytest.raises(ValueError) as e:
        gradcheck.Precision.storage("bf16", fd, bd)
    assert "depth" in str(e.value)


def test_param_name_index_out_of_range(model, point):
    r = gradcheck.check(model.loss, model.grad, point, loss_f64=model.loss_f64)
    with pytest.raises(ValueError) as e:
        r.param_name(2**70)
    assert "index" in str(e.value)
    with pytest.raises(ValueError):
        r.param_name(-1)
    with pytest.raises(TypeError):
        r.param_name(True)
    assert r.param_name(3) == "x[3]"


@pytest.mark.parametrize("where", ["precision", "name", "block", "constant",
                                   "model_identity"])
def test_nul_in_a_name(model, point, where):
    # C cuts a string at its first NUL: "bf16\0storage" reached the
    # library as "bf16", silently
    kw = dict(loss_f64=model.loss_f64)
    if where == "precision":
        with pytest.raises(ValueError) as e:
            gradcheck.Precision.storage("bf16", 1, 1)  # fine
            gradcheck.Precision("bf16\0storage", "storage", 2.0 ** -8,
                                2.0 ** -134, 1, 1)
    else:
        kw.update({"name": dict(name="sq\0uare"),
                   "block": dict(blocks={"w\0x": (12,)}),
                   "constant": dict(constants={"c\0d": 1.0}),
                   "model_identity": dict(model_identity="id\0x")}[where])
        with pytest.raises(ValueError) as e:
            gradcheck.check(model.loss, model.grad, point, **kw)
    assert "NUL" in str(e.value)


def _pool_refused(_):
    from conftest import Model
    x = (0.1 * np.arange(12) - 0.3).astype(np.float32)
    gradcheck.check(Model.loss, Model.grad, x, loss_f64=Model.loss_f64,
                    directions=[0, 99])


def _pool_raises(_):
    from conftest import Model, raiser_for_pool
    x = (0.1 * np.arange(12) - 0.3).astype(np.float32)
    gradcheck.check(Model.loss, raiser_for_pool, x, loss_f64=Model.loss_f64)


@pytest.mark.parametrize("worker,cls", [(_pool_refused, "CheckError"),
                                        (_pool_raises, "CallbackError")])
def test_errors_from_a_pool_worker(worker, cls):
    # a CheckError raised in a worker reaches the parent whole (it could
    # not be unpickled, its __init__ taking the status, detail and result,
    # and the pool hung: hence the time limit)
    import multiprocessing
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        with pytest.raises(getattr(gradcheck, cls)) as e:
            pool.apply_async(worker, (0,)).get(timeout=120)
    err = e.value
    assert str(err).startswith("gradcheck: ")
    assert err.result is not None
    assert err.result.status == err.status != Status.OK
    assert err.detail and err.detail in err.result.report("text")
