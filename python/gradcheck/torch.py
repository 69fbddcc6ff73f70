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
* Directions: screened by default (manual: "Screening"): 8 random
  directions within each input of more than 8 elements, the others'
  coordinates, then every coordinate of an input where a direction did
  not pass or none resolved finely enough; directions="all" checks every
  coordinate, at about four times the cost.
* Rounding modes: the library measures the backward under the other IEEE
  rounding modes (manual: "Measured rounding sensitivity") by setting the
  mode of the thread that calls the callback.  torch's intra-op worker
  threads do not inherit it, so the check runs with
  torch.set_num_threads(1) (restored after): every kernel then runs in the
  calling thread and the measurement reaches it.
* Devices: fn runs where its tensors live, the CPU or a GPU (CUDA):
  the float32 run and the float64 reference and twin alike.  The point
  goes to the device once per evaluation; only the loss (a number) and
  the gradient (one vector) come back.  The IEEE rounding modes the
  check sets reach only the host's CPU, so on a GPU the library is told
  (gc_options.device; manual: "Device arithmetic"): the report names
  the device and says that no spread measures its arithmetic, which
  the twin judges.  TF32 (torch.backends.cuda.matmul.allow_tf32) rounds
  the inputs of matrix products to 10 bits: read from torch, it is a
  rounding class to declare, precisions=[gradcheck.Precision.arithmetic(
  "tf32", F, B)], and check_function warns when it is on undeclared.
* Outputs: those that require grad enter the loss, as in torch's own
  gradcheck; the others (indices, statistics saved for the backward)
  are left out, and r.outputs says which entered.  Complex inputs and
  outputs are refused by name (check their real and imaginary parts as
  real tensors: torch.view_as_real); a zero-size input has no parameter
  and is skipped, named in r.skipped.
"""

import warnings

import numpy as np
import torch

from .check import check as _run


# the dtypes whose backward can be checked, and their format's name in
# gradcheck.Precision
_LOW = {torch.bfloat16: "bf16", torch.float16: "fp16"}
_CHECKED = (torch.float32,) + tuple(_LOW)


def _flatten(out):
    """fn's outputs, nested tuples and lists flattened, in order."""
    if isinstance(out, (tuple, list)):
        return [o for e in out for o in _flatten(e)]
    return [out]


def _describe(v):
    if isinstance(v, torch.Tensor):
        return "a %s tensor of shape %s" % (v.dtype, tuple(v.shape))
    return "a %s" % type(v).__name__


def _device(inputs):
    """The one device of INPUTS' tensors (the CPU when none is a tensor);
    a ValueError naming them when they are on several."""
    where = {}
    for i, t in enumerate(inputs):
        if isinstance(t, torch.Tensor):
            where.setdefault(t.device, []).append(i)
    if len(where) > 1:
        raise ValueError(
            "gradcheck.torch: the inputs are on several devices (%s); fn "
            "is checked where its tensors live, so they must share one"
            % "; ".join("%s: input%s %s" % (d, "s" if len(ix) > 1 else "",
                                           ", ".join(map(str, ix)))
                        for d, ix in where.items()))
    dev = next(iter(where), torch.device("cpu"))
    if dev.type == "meta":
        raise TypeError(
            "gradcheck.torch: input%s %s on the meta device: no values, "
            "nothing to check (make them with device=\"cpu\" or a GPU)"
            % ("s" if len(where[dev]) > 1 else "",
               ", ".join(map(str, where[dev]))))
    return dev


def _device_name(dev):
    """The device as the report names it; None for the host's CPU."""
    if dev.type == "cpu":
        return None
    name = str(dev if dev.index is not None
               else torch.device(dev.type, torch.cuda.current_device()
                                 if dev.type == "cuda" else 0))
    try:
        if dev.type == "cuda":
            name += " (%s)" % torch.cuda.get_device_name(dev)
    except Exception:       # a name is a courtesy; the check needs none
        pass
    # the library takes printable ASCII of at most 63 bytes
    name = "".join(c if " " <= c <= "~" else "?" for c in name)
    return name[:63]


def _differentiable(inputs):
    """The positions of the inputs that are parameters (floating tensors
    that require grad; all floating tensors when none does), and of the
    zero-size ones among them (skipped)."""
    for i, t in enumerate(inputs):
        if isinstance(t, torch.Tensor) and t.is_complex() \
                and t.requires_grad:
            raise TypeError(
                "gradcheck.torch: input %d is %s and requires grad; the "
                "check is of real parameters: pass torch.view_as_real(t) "
                "and rebuild it inside fn with torch.view_as_complex"
                % (i, t.dtype))
    fl = [i for i, t in enumerate(inputs)
          if isinstance(t, torch.Tensor) and t.is_floating_point()]
    req = [i for i in fl if inputs[i].requires_grad] or fl
    empty = [i for i in req if inputs[i].numel() == 0]
    return [i for i in req if i not in empty], empty


def _tf32_warning(dev, precisions):
    if dev.type != "cuda" or not torch.backends.cuda.matmul.allow_tf32:
        return
    if any("tf32" in getattr(p, "name", "") for p in precisions or ()):
        return
    warnings.warn(
        "gradcheck.torch: TF32 is on (torch.backends.cuda.matmul."
        "allow_tf32): matrix products round their inputs to 10 bits, "
        "which float32's bound does not cover; declare precisions=["
        "gradcheck.Precision.arithmetic(\"tf32\", forward_depth=F, "
        "backward_depth=B)] (manual: \"Rounding classes\") or the "
        "arithmetic may read PRECISION", stacklevel=3)


def _outputs(fn, probe):
    """Which of fn's outputs enter the loss, from one run with grad on:
    (positions, notes).  Raises for an output the check cannot take."""
    with torch.enable_grad():
        outs = _flatten(fn(*probe))
    sel, left, other = [], [], []
    for j, o in enumerate(outs):
        if isinstance(o, torch.Tensor) and o.is_complex():
            raise TypeError(
                "gradcheck.torch: output %d is %s; the loss is built from "
                "real outputs: return torch.view_as_real(out) instead"
                % (j, o.dtype))
        if isinstance(o, torch.Tensor) and o.is_floating_point():
            (sel if o.requires_grad else left).append(j)
        else:
            other.append(j)
    if not sel:
        if left:
            raise TypeError(
                "gradcheck.torch: none of fn's floating outputs (%s) "
                "requires grad: they do not depend on the differentiable "
                "inputs through autograd" % ", ".join(
                    "output %d" % j for j in left))
        raise TypeError(
            "gradcheck.torch: fn returned %s; the check needs a floating "
            "tensor output to build the loss from"
            % (", ".join(_describe(o) for o in outs) or "nothing"))
    notes = []
    if left:
        notes.append("%s: no grad" % ", ".join(map(str, left)))
    if other:
        notes.append("%s: not floating" % ", ".join(map(str, other)))
    what = "output%s %s of %d" % ("s" if len(sel) > 1 else "",
                                  ", ".join(map(str, sel)), len(outs))
    if notes:
        what += " (left out: %s)" % "; ".join(notes)
    return sel, what, len(outs)


# gradcheck.check's arguments check_function sets from fn and its inputs
_SET_HERE = {
    "loss": "fn", "grad": "fn", "x": "the inputs", "loss_f64": "fn",
    "grad_f64": "fn (twin=False: no twin)", "blocks": "the inputs (names=)",
    "device": "the inputs' device (move them with .to(device))",
    "loss_note": "fn's outputs", "name": "name="}


# the model's callbacks as the library and check() name them, as they are
# here: fn, in the inputs' dtype or float64, and its backward
_FN_NAMES = {"loss_f32": "fn", "loss": "fn", "grad_f32": "fn's backward",
             "grad": "fn's backward", "loss_f64": "fn in float64",
             "grad_f64": "fn's backward in float64 (the twin)"}


def _options_given(options):
    """OPTIONS (check_function's **options) as gradcheck.check takes them:
    a TypeError naming check_function for one it does not take, or one
    that check_function sets itself."""
    if not options:
        return
    import inspect
    known = [p for p in inspect.signature(_run).parameters
             if not p.startswith("_")]
    for k in options:
        if k in _SET_HERE:
            raise TypeError(
                "gradcheck.torch.check_function() sets %s itself, from %s"
                % (k, _SET_HERE[k]))
        if k not in known:
            raise TypeError(
                "gradcheck.torch.check_function() got an unexpected keyword "
                "argument %r (its options are gradcheck.check's: %s)"
                % (k, ", ".join(p for p in known if p not in _SET_HERE)))


def _first_call(what, call):
    """CALL(), fn's first run before the check begins; an exception it
    raises is a CallbackError (its cause), as in the check itself."""
    from .check import CallbackError, Status
    try:
        return call()
    except Exception as e:
        raise CallbackError(Status.ECALLBACK, "fn raised at the point, %s"
                            % what, None, "fn", e, 1) from e


def check_function(fn, *inputs, names=None, cotangent_seed=0, twin=True,
                   name=None, precisions=None, **options):
    """Check fn's backward at INPUTS, in the inputs' own dtype (float32,
    bfloat16 or float16) and on their device (see the module's doc).
    OPTIONS are gradcheck.check's (directions, random_per_tensor,
    threads, seed, depths, constants, ...), but directions defaults to
    "screen" (manual: "Screening"; "all" checks every coordinate);
    PRECISIONS (a list of
    gradcheck.Precision) is required where an input is bfloat16 or
    float16.  Returns the Result, with .cotangent (how the loss was
    made), .outputs (the outputs that entered it), .skipped (zero-size
    inputs) and .device; raises as gradcheck.check."""
    _options_given(options)
    dev = _device(inputs)
    idx, empty = _differentiable(inputs)
    if not idx:
        raise TypeError(
            "gradcheck.torch: no floating-point tensor with elements among "
            "the inputs%s" % ("" if not empty else " (zero-size: %s)"
                              % ", ".join("input %d" % i for i in empty)))
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
        if inputs[i].dtype not in _CHECKED:
            raise TypeError("gradcheck.torch: input %d is %s; the check is "
                            "of a float32, bfloat16 or float16 backward"
                            % (i, inputs[i].dtype))
    _tf32_warning(dev, precisions)
    every = sorted(idx + empty)
    if names is None:
        names = ["input%d" % i for i in every]
    names = list(names)
    if len(names) != len(every):
        raise ValueError(
            "gradcheck.torch: %d names for %d differentiable inputs (%s)"
            % (len(names), len(every), ", ".join(
                "input %d%s" % (i, " (zero-size)" if i in empty else "")
                for i in every)))
    skipped = ["%s (zero-size)" % names[every.index(i)] for i in empty]
    names = [names[every.index(i)] for i in idx]
    shapes = [tuple(inputs[i].shape) for i in idx]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    x = np.concatenate([inputs[i].detach().to("cpu", torch.float32)
                        .reshape(-1).numpy() for i in idx]).astype(np.float32)

    # the inputs held constant, on their device: as given for the checked
    # run (its dtype key is float32, the library's vector), upcast for
    # the float64 one
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
    on_cpu = dev.type == "cpu"

    def args(xv, dtype, grad):
        out = list(held[dtype])
        # one writable copy in the run's dtype (float32 to float64 is
        # exact), sent to the device in one transfer; each leaf is a view
        # of it (on the CPU a NumPy view: cheaper per call than torch's)
        buf = xv.astype(npdt[dtype])
        dbuf = None if on_cpu else torch.from_numpy(buf).to(dev)
        leaves = []
        for i, lo, hi, s in plan:
            leaf = (torch.from_numpy(buf[lo:hi].reshape(s)) if on_cpu
                    else dbuf[lo:hi].view(s))
            if dtype == torch.float32 and own[i] != torch.float32:
                leaf = leaf.to(own[i])
            if grad:
                leaf.requires_grad_()
            out[i] = leaf
            leaves.append(leaf)
        return out, leaves

    # which outputs enter the loss, and their cotangents
    sel, outputs_note, nout = _outputs(
        lambda *a: _first_call("in the inputs' dtype, before the check "
                               "began", lambda: fn(*a)),
        args(x, torch.float32, True)[0])
    with torch.no_grad():
        outs0 = _flatten(_first_call(
            "in the inputs' dtype, before the check began",
            lambda: fn(*args(x, torch.float32, False)[0])))
    outs0 = [outs0[j] for j in sel]
    if len(outs0) == 1 and outs0[0].numel() == 1:
        cots = None
        cot_note = "none: the output is a scalar, the loss itself"
        loss_note = "%s, a scalar: the loss itself" % outputs_note
    else:
        g = torch.Generator().manual_seed(int(cotangent_seed))
        # drawn on the CPU (the same on every device), each rounded to
        # its output's dtype, so that the float64 run sees exactly the
        # checked run's cotangent
        c32 = [torch.randn(tuple(o.shape), generator=g, dtype=torch.float64)
               .to(o.dtype) for o in outs0]
        cots = {torch.float32: [c.to(dev) for c in c32],
                torch.float64: [c.to(dev, torch.float64) for c in c32]}
        cot_note = ("the output is not a scalar: L = sum <out, c> with a "
                    "fixed cotangent c, standard normal from seed %d, "
                    "rounded to the output's dtype (%s)"
                    % (int(cotangent_seed),
                       ", ".join(sorted({str(o.dtype) for o in outs0}))))
        loss_note = ("%s, as sum <out, c>, c standard normal from seed %d"
                     % (outputs_note, int(cotangent_seed)))

    shapes0 = [o.shape for o in outs0]

    one = nout == 1 and cots is not None   # one tensor output, weighted
    shape0 = shapes0[0] if shapes0 else None

    def loss_of(out, dtype):
        # the common case first: one tensor out, of the shape it had (the
        # same checks as below, without building the lists)
        if one and type(out) is torch.Tensor and out.shape == shape0:
            return (out * cots[dtype][0]).sum()
        outs = _flatten(out)
        if len(outs) != nout:
            raise ValueError("gradcheck.torch: fn returned %d outputs, "
                             "then %d" % (nout, len(outs)))
        outs = [outs[j] for j in sel]
        if not all(isinstance(o, torch.Tensor) for o in outs) \
                or [o.shape for o in outs] != shapes0:
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
            a, _ = args(xv, dtype, False)
            # the check runs with grad mode off (below); a thread of the
            # library's own starts with it on, and turns it off here
            if not torch.is_grad_enabled():
                return loss_of(fn(*a), dtype).item()
            with torch.no_grad():
                return loss_of(fn(*a), dtype).item()
        return f

    def grad(dtype):
        def f(xv):
            with torch.enable_grad():
                a, leaves = args(xv, dtype, True)
                L = loss_of(fn(*a), dtype)
                gs = torch.autograd.grad(L, leaves, allow_unused=True)
            for gg, lf in zip(gs, leaves):
                if gg is not None and gg.dtype != lf.dtype:
                    raise TypeError("gradcheck.torch: the backward returned "
                                    "%s for a %s input" % (gg.dtype,
                                                           lf.dtype))
            # a low-precision gradient upcast to float32, exactly; one
            # vector back from the device
            flat = [torch.zeros(s, dtype=dtype, device=dev) if gg is None
                    else gg.detach().to(dtype).reshape(-1)
                    for gg, s in zip(gs, sizes)]
            return torch.cat(flat).cpu().numpy()
        return f

    if name is None:
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, type):         # MyOp.apply
            name = owner.__name__
    where = _device_name(dev)
    if not twin:
        # the twin is given and left unused (gc_options.no_twin), never
        # called: the library then knows the check may be run with it, and
        # its report says so where that is the caller's remedy (manual:
        # "What the measurement does not support")
        options["no_twin"] = True
    # the default spends where it learns something (manual: "Screening"):
    # random directions within each tensor of more than 8 elements, then
    # every coordinate of one where a direction did not pass
    if "directions" not in options and "random_per_tensor" not in options:
        options["directions"] = "screen"
    nthreads = torch.get_num_threads()
    torch.set_num_threads(1)
    # grad mode off for the check's forwards, once (a no_grad block per
    # call cost about a microsecond of a 9 us forward); the backward
    # turns it on for itself.  Restored after, as the thread count.
    grad_mode = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        r = _run(loss(torch.float32), grad(torch.float32), x,
                 loss_f64=loss(torch.float64),
                 grad_f64=grad(torch.float64),
                 name=name, precisions=precisions, device=where,
                 loss_note=loss_note[:159],
                 blocks=list(zip(names, shapes)), _names=_FN_NAMES,
                 **options)
    finally:
        torch.set_grad_enabled(grad_mode)
        torch.set_num_threads(nthreads)
    r.cotangent = cot_note
    r.outputs = sel
    r.skipped = skipped
    r.device = where or "cpu"
    return r


def _assert(want, diagnosis, fn, inputs, kw):
    from .check import CheckError
    try:
        r = check_function(fn, *inputs, **kw)
    except CheckError as e:
        rep = e.result.report("text") if e.result else ""
        raise AssertionError("expected verdict %s; the check stopped: "
                             "%s\n%s" % (want, e, rep)) from e
    got = r.json.get("diagnosis", {}).get("kind")
    if r.verdict == want and (diagnosis is None or got == diagnosis):
        return r
    head = ("expected verdict %s; got %s" % (want, r.verdict)
            if diagnosis is None else
            "expected verdict %s with diagnosis %s; got %s with diagnosis %s"
            % (want, diagnosis, r.verdict, got))
    raise AssertionError(head + "\n" + r.report("text"))


def assert_function(fn, *inputs, **kw):
    """Pass when check_function(fn, *inputs, **kw) passes -- not when it
    is inconclusive; else raise AssertionError with the text report (for
    pytest and unittest).  Returns the Result."""
    from .check import Verdict
    return _assert(Verdict.PASS, None, fn, inputs, kw)


def assert_function_fails(fn, *inputs, diagnosis=None, **kw):
    """Pass when check_function(fn, *inputs, **kw) runs and fails (a known
    bug must be seen) and, with DIAGNOSIS (a kind as the JSON report names
    it: "constant-factor", "sign-flip", ...), when it is diagnosed so;
    else raise AssertionError with the report.  Returns the Result."""
    from .check import Verdict
    return _assert(Verdict.FAIL, diagnosis, fn, inputs, kw)
