# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""gradcheck.torch -- check the backward of a function of torch tensors
(manual: "From Python", "PyTorch").

    from gradcheck.torch import check_function
    r = check_function(MyOp.apply, q, k, v)      # float32 tensors
    assert r.ok, r.report()

What is measured and what is derived:

* The parameter vector is the differentiable inputs (floating tensors that
  require grad; all floating tensors when none does), flattened in order,
  float32.  Each is a block of the report, named by NAMES or "input<i>".
* The loss: fn's output itself when it is a scalar; otherwise
  L = sum <out_j, c_j> with a fixed random cotangent c_j per output
  (normal, seeded by COTANGENT_SEED, rounded to float32 so that the f64
  run sees it exactly).  The result says which (r.cotangent).
* The analytic gradient is fn's backward in the inputs' own dtype
  (torch.autograd.grad of L: fn's backward receives c as its
  grad_output): float32, or bfloat16 and float16, whose values float32
  holds exactly.  A bfloat16 or float16 op declares its roundings to that
  format with precisions=[gradcheck.Precision.storage(...)] (manual:
  "Rounding classes", "Low-precision ops"); torch converts to bfloat16 by
  bit operations, which the rounding modes do not reach (to float16 by
  F16C where the CPU has it, which follows the mode), so the class is
  declared not mode-reached: without a twin a pass that needs it is
  INCONCLUSIVE, and with one (the default) the twin measures it.
* The reference forward (loss_f64) and the twin (grad_f64) are the same
  fn in float64, on the same point upcast exactly (every floating input,
  differentiable or not, is upcast; the cotangent too).  The check's
  reference is f64 central differences: where f64 cannot decide a
  direction it is INCONCLUSIVE (manual: "Inconclusive directions").  A
  backward that is not dtype-generic (a float32 constant inside) makes a
  twin that is not the same algorithm: pass twin=False.
* Depths and magnitudes: torch does not say how many roundings its
  kernels chain, so unless given (forward_depth, backward_depth) they are
  defaulted to n, which the report says (manual: "What the bar assumes").
* Rounding modes: the library measures the backward under the other IEEE
  rounding modes (manual: "Measured rounding sensitivity") by setting the
  mode of the thread that calls the callback.  torch's intra-op worker
  threads do not inherit it, so the check runs with
  torch.set_num_threads(1) (restored after): every kernel then runs in the
  calling thread and the measurement reaches it.
"""

import numpy as np
import torch

from .check import check as _run


def _differentiable(inputs):
    fl = [i for i, t in enumerate(inputs)
          if isinstance(t, torch.Tensor) and t.is_floating_point()]
    req = [i for i in fl if inputs[i].requires_grad]
    return req or fl


# the dtypes whose backward can be checked, and their format's name in
# gradcheck.Precision
_LOW = {torch.bfloat16: "bf16", torch.float16: "fp16"}


def check_function(fn, *inputs, names=None, cotangent_seed=0, twin=True,
                   name=None, precisions=None, **options):
    """Check fn's backward at INPUTS, in the inputs' own dtype (float32,
    bfloat16 or float16; see the module's doc).  OPTIONS are
    gradcheck.check's (directions, threads, seed, depths, constants, ...);
    PRECISIONS (a list of gradcheck.Precision) is required where an input
    is bfloat16 or float16.  Returns the Result, with .cotangent ("none:
    the output is a scalar" or how it was drawn); raises as
    gradcheck.check."""
    idx = _differentiable(inputs)
    if not idx:
        raise TypeError("gradcheck.torch: no floating-point tensor among "
                        "the inputs")
    low = sorted({_LOW[inputs[i].dtype] for i in idx
                  if inputs[i].dtype in _LOW})
    if low and not precisions:
        raise TypeError(
            "gradcheck.torch: %s inputs: declare the format's roundings, "
            "precisions=[gradcheck.Precision.storage(%r, forward_depth=F, "
            "backward_depth=B)], F and B the roundings to that format on "
            "the longest chain to the loss and to a gradient element "
            "(manual: \"Rounding classes\")" % (", ".join(low), low[0]))
    for i in idx:
        if inputs[i].dtype != torch.float32 and inputs[i].dtype not in _LOW:
            raise TypeError("gradcheck.torch: input %d is %s; the check is "
                            "of a float32, bfloat16 or float16 backward"
                            % (i, inputs[i].dtype))
        if inputs[i].device.type != "cpu":
            raise TypeError("gradcheck.torch: input %d is on %s; the check "
                            "runs on the CPU" % (i, inputs[i].device))
    if names is None:
        names = ["input%d" % i for i in idx]
    if len(names) != len(idx):
        raise ValueError("gradcheck.torch: %d names for %d differentiable "
                         "inputs" % (len(names), len(idx)))
    shapes = [tuple(inputs[i].shape) for i in idx]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    x = np.concatenate([inputs[i].detach().to(torch.float32).reshape(-1)
                        .numpy() for i in idx]).astype(np.float32)

    # the inputs held constant: as given for the checked run (its dtype
    # key is float32, the library's vector), upcast for the float64 one
    held = {torch.float32: [t.detach() if isinstance(t, torch.Tensor)
                            else t for t in inputs],
            torch.float64: [t.detach().to(torch.float64)
                            if isinstance(t, torch.Tensor)
                            and t.is_floating_point() else t
                            for t in inputs]}
    # each differentiable input's dtype in the checked run (float32,
    # bfloat16 or float16: float32 holds each exactly)
    own = {i: inputs[i].dtype for i in idx}

    # each differentiable input's slice of the parameter vector
    offsets = np.cumsum([0] + sizes).tolist()
    plan = [(i, offsets[j], offsets[j + 1], s)
            for j, (i, s) in enumerate(zip(idx, shapes))]
    npdt = {torch.float32: np.float32, torch.float64: np.float64}

    def args(xv, dtype, grad):
        out = list(held[dtype])
        # one writable copy in the run's dtype (float32 to float64 is
        # exact); each leaf is a NumPy view of it, reshaped in NumPy
        # (cheaper per call than torch's split and view)
        buf = xv.astype(npdt[dtype])
        leaves = []
        for i, lo, hi, s in plan:
            leaf = torch.from_numpy(buf[lo:hi].reshape(s))
            if dtype == torch.float32 and own[i] != torch.float32:
                leaf = leaf.to(own[i])
            if grad:
                leaf.requires_grad_()
            out[i] = leaf
            leaves.append(leaf)
        return out, leaves

    # the output's structure, once, and its cotangents
    with torch.no_grad():
        out0 = fn(*args(x, torch.float32, False)[0])
    outs0 = out0 if isinstance(out0, (tuple, list)) else (out0,)
    outs0 = [o for o in outs0 if isinstance(o, torch.Tensor)
             and o.is_floating_point()]
    if len(outs0) == 1 and outs0[0].numel() == 1:
        cots = None
        cot_note = "none: the output is a scalar, the loss itself"
    else:
        g = torch.Generator().manual_seed(int(cotangent_seed))
        # each rounded to its output's dtype, so that the float64 run
        # sees exactly the checked run's cotangent
        c32 = [torch.randn(o.shape, generator=g, dtype=torch.float64)
               .to(o.dtype) for o in outs0]
        cots = {torch.float32: c32,
                torch.float64: [c.to(torch.float64) for c in c32]}
        cot_note = ("the output is not a scalar: L = sum <out, c> with a "
                    "fixed cotangent c, standard normal from seed %d, "
                    "rounded to the output's dtype (%s)"
                    % (int(cotangent_seed),
                       ", ".join(sorted({str(o.dtype) for o in outs0}))))

    shapes0 = [o.shape for o in outs0]

    def loss_of(out, dtype):
        outs = out if isinstance(out, (tuple, list)) else (out,)
        outs = [o for o in outs if isinstance(o, torch.Tensor)
                and o.is_floating_point()]
        if [o.shape for o in outs] != shapes0:
            raise ValueError("gradcheck.torch: fn's outputs changed shape "
                             "between calls")
        if cots is None:
            return outs[0].reshape(())
        tot = None
        for o, c in zip(outs, cots[dtype]):
            term = (o * c).sum()
            tot = term if tot is None else tot + term
        return tot

    def loss(dtype):
        def f(xv):
            with torch.no_grad():
                a, _ = args(xv, dtype, False)
                return loss_of(fn(*a), dtype).item()
        return f

    def grad(dtype):
        def f(xv):
            a, leaves = args(xv, dtype, True)
            L = loss_of(fn(*a), dtype)
            gs = torch.autograd.grad(L, leaves, allow_unused=True)
            for gg, lf in zip(gs, leaves):
                if gg is not None and gg.dtype != lf.dtype:
                    raise TypeError("gradcheck.torch: the backward returned "
                                    "%s for a %s input" % (gg.dtype,
                                                           lf.dtype))
            # a low-precision gradient upcast to float32, exactly
            flat = [torch.zeros(s, dtype=dtype).reshape(-1) if gg is None
                    else gg.detach().to(dtype).reshape(-1)
                    for gg, s in zip(gs, sizes)]
            return torch.cat(flat).numpy()
        return f

    if name is None:
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, type):         # MyOp.apply
            name = owner.__name__
    nthreads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        r = _run(loss(torch.float32), grad(torch.float32), x,
                         loss_f64=loss(torch.float64),
                         grad_f64=grad(torch.float64) if twin else None,
                         name=name, precisions=precisions,
                         blocks=list(zip(names, shapes)), **options)
    finally:
        torch.set_num_threads(nthreads)
    r.cotangent = cot_note
    return r
