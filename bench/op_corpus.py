#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""op_corpus.py -- correct operators from a library we did not write,
checked with no declarations (issue 32's corpus; issue 34's time ratio).

What: every operator of torch's own OpInfo database (torch.testing.
_internal.common_methods_invocations.op_db) that supports autograd and
float32 on the CPU, on its first SAMPLES sample inputs in float32, is
checked by gradcheck.torch.check_function with its defaults (float32,
the float64 reference and twin, screened directions, nothing declared;
--directions all: every coordinate), and,
side by side in the same process, by torch.autograd.gradcheck in float64
(full Jacobian, default tolerances) on the same sample upcast.  Both run
on one torch thread.  Each sample gets one record: our verdict, worst nu,
diagnosis, the report's reason lines for a non-PASS, torch's verdict and
both wall times.

Why: torch's operators are correct (torch's own float64 check passes
almost all of them) and were written by others, so every FAIL, PRECISION
or INCONCLUSIVE that torch's check does not share is a false alarm or an
unhelpful answer of ours, and the times say what our default costs
against the check users already run.

--inject KIND wraps each op in an autograd.Function whose backward is
autograd's gradient of the op with a bug applied, and records whether
each check catches it:

  scale3     every input's gradient x (1 + 1e-3)
  scale6     every input's gradient x (1 + 1e-6)
  zero       the first input's gradient zeroed
  f32factor  every gradient x 1.01 in float32 only (the twin correct)
  elem2      element 0 of the first input's gradient x 2, float32 only
  f32term    every input's gradient + 1e-2 rms(g) / rms(t) t, t the input
             itself, float32 only (a wrong term, smooth in the point: no
             factor; manual: "A term the point does not redraw")

The f32-only bugs are invisible to torch's float64 check by
construction; for them our verdict should be FAIL, not PRECISION.  A bug
that changes nothing at a sample (a gradient that is exactly zero where
the bug acts) is recorded as not visible and not counted.

Samples are taken as torch's own test_ops does: the op through its
gradcheck_wrapper (Hermitian or triangular inputs stay so), its outputs
through the sample's output_process_fn_grad.  The function checked is
fn(*tensors) over every floating tensor of the sample (the input, and
tensors in args/kwargs, nested lists included), so that the adapter
upcasts them all for its float64 run; those the sample marks
requires_grad are the parameters.  Index (integer) tensors stay constants.
Skipped, with the reason: complex tensors, > MAX_ELEMENTS parameters, a
sample whose estimated check time exceeds the budget.

  op_corpus.py [--out DIR] [--limit N] [--ops a,b] [--inject KIND]
               [--samples 2] [--budget S] [--directions all]

Writes DIR/op-corpus[-KIND][-DIRECTIONS].json and .md (DIR: bench/results).
"""

import argparse
import datetime
import json
import os
import platform
import signal
import statistics
import sys
import time
import types
import unittest
import warnings

import torch

from gradcheck import CheckError
from gradcheck.torch import check_function

MAX_ELEMENTS = 4096
VERDICTS = ["PASS", "FAIL", "PRECISION", "INCONCLUSIVE", "NONSMOOTH",
            "NONDETERMINISTIC", "error"]
INJECTS = ["scale3", "scale6", "zero", "f32factor", "elem2", "f32term"]
F32_ONLY = {"f32factor", "elem2", "f32term"}


# ------------------------------------------------------------ the corpus
def load_op_db():
    """torch's OpInfo list.  torch 1.13's test helpers import expecttest
    (a test-only dependency) at module level; a stub stands in for it."""
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401
        except ImportError:
            m = types.ModuleType("expecttest")
            m.TestCase, m.ACCEPT = unittest.TestCase, False
            sys.modules["expecttest"] = m
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def eligible(op):
    try:
        return op.supports_autograd and \
            torch.float32 in op.supported_dtypes("cpu")
    except Exception:
        return False


def op_label(op):
    return op.name + ("." + op.variant_test_name
                      if op.variant_test_name else "")


KINDS = [
    ("normalisation/softmax", ("softmax", "softmin", "norm", "logsumexp",
                               "log_softmax", "normalize", "dropout",
                               "cross_entropy", "nll_loss", "kl_div")),
    ("conv/pool", ("conv", "pool", "unfold", "fold", "pad", "interpolate",
                   "upsample", "grid_sample", "affine_grid",
                   "pixel_shuffle", "pixel_unshuffle")),
    ("linear algebra", ("linalg", "matmul", "mm", "mv", "bmm", "addmm",
                        "addmv", "addbmm", "baddbmm", "addr", "dot",
                        "inner", "outer", "ger", "kron", "tensordot",
                        "einsum", "cholesky", "svd", "qr", "lu", "eig",
                        "det", "inverse", "pinv", "solve", "lstsq",
                        "triangular", "chain_matmul", "matrix", "trace",
                        "cdist", "pdist", "bilinear", "linear", "ormqr",
                        "householder", "geqrf", "logdet", "vdot",
                        "tensorinv", "tensorsolve", "cross", "diag_embed")),
    ("special functions", ("special", "erf", "gamma", "digamma", "polygamma",
                           "lgamma", "bessel", "i0", "i1", "sinc", "xlogy",
                           "xlog1py", "zeta", "logit", "expit", "ndtr",
                           "entr", "mvlgamma", "gammaln", "log_ndtr")),
    ("reductions", ("sum", "mean", "prod", "std", "var", "amax", "amin",
                    "max", "min", "cumsum", "cumprod", "cummax", "cummin",
                    "logcumsumexp", "median", "nanmedian", "mode",
                    "kthvalue", "quantile", "nanquantile", "nansum",
                    "nanmean", "aminmax", "sort", "topk", "msort", "dist",
                    "corrcoef", "cov",
                    "trapz", "trapezoid", "cumulative_trapezoid", "diff")),
    ("indexing/shape", ("index", "gather", "scatter", "take", "select",
                        "slice", "narrow", "view", "reshape", "flatten",
                        "unflatten", "squeeze", "unsqueeze", "permute",
                        "transpose", "expand", "repeat", "tile", "cat",
                        "stack", "split", "chunk", "unbind", "flip", "roll",
                        "rot90", "masked", "where", "tril", "triu", "diag",
                        "movedim", "moveaxis", "swap", "t", "T", "H", "mT",
                        "mH", "contiguous", "clone", "as_strided", "put",
                        "block_diag", "broadcast", "column_stack",
                        "hstack", "vstack", "dstack", "atleast",
                        "nonzero", "ravel", "resize", "fill", "zero_",
                        "new_", "empty", "full", "ones", "zeros", "like",
                        "to", "type_as", "view_as", "reshape_as",
                        "expand_as", "real", "imag", "conj", "resolve",
                        "hsplit", "vsplit", "dsplit", "tensor_split",
                        "__getitem__", "take_along_dim", "index_select",
                        "fliplr", "flipud", "narrow_copy", "clamp",
                        "clip", "float", "double", "half", "bfloat16",
                        "byte", "char", "int", "long", "short", "bool",
                        "cfloat", "cdouble", "chalf", "meshgrid",
                        "combinations", "cartesian_prod", "searchsorted",
                        "bucketize", "histc", "renorm", "triu_indices",
                        "tril_indices", "_segment_reduce", "segment",
                        "embedding")),
    ("binary/broadcast", ("add", "sub", "mul", "div", "true_divide",
                          "floor_divide", "pow", "float_power", "atan2",
                          "arctan2", "hypot", "fmod", "remainder",
                          "maximum", "minimum", "fmax", "fmin", "copysign",
                          "lerp", "addcmul", "addcdiv", "ldexp",
                          "nextafter", "rsub", "__radd__", "__rmul__",
                          "__rsub__", "__rdiv__", "__rpow__", "__rmatmul__",
                          "__rmod__", "heaviside", "logaddexp",
                          "logaddexp2", "polar", "complex", "smooth_l1",
                          "huber", "mse_loss", "l1_loss", "binary_cross",
                          "margin", "hinge", "triplet", "cosine",
                          "pairwise", "poisson", "gaussian_nll",
                          "multilabel", "soft_margin", "prelu")),
]


def kind_of(name):
    """A kind by name heuristics: the first kind one of whose stems is a
    word of the name (split at '.' and '_'), or a prefix of the name;
    unary elementwise for the known unary names, else other."""
    base = name.split(".")[-1] if name.startswith(("nn.functional.",
                                                   "linalg.", "special.",
                                                   "fft.")) else name
    if name.startswith(("linalg.", "fft.")) or base in ("stft", "istft",
                                                        "symeig", "svd"):
        return "linear algebra"
    if name.startswith("special."):
        return "special functions"
    words = set(base.replace(".", "_").split("_")) | {base}
    for kind, stems in KINDS:
        for s in stems:
            if s in words or len(s) >= 4 and any(w.startswith(s)
                                                 for w in words):
                return kind
    return "elementwise unary" if base in UNARY or base.rstrip("_") in UNARY \
        else "other"


UNARY = set("""abs absolute acos arccos acosh arccosh asin arcsin asinh
arcsinh atan arctan atanh arctanh ceil cos cosh deg2rad rad2deg exp exp2
expm1 floor frac log log10 log1p log2 neg negative positive reciprocal
round rsqrt sigmoid sign sgn signbit sin sinh sqrt square tan tanh trunc fix
relu relu6 elu selu celu gelu glu silu mish softplus softsign tanhshrink
hardtanh hardswish hardsigmoid hardshrink softshrink leaky_relu rrelu
logsigmoid threshold nan_to_num angle frexp isfinite isinf isnan""".split())


def tensors_in(obj):
    """Every tensor in OBJ (nested lists, tuples, dicts), in order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for e in obj for t in tensors_in(e)]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in tensors_in(v)]
    return []


def substitute(obj, table):
    """OBJ with each tensor whose id is in TABLE replaced by its value."""
    if isinstance(obj, torch.Tensor):
        return table.get(id(obj), obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(substitute(e, table) for e in obj) \
            if not hasattr(obj, "_fields") else \
            type(obj)(*(substitute(e, table) for e in obj))
    if isinstance(obj, dict):
        return {k: substitute(v, table) for k, v in obj.items()}
    return obj


def build(op, sample):
    """(fn, tensors) for one sample: fn(*tensors) runs the op as torch's
    test_ops does; TENSORS are the sample's floating tensors (those
    requiring grad are the parameters).  Raises Skip with a reason."""
    every = tensors_in([sample.input, sample.args, sample.kwargs])
    if any(t.is_complex() for t in every):
        raise Skip("complex tensor")
    floats = [t for t in every if t.is_floating_point()]
    if not any(t.requires_grad for t in floats):
        raise Skip("no float tensor requires grad")
    n = sum(t.numel() for t in floats if t.requires_grad)
    if n > MAX_ELEMENTS:
        raise Skip("%d parameters > %d" % (n, MAX_ELEMENTS))
    ids = [id(t) for t in floats]
    structure = (sample.input, sample.args, sample.kwargs)
    wrapper, fop = op.gradcheck_wrapper, op.get_op()
    post = sample.output_process_fn_grad

    def fn(*ts):
        inp, args, kwargs = substitute(structure, dict(zip(ids, ts)))
        return real(post(wrapper(fop, inp, *args, **kwargs)))

    tensors = [t.detach().clone().requires_grad_(t.requires_grad)
               for t in floats]
    return fn, tensors


class Skip(Exception):
    pass


def real(out):
    """OUT with each complex tensor as torch.view_as_real of it (the
    adapter checks real outputs and says so for a complex one)."""
    if isinstance(out, torch.Tensor):
        return torch.view_as_real(out.resolve_conj()) if out.is_complex() \
            else out
    if isinstance(out, (list, tuple)):
        return type(out)(real(o) for o in out) \
            if not hasattr(out, "_fields") else type(out)(*map(real, out))
    return out


def to64(tensors):
    return [t.detach().to(torch.float64).requires_grad_(t.requires_grad)
            for t in tensors]


# --------------------------------------------------------- injected bugs
def flat(out):
    if isinstance(out, (tuple, list)):
        return [o for e in out for o in flat(e)]
    return [out]


def corrupt(kind, grads, dtype):
    """GRADS (one per input, None where none) with bug KIND applied."""
    if kind in F32_ONLY and dtype != torch.float32:
        return grads
    first = next((k for k, g in enumerate(grads) if g is not None), None)
    if kind in ("scale3", "scale6", "f32factor"):
        f = {"scale3": 1 + 1e-3, "scale6": 1 + 1e-6, "f32factor": 1.01}[kind]
        return [None if g is None else g * f for g in grads]
    grads = list(grads)
    if first is not None and kind == "zero":
        grads[first] = torch.zeros_like(grads[first])
    elif first is not None and kind == "elem2":
        g = grads[first].clone()
        g.view(-1)[0] *= 2
        grads[first] = g
    return grads


def add_term(grads, ts):
    """GRADS with 1e-2 rms(g) / rms(t) t added to each (f32term)."""
    out = []
    for g, t in zip(grads, ts):
        if g is not None and g.numel() and t.is_floating_point():
            rt = t.detach().pow(2).mean().sqrt()
            if rt > 0:
                g = g + 1e-2 * g.pow(2).mean().sqrt() / rt * t.detach()
        out.append(g)
    return out


def inject(fn, kind):
    """fn wrapped in an autograd.Function: forward is fn, backward is
    autograd's gradient of fn with bug KIND applied."""
    class Injected(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *ts):
            ctx.save_for_backward(*ts)
            outs = flat(fn(*ts))
            ctx.floating = [isinstance(o, torch.Tensor)
                            and o.is_floating_point() for o in outs]
            outs = [o.clone() if isinstance(o, torch.Tensor) else o
                    for o in outs]
            ctx.mark_non_differentiable(*[o for o, f in zip(
                outs, ctx.floating) if not f and isinstance(o, torch.Tensor)])
            return tuple(outs) if len(outs) > 1 else outs[0]

        @staticmethod
        def backward(ctx, *gouts):
            ts = ctx.saved_tensors
            with torch.enable_grad():
                leaves = [t.detach().requires_grad_(need)
                          for t, need in zip(ts, ctx.needs_input_grad)]
                outs = flat(fn(*leaves))
                pairs = [(o, g) for o, g, f in zip(outs, gouts, ctx.floating)
                         if f and g is not None and o.requires_grad]
                want = [t for t in leaves if t.requires_grad]
                gs = torch.autograd.grad([o for o, _ in pairs],
                                         want, [g for _, g in pairs],
                                         allow_unused=True) if pairs \
                    else [None] * len(want)
            it = iter(gs)
            grads = [next(it) if t.requires_grad else None for t in leaves]
            grads = [torch.zeros_like(t) if g is None and t.requires_grad
                     else g for g, t in zip(grads, leaves)]
            if kind == "f32term":
                return tuple(add_term(grads, ts) if ts[0].dtype ==
                             torch.float32 else grads)
            return tuple(corrupt(kind, grads, ts[0].dtype))
    return Injected.apply


def visible(fn, tensors, kind):
    """Whether bug KIND changes the gradient at this point: from
    autograd's float64 gradient of the correct op under a random
    cotangent (exact zeros are structural, not the cotangent's)."""
    xs = to64(tensors)
    outs = [o for o in flat(fn(*xs)) if isinstance(o, torch.Tensor)
            and o.is_floating_point() and o.requires_grad]
    want = [t for t in xs if t.requires_grad]
    if not outs:
        return False
    g = torch.Generator().manual_seed(7)
    cs = [torch.randn(o.shape, generator=g, dtype=o.dtype) for o in outs]
    gs = torch.autograd.grad(outs, want, cs, allow_unused=True)
    gs = [torch.zeros_like(t) if v is None else v for v, t in zip(gs, want)]
    if kind in ("zero",):
        return bool(gs[0].abs().max() > 0)
    if kind == "elem2":
        return bool(gs[0].reshape(-1)[0] != 0)
    return any(bool(v.abs().max() > 0) for v in gs if v.numel())


# ------------------------------------------------------------ the checks
class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def timed(call, limit):
    """(value or exception, seconds) of CALL under a wall-clock LIMIT."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(limit))
    t0 = time.perf_counter()
    try:
        v = call()
    except BaseException as e:           # noqa: B902 -- recorded per sample
        v = e
    finally:
        signal.alarm(0)
    return v, time.perf_counter() - t0


def reasons(r):
    """The report's lines that say why the verdict is not PASS: its
    warnings and notes, the verdict line, the inconclusive line, and the
    worst direction's twin and arithmetic lines and Richardson term."""
    heads = ("WARNING", "note:", "verdict:", "inconclusive:", "nonsmooth",
             "non-smooth", "twin g64", "arithmetic   ",
             "Richardson truncation", "declare")
    out = []
    for line in r.report("text").splitlines():
        s = " ".join(line.split())
        if s and any(s.startswith(h) or h in s[:40] for h in heads) \
                and s not in out:
            out.append(s)
    return out[:10]


DIRECTIONS = {}    # --directions: check_function's (default: its own)


def _tag(args):
    """The files' suffix: -INJECT, then -DIRECTIONS where given."""
    return ("-" + args.inject if args.inject else "") + (
        "-" + args.directions.replace(":", "") if args.directions else "")


def ours(fn, tensors, name, limit):
    v, t = timed(lambda: check_function(fn, *tensors, name=name[:60],
                                        **DIRECTIONS), limit)
    rec = {"ours_s": round(t, 4)}
    if isinstance(v, BaseException):
        why = "timeout (> %d s)" % limit if isinstance(v, Timeout) or \
            "Timeout" in repr(getattr(v, "exc", "")) else \
            "%s: %s" % (type(v).__name__, str(v).splitlines()[0][:300]
                        if str(v) else "")
        if isinstance(v, CheckError) and getattr(v, "result", None) \
                is not None and not isinstance(v, Timeout):
            why += " [status %s]" % v.status
        rec.update(verdict="error", error=why)
        return rec
    j = v.json
    d = j.get("diagnosis", {})
    rec.update(verdict=str(v.verdict).upper().replace("-", ""), status=str(v.status),
               worst_nu=_num(j.get("worst_nu")),
               n=j.get("n"), n_failed=j.get("n_failed"),
               n_inconclusive=j.get("n_inconclusive"),
               n_nonsmooth=j.get("n_nonsmooth"),
               diagnosis_kind=d.get("kind"), diagnosis=d.get("text", ""),
               twin=j.get("twin"),
               # the forwards at the centre (manual: "Forward
               # disagreement"): error and budget in ulps of M_L, M_L
               # and whether a spread raised it, the f32 forward's spread
               forward={k: _num(j.get(k)) if k != "loss_magnitude_raised"
                        else j.get(k) for k in (
                            "forward_error_ulps", "forward_budget_ulps",
                            "forward_depth", "loss_magnitude", "loss_f32",
                            "loss_reference", "spread_loss_f32",
                            "loss_magnitude_raised")})
    if rec["verdict"] != "PASS":
        rec["reasons"] = reasons(v)
    return rec


def _num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def theirs(fn, tensors, limit):
    xs = to64(tensors)
    v, t = timed(lambda: torch.autograd.gradcheck(
        fn, tuple(xs), raise_exception=False), limit)
    if isinstance(v, BaseException):
        why = "timeout" if isinstance(v, Timeout) else \
            "%s: %s" % (type(v).__name__, str(v).splitlines()[0][:200]
                        if str(v) else "")
        return {"torch_f64": "error", "torch_error": why,
                "torch_s": round(t, 4)}
    return {"torch_f64": "pass" if v else "fail", "torch_s": round(t, 4)}


def estimate(fn, tensors):
    """Seconds of one float64 forward and backward: the check calls
    each about a dozen times per coordinate."""
    xs = to64(tensors)
    t0 = time.perf_counter()
    outs = [o for o in flat(fn(*xs)) if isinstance(o, torch.Tensor)
            and o.is_floating_point() and o.requires_grad]
    if outs:
        torch.autograd.grad([o.sum() for o in outs],
                            [t for t in xs if t.requires_grad],
                            allow_unused=True)
    return time.perf_counter() - t0


def run_sample(op, k, sample, args):
    name = op_label(op)
    rec = {"op": name, "sample": k, "kind": kind_of(op.name),
           "inject": args.inject or "none"}
    try:
        fn, tensors = build(op, sample)
    except Skip as e:
        rec.update(verdict="skipped", skip=str(e))
        return rec
    rec["shapes"] = [list(t.shape) for t in tensors if t.requires_grad]
    rec["elements"] = sum(t.numel() for t in tensors if t.requires_grad)
    try:
        cost = estimate(fn, tensors)
    except Exception as e:
        rec.update(verdict="skipped",
                   skip="the op raised in float64: %s" % str(e)[:200])
        return rec
    if cost * 12 * max(rec["elements"], 1) > args.budget:
        rec.update(verdict="skipped", skip="estimated %.0f s > budget %g s"
                   % (cost * 12 * rec["elements"], args.budget))
        return rec
    if args.inject:
        try:
            rec["visible"] = visible(fn, tensors, args.inject)
        except Exception as e:
            rec["visible"] = None
            rec["visible_error"] = str(e)[:200]
        fn = inject(fn, args.inject)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec.update(ours(fn, tensors, name, args.limit_s))
        rec.update(theirs(fn, tensors, args.limit_s))
    if rec.get("ours_s") and rec.get("torch_s"):
        rec["ratio"] = round(rec["ours_s"] / max(rec["torch_s"], 1e-6), 3)
    return rec


def usable(sample):
    """Why SAMPLE is passed over (None: it is used): a complex tensor, no
    parameter with elements, too many."""
    every = tensors_in([sample.input, sample.args, sample.kwargs])
    if any(t.is_complex() for t in every):
        return "complex tensor"
    n = sum(t.numel() for t in every
            if t.is_floating_point() and t.requires_grad)
    if n == 0:
        return "no parameter (zero-size or none requires grad)"
    if n > MAX_ELEMENTS:
        return "%d parameters > %d" % (n, MAX_ELEMENTS)
    return None


def samples_of(op, n, scan=200):
    """The op's first N usable float32 samples (of its first SCAN), and
    the reasons the others before them were passed over."""
    torch.manual_seed(0)
    out, passed = [], []
    try:
        for k, s in enumerate(op.sample_inputs("cpu", torch.float32,
                                               requires_grad=True)):
            why = usable(s)
            if why:
                passed.append(why)
            else:
                out.append(s)
            if len(out) == n or k + 1 == scan:
                break
    except Exception as e:
        passed.append("sample_inputs raised: %s" % str(e)[:200])
    return out, passed


# -------------------------------------------------------------- report
def table(recs, key):
    groups = {}
    for r in recs:
        groups.setdefault(r[key], []).append(r)
    cols = VERDICTS
    lines = ["| %s | %s | total |" % (key, " | ".join(cols)),
             "|---|" + "---|" * (len(cols) + 1)]
    tot = {c: 0 for c in cols}
    for g in sorted(groups):
        cnt = {c: sum(1 for r in groups[g] if r["verdict"] == c)
               for c in cols}
        for c in cols:
            tot[c] += cnt[c]
        lines.append("| %s | %s | %d |" % (g, " | ".join(
            str(cnt[c]) for c in cols), len(groups[g])))
    lines.append("| **all** | %s | %d |" % (" | ".join(
        "**%d**" % tot[c] for c in cols), sum(tot.values())))
    return lines


def median_ratios(recs):
    rs = [r for r in recs if r.get("ratio") and r["verdict"] != "error"
          and r.get("torch_f64") != "error"]
    kinds = sorted({r["kind"] for r in rs})
    out = ["| kind | samples | median ours / torch f64 full | median ours (s)"
           " | median torch (s) |", "|---|---|---|---|---|"]
    for k in kinds + ["all"]:
        sel = [r for r in rs if k == "all" or r["kind"] == k]
        out.append("| %s | %d | %.2f | %.3f | %.3f |" % (
            k if k != "all" else "**all**", len(sel),
            statistics.median(r["ratio"] for r in sel),
            statistics.median(r["ours_s"] for r in sel),
            statistics.median(r["torch_s"] for r in sel)))
    return out


def cause(r):
    """The cause of a non-PASS, by the report's own words: what torch's
    float64 check says, non-smooth points, one-element inputs (their
    depths default to n = 1), the reference's undecided directions, a
    factor, or conditioning beyond the defaulted-depth bound."""
    v, why = r["verdict"], " ".join(r.get("reasons", []))
    if r.get("torch_f64") == "fail":
        return "torch's float64 check fails too"
    if v == "error":
        return "error"
    if v == "NONSMOOTH":
        return "non-smooth point (reported as such)"
    if r.get("elements") == 1 and v in ("PRECISION", "INCONCLUSIVE"):
        return "one-element input (depths default to n = 1)"
    if v == "INCONCLUSIVE":
        return "the reference cannot decide some direction " \
            "(kink, tie, pole or the twin's Richardson step)" \
            if "inconclusive:" in why else "inconclusive (other)"
    if v == "PRECISION":
        if "different functions" in (r.get("diagnosis") or "") + why:
            return "PRECISION: f32 and f64 forwards differ"
        return "PRECISION: conditioning/cancellation beyond the " \
            "defaulted-depth bound"
    return "FAIL where torch's float64 check passes"


def cause_table(recs):
    c = {}
    for r in recs:
        if r["verdict"] != "PASS":
            k = (cause(r), r["verdict"])
            c[k] = c.get(k, 0) + 1
    return ["| cause | ours | samples |", "|---|---|---|"] + [
        "| %s | %s | %d |" % (k[0], k[1], n) for k, n in sorted(c.items())]


def nonpass_list(recs):
    out = ["| op | sample | kind | ours | torch f64 | worst nu | elements |"
           " cause | diagnosis / reason |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        if r["verdict"] not in ("FAIL", "PRECISION", "INCONCLUSIVE",
                                "NONSMOOTH", "error"):
            continue
        why = r.get("error") or "; ".join(
            ([r["diagnosis"]] if r.get("diagnosis") else [])
            + [x for x in r.get("reasons", []) if x != r.get("diagnosis")])
        why = why.replace("|", "\\|").replace("\n", " ")[:600]
        nu = r.get("worst_nu")
        out.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            r["op"], r["sample"], r["kind"], r["verdict"],
            r.get("torch_f64", ""), "%.3g" % nu if nu is not None else "",
            r.get("elements", ""), cause(r), why))
    return out


def baseline(recs, out):
    """Each record of RECS with the verdicts of the same sample without
    the bug (base_ours, base_torch), from OUT/op-corpus.json if there."""
    try:
        with open(os.path.join(out, "op-corpus.json")) as f:
            base = {(r["op"], r["sample"]): r for r in json.load(f)["records"]}
    except (OSError, ValueError, KeyError):
        return
    for r in recs:
        b = base.get((r["op"], r["sample"]), {})
        r["base_ours"], r["base_torch"] = b.get("verdict"), b.get("torch_f64")


def inject_summary(recs, kind):
    """Catches among the samples where the bug is visible, and among those
    where both checks pass the correct op (clean: a catch there is the
    bug's, not the op's own failure)."""
    lines = inject_row(recs, kind, "visible")
    clean = [r for r in recs if r.get("base_ours") == "PASS"
             and r.get("base_torch") == "pass"]
    if clean:
        lines += inject_row(clean, kind, "visible, both pass the correct op")[2:]
    return lines + inject_misses(recs, kind)


def inject_row(recs, kind, what):
    vis = [r for r in recs if r.get("visible") and r["verdict"] != "error"]
    caught = [r for r in vis if r["verdict"] in ("FAIL", "PRECISION")]
    fail = [r for r in vis if r["verdict"] == "FAIL"]
    prec = [r for r in vis if r["verdict"] == "PRECISION"]
    tch = [r for r in vis if r.get("torch_f64") == "fail"]
    return ["| bug | samples | caught (FAIL or PRECISION) | FAIL |"
            " PRECISION | missed | torch f64 catches |",
            "|---|---|---|---|---|---|---|",
            "| %s | %d %s | %d | %d | %d | %d | %d |" % (
                kind, len(vis), what, len(caught), len(fail), len(prec),
                len(vis) - len(caught), len(tch))]


def inject_misses(recs, kind):
    vis = [r for r in recs if r.get("visible") and r["verdict"] != "error"]
    caught = [r for r in vis if r["verdict"] in ("FAIL", "PRECISION")]
    prec = [r for r in vis if r["verdict"] == "PRECISION"]
    lines = []
    missed = [r for r in vis if r not in caught]
    if missed or (kind in F32_ONLY and prec):
        lines += ["", "Missed%s:" % (" or PRECISION (should be FAIL)"
                                    if kind in F32_ONLY else ""), ""]
        for r in missed + (prec if kind in F32_ONLY else []):
            lines.append("- %s sample %d: %s (correct op: ours %s, torch "
                         "%s; worst nu %s) %s" % (
                             r["op"], r["sample"], r["verdict"],
                             r.get("base_ours"), r.get("base_torch"),
                             r.get("worst_nu"), (r.get("diagnosis") or "; "
                                                 .join(r.get("reasons", [])))
                             [:300]))
    return lines


def write(recs, args, started, wall, command=None):
    tag = _tag(args)
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, "op-corpus%s" % tag)
    run = [r for r in recs if r["verdict"] != "skipped"]
    meta = {"command": command or " ".join(["bench/op_corpus.py"]
                                           + sys.argv[1:]),
            "date": started, "wall_s": round(wall, 1),
            "torch": torch.__version__, "python": platform.python_version(),
            "machine": platform.machine(), "samples_per_op": args.samples,
            "inject": args.inject or "none"}
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "records": recs}, f, indent=1,
                  default=str)
    skipped = [r for r in recs if r["verdict"] == "skipped"]
    L = ["# torch's operator library, checked with no declarations%s" % (
         " (injected bug: %s)" % args.inject if args.inject else ""), "",
         "Written by `%s` on %s in %.0f s wall; torch "
         "%s, Python %s, %s, one torch thread." % (
             meta["command"], started, wall, torch.__version__,
             platform.python_version(), platform.machine()), "",
         "Each sample: `gradcheck.torch.check_function(fn, *inputs%s)` with "
         "its defaults (float32, the float64 reference and twin, %s, "
         "nothing declared) beside `torch.autograd.gradcheck` "
         "in float64 (full Jacobian, default tolerances) on the same "
         "sample upcast.  %d samples of %d ops checked; %d skipped (%s)."
         % (", directions=%r" % args.directions if args.directions else "",
            "every coordinate" if args.directions == "all" else
            "directions %r" % args.directions if args.directions else
            "screened directions: manual \"Screening\"", len(run), len({r["op"] for r in run}), len(skipped),
            _skip_summary(skipped)), ""]
    L += ["## Verdicts by kind of op", ""] + table(run, "kind") + [""]
    tv = {}
    for r in run:
        k = (r["verdict"], r.get("torch_f64", "?"))
        tv[k] = tv.get(k, 0) + 1
    L += ["Our verdict against torch's float64 check (samples):", "",
          "| ours | torch f64 | samples |", "|---|---|---|"]
    L += ["| %s | %s | %d |" % (k[0], k[1], n) for k, n in sorted(tv.items())]
    L += [""]
    if args.inject:
        baseline(run, args.out)
        L += ["## Injected bug: %s" % args.inject, ""] + \
            inject_summary(run, args.inject) + [""]
    L += ["## Time: ours / torch float64 full gradcheck (medians)", ""] + \
        median_ratios(run) + [""]
    L += ["## Every sample not PASS", "", "By cause (from the report's "
          "words and torch's verdict; bench/op_corpus.py: cause):", ""] + \
        cause_table(run) + [""] + nonpass_list(run) + [""]
    with open(base + ".md", "w") as f:
        f.write("\n".join(L))
    return base


def _skip_summary(skipped):
    c = {}
    for r in skipped:
        why = r["skip"].split(":")[0]
        why = "estimated time over budget" if why.startswith("estimated") \
            else "too many parameters" if "parameters >" in why else why
        c[why] = c.get(why, 0) + 1
    return ", ".join("%s: %d" % kv for kv in sorted(c.items())) or "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--limit", type=int, default=0,
                    help="at most N samples (0: all)")
    ap.add_argument("--ops", default="", help="op names, comma-separated")
    ap.add_argument("--inject", choices=INJECTS)
    ap.add_argument("--samples", type=int, default=2,
                    help="samples per op (2)")
    ap.add_argument("--budget", type=float, default=20.0,
                    help="skip a sample whose estimated check takes longer")
    ap.add_argument("--limit-s", type=float, default=60.0,
                    help="wall-clock limit per check call (s)")
    ap.add_argument("--directions", default=None,
                    help="check_function's directions (default: its own, "
                    "screened; 'all': every coordinate)")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the .md from the .json already there")
    args = ap.parse_args()
    if args.directions:
        DIRECTIONS["directions"] = args.directions
    if args.report_only:
        tag = _tag(args)
        with open(os.path.join(args.out, "op-corpus%s.json" % tag)) as f:
            d = json.load(f)
        write(d["records"], args, d["meta"]["date"], d["meta"]["wall_s"],
              d["meta"]["command"])
        return
    torch.set_num_threads(1)
    started = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    t0 = time.perf_counter()
    want = set(filter(None, args.ops.split(",")))
    ops = [op for op in load_op_db() if eligible(op)
           and (not want or op.name in want or op_label(op) in want)]
    recs = []
    for op in ops:
        samples, passed = samples_of(op, args.samples)
        if not samples:
            recs.append({"op": op_label(op), "sample": 0,
                         "kind": kind_of(op.name), "verdict": "skipped",
                         "skip": "no usable sample (%s)"
                         % "; ".join(sorted(set(passed)))})
        for k, s in enumerate(samples):
            rec = run_sample(op, k, s, args)
            recs.append(rec)
            print("%-40s %d %-12s torch %-5s %s" % (
                rec["op"][:40], k, rec["verdict"], rec.get("torch_f64", ""),
                rec.get("error") or rec.get("skip") or
                ("nu %.3g" % rec["worst_nu"] if rec.get("worst_nu")
                 is not None else "")), flush=True)
            if args.limit and sum(r["verdict"] != "skipped"
                                  for r in recs) >= args.limit:
                break
        if args.limit and sum(r["verdict"] != "skipped"
                              for r in recs) >= args.limit:
            break
    base = write(recs, args, started, time.perf_counter() - t0)
    print("op_corpus: wrote %s.json and %s.md" % (base, base))


if __name__ == "__main__":
    main()
