# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""The tests' model: L(w) = sum_r softplus(a_r . w), fixed rows a_r (the
model of doc/examples/plugin.c), in NumPy: an f32 forward and backward
written out as a C loop would be, its f64 forward and the backward's f64
twin (the same code at float64)."""

import numpy as np
import pytest

ROWS, N = 16, 12


def rows():
    rng = np.random.default_rng(12345)
    return rng.uniform(-1, 1, size=(ROWS, N)).astype(np.float32)


A = rows()


def _loss(dtype):
    a = A.astype(dtype)

    def loss(w):
        z = a @ w.astype(dtype)
        return np.sum(np.log1p(np.exp(z)), dtype=dtype)
    return loss


def _grad(dtype, bug=None):
    a = A.astype(dtype)

    def grad(w):
        z = a @ w.astype(dtype)
        s = (1 / (1 + np.exp(-z))).astype(dtype)
        if bug == "factor":
            s = s * dtype(2)
        elif bug == "sign":
            s = -s
        g = (s[:, None] * a).sum(axis=0, dtype=dtype)
        if bug == "shift":
            g = np.roll(g, 1)
        elif bug == "drop":
            g = g - s[0] * a[0]          # the first row's term dropped
        return g.astype(dtype)
    return grad


class Model:
    """The model's callables; .bug(kind) gives the backward with a bug."""
    loss = staticmethod(_loss(np.float32))
    loss_f64 = staticmethod(_loss(np.float64))
    grad = staticmethod(_grad(np.float32))
    grad_f64 = staticmethod(_grad(np.float64))
    # depths (as doc/examples/plugin.c derives them): the N-term dot
    # product, exp, log1p and the ROWS-term sum; the backward reaches z,
    # the sigmoid (3) and the ROWS-term sum.
    depths = dict(forward_depth=N + 2 + ROWS, backward_depth=N + 3 + ROWS)

    @staticmethod
    def bug(kind):
        return _grad(np.float32, kind)


@pytest.fixture
def model():
    return Model


@pytest.fixture
def point():
    return (0.1 * np.arange(N) - 0.3).astype(np.float32)


def raiser_for_pool(x):
    """A backward that raises, importable by a multiprocessing worker."""
    raise RuntimeError("model exploded in a worker")
