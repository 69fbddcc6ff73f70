# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""gradcheck -- check a float32 backward pass from Python with
libgradcheck's derived bar (manual: "From Python").

    import numpy as np, gradcheck
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    r = gradcheck.check(lambda x: np.tanh(x).sum(), lambda x: 1 - np.tanh(x)**2,
                        x, loss_f64=lambda x: np.tanh(x).sum())
    print(r.verdict, r.report("text"))

gradcheck.torch.check_function checks a function of torch tensors (the
submodule is imported on first use: torch stays optional).
"""

from ._version import __version__
from .check import (CALLBACK_FAILED, CallbackError, CheckError, Directions,
                    Precision, Result, Status, Verdict, assert_gradient,
                    assert_gradient_fails, check)

__all__ = ["check", "assert_gradient", "assert_gradient_fails", "Result",
           "Directions", "Precision", "Verdict", "Status", "CheckError", "CallbackError",
           "CALLBACK_FAILED", "__version__"]


def __getattr__(name):
    # gradcheck.torch on first use, so that "import gradcheck" needs no
    # torch (PEP 562)
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'gradcheck' has no attribute %r" % name)
