# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""_lib.py -- the ctypes bindings of libgradcheck.

Only the C interface is declared here (lib/gradcheck.h): the layouts of
gc_model (ABI 3), gc_precision, gc_options and the head of gc_result, and the functions
the package calls.  Nothing of the check's logic is here: every number,
verdict and report comes from the library.

The library is found, in order, at the path in the environment variable
GRADCHECK_LIBRARY (the tests point it at the in-tree lib/.libs), in the
libdir configured at build time (_config.py, written by make), and by the
dynamic linker under its soname (ctypes.util.find_library).
"""

import ctypes
import ctypes.util
import os

c_size_t = ctypes.c_size_t
c_float_p = ctypes.POINTER(ctypes.c_float)
c_double_p = ctypes.POINTER(ctypes.c_double)

# Callback types, with their pointers as c_void_p (the package makes NumPy
# views of them itself, cheaper than ctypes' POINTER conversions).
LOSS_F32 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)
GRAD_F32 = LOSS_F32
LOSS_F64 = LOSS_F32
GRAD_F64 = LOSS_F32
MODEL_ABI = 3           # the gc_model layout below: GC_MODEL_ABI 3
MAX_DIMS = 6            # GC_MAX_DIMS
MAX_PRECISIONS = 8      # GC_MAX_PRECISIONS


class Block(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("offset", c_size_t),
                ("count", c_size_t), ("ndim", c_size_t),
                ("shape", c_size_t * MAX_DIMS)]


class Constant(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_double)]


class Precision(ctypes.Structure):
    """gc_precision: a rounding class (manual: "Rounding classes")."""
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int),
                ("unit_roundoff", ctypes.c_double),
                ("underflow", ctypes.c_double),
                ("forward_depth", c_size_t), ("backward_depth", c_size_t),
                ("mode_reached", ctypes.c_int)]


class Model(ctypes.Structure):
    """gc_model as of GC_MODEL_ABI 3 (a library of a later ABI reads an
    ABI-3 description without the fields appended since); the
    higher-order group stays NULL."""
    _fields_ = [
        ("abi", ctypes.c_int),
        ("name", ctypes.c_char_p),
        ("n", c_size_t),
        ("loss_f32", LOSS_F32),
        ("grad_f32", GRAD_F32),
        ("loss_mpfr", ctypes.c_void_p),
        ("loss_f64", LOSS_F64),
        ("grad_magnitude_f32", GRAD_F32),
        ("loss_magnitude_f32", LOSS_F32),
        ("ctx", ctypes.c_void_p),
        ("forward_depth", c_size_t),
        ("backward_depth", c_size_t),
        ("n_blocks", c_size_t),
        ("blocks", ctypes.POINTER(Block)),
        ("n_constants", c_size_t),
        ("constants", ctypes.POINTER(Constant)),
        ("n_outputs", c_size_t),
        ("outputs_f32", ctypes.c_void_p),
        ("outputs_mpfr", ctypes.c_void_p),
        ("outputs_magnitude_f32", ctypes.c_void_p),
        ("output_depth", c_size_t),
        ("n_output_blocks", c_size_t),
        ("output_blocks", ctypes.c_void_p),
        ("grad_f64", GRAD_F64),
        ("n_precisions", c_size_t),
        ("precisions", ctypes.POINTER(Precision)),
        ("jvp_f32", ctypes.c_void_p),
        ("hvp_f32", ctypes.c_void_p),
        ("tangent_depth", c_size_t),
        ("hvp_depth", c_size_t),
        ("hvp_f64", ctypes.c_void_p),
    ]


class Options(ctypes.Structure):
    """gc_options.  A struct without a version: it is allocated with a
    reserve after the fields known here and filled by gc_options_init, so
    that fields a later library appends keep their defaults."""
    _fields_ = [
        ("reference", ctypes.c_int),
        ("precision", ctypes.c_long),          # mpfr_prec_t
        ("step", ctypes.c_double),
        ("directions", ctypes.c_int),
        ("n_random", c_size_t),
        ("indices", ctypes.POINTER(c_size_t)),
        ("n_indices", c_size_t),
        ("seed", ctypes.c_uint64),
        ("false_alarm", ctypes.c_double),
        ("threads", ctypes.c_uint),
        ("shard_index", c_size_t),
        ("shard_count", c_size_t),
        ("progress", ctypes.c_void_p),
        ("progress_ctx", ctypes.c_void_p),
        ("random_per_block", ctypes.c_int),
        ("timeout", ctypes.c_double),
        ("exact_step", ctypes.c_int),
        ("no_twin", ctypes.c_int),
        ("model_identity", ctypes.c_char_p),
        ("device", ctypes.c_char_p),
        ("loss_note", ctypes.c_char_p),
        ("_reserve", ctypes.c_char * 4096),
    ]


class ResultHead(ctypes.Structure):
    """The first fields of gc_result; the rest is read from its JSON
    report (manual: "JSON report"), the documented interface."""
    _fields_ = [("kind", ctypes.c_int), ("status", ctypes.c_int),
                ("callback_code", ctypes.c_int),
                ("detail", ctypes.c_char * 160), ("verdict", ctypes.c_int)]


def _candidates():
    env = os.environ.get("GRADCHECK_LIBRARY")
    if env:
        return [env]            # asked for: that one, or an error
    out = []
    try:
        from . import _config
        out.append(os.path.join(_config.LIBDIR, "libgradcheck.so.0"))
    except ImportError:
        pass
    # pip installs the package alone: the library "make install" put in
    # place, where pkg-config says (a prefix the dynamic linker may not
    # search, such as /usr/local/lib before ldconfig ran), or the
    # linker's own search
    try:
        import subprocess
        libdir = subprocess.run(["pkg-config", "--variable=libdir",
                                 "gradcheck"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        if libdir:
            out.append(os.path.join(libdir, "libgradcheck.so.0"))
    except (OSError, subprocess.SubprocessError):
        pass
    found = ctypes.util.find_library("gradcheck")
    if found:
        out.append(found)
    out.append("libgradcheck.so.0")
    return out


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            # the loader's message usually names the path already
            msg = str(e)
            errors.append(msg if path in msg else "%s: %s" % (path, msg))
    raise ImportError("gradcheck: libgradcheck not found (set "
                      "GRADCHECK_LIBRARY to its path): " + "; ".join(errors))


lib = _load()
libc = ctypes.CDLL(None)
libc.free.argtypes = [ctypes.c_void_p]
libc.free.restype = None

lib.gc_options_init.argtypes = [ctypes.POINTER(Options)]
lib.gc_options_init.restype = None
lib.gc_check.argtypes = [ctypes.POINTER(Model), ctypes.c_void_p,
                         ctypes.POINTER(Options),
                         ctypes.POINTER(ctypes.c_void_p)]
lib.gc_check.restype = ctypes.c_int
lib.gc_result_free.argtypes = [ctypes.c_void_p]
lib.gc_result_free.restype = None
lib.gc_report.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.gc_report.restype = ctypes.c_void_p
lib.gc_derivation.argtypes = [ctypes.c_void_p, c_size_t, ctypes.c_int]
lib.gc_derivation.restype = ctypes.c_void_p
lib.gc_strerror.argtypes = [ctypes.c_int]
lib.gc_strerror.restype = ctypes.c_char_p
lib.gc_verdict_name.argtypes = [ctypes.c_int]
lib.gc_verdict_name.restype = ctypes.c_char_p
lib.gc_exit_status.argtypes = [ctypes.c_int, ctypes.c_int]
lib.gc_exit_status.restype = ctypes.c_int
lib.gc_param_name.argtypes = [ctypes.c_void_p, c_size_t, ctypes.c_char_p,
                              c_size_t]
lib.gc_param_name.restype = ctypes.c_char_p
lib.gc_result_parse_json.argtypes = [ctypes.c_char_p, c_size_t,
                                     ctypes.POINTER(ctypes.c_void_p)]
lib.gc_result_parse_json.restype = ctypes.c_int


def take_string(ptr):
    """The C string at PTR (malloc'd by the library) as str; frees it.
    None when PTR is NULL."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        libc.free(ptr)
