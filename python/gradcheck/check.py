# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""check.py -- gradcheck.check (), the result object and assert_gradient.

The model is a handful of Python callables on NumPy arrays; the check is
libgradcheck's gc_check, called through ctypes (the GIL is released during
the call; each callback takes it again).  Nothing is judged here: the bar,
the verdicts, the diagnosis and the reports are the library's (manual:
"From Python").
"""

import enum
import json
import operator
import re
import threading
import warnings

import numpy as np
import ctypes

from . import _lib
from ._lib import lib


class Verdict(enum.IntEnum):
    """gc_verdict.  str(v) is the library's gc_verdict_name."""
    PASS = 0
    FAIL = 1
    NONSMOOTH = 2
    ERROR = 3
    INCONCLUSIVE = 4
    NONDETERMINISTIC = 5
    PRECISION = 6

    def __str__(self):
        return lib.gc_verdict_name(int(self)).decode()


class Status(enum.IntEnum):
    """gc_status.  str(s) is the library's gc_strerror."""
    OK = 0
    EINVAL = 1
    EEMPTY = 2
    ENOMEM = 3
    ECALLBACK = 4
    ENONFINITE = 5
    ESTEP = 6
    EPREC = 7
    ENOREF = 8
    EDIRECTION = 9
    EABI = 10
    EFORMAT = 11
    EMISMATCH = 12
    EOVERRUN = 13
    ETIMEOUT = 14
    EPOINT = 15
    EUNWRITTEN = 16

    def __str__(self):
        return lib.gc_strerror(int(self)).decode()


def _enum(cls, v):
    try:
        return cls(v)
    except ValueError:          # a value of a newer library
        return v


_FORMATS = {"text": 0, "json": 1, "markdown": 2, "tap": 3}
_REFERENCES = {"mpfr": 0, "f32": 1, "f64": 2, "auto": 3}

# What a callback returns to the library when its Python code raised or
# returned something unusable: any non-zero value stops the check with
# GC_ECALLBACK (manual: "Status codes"); this one reads as "Python".
CALLBACK_FAILED = 0x5059


# The library names a model's callbacks by their C fields; from Python
# they are check()'s arguments (gradcheck.torch's names them after fn).
_CALLBACK_NAMES = {"loss_f32": "loss", "grad_f32": "grad",
                   "grad_magnitude_f32": "grad_magnitude",
                   "loss_magnitude_f32": "loss_magnitude"}


def _callback_words(text, names):
    """TEXT with the library's callback names as NAMES has them, and a
    callback that "returned CALLBACK_FAILED" said to have failed."""
    names = dict(_CALLBACK_NAMES, **(names or {}))
    text = re.sub(r"\b(\w+) returned %d\b" % CALLBACK_FAILED, r"\1 failed",
                  text)
    return re.sub(r"\b(%s)\b" % "|".join(map(re.escape, sorted(
        (k for k in names if k.endswith(("_f32", "_f64"))), key=len,
        reverse=True))), lambda m: names.get(m.group(1), m.group(1)), text)


class CheckError(RuntimeError):
    """The check stopped without a verdict: STATUS (a Status), DETAIL (the
    library's sentence: what failed where) and RESULT (the Result, whose
    report says the same; None when the library could not make one)."""

    def __init__(self, status, detail, result=None, names=None):
        self.status = _enum(Status, status)
        self.detail = detail
        self.result = result
        what = lib.gc_strerror(int(status)).decode()
        msg = "gradcheck: %s" % what
        if detail and detail != what:
            # the library names its CLI option and C field; from Python it
            # is check()'s argument (gc_options.false_alarm: false_alarm)
            msg += ": " + _callback_words(re.sub(
                r"gc_options\.(\w+)", r"\1",
                re.sub(r"--ref (\w+)", r'reference="\1"',
                       detail.replace(" (gc_options.reference)", ""))),
                names)
        super().__init__(msg)


def _rebuild_error(cls, args, state):
    e = cls.__new__(cls)
    Exception.__init__(e, *args)
    e.__dict__.update(state)
    return e


def _reduce_error(self):
    # an error sent from a multiprocessing worker: its message, status,
    # detail and Result (pickled as a copy that owns its report); the
    # callback's exception (__cause__) is not sent, as pickle never does
    return (_rebuild_error, (type(self), self.args, dict(self.__dict__)))


CheckError.__reduce__ = _reduce_error


class CallbackError(CheckError):
    """A model callback raised (the exception is __cause__) or returned a
    value of the wrong shape or type: the callback returned CALLBACK_FAILED
    to the library, which stopped the check with GC_ECALLBACK.  CALLBACK
    names the callback (loss, grad, loss_f64, grad_f64, grad_magnitude,
    loss_magnitude)."""

    def __init__(self, status, detail, result, callback, exc, n_raised,
                 names=None):
        self.callback = callback
        self.n_raised = n_raised
        super().__init__(status, detail, result, names)
        self.args = ("%s; the Python callback %s raised %s: %s%s"
                     % (self.args[0], (names or {}).get(callback, callback),
                        type(exc).__name__, exc,
                        "" if n_raised == 1
                        else " (and %d more calls raised)" % (n_raised - 1)),)


def _number(v):
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    return v


class Directions:
    """The per-direction values of a result as NumPy arrays, one attribute
    per field of the JSON report's "results" objects (manual: "JSON
    report"): analytic, reference, diff, bar, nu, resolution, step, level,
    index (-1 for a random direction), verdict (strings), term_values (an
    (m, 3) array), ...  len() is the number of directions."""

    def __init__(self, rows):
        self._n = len(rows)
        keys = []
        for r in rows:
            for k in r:
                if k not in keys:
                    keys.append(k)
        self.fields = tuple(keys)
        for k in keys:
            col = [_number(r.get(k)) for r in rows]
            setattr(self, k, self._array(k, col))

    @staticmethod
    def _array(key, col):
        if key == "index":
            return np.array([-1 if v is None else int(v) for v in col],
                            dtype=np.int64)
        if all(v is None or (isinstance(v, (int, float))
                             and not isinstance(v, bool)) for v in col):
            return np.array([np.nan if v is None else v for v in col],
                            dtype=np.float64)
        if all(isinstance(v, list) for v in col):
            try:
                return np.array([[float(_number(e)) for e in v] for v in col],
                                dtype=np.float64)
            except (TypeError, ValueError):
                pass
        return np.array(col, dtype=object)

    def __len__(self):
        return self._n

    def __getitem__(self, k):
        """Direction K's row: {field: value} (K as in a list: negative
        counts from the end)."""
        if not isinstance(k, (int, np.integer)):
            raise TypeError("gradcheck: directions[k] takes an integer; the "
                            "per-field arrays are attributes (directions.nu)")
        if not -self._n <= k < self._n:
            raise IndexError("gradcheck: no direction %d of %d" % (k, self._n))
        return {f: getattr(self, f)[k] for f in self.fields}


class Result:
    """A check's result (gc_result), owned by this object and freed with
    it.  verdict, status, detail and callback_code are read from the C
    result, and exit_status is the command's for them (gc_exit_status);
    every other field of the JSON report is an attribute (r.n_failed,
    r.worst_nu, r.diagnosis, ...), and the per-direction values are
    r.directions (NumPy arrays)."""

    def __init__(self, ptr):
        self._ptr = ptr
        self._json = None
        self._dirs = None

    @classmethod
    def from_json(cls, text):
        """A new Result, owning its own C result, read back from TEXT, a
        JSON report (report("json")) by the library's reader
        (gc_result_parse_json, the one `gradcheck merge` uses): its
        reports are the original's.  ValueError for a malformed report."""
        if isinstance(text, str):
            text = text.encode("utf-8")
        if not isinstance(text, (bytes, bytearray)):
            raise TypeError("gradcheck: Result.from_json takes the JSON "
                            "report as str or bytes, not %s"
                            % type(text).__name__)
        ptr = ctypes.c_void_p()
        st = lib.gc_result_parse_json(bytes(text), len(text),
                                      ctypes.byref(ptr))
        if st != 0:
            if ptr.value:
                lib.gc_result_free(ptr.value)
            raise ValueError("gradcheck: the JSON report could not be read "
                             "back: %s" % lib.gc_strerror(st).decode())
        return cls(ptr.value)

    # A copy, a deep copy and an unpickled Result (one sent back from a
    # multiprocessing worker) are each a new C result read back from the
    # JSON report: never a second owner of the same pointer, which the
    # first close () or finaliser would free under the other.
    def _extras(self):
        # what a binding set on the result (gradcheck.torch: cotangent,
        # outputs, skipped, device), which the JSON report does not hold
        return {k: v for k, v in self.__dict__.items()
                if not k.startswith("_")}

    @classmethod
    def _restore(cls, text, extras):
        r = cls.from_json(text)
        r.__dict__.update(extras)
        return r

    def __reduce__(self):
        self._head()              # a closed result: ValueError
        return (Result._restore, (self.report("json"), self._extras()))

    def __copy__(self):
        return Result._restore(self.report("json"), self._extras())

    def __deepcopy__(self, memo):
        return self.__copy__()

    def _head(self):
        if not self._ptr:
            raise ValueError("gradcheck: the result was closed")
        return _lib.ResultHead.from_address(self._ptr)

    def close(self):
        if self._ptr:
            lib.gc_result_free(self._ptr)
            self._ptr = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def verdict(self):
        return _enum(Verdict, self._head().verdict)

    @property
    def status(self):
        return _enum(Status, self._head().status)

    @property
    def detail(self):
        return self._head().detail.decode("utf-8", "replace")

    @property
    def callback_code(self):
        return self._head().callback_code

    @property
    def exit_status(self):
        """The exit status `gradcheck run` gives this check: the library's
        gc_exit_status of status and verdict (0 pass, 1 failed, 4
        inconclusive, 6 precision, 5 the model failed, 3 out of memory,
        2 a refusal of the input; manual: "Exit status")."""
        h = self._head()
        return lib.gc_exit_status(h.status, h.verdict)

    @property
    def ok(self):
        """The check ran and passed (an inconclusive check is not ok)."""
        return self.status == Status.OK and self.verdict == Verdict.PASS

    def report(self, fmt="text"):
        """The library's report: fmt "text", "json", "markdown" or "tap"."""
        if fmt not in _FORMATS:
            raise ValueError("gradcheck: report format %r: one of %s"
                             % (fmt, ", ".join(_FORMATS)))
        self._head()
        s = _lib.take_string(lib.gc_report(self._ptr, _FORMATS[fmt]))
        if s is None:
            raise MemoryError("gradcheck: gc_report ran out of memory")
        return s

    def derivation(self, position, fmt="text"):
        """The derivation of direction POSITION (in directions) as text,
        markdown or json (gc_derivation)."""
        if fmt not in ("text", "json", "markdown"):
            raise ValueError("gradcheck: derivation format %r" % (fmt,))
        self._head()
        position = _int_arg("position", position)
        if not 0 <= position < len(self.directions):
            raise IndexError("gradcheck: no direction %r" % (position,))
        s = _lib.take_string(lib.gc_derivation(self._ptr, position,
                                               _FORMATS[fmt]))
        if s is None:
            raise MemoryError("gradcheck: gc_derivation ran out of memory")
        return s

    def param_name(self, index):
        """The name of parameter INDEX: "w[2,3]" with blocks (gc_param_name)."""
        self._head()
        index = _size_arg("index", index)
        buf = ctypes.create_string_buffer(256)
        lib.gc_param_name(self._ptr, index, buf, len(buf))
        return buf.value.decode("utf-8", "replace")

    @property
    def json(self):
        """The JSON report, parsed (a dict)."""
        if self._json is None:
            self._json = json.loads(self.report("json"))
        return self._json

    @property
    def directions(self):
        if self._dirs is None:
            self._dirs = Directions(self.json.get("results", []))
        return self._dirs

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        j = self.json
        if key not in j:
            raise AttributeError("gradcheck: the result has no field %r"
                                 % (key,))
        return j[key] if key == "model" else _number(j[key])

    def __str__(self):
        return self.report("text")

    def __repr__(self):
        if not self._ptr:
            return "<gradcheck.Result (closed)>"
        st = self.status
        return "<gradcheck.Result %s>" % (
            self.verdict if st == Status.OK else getattr(st, "name", st))


class _Trampolines:
    """The C callbacks of one check.  Each takes the GIL (ctypes does),
    calls the Python callable on a NumPy copy of x, checks and copies its
    value into the library's buffer, and turns anything raised into
    CALLBACK_FAILED (ctypes would print the exception and return garbage):
    the first exception and its callback are kept for check () to raise."""

    def __init__(self, shape, n):
        self.shape = tuple(shape)
        self.n = n
        self.lock = threading.Lock()
        self.error = None
        self.where = None
        self.n_raised = 0

    def _fail(self, name, exc):
        with self.lock:
            if self.error is None:
                self.error, self.where = exc, name
            self.n_raised += 1
        return CALLBACK_FAILED

    def _x(self, addr, ctype, dtype):
        # A copy, not a view: the library frees its buffer after the call,
        # and a view the callable kept (a cache, torch.from_numpy) would
        # read freed memory.  ctypes.string_at makes the one copy (bytes,
        # so the array over it is read-only) without a ctypes array type
        # or a second copy per call.
        return np.frombuffer(ctypes.string_at(addr, self.n * ctypes.sizeof(
            ctype)), dtype=dtype).reshape(self.shape)

    def scalar(self, name, fn, ctype, dtype):
        def cb(ctx, xp, outp):
            try:
                v = fn(self._x(xp, ctype, dtype))
                if type(v) is not float:   # a Python float needs no check
                    v = np.asarray(v)
                    if v.size != 1 or v.dtype.kind not in "fiub":
                        raise ValueError(
                            "%s must return one real number; it returned %s"
                            % (name, _describe(v)))
                    v = float(v.reshape(()))
                ctype.from_address(outp).value = v
                return 0
            except BaseException as e:   # KeyboardInterrupt too: stop
                return self._fail(name, e)
        return cb

    def vector(self, name, fn, ctype, dtype):
        def cb(ctx, xp, outp):
            try:
                g = np.asarray(fn(self._x(xp, ctype, dtype)))
                if g.shape != self.shape or g.dtype.kind not in "fiub":
                    raise ValueError(
                        "%s must return a real array of x's shape %s; it "
                        "returned %s" % (name, self.shape, _describe(g)))
                out = np.frombuffer((ctype * self.n).from_address(outp),
                                    dtype=dtype)
                out[...] = g.reshape(-1)
                return 0
            except BaseException as e:
                return self._fail(name, e)
        return cb


def _describe(v):
    return "%s of shape %s" % (v.dtype, v.shape)


def _blocks(blocks, n):
    """BLOCKS, a dict {name: shape} or a sequence of (name, shape) in the
    order of the parameter vector, as gc_block's (offsets accumulated)."""
    items = list(blocks.items()) if isinstance(blocks, dict) else list(blocks)
    arr = (_lib.Block * len(items))()
    names = []
    off = 0
    for b, (name, shape) in zip(arr, items):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        shape = tuple(_ranged("block %r's shape" % (name,), d, 0, SIZE_MAX,
                              "a size from 0 to SIZE_MAX") for d in shape)
        if len(shape) > _lib.MAX_DIMS:
            raise ValueError("gradcheck: block %r has %d axes, at most %d"
                             % (name, len(shape), _lib.MAX_DIMS))
        count = int(np.prod(shape, dtype=np.int64))
        nm = _cstr("a block's name", name)
        names.append(nm)
        b.name, b.offset, b.count, b.ndim = nm, off, count, len(shape)
        for i, s in enumerate(shape):
            b.shape[i] = int(s)
        off += count
    if off != n:
        # the offsets are accumulated here, so their total is known here:
        # say which sizes, not only the library's "invalid argument"
        raise ValueError("gradcheck: the blocks cover %d elements (%s); x "
                         "has %d" % (off, ", ".join(
                             "%s: %d" % (b.name.decode(), b.count)
                             for b in arr), n))
    return arr, names


SCREEN_K = 8   # random directions per tensor of directions="screen"


def _directions(opts, directions, keep):
    if isinstance(directions, str):
        if directions == "all":
            opts.directions = 0
            return
        # manual: "Screening"; "screen:K" as the CLI's
        head, _, k = directions.partition(":")
        if head != "screen" or (_ and not k.isdigit()):
            raise ValueError("gradcheck: directions %r: 'all', 'screen' (or "
                             "'screen:K'), a number of random directions, "
                             "or a list of coordinates" % (directions,))
        opts.directions, opts.n_random = 3, _ranged(
            "directions", int(k) if _ else SCREEN_K, 1, 100000000,
            "screen:K takes 1 to 100000000 random directions per tensor")
    elif isinstance(directions, (bool, np.bool_)):
        raise TypeError("gradcheck: directions %r: 'all', a number of random "
                        "directions, or a list of coordinates"
                        % (directions,))
    elif isinstance(directions, (int, np.integer)):
        # the CLI's random:K: 1 to 10^8
        opts.directions, opts.n_random = 1, _ranged(
            "directions", directions, 1, 100000000,
            "1 to 100000000 random directions (as the CLI's random:K)")
    else:
        items = list(np.asarray(directions, dtype=object).reshape(-1))
        idx = [_int_arg("a coordinate in directions", i) for i in items]
        for i in idx:
            if i < 0:
                raise ValueError("gradcheck: a negative coordinate in "
                                 "directions: %d" % i)
            if i > SIZE_MAX:
                raise ValueError("gradcheck: the coordinate %d in directions "
                                 "is beyond SIZE_MAX" % i)
        arr = (ctypes.c_size_t * len(idx))(*idx)
        keep.append(arr)
        opts.directions, opts.indices, opts.n_indices = 2, arr, len(idx)


def _cstr(what, v):
    """str(V) encoded for a C string, else a ValueError naming WHAT: a NUL
    inside would cut the name there, silently (the library sees "bf16"
    of "bf16\0storage")."""
    b = str(v).encode()
    if b"\0" in b:
        raise ValueError("gradcheck: %s %r holds a NUL character (C would "
                         "cut it there)" % (what, str(v)))
    return b


SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1
UINT64_MAX = 2 ** 64 - 1


def _int_arg(what, v):
    """V as a Python int (bool refused), else a TypeError naming WHAT."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("gradcheck: %s is a whole number, not %r"
                        % (what, v))
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError("gradcheck: %s is a whole number, not %r"
                        % (what, v)) from None


def _ranged(what, v, lo, hi, why):
    """V as an int in [LO, HI], else a ValueError naming WHAT: ctypes
    would pass it to C modulo 2^64 (2**64+1 as 1, -1 as 2^64-1)."""
    d = _int_arg(what, v)
    if not lo <= d <= hi:
        raise ValueError("gradcheck: %s is %d; accepted: %s"
                         % (what, d, why))
    return d


def _size_arg(what, v):
    return _ranged(what, v, 0, SIZE_MAX,
                   "0 to %d (SIZE_MAX, size_t)" % SIZE_MAX)


def _depth(what, v):
    """V as a depth: a whole number >= 0 (a count of roundings), else a
    TypeError or ValueError naming WHAT."""
    if isinstance(v, (bool, np.bool_)):
        d = None
    else:
        try:
            d = operator.index(v)
        except TypeError:
            d = None
    if d is None:
        raise TypeError("gradcheck: %s is a whole number of roundings, not "
                        "%r" % (what, v)) from None
    if d < 0:
        raise ValueError("gradcheck: %s is %d; a count of roundings is >= 0"
                         % (what, d))
    if d > SIZE_MAX:
        # ctypes would pass it modulo 2^64: 2**64+1 as a depth of 1
        raise ValueError("gradcheck: %s is %d; a count of roundings is at "
                         "most %d (SIZE_MAX)" % (what, d, SIZE_MAX))
    return d


class Precision:
    """A rounding class of the model beyond f32's arithmetic (gc_precision,
    manual: "Rounding classes"): storage in bf16 or fp16, products in
    TF32, an approximation of a known relative error.  forward_depth and
    backward_depth count the class's roundings on the longest chain to the
    loss and to a gradient element (0: not in that pass); mode_reached
    says whether fesetround reaches them (torch's conversions to bf16 and
    fp16 are bit operations: it does not).  The library validates every
    field (GC_EINVAL, with its reason).

        Precision.storage("bf16", forward_depth=4, backward_depth=6)
    """

    # the formats' unit roundoff and underflow error (GC_U_*, GC_ETA_*)
    FORMATS = {"bf16": (2.0 ** -8, 2.0 ** -134),
               "fp16": (2.0 ** -11, 2.0 ** -25),
               "tf32": (2.0 ** -11, 2.0 ** -137)}
    KINDS = {"storage": 0, "arithmetic": 1, "approximation": 2}

    def __init__(self, name, kind, unit_roundoff, underflow, forward_depth,
                 backward_depth, mode_reached=False):
        if kind not in self.KINDS:
            raise ValueError("gradcheck: precision kind %r: one of %s"
                             % (kind, ", ".join(self.KINDS)))
        if not isinstance(name, str) or not name:
            raise TypeError("gradcheck: a precision's name is a non-empty "
                            "str, not %r" % (name,))
        _cstr("a precision's name", name)
        if not isinstance(mode_reached, (bool, np.bool_)):
            raise TypeError("gradcheck: mode_reached is True or False, not "
                            "%r" % (mode_reached,))
        self.name, self.kind = name, kind
        self.unit_roundoff, self.underflow = float(unit_roundoff), \
            float(underflow)
        self.forward_depth = _depth("forward_depth", forward_depth)
        self.backward_depth = _depth("backward_depth", backward_depth)
        self.mode_reached = bool(mode_reached)

    @classmethod
    def _format(cls, fmt, kind, what, forward_depth, backward_depth,
                mode_reached):
        if fmt not in cls.FORMATS:
            raise ValueError("gradcheck: format %r: one of %s"
                             % (fmt, ", ".join(cls.FORMATS)))
        u, eta = cls.FORMATS[fmt]
        return cls("%s %s" % (fmt, what), kind, u, eta, forward_depth,
                   backward_depth, mode_reached)

    @classmethod
    def storage(cls, fmt, forward_depth, backward_depth, mode_reached=False):
        """Tensors rounded to FMT ("bf16", "fp16") between operations."""
        return cls._format(fmt, "storage", "storage", forward_depth,
                           backward_depth, mode_reached)

    @classmethod
    def arithmetic(cls, fmt, forward_depth, backward_depth,
                   mode_reached=False):
        """Operations carried out in FMT ("tf32" products, ...)."""
        return cls._format(fmt, "arithmetic", "arithmetic", forward_depth,
                           backward_depth, mode_reached)

    def __repr__(self):
        return ("Precision(%r, %r, u=%g, eta=%g, forward_depth=%d, "
                "backward_depth=%d, mode_reached=%s)"
                % (self.name, self.kind, self.unit_roundoff, self.underflow,
                   self.forward_depth, self.backward_depth,
                   self.mode_reached))


def _precisions(m, precisions, keep):
    if isinstance(precisions, Precision):
        raise TypeError("gradcheck: precisions is a list of "
                        "gradcheck.Precision: precisions=[%r]" % precisions)
    items = list(precisions)
    if len(items) > _lib.MAX_PRECISIONS:
        # the library refuses it too (GC_EINVAL); say it in Python's words
        raise ValueError("gradcheck: %d precisions, at most %d"
                         % (len(items), _lib.MAX_PRECISIONS))
    arr = (_lib.Precision * max(len(items), 1))()
    names = []
    for c, p in zip(arr, items):
        if not isinstance(p, Precision):
            raise TypeError("gradcheck: precisions holds %s, not a "
                            "gradcheck.Precision" % type(p).__name__)
        names.append(p.name.encode())
        c.name, c.kind = names[-1], Precision.KINDS[p.kind]
        c.unit_roundoff, c.underflow = p.unit_roundoff, p.underflow
        c.forward_depth, c.backward_depth = p.forward_depth, p.backward_depth
        c.mode_reached = int(p.mode_reached)
    keep += [arr, names]
    m.n_precisions, m.precisions = len(items), arr


def check(loss, grad, x, *, loss_f64=None, grad_f64=None,
          grad_magnitude=None, loss_magnitude=None, name=None, blocks=None,
          constants=None, precisions=None, forward_depth=0,
          backward_depth=0, reference=None,
          directions="all", seed=1, precision=0, step=0.0, false_alarm=1e-6,
          threads=1, random_per_block=False, random_per_tensor=None,
          timeout=0.0, exact_step=False, no_twin=False, model_identity=None,
          device=None, loss_note=None, _names=None):
    """Check GRAD, the f32 backward, at the float32 point X.

    loss(x) -> the f32 forward's loss (a number); grad(x) -> an array of
    x's shape; both take a read-only float32 array of x's shape.
    loss_f64(x64) and grad_f64(x64) (the f64 twin of grad) take the same
    point as float64, exactly.  grad_magnitude(x) -> the backward on
    absolute values, loss_magnitude(x) -> M_L (manual: "Adjoint rounding",
    "Reference rounding").  blocks: {name: shape} in the vector's order;
    constants: {name: value}; precisions: a list of Precision, the
    model's rounding classes beyond f32's arithmetic; forward_depth,
    backward_depth: the accumulation depths (0: not declared).  reference: "f64" (the default
    when loss_f64 is given), "f32" (the default otherwise); MPFR forwards
    are for C models.  directions: "all", "screen" (8 random directions
    within each tensor of more than 8 elements, the others' coordinates,
    then every coordinate of a tensor where one did not pass; "screen:K"
    for K; manual: "Screening"), a number of random directions,
    or a list of coordinates; random_per_tensor=K: K random directions
    within each block (each tensor), the cheap check whose failures keep
    their tensor's name (manual: "Directional checks").  device: where
    the callables compute when not on this host's CPU ("cuda:0"), for
    the report (manual: "Device arithmetic"); loss_note: how the loss was
    made from a function's outputs, for the report's "loss from:" line.
    The other options are gc_options' fields.

    Returns a Result.  Raises CallbackError when a callback raised or
    returned a value of the wrong shape or type (the exception is its
    __cause__), CheckError for any other status but GC_OK (a NaN from a
    callback is GC_ENONFINITE), each with the library's detail and the
    Result in .result.
    """
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise TypeError("gradcheck: x must be a float32 array (the point "
                        "the f32 model is checked at), not %s" % x.dtype)
    shape = x.shape
    xc = np.ascontiguousarray(x).reshape(-1)
    n = xc.size
    tr = _Trampolines(shape, n)
    f32, f64 = ctypes.c_float, ctypes.c_double
    keep = []                   # everything the C side points to
    m = _lib.Model()
    m.abi = _lib.MODEL_ABI
    nm = (name if name is not None else getattr(loss, "__name__", "python"))
    m.name = _cstr("the model's name", nm)
    keep.append(m.name)
    m.n = n

    def cb(kind, field, label, fn, ctype, dtype):
        if fn is None:
            return
        if not callable(fn):
            raise TypeError("gradcheck: %s is not callable" % label)
        c = kind(label, fn, ctype, dtype)
        p = getattr(_lib, field.upper() if field in ("loss_f32", "grad_f32",
                                                     "loss_f64", "grad_f64")
                    else "GRAD_F32")(c)
        keep.append(p)
        setattr(m, field, p)

    if loss is None or grad is None:
        raise TypeError("gradcheck: loss and grad are required")
    cb(tr.scalar, "loss_f32", "loss", loss, f32, np.float32)
    cb(tr.vector, "grad_f32", "grad", grad, f32, np.float32)
    cb(tr.scalar, "loss_f64", "loss_f64", loss_f64, f64, np.float64)
    cb(tr.vector, "grad_f64", "grad_f64", grad_f64, f64, np.float64)
    cb(tr.vector, "grad_magnitude_f32", "grad_magnitude", grad_magnitude,
       f32, np.float32)
    cb(tr.scalar, "loss_magnitude_f32", "loss_magnitude", loss_magnitude,
       f32, np.float32)
    m.forward_depth = _depth("forward_depth", forward_depth)
    m.backward_depth = _depth("backward_depth", backward_depth)
    if blocks:
        arr, names = _blocks(blocks, n)
        keep += [arr, names]
        m.n_blocks, m.blocks = len(arr), arr
    if constants:
        items = list(dict(constants).items())
        carr = (_lib.Constant * len(items))()
        cnames = []
        for c, (k, v) in zip(carr, items):
            cnames.append(_cstr("a constant's name", k))
            c.name, c.value = cnames[-1], float(v)
        keep += [carr, cnames]
        m.n_constants, m.constants = len(carr), carr
    if precisions:
        _precisions(m, precisions, keep)

    o = _lib.Options()
    lib.gc_options_init(ctypes.byref(o))
    if reference is None:
        reference = "f64" if loss_f64 is not None else "f32"
        if loss_f64 is None:
            warnings.warn(
                "gradcheck: no loss_f64, so the reference is f32 central "
                "differences of the f32 forward, which resolve a gradient "
                "only coarsely (see each direction's resolution): a small "
                "bug can pass; give loss_f64 (the same code in float64) or "
                "say reference=\"f32\" to silence this", stacklevel=2)
    if reference not in _REFERENCES:
        raise ValueError("gradcheck: reference %r: one of %s"
                         % (reference, ", ".join(_REFERENCES)))
    o.reference = _REFERENCES[reference]
    precision = _int_arg("precision", precision)
    if precision != 0 and not 25 <= precision <= 1000000:
        raise ValueError("gradcheck: precision is %d; accepted: 0 (derived) "
                         "or 25 to 1000000 bits (as the CLI's --prec)"
                         % precision)
    o.precision = precision
    o.step = float(step)
    if random_per_tensor is not None:
        if directions != "all" or random_per_block:
            raise ValueError("gradcheck: random_per_tensor=K replaces "
                             "directions and random_per_block; give it "
                             "alone")
        k = operator.index(random_per_tensor)
        if k < 1:
            raise ValueError("gradcheck: random_per_tensor is a number of "
                             "directions per tensor, >= 1, not %d" % k)
        directions, random_per_block = k, True
    _directions(o, directions, keep)
    o.seed = _ranged("seed", seed, 0, UINT64_MAX,
                     "0 to 2^64-1 (a uint64_t, as the CLI's --seed)")
    o.false_alarm = float(false_alarm)
    o.threads = _ranged("threads", threads, 0, 1024,
                        "0 to 1024 (the CLI's --threads takes 1 to 1024; "
                        "0 and 1 are serial)")
    o.random_per_block = int(bool(random_per_block))
    o.timeout = float(timeout)
    o.exact_step = int(bool(exact_step))
    o.no_twin = int(bool(no_twin))
    if device is not None:
        o.device = str(device).encode()
        keep.append(o.device)
    if loss_note is not None:
        o.loss_note = str(loss_note).encode()
        keep.append(o.loss_note)
    if model_identity is not None:
        o.model_identity = _cstr("model_identity", model_identity)
        keep.append(o.model_identity)

    ptr = ctypes.c_void_p()
    st = lib.gc_check(ctypes.byref(m), xc.ctypes.data, ctypes.byref(o),
                      ctypes.byref(ptr))
    res = Result(ptr.value) if ptr.value else None
    # The exception's traceback holds the callback's frame, and through
    # its f_back this one: neither the trampolines nor this frame may keep
    # it, or a reference cycle keeps the model alive after the caller
    # drops the error.
    err, tr.error = tr.error, None
    try:
        if err is not None and not isinstance(err, Exception):
            raise err           # KeyboardInterrupt, SystemExit
        if err is not None:
            raise CallbackError(st, res.detail if res else "", res,
                                tr.where, err, tr.n_raised,
                                _names) from err
    finally:
        del err
    if st != 0:
        raise CheckError(st, res.detail if res else "", res, _names)
    return res


def _assert(want, diagnosis, args, kw):
    try:
        r = check(*args, **kw)
    except CheckError as e:
        rep = e.result.report("text") if e.result else ""
        raise AssertionError("expected verdict %s; the check stopped: %s\n%s"
                             % (want, e, rep)) from e
    got_diag = r.json.get("diagnosis", {}).get("kind")
    if r.verdict == want and (diagnosis is None or got_diag == diagnosis):
        return r
    if diagnosis is None:
        head = "expected verdict %s; got %s" % (want, r.verdict)
    else:
        head = ("expected verdict %s with diagnosis %s; got %s with "
                "diagnosis %s" % (want, diagnosis, r.verdict, got_diag))
    raise AssertionError(head + "\n" + r.report("text"))


def assert_gradient(loss, grad, x, **kw):
    """Pass when check (loss, grad, x, **kw) passes -- not inconclusive
    (manual: "Inconclusive directions"); else raise AssertionError with
    the text report.  Returns the Result."""
    return _assert(Verdict.PASS, None, (loss, grad, x), kw)


def assert_gradient_fails(loss, grad, x, diagnosis=None, **kw):
    """Pass when the check runs and fails (a known bug must be seen), and,
    with DIAGNOSIS (a kind as the JSON report names it: "constant-factor",
    "sign-flip", ...), when it is diagnosed so."""
    return _assert(Verdict.FAIL, diagnosis, (loss, grad, x), kw)
