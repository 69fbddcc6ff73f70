#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""gpu_side.py -- on a GPU, side by side: torch's production kernels and
custom autograd Functions of our own (a hand-written attention and
LayerNorm whose backwards call cuBLAS), correct and with bugs, checked by

  gradcheck    gradcheck.torch.check_function on the device, in the op's
               dtype (float32, TF32 products, bfloat16, float16), with the
               float64 twin on the same device (the default)
  torch-f64    torch.autograd.gradcheck in float64 on the device (full
               Jacobian; the usual advice for a custom backward)
  rms-5e-3     FLA's constant: per input, rms(g - g64) / rms(g64) < 5e-3,
               g64 the same op's gradient in float64 (autograd)

  gpu_side.py OUTDIR [SECONDS]

A cell is (op, dtype, bug).  A production kernel's bugs are scale errors
of one input's gradient (x (1 + 1e-3), x (1 + 1e-6)), made by an identity
whose backward scales; a custom Function's bugs are its own (a dropped
term, a transposed product, a missing scale) and precision-only ones (a
product rounded to bfloat16 in the float32 path alone).  Cells run in
order until SECONDS (default 420) have passed; OUTDIR/gpu-side.json holds
every cell run, OUTDIR/gpu-side.md the tables.  Run it with the package
importable (PYTHONPATH=python, GRADCHECK_LIBRARY=...: tests/gpu.sh).
"""

import json
import math
import os
import platform
import sys
import time
import warnings

import torch

import gradcheck
from gradcheck import CheckError, Precision
from gradcheck.torch import check_function

# GC_BENCH_DEVICE=cpu runs the same cells on the CPU (a dry run)
DEV = torch.device(os.environ.get("GC_BENCH_DEVICE", "cuda"))


def sync():
    if DEV.type == "cuda":
        torch.cuda.synchronize()
F32, BF16, FP16 = torch.float32, torch.bfloat16, torch.float16


class ScaleGrad(torch.autograd.Function):
    """The identity whose backward multiplies by FACTOR: a scale bug of
    one input's gradient, in every dtype (so the float64 twin has it
    too: an algorithm bug)."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor, None


def scaled(op, factor):
    if factor is None:
        return op
    return lambda x, *rest: op(ScaleGrad.apply(x, factor), *rest)


# ------------------------------------------------------ production kernels
def sdpa(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


TARGET = [3, 0, 7, 7, 1, 9]


def cross_entropy(z):
    return torch.nn.functional.cross_entropy(
        z, torch.tensor(TARGET, device=z.device), label_smoothing=0.1)


def gelu(x):
    return torch.nn.functional.gelu(x)


def tanh_matmul(a, b):
    return torch.tanh(a @ b)


def randn(gen, *shape, scale=1.0, shift=0.0):
    return (scale * torch.randn(*shape, generator=gen, dtype=torch.float64)
            + shift)


def inputs_of(name, seed=1):
    g = torch.Generator().manual_seed(seed)
    if name in ("sdpa", "attention"):
        return [randn(g, 1, 2, 8, 16) for _ in range(3)] if name == "sdpa" \
            else [randn(g, 8, 16) for _ in range(3)]
    if name in ("layer_norm", "layernorm"):
        return [randn(g, 4, 16, scale=2.0, shift=0.5),
                randn(g, 16, scale=0.3, shift=1.0), randn(g, 16, scale=0.1)]
    if name == "cross_entropy":
        return [randn(g, 6, 10, scale=3.0)]
    if name == "gelu":
        return [randn(g, 48, scale=2.0)]
    if name == "tanh_matmul":
        return [randn(g, 8, 16, scale=0.3), randn(g, 16, 8, scale=0.3)]
    raise KeyError(name)


# ----------------------------------------- custom Functions (cuBLAS inside)
def attention_fn(bug=None):
    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v):
            s = q.shape[-1] ** -0.5
            p = torch.softmax((q @ k.t()) * s, -1)
            ctx.save_for_backward(q, k, v, p)
            return p @ v

        @staticmethod
        def backward(ctx, do):
            q, k, v, p = ctx.saved_tensors
            s = q.shape[-1] ** -0.5
            dv = p @ do if bug == "dv-transposed" else p.t() @ do
            dp = do @ v.t()
            if bug == "dp-bf16" and do.dtype == F32:
                # precision only: the float32 path rounds dP to bfloat16
                dp = dp.to(BF16).to(F32)
            rows = 0 if bug == "no-rowsum" else (dp * p).sum(-1, keepdim=True)
            ds = p * (dp - rows)
            dq = ds @ k * (1.0 if bug == "dq-no-scale" else s)
            dk = ds.t() @ q * s
            return dq, dk, dv
    return Attention.apply


def layernorm_fn(bug=None):
    class LayerNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            mu = x.mean(-1, keepdim=True)
            xc = x - mu
            rstd = torch.rsqrt((xc * xc).mean(-1, keepdim=True) + 1e-5)
            xh = xc * rstd
            ctx.save_for_backward(xh, w, rstd)
            return xh * w + b

        @staticmethod
        def backward(ctx, go):
            xh, w, rstd = ctx.saved_tensors
            D = xh.shape[-1]
            gxh = go * (1.0 if bug == "dx-no-weight" else w)
            mean_term = 0 if bug == "no-mean-term" \
                else gxh.mean(-1, keepdim=True)
            proj_term = 0 if bug == "no-proj-term" \
                else xh * (gxh * xh).mean(-1, keepdim=True)
            if bug == "sum-bf16" and go.dtype == F32:
                # precision only: the float32 path's row sums in bfloat16
                proj_term = xh * (gxh * xh).to(BF16).sum(-1, keepdim=True) \
                    .to(F32) / D
            gx = rstd * (gxh - mean_term - proj_term)
            return gx, (go * xh).sum(0), go.sum(0)
    return LayerNorm.apply


# ------------------------------------------------------------------ cells
# (op, kind, callable(bug) -> fn, the dtypes it runs in, its bugs)
SCALE_BUGS = ["scale-1e-3", "scale-1e-6"]
OPS = [
    ("sdpa", "kernel", sdpa, ["f32", "bf16", "fp16"], SCALE_BUGS),
    ("layer_norm", "kernel", layer_norm, ["f32", "bf16"], SCALE_BUGS),
    ("cross_entropy", "kernel", cross_entropy, ["f32", "bf16"], SCALE_BUGS),
    ("gelu", "kernel", gelu, ["f32", "bf16", "fp16"], SCALE_BUGS),
    ("tanh_matmul", "kernel", tanh_matmul, ["f32", "tf32"], SCALE_BUGS),
    ("attention", "custom", attention_fn, ["f32", "tf32"],
     ["no-rowsum", "dq-no-scale", "dv-transposed", "dp-bf16"]),
    ("layernorm", "custom", layernorm_fn, ["f32", "tf32"],
     ["no-mean-term", "no-proj-term", "dx-no-weight", "sum-bf16"]),
]
# torch before 2.0 has no scaled_dot_product_attention (a CPU dry run)
OPS = [o for o in OPS if o[0] != "sdpa"
       or hasattr(torch.nn.functional, "scaled_dot_product_attention")]
PRECISION_ONLY = {"dp-bf16", "sum-bf16"}
DTYPES = {"f32": F32, "tf32": F32, "bf16": BF16, "fp16": FP16}


def fn_of(op, kind, bug):
    if kind == "custom":
        return op(bug)
    factor = {None: None, "scale-1e-3": 1 + 1e-3,
              "scale-1e-6": 1 + 1e-6}[bug]
    return scaled(op, factor)


def declared(dt):
    """The rounding classes of the cell's dtype: depths counted for one
    op and the loss's product and sum (manual: "Rounding classes")."""
    if dt == "bf16":
        return [Precision.storage("bf16", forward_depth=8, backward_depth=8)]
    if dt == "fp16":
        return [Precision.storage("fp16", forward_depth=8, backward_depth=8)]
    if dt == "tf32":
        return [Precision.arithmetic("tf32", forward_depth=4,
                                     backward_depth=4)]
    return None


def rms_verdict(fn, xs64, dt):
    """FLA's check: each input's rms(g - g64) / rms(g64) < 5e-3."""
    c = None
    worst = 0.0
    grads = {}
    for dtype in (DTYPES[dt], torch.float64):
        xs = [x.to(DEV, dtype).requires_grad_() for x in xs64]
        out = fn(*xs)
        if c is None:
            c = torch.randn(out.shape, generator=torch.Generator()
                            .manual_seed(0), dtype=torch.float64)
        L = (out * c.to(DEV, out.dtype)).sum()
        grads[dtype] = [gg.double() for gg in torch.autograd.grad(L, xs)]
    for a, b in zip(grads[DTYPES[dt]], grads[torch.float64]):
        den = b.pow(2).mean().sqrt().item()
        num = (a - b).pow(2).mean().sqrt().item()
        worst = max(worst, num / den if den > 0 else math.inf)
    return ("fail" if worst >= 5e-3 else "pass"), worst


def torch_f64(fn, xs64):
    xs = [x.to(DEV).requires_grad_() for x in xs64]
    try:
        ok = torch.autograd.gradcheck(fn, xs, raise_exception=False)
    except Exception as e:          # noqa: BLE001 (a verdict either way)
        return "error: %s" % type(e).__name__
    return "pass" if ok else "fail"


def ours(fn, xs64, dt):
    xs = [x.to(torch.float32).to(DEV, DTYPES[dt]) for x in xs64]
    torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
    torch.backends.cudnn.allow_tf32 = dt == "tf32"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = check_function(fn, *xs, precisions=declared(dt))
        j = r.json
        return {"verdict": str(r.verdict), "n": r.n,
                "n_failed": j.get("n_failed"),
                "worst_nu": j.get("worst_nu"),
                "diagnosis": j.get("diagnosis", {}).get("kind"),
                "device": j.get("device"),
                "report": r.report("text")}
    except CheckError as e:
        return {"verdict": "error", "error": str(e)}
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = True


def main():
    out = sys.argv[1]
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 420.0
    os.makedirs(out, exist_ok=True)
    t_start = time.time()
    cells = []
    meta = {"torch": torch.__version__, "gradcheck": gradcheck.__version__,
            "device": torch.cuda.get_device_name(0) if DEV.type == "cuda"
            else platform.processor() or "cpu",
            "python": platform.python_version()}
    plan = [(name, kind, op, dt, bug) for name, kind, op, dts, bugs in OPS
            for dt in dts for bug in [None] + bugs]
    for name, kind, op, dt, bug in plan:
        if time.time() - t_start > budget:
            break
        fn = fn_of(op, kind, bug)
        xs64 = inputs_of(name)
        cell = {"op": name, "kind": kind, "dtype": dt, "bug": bug or "correct"}
        try:
            t0 = time.perf_counter()
            cell["gradcheck"] = ours(fn, xs64, dt)
            sync()
            cell["t_gradcheck"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            cell["torch_f64"] = torch_f64(fn, xs64)
            sync()
            cell["t_torch_f64"] = time.perf_counter() - t0
            cell["rms"], cell["rms_worst"] = rms_verdict(fn, xs64, dt)
        except Exception as e:      # noqa: BLE001 (a kernel torch lacks)
            print("%s %s %s: %s: %s" % (name, dt, cell["bug"],
                                        type(e).__name__, e), flush=True)
            continue
        cells.append(cell)
        print("%-14s %-5s %-14s gradcheck %-12s torch-f64 %-5s rms %-4s "
              "(%.2g)  %.2fs / %.2fs" % (name, dt, cell["bug"],
                                         cell["gradcheck"]["verdict"],
                                         cell["torch_f64"], cell["rms"],
                                         cell["rms_worst"],
                                         cell["t_gradcheck"],
                                         cell["t_torch_f64"]), flush=True)
        with open(os.path.join(out, "gpu-side.json"), "w") as f:
            json.dump({"meta": meta, "cells": cells}, f, indent=1)
    write_md(out, meta, cells, len(plan))


def caught(cell, who):
    v = cell["gradcheck"]["verdict"] if who == "gradcheck" else cell[who]
    return v not in ("pass",)


def write_md(out, meta, cells, planned):
    rows = []
    rows.append("# gradcheck on a GPU, side by side (bench/gpu_side.py)\n")
    rows.append("%s, torch %s, Python %s, gradcheck %s; %d of %d planned "
                "cells ran.\n" % (meta["device"], meta["torch"],
                                  meta["python"], meta["gradcheck"],
                                  len(cells), planned))
    rows.append("| cells | n | gradcheck (twin) | torch gradcheck f64 | "
                "rms < 5e-3 |\n|---|---|---|---|---|")

    def line(label, sel, want_fail):
        n = len(sel)
        if not n:
            return
        cnt = {w: sum(caught(c, w) == want_fail for c in sel)
               for w in ("gradcheck", "torch_f64", "rms")}
        rows.append("| %s | %d | %d | %d | %d |" % (
            label, n, cnt["gradcheck"], cnt["torch_f64"], cnt["rms"]))

    for kind in ("kernel", "custom"):
        sel = [c for c in cells if c["kind"] == kind]
        what = "torch's kernels" if kind == "kernel" else "custom Functions"
        line("%s, correct: passed" % what,
             [c for c in sel if c["bug"] == "correct"], False)
        line("%s, algorithm bugs: caught" % what,
             [c for c in sel if c["bug"] not in ("correct",)
              and c["bug"] not in PRECISION_ONLY], True)
        line("%s, precision-only bugs: caught" % what,
             [c for c in sel if c["bug"] in PRECISION_ONLY], True)
    rows.append("\nEvery cell (verdicts; gradcheck's diagnosis kind; wall "
                "seconds of gradcheck / torch f64):\n")
    rows.append("| op | dtype | bug | gradcheck | torch f64 | rms (worst) "
                "| seconds |\n|---|---|---|---|---|---|---|")
    for c in cells:
        g = c["gradcheck"]
        rows.append("| %s | %s | %s | %s%s | %s | %s (%.2g) | %.2f / %.2f |"
                    % (c["op"], c["dtype"], c["bug"], g["verdict"],
                       " (%s)" % g["diagnosis"] if g.get("diagnosis") else "",
                       c["torch_f64"], c["rms"], c["rms_worst"],
                       c["t_gradcheck"], c["t_torch_f64"]))
    with open(os.path.join(out, "gpu-side.md"), "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
