// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! Check a hand-written backward pass against central finite differences
//! with the pass bar libgradcheck derives, from `cargo test`.
//!
//! A safe layer over the C library: the model is a handful of closures,
//! [`check`] calls `gc_check`, and everything it returns -- the verdict,
//! the bar and its terms, the diagnosis, the reports -- is the library's
//! (the GNU Texinfo manual, chapter "From Rust").  Nothing is judged here.
//!
//! ```no_run
//! use gradcheck::{check, Model, Options, Verdict};
//! let model = Model::new("tanh-sum", 8,
//!         |x: &[f32]| x.iter().map(|v| v.tanh()).sum::<f32>(),
//!         |x: &[f32]| x.iter().map(|v| 1.0 - v.tanh() * v.tanh()).collect())
//!     .loss_f64(|x: &[f64]| x.iter().map(|v| v.tanh()).sum::<f64>())
//!     .depths(8, 3);
//! let x: Vec<f32> = (0..8).map(|i| i as f32 / 4.0 - 1.0).collect();
//! let report = check(&model, &x, &Options::default()).unwrap();
//! assert_eq!(report.verdict(), Verdict::Pass, "{}", report);
//! ```
//!
//! Callbacks run on the library's worker threads when
//! [`Options::threads`] is above 1 and under every IEEE rounding mode, so
//! closures are `Fn + Send + Sync`.  A closure that panics, or returns a
//! gradient of the wrong length, stops the check with [`Error::Callback`]:
//! the panic is caught in the `extern "C"` trampoline and never unwinds
//! into C.
#![deny(missing_docs)]

pub mod ffi;

use std::any::Any;
use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::{c_char, c_double, c_float, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

type LossF32 = Box<dyn Fn(&[f32]) -> f32 + Send + Sync>;
type GradF32 = Box<dyn Fn(&[f32]) -> Vec<f32> + Send + Sync>;
type LossF64 = Box<dyn Fn(&[f64]) -> f64 + Send + Sync>;
type GradF64 = Box<dyn Fn(&[f64]) -> Vec<f64> + Send + Sync>;

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn carray(a: &[c_char]) -> String {
    let bytes: Vec<u8> = a.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Take a string the library allocated (NULL: None) and free it.
fn take(p: *mut c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let s = cstr(p);
    unsafe { ffi::free(p as *mut c_void) };
    Some(s)
}

// ---------------------------------------------------------------- enums

/// `gc_status`: why a check stopped without a verdict.  `Display` is the
/// library's `gc_strerror`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// `GC_OK`
    Ok,
    /// `GC_EINVAL`: a NULL argument or an option out of its range
    Inval,
    /// `GC_EEMPTY`: the model has no parameters
    Empty,
    /// `GC_ENOMEM`: an allocation failed
    NoMem,
    /// `GC_ECALLBACK`: a model callback failed
    Callback,
    /// `GC_ENONFINITE`: a callback produced NaN or Inf
    NonFinite,
    /// `GC_ESTEP`: the step vanished or overflows
    Step,
    /// `GC_EPREC`: a precision MPFR cannot take
    Prec,
    /// `GC_ENOREF`: the model lacks the reference asked for
    NoRef,
    /// `GC_EDIRECTION`: a listed direction out of range
    Direction,
    /// `GC_EABI`: a model description of another ABI version
    Abi,
    /// `GC_EFORMAT`: a malformed string
    Format,
    /// `GC_EMISMATCH`: shard reports that do not belong together
    Mismatch,
    /// `GC_EOVERRUN`: a callback wrote past its buffer or into x
    Overrun,
    /// `GC_ETIMEOUT`: the check ran past its time limit
    Timeout,
    /// `GC_EPOINT`: the point holds NaN or Inf
    Point,
    /// `GC_EUNWRITTEN`: a callback left elements of its output unwritten
    Unwritten,
    /// A code this crate does not know (a newer library)
    Other(i32),
}

impl Status {
    /// The status of the C code `code`.
    pub fn from_code(code: i32) -> Status {
        use Status::*;
        match code {
            0 => Ok,
            1 => Inval,
            2 => Empty,
            3 => NoMem,
            4 => Callback,
            5 => NonFinite,
            6 => Step,
            7 => Prec,
            8 => NoRef,
            9 => Direction,
            10 => Abi,
            11 => Format,
            12 => Mismatch,
            13 => Overrun,
            14 => Timeout,
            15 => Point,
            16 => Unwritten,
            c => Other(c),
        }
    }

    /// The C code of this status (`GC_OK` = 0, ...).
    pub fn code(self) -> i32 {
        use Status::*;
        match self {
            Ok => 0,
            Inval => 1,
            Empty => 2,
            NoMem => 3,
            Callback => 4,
            NonFinite => 5,
            Step => 6,
            Prec => 7,
            NoRef => 8,
            Direction => 9,
            Abi => 10,
            Format => 11,
            Mismatch => 12,
            Overrun => 13,
            Timeout => 14,
            Point => 15,
            Unwritten => 16,
            Other(c) => c,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&cstr(unsafe { ffi::gc_strerror(self.code()) }))
    }
}

/// `gc_verdict`: the check's judgement.  Only [`Verdict::Pass`] passes;
/// `Display` is the library's `gc_verdict_name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `GC_PASS`
    Pass,
    /// `GC_FAIL`: a direction beyond its derived bar
    Fail,
    /// `GC_NONSMOOTH`: a kink inside the stencil
    NonSmooth,
    /// `GC_ERROR`
    Error,
    /// `GC_INCONCLUSIVE`: the check cannot judge (neither pass nor fail)
    Inconclusive,
    /// `GC_NONDETERMINISTIC`: the model is not a function of its input
    NonDeterministic,
    /// `GC_PRECISION`: with a twin, the algorithm passes but the f32
    /// arithmetic loses more than its derived bound (a failure)
    Precision,
    /// A code this crate does not know (a newer library)
    Other(i32),
}

impl Verdict {
    /// The verdict of the C code `code`.
    pub fn from_code(code: i32) -> Verdict {
        use Verdict::*;
        match code {
            0 => Pass,
            1 => Fail,
            2 => NonSmooth,
            3 => Error,
            4 => Inconclusive,
            5 => NonDeterministic,
            6 => Precision,
            c => Other(c),
        }
    }

    /// The C code of this verdict (`GC_PASS` = 0, ...).
    pub fn code(self) -> i32 {
        use Verdict::*;
        match self {
            Pass => 0,
            Fail => 1,
            NonSmooth => 2,
            Error => 3,
            Inconclusive => 4,
            NonDeterministic => 5,
            Precision => 6,
            Other(c) => c,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&cstr(unsafe { ffi::gc_verdict_name(self.code()) }))
    }
}

/// `gc_reference`: the forward the central differences use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// `GC_REF_MPFR` (needs an MPFR forward, which this crate cannot
    /// give: the check stops with [`Status::NoRef`])
    Mpfr,
    /// `GC_REF_F32`: the f32 forward itself
    F32,
    /// `GC_REF_F64`: the f64 forward ([`Model::loss_f64`])
    F64,
    /// `GC_REF_AUTO`: the tiered reference, f64 first and MPFR where f64
    /// cannot decide (the C library's and the command line's default);
    /// it needs an MPFR forward, so from Rust it stops with
    /// [`Status::NoRef`]: the crate's default is [`Options::reference`]'s
    Auto,
}

impl Reference {
    fn code(self) -> c_int {
        match self {
            Reference::Mpfr => 0,
            Reference::F32 => 1,
            Reference::F64 => 2,
            Reference::Auto => 3,
        }
    }
}

/// `gc_format`: the report formats of [`Report::report`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `GC_FMT_TEXT`: for people
    Text,
    /// `GC_FMT_JSON`: the manual's "JSON report"
    Json,
    /// `GC_FMT_MARKDOWN`: the derivation of one direction
    Markdown,
    /// `GC_FMT_TAP`: one test point per direction
    Tap,
}

impl Format {
    fn code(self) -> c_int {
        match self {
            Format::Text => 0,
            Format::Json => 1,
            Format::Markdown => 2,
            Format::Tap => 3,
        }
    }
}

// ---------------------------------------------------------------- model

/// A named tensor of the parameter vector (`gc_block`): elements
/// `[offset, offset + product(shape))`, row-major.  Blocks must partition
/// `[0, n)` in order (the library checks).
#[derive(Clone, Debug)]
pub struct Block {
    /// Its name in reports ("dq[0,12,1,3]")
    pub name: String,
    /// Its first element
    pub offset: usize,
    /// Its shape, at most 6 dimensions
    pub shape: Vec<usize>,
}

/// `gc_precision_kind`: what a rounding class is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecisionKind {
    /// A tensor rounded to a narrower format
    Storage,
    /// Operations carried out in a narrower format
    Arithmetic,
    /// A function to a declared relative error
    Approximation,
}

/// A rounding class beyond f32's arithmetic (`gc_precision`; manual:
/// "Rounding classes").
#[derive(Clone, Debug)]
pub struct Precision {
    /// "bf16 storage": fewer than 48 bytes
    pub name: String,
    /// What it is
    pub kind: PrecisionKind,
    /// u_k, in (0, 1/2]
    pub unit_roundoff: f64,
    /// eta_k: the largest absolute error near zero
    pub underflow: f64,
    /// Its operations on the forward's longest chain
    pub forward_depth: usize,
    /// Its operations on the backward's longest chain
    pub backward_depth: usize,
    /// Whether fesetround reaches the class
    pub mode_reached: bool,
}

enum Failure {
    Panic(String),
    Length { got: usize, expected: usize },
}

/// What went wrong in a closure (see [`Error::Callback`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallbackFailure {
    /// The closure panicked; the panic's message
    Panic(String),
    /// The closure returned a gradient of `got` elements instead of `expected`
    WrongLength {
        /// the length returned
        got: usize,
        /// the model's n
        expected: usize,
    },
}

impl fmt::Display for CallbackFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallbackFailure::Panic(m) => write!(f, "panicked: {}", m),
            CallbackFailure::WrongLength { got, expected } => write!(
                f,
                "returned {} elements, the model has n = {}",
                got, expected
            ),
        }
    }
}

/// A model: its f32 forward and backward as closures, and what the
/// derived bar needs to know of them (`gc_model`, ABI 3).  Built with
/// [`Model::new`] and the builder methods; checked with [`check`].
pub struct Model {
    name: String,
    n: usize,
    loss_f32: LossF32,
    grad_f32: GradF32,
    loss_f64: Option<LossF64>,
    grad_f64: Option<GradF64>,
    grad_magnitude: Option<GradF32>,
    loss_magnitude: Option<LossF32>,
    forward_depth: usize,
    backward_depth: usize,
    blocks: Vec<Block>,
    constants: Vec<(String, f64)>,
    precisions: Vec<Precision>,
}

impl Model {
    /// A model named `name` of `n` f32 parameters: `loss` is the
    /// production forward (x, n floats, to the loss), `grad` the backward
    /// under test (x to the n elements of the gradient).
    pub fn new<L, G>(name: &str, n: usize, loss: L, grad: G) -> Model
    where
        L: Fn(&[f32]) -> f32 + Send + Sync + 'static,
        G: Fn(&[f32]) -> Vec<f32> + Send + Sync + 'static,
    {
        Model {
            name: name.to_string(),
            n,
            loss_f32: Box::new(loss),
            grad_f32: Box::new(grad),
            loss_f64: None,
            grad_f64: None,
            grad_magnitude: None,
            loss_magnitude: None,
            forward_depth: 0,
            backward_depth: 0,
            blocks: Vec::new(),
            constants: Vec::new(),
            precisions: Vec::new(),
        }
    }

    /// The reference forward in f64 (`loss_f64`): the same function
    /// computed in double; the central differences use it.
    pub fn loss_f64<F>(mut self, f: F) -> Model
    where
        F: Fn(&[f64]) -> f64 + Send + Sync + 'static,
    {
        self.loss_f64 = Some(Box::new(f));
        self
    }

    /// The f64 twin of the backward (`grad_f64`): the same algorithm with
    /// f64 as its element type (manual: "The f64 twin").  With it the
    /// check judges the algorithm and the f32 arithmetic apart.
    pub fn grad_f64<F>(mut self, f: F) -> Model
    where
        F: Fn(&[f64]) -> Vec<f64> + Send + Sync + 'static,
    {
        self.grad_f64 = Some(Box::new(f));
        self
    }

    /// The magnitude of each gradient element's computation
    /// (`grad_magnitude_f32`: the backward on absolute values).
    pub fn grad_magnitude<F>(mut self, f: F) -> Model
    where
        F: Fn(&[f32]) -> Vec<f32> + Send + Sync + 'static,
    {
        self.grad_magnitude = Some(Box::new(f));
        self
    }

    /// The magnitude of the loss's computation (`loss_magnitude_f32`).
    pub fn loss_magnitude<F>(mut self, f: F) -> Model
    where
        F: Fn(&[f32]) -> f32 + Send + Sync + 'static,
    {
        self.loss_magnitude = Some(Box::new(f));
        self
    }

    /// The accumulation depths (manual: "The accumulation factor"): the
    /// rounded operations on the longest chain to the loss (forward) and
    /// to a gradient element (backward); 0: not declared.
    pub fn depths(mut self, forward: usize, backward: usize) -> Model {
        self.forward_depth = forward;
        self.backward_depth = backward;
        self
    }

    /// Add a named tensor (see [`Block`]).
    pub fn block(mut self, name: &str, offset: usize, shape: &[usize]) -> Model {
        self.blocks.push(Block {
            name: name.to_string(),
            offset,
            shape: shape.to_vec(),
        });
        self
    }

    /// Add a named constant of the model, for the diagnosis ("ratio
    /// 2.8284 = K^0.5").
    pub fn constant(mut self, name: &str, value: f64) -> Model {
        self.constants.push((name.to_string(), value));
        self
    }

    /// Add a rounding class (see [`Precision`]).
    pub fn precision(mut self, p: Precision) -> Model {
        self.precisions.push(p);
        self
    }

    /// The number of parameters.
    pub fn n(&self) -> usize {
        self.n
    }
}

// -------------------------------------------------------------- options

/// Which directions the check evaluates (`gc_direction_kind`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directions {
    /// Every coordinate (the default)
    All,
    /// This many seeded random unit directions
    Random(usize),
    /// The listed coordinates
    List(Vec<usize>),
    /// Screened (manual: "Screening"): this many random directions within
    /// each block of more than that many elements (the whole vector where
    /// the model has none), every coordinate of the others, then every
    /// coordinate of a block where one did not pass
    Screen(usize),
}

/// The options of a check (`gc_options`); `Default` is the library's
/// `gc_options_init` (but for the reference, see [`Options::reference`]):
/// derived precision
/// and step, all coordinates, seed 1, false-alarm rate 1e-6, serial.
#[derive(Clone, Debug)]
pub struct Options {
    /// The reference forward.  `None` (the default): the f64 forward
    /// ([`Reference::F64`]) when the model has one, else the f32 forward
    /// itself ([`Reference::F32`]); a model from Rust has no MPFR forward.
    pub reference: Option<Reference>,
    /// Which directions
    pub directions: Directions,
    /// The seed of random directions
    pub seed: u64,
    /// The false-alarm probability accepted for the whole check
    pub false_alarm: f64,
    /// Directions in parallel on this many threads (0 or 1: serial); the
    /// closures are then called from several threads at once
    pub threads: u32,
    /// An absolute step h; 0: derived
    pub step: f64,
    /// A time limit in seconds; 0: none
    pub timeout: f64,
    /// Leave the model's f64 twin unused
    pub no_twin: bool,
}

impl Default for Options {
    fn default() -> Options {
        let buf = c_defaults();
        let c = &buf.o;
        Options {
            reference: None,
            directions: Directions::All,
            seed: c.seed,
            false_alarm: c.false_alarm,
            threads: c.threads,
            step: c.step,
            timeout: c.timeout,
            no_twin: c.no_twin != 0,
        }
    }
}

/// A gc_options with room after it.  gc_options carries no version: a
/// library whose gc_options has grown (fields appended: the header test
/// catches it against the header the crate is built with, not against a
/// newer installed library) fills the fields this crate does not know
/// with their defaults in the reserve, and reads them back there -- as
/// the Python binding does.
#[repr(C)]
struct OptionsBuf {
    o: ffi::gc_options,
    _reserve: [u64; 512],
}

impl OptionsBuf {
    fn as_ptr(&self) -> *const ffi::gc_options {
        self as *const OptionsBuf as *const ffi::gc_options
    }
}

fn c_defaults() -> Box<OptionsBuf> {
    // all zero is a valid OptionsBuf: null pointers, None, numbers
    let mut b: Box<OptionsBuf> = Box::new(unsafe { std::mem::zeroed() });
    unsafe { ffi::gc_options_init(&mut *b as *mut OptionsBuf as *mut ffi::gc_options) };
    b
}

// ---------------------------------------------------------------- errors

/// Why [`check`] gave no verdict.
#[derive(Debug)]
pub enum Error {
    /// The arguments cannot be given to the library (a point of another
    /// length than n, a name holding NUL, a block of more than 6
    /// dimensions, more rounding classes than the library takes).
    Argument(String),
    /// The library stopped the check: its status, its sentence (what
    /// failed where), and its text report when it made a result.
    Library {
        /// the library's status
        status: Status,
        /// the library's detail
        detail: String,
        /// the text report of the stopped check, if any
        report: Option<String>,
    },
    /// A closure panicked or returned a gradient of the wrong length: the
    /// trampoline returned a failure to the library, which stopped the
    /// check (`GC_ECALLBACK`).
    Callback {
        /// which closure: "loss", "grad", "loss_f64", "grad_f64",
        /// "grad_magnitude", "loss_magnitude"
        callback: &'static str,
        /// what it did (the first failure)
        failure: CallbackFailure,
        /// how many calls failed in all
        failed_calls: usize,
        /// the library's detail
        detail: String,
    },
}

impl Error {
    /// The library's status for this error (`Status::Inval` for an
    /// argument refused before the library was called).
    pub fn status(&self) -> Status {
        match self {
            Error::Argument(_) => Status::Inval,
            Error::Library { status, .. } => *status,
            Error::Callback { .. } => Status::Callback,
        }
    }

    /// The exit status `gradcheck run` gives a check that stopped so (2
    /// refused, 3 out of memory, 5 the model failed -- a closure's panic
    /// or wrong length is `GC_ECALLBACK`'s): the library's
    /// `gc_exit_status` of [`Error::status`], which decides alone (manual:
    /// "Exit status").  [`Report::exit_status`] gives a verdict's.
    pub fn exit_status(&self) -> i32 {
        unsafe { ffi::gc_exit_status(self.status().code(), Verdict::Error.code()) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Argument(m) => write!(f, "gradcheck: {}", m),
            Error::Library { status, detail, .. } => {
                write!(f, "gradcheck: {}", status)?;
                // the library's detail is its status's message where it
                // has nothing to add: said once
                if !detail.is_empty() && *detail != status.to_string() {
                    write!(f, ": {}", detail)?;
                }
                Ok(())
            }
            Error::Callback {
                callback,
                failure,
                failed_calls,
                detail,
            } => {
                write!(
                    f,
                    "gradcheck: {}: the closure {} {}",
                    Status::Callback,
                    callback,
                    failure
                )?;
                if *failed_calls > 1 {
                    write!(f, " (and {} more calls failed)", failed_calls - 1)?;
                }
                if !detail.is_empty() {
                    write!(f, " [{}]", detail)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {}

// ----------------------------------------------------------- trampolines

struct Ctx<'a> {
    model: &'a Model,
    first: Mutex<Option<(&'static str, Failure)>>,
    failed: AtomicUsize,
}

/// What a trampoline returns to the library for a failed closure (any
/// non-zero value stops the check with GC_ECALLBACK): "RS".
const CALLBACK_FAILED: c_int = 0x5253;

/// The library's detail in a Rust caller's words: the C callbacks by the
/// names [`Error::Callback`] gives them (`grad_f32` as `grad`), the
/// command line's `--ref` flags and `gc_options.reference` as
/// [`Options::reference`], and "returned 21075" (the trampolines' private
/// code) as "failed".
fn rust_words(detail: &str) -> String {
    detail
        .replace(&format!("returned {}", CALLBACK_FAILED), "failed")
        .replace("grad_magnitude_f32", "grad_magnitude")
        .replace("loss_magnitude_f32", "loss_magnitude")
        .replace("loss_f32", "loss")
        .replace("grad_f32", "grad")
        .replace("--ref mpfr", "Reference::Mpfr")
        .replace("--ref f64", "Reference::F64")
        .replace("--ref f32", "Reference::F32")
        .replace("(gc_options.reference)", "(Options::reference)")
}

fn panic_message(p: Box<dyn Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

impl<'a> Ctx<'a> {
    fn fail(&self, which: &'static str, f: Failure) -> c_int {
        self.failed.fetch_add(1, Ordering::SeqCst);
        let mut g = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some((which, f));
        }
        CALLBACK_FAILED
    }
}

/// Run a scalar closure at x (n values) into *out, catching a panic.
unsafe fn scalar<T: Copy>(
    ctx: *mut c_void,
    which: &'static str,
    x: *const T,
    out: *mut T,
    f: &dyn Fn(&Model, &[T]) -> T,
) -> c_int {
    let ctx = &*(ctx as *const Ctx);
    let n = ctx.model.n;
    let r = catch_unwind(AssertUnwindSafe(|| {
        let xs = std::slice::from_raw_parts(x, n);
        f(ctx.model, xs)
    }));
    match r {
        Ok(v) => {
            *out = v;
            0
        }
        Err(p) => ctx.fail(which, Failure::Panic(panic_message(p))),
    }
}

/// Run a vector closure at x into out (exactly n values), catching a
/// panic and a result of the wrong length.
unsafe fn vector<T: Copy>(
    ctx: *mut c_void,
    which: &'static str,
    x: *const T,
    out: *mut T,
    f: &dyn Fn(&Model, &[T]) -> Vec<T>,
) -> c_int {
    let ctx = &*(ctx as *const Ctx);
    let n = ctx.model.n;
    let r = catch_unwind(AssertUnwindSafe(|| {
        let xs = std::slice::from_raw_parts(x, n);
        f(ctx.model, xs)
    }));
    match r {
        Ok(v) if v.len() == n => {
            std::slice::from_raw_parts_mut(out, n).copy_from_slice(&v);
            0
        }
        Ok(v) => ctx.fail(
            which,
            Failure::Length {
                got: v.len(),
                expected: n,
            },
        ),
        Err(p) => ctx.fail(which, Failure::Panic(panic_message(p))),
    }
}

unsafe extern "C" fn t_loss_f32(ctx: *mut c_void, x: *const c_float, out: *mut c_float) -> c_int {
    scalar(ctx, "loss", x, out, &|m: &Model, x: &[f32]| (m.loss_f32)(x))
}
unsafe extern "C" fn t_grad_f32(ctx: *mut c_void, x: *const c_float, out: *mut c_float) -> c_int {
    vector(ctx, "grad", x, out, &|m: &Model, x: &[f32]| (m.grad_f32)(x))
}
unsafe extern "C" fn t_loss_f64(ctx: *mut c_void, x: *const c_double, out: *mut c_double) -> c_int {
    scalar(ctx, "loss_f64", x, out, &|m: &Model, x: &[f64]| {
        (m.loss_f64.as_ref().unwrap())(x)
    })
}
unsafe extern "C" fn t_grad_f64(ctx: *mut c_void, x: *const c_double, out: *mut c_double) -> c_int {
    vector(ctx, "grad_f64", x, out, &|m: &Model, x: &[f64]| {
        (m.grad_f64.as_ref().unwrap())(x)
    })
}
unsafe extern "C" fn t_grad_mag(ctx: *mut c_void, x: *const c_float, out: *mut c_float) -> c_int {
    vector(ctx, "grad_magnitude", x, out, &|m: &Model, x: &[f32]| {
        (m.grad_magnitude.as_ref().unwrap())(x)
    })
}
unsafe extern "C" fn t_loss_mag(ctx: *mut c_void, x: *const c_float, out: *mut c_float) -> c_int {
    scalar(ctx, "loss_magnitude", x, out, &|m: &Model, x: &[f32]| {
        (m.loss_magnitude.as_ref().unwrap())(x)
    })
}

// ----------------------------------------------------------------- check

fn c_string(what: &str, s: &str) -> Result<CString, Error> {
    CString::new(s).map_err(|_| Error::Argument(format!("{} {:?} holds a NUL byte", what, s)))
}

/// Check `model`'s backward at the point `x` (n floats) with `opts`:
/// `gc_check`.  `Ok` holds the report of a check that ran to its verdict
/// -- any verdict, [`Verdict::Fail`] included; read it with
/// [`Report::verdict`], or use [`assert_gradient!`] in a test.  `Err`
/// says why there is no verdict.
pub fn check(model: &Model, x: &[f32], opts: &Options) -> Result<Report, Error> {
    if x.len() != model.n {
        return Err(Error::Argument(format!(
            "the point has {} elements, the model has n = {}",
            x.len(),
            model.n
        )));
    }
    let name = c_string("the model name", &model.name)?;
    let mut block_names = Vec::new();
    let mut blocks = Vec::new();
    for b in &model.blocks {
        if b.shape.len() > ffi::GC_MAX_DIMS {
            return Err(Error::Argument(format!(
                "block {} has {} dimensions, at most {}",
                b.name,
                b.shape.len(),
                ffi::GC_MAX_DIMS
            )));
        }
        let nm = c_string("the block name", &b.name)?;
        let mut shape = [0usize; ffi::GC_MAX_DIMS];
        shape[..b.shape.len()].copy_from_slice(&b.shape);
        let mut count: usize = 1;
        for &d in &b.shape {
            count = count.checked_mul(d).ok_or_else(|| {
                Error::Argument(format!("block {}: its shape overflows", b.name))
            })?;
        }
        blocks.push(ffi::gc_block {
            name: nm.as_ptr(),
            offset: b.offset,
            count,
            ndim: b.shape.len(),
            shape,
        });
        block_names.push(nm);
    }
    let mut const_names = Vec::new();
    let mut constants = Vec::new();
    for (nm, v) in &model.constants {
        let c = c_string("the constant name", nm)?;
        constants.push(ffi::gc_constant {
            name: c.as_ptr(),
            value: *v,
        });
        const_names.push(c);
    }
    if model.precisions.len() > ffi::GC_MAX_PRECISIONS {
        return Err(Error::Argument(format!(
            "{} rounding classes, at most {}",
            model.precisions.len(),
            ffi::GC_MAX_PRECISIONS
        )));
    }
    let mut prec_names = Vec::new();
    let mut precs = Vec::new();
    for p in &model.precisions {
        let c = c_string("the rounding class name", &p.name)?;
        precs.push(ffi::gc_precision {
            name: c.as_ptr(),
            kind: match p.kind {
                PrecisionKind::Storage => 0,
                PrecisionKind::Arithmetic => 1,
                PrecisionKind::Approximation => 2,
            },
            unit_roundoff: p.unit_roundoff,
            underflow: p.underflow,
            forward_depth: p.forward_depth,
            backward_depth: p.backward_depth,
            mode_reached: p.mode_reached as c_int,
        });
        prec_names.push(c);
    }
    let ctx = Ctx {
        model,
        first: Mutex::new(None),
        failed: AtomicUsize::new(0),
    };
    let cm = ffi::gc_model {
        abi: ffi::GC_MODEL_ABI,
        name: name.as_ptr(),
        n: model.n,
        loss_f32: Some(t_loss_f32),
        grad_f32: Some(t_grad_f32),
        loss_mpfr: None,
        loss_f64: model.loss_f64.as_ref().map(|_| t_loss_f64 as _),
        grad_magnitude_f32: model.grad_magnitude.as_ref().map(|_| t_grad_mag as _),
        loss_magnitude_f32: model.loss_magnitude.as_ref().map(|_| t_loss_mag as _),
        ctx: &ctx as *const Ctx as *mut c_void,
        forward_depth: model.forward_depth,
        backward_depth: model.backward_depth,
        n_blocks: blocks.len(),
        blocks: if blocks.is_empty() { ptr::null() } else { blocks.as_ptr() },
        n_constants: constants.len(),
        constants: if constants.is_empty() { ptr::null() } else { constants.as_ptr() },
        n_outputs: 0,
        outputs_f32: None,
        outputs_mpfr: None,
        outputs_magnitude_f32: None,
        output_depth: 0,
        n_output_blocks: 0,
        output_blocks: ptr::null(),
        grad_f64: model.grad_f64.as_ref().map(|_| t_grad_f64 as _),
        n_precisions: precs.len(),
        precisions: if precs.is_empty() { ptr::null() } else { precs.as_ptr() },
        jvp_f32: None,
        hvp_f32: None,
        tangent_depth: 0,
        hvp_depth: 0,
        hvp_f64: None,
    };
    let mut buf = c_defaults();
    let co = &mut buf.o;
    co.reference = match opts.reference {
        Some(r) => r.code(),
        // no MPFR forward from Rust: the f64 one when the model has it
        None if model.loss_f64.is_some() => Reference::F64.code(),
        None => Reference::F32.code(),
    };
    match &opts.directions {
        Directions::All => co.directions = 0,
        Directions::Random(k) => {
            co.directions = 1;
            co.n_random = *k;
        }
        Directions::Screen(k) => {
            co.directions = 3;
            co.n_random = *k;
        }
        Directions::List(v) => {
            co.directions = 2;
            co.indices = if v.is_empty() { ptr::null() } else { v.as_ptr() };
            co.n_indices = v.len();
        }
    }
    co.seed = opts.seed;
    co.false_alarm = opts.false_alarm;
    co.threads = opts.threads;
    co.step = opts.step;
    co.timeout = opts.timeout;
    co.no_twin = opts.no_twin as c_int;
    let mut res: *mut ffi::gc_result = ptr::null_mut();
    let st = unsafe { ffi::gc_check(&cm, x.as_ptr(), buf.as_ptr(), &mut res) };
    // the C strings and tables above live until here
    drop((name, block_names, const_names, prec_names));
    let report = if res.is_null() { None } else { Some(Report { ptr: res }) };
    if st == 0 {
        if let Some(r) = report {
            return Ok(r);
        }
    }
    let detail = rust_words(&report.as_ref().map(|r| r.detail()).unwrap_or_default());
    let first = ctx.first.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some((which, f)) = first {
        return Err(Error::Callback {
            callback: which,
            failure: match f {
                Failure::Panic(m) => CallbackFailure::Panic(m),
                Failure::Length { got, expected } => CallbackFailure::WrongLength { got, expected },
            },
            failed_calls: ctx.failed.load(Ordering::SeqCst),
            detail,
        });
    }
    Err(Error::Library {
        status: Status::from_code(st),
        detail,
        report: report.as_ref().map(|r| r.report(Format::Text)),
    })
}

// ---------------------------------------------------------------- report

/// One bar term of a direction (`gc_term`): value = formula(inputs).
#[derive(Clone, Debug)]
pub struct Term {
    /// The term's name
    pub name: String,
    /// Its formula
    pub formula: String,
    /// The manual section deriving it
    pub section: String,
    /// Its value
    pub value: f64,
}

/// One evaluated direction of a check (`gc_direction`), copied.
#[derive(Clone, Debug)]
pub struct Direction {
    /// Position in the check's list of directions
    pub id: usize,
    /// The coordinate, `None` for a random direction
    pub index: Option<usize>,
    /// Its verdict
    pub verdict: Verdict,
    /// <g_hat, w>: the backward under test along w
    pub analytic: f64,
    /// The central difference D(h)
    pub reference: f64,
    /// |analytic - reference|
    pub diff: f64,
    /// The derived bar, the sum of `terms`
    pub bar: f64,
    /// diff / bar: pass iff nu <= 1
    pub nu: f64,
    /// bar / |reference|
    pub resolution: f64,
    /// The step h applied
    pub step: f64,
    /// truncation, reference rounding, adjoint rounding
    pub terms: Vec<Term>,
    /// <g64, w> with a twin; NaN without
    pub analytic_f64: f64,
    /// The algorithm's verdict with a twin
    pub verdict_algorithm: Verdict,
    /// The arithmetic's |g32 - g64| over its derived bound (twin)
    pub nu_arith: f64,
}

/// The result of a check that ran (`gc_result`), owned and freed on drop.
/// `Display` is the text report.
pub struct Report {
    ptr: *mut ffi::gc_result,
}

// The result is plain data the library no longer touches.
unsafe impl Send for Report {}
unsafe impl Sync for Report {}

impl Drop for Report {
    fn drop(&mut self) {
        unsafe { ffi::gc_result_free(self.ptr) }
    }
}

impl Report {
    fn head(&self) -> &ffi::gc_result {
        unsafe { &*self.ptr }
    }

    /// The verdict.  Only [`Verdict::Pass`] passes.
    pub fn verdict(&self) -> Verdict {
        Verdict::from_code(self.head().verdict)
    }

    /// Whether the verdict is [`Verdict::Pass`].
    pub fn passed(&self) -> bool {
        self.verdict() == Verdict::Pass
    }

    /// The exit status `gradcheck run` gives this check (0 pass, 1
    /// failed, 4 inconclusive, 6 precision): the library's
    /// `gc_exit_status` of its status and verdict (manual: "Exit status").
    pub fn exit_status(&self) -> i32 {
        let h = self.head();
        unsafe { ffi::gc_exit_status(h.status, h.verdict) }
    }

    /// The library's sentence on what failed where ("" when nothing).
    pub fn detail(&self) -> String {
        carray(&self.head().detail)
    }

    /// The number of parameters.
    pub fn n(&self) -> usize {
        self.head().n
    }

    /// The number of failed directions.
    pub fn n_failed(&self) -> usize {
        self.head().n_failed
    }

    /// The largest nu (diff over bar) of the check.
    pub fn worst_nu(&self) -> f64 {
        self.head().worst_nu
    }

    /// The position in [`Report::directions`] of the worst direction.
    pub fn worst(&self) -> Option<usize> {
        let w = self.head().worst;
        if w == usize::MAX {
            None
        } else {
            Some(w)
        }
    }

    /// The name of the reference the check used ("mpfr", "f64", ...).
    pub fn reference(&self) -> String {
        cstr(unsafe { ffi::gc_reference_name(self.head().reference) })
    }

    /// The diagnosis of the failures, for people ("" when none).
    pub fn diagnosis(&self) -> String {
        carray(&self.head().diagnosis.text)
    }

    /// Every evaluated direction, in order.
    pub fn directions(&self) -> Vec<Direction> {
        let h = self.head();
        if h.dirs.is_null() || h.n_directions == 0 {
            return Vec::new();
        }
        let ds = unsafe { std::slice::from_raw_parts(h.dirs, h.n_directions) };
        ds.iter()
            .map(|d| Direction {
                id: d.id,
                index: if d.index == usize::MAX { None } else { Some(d.index) },
                verdict: Verdict::from_code(d.verdict),
                analytic: d.analytic,
                reference: d.reference,
                diff: d.diff,
                bar: d.bar,
                nu: d.nu,
                resolution: d.resolution,
                step: d.step,
                terms: d
                    .terms
                    .iter()
                    .map(|t| Term {
                        name: cstr(t.name),
                        formula: cstr(t.formula),
                        section: cstr(t.section),
                        value: t.value,
                    })
                    .collect(),
                analytic_f64: d.analytic_f64,
                verdict_algorithm: Verdict::from_code(d.verdict_algorithm),
                nu_arith: d.nu_arith,
            })
            .collect()
    }

    /// The report in `format` (`gc_report`).  Panics only when memory
    /// runs out (gc_report's NULL).
    pub fn report(&self, format: Format) -> String {
        take(unsafe { ffi::gc_report(self.ptr, format.code()) })
            .expect("gradcheck: gc_report ran out of memory")
    }

    /// The derivation of direction `dir` (a position in
    /// [`Report::directions`]) in `format` (`gc_derivation`); `None` when
    /// `dir` is out of range.
    pub fn derivation(&self, dir: usize, format: Format) -> Option<String> {
        if dir >= self.head().n_directions {
            return None;
        }
        take(unsafe { ffi::gc_derivation(self.ptr, dir, format.code()) })
    }

    /// The name of parameter `index` ("q[0,2,1]" with blocks, "x[7]"
    /// without): `gc_param_name`.
    pub fn param_name(&self, index: usize) -> String {
        let mut buf = [0 as c_char; 128];
        unsafe { ffi::gc_param_name(self.ptr, index, buf.as_mut_ptr(), buf.len()) };
        carray(&buf)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report(Format::Text))
    }
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Report {{ verdict: {}, n: {} }}", self.verdict(), self.n())
    }
}

/// Fail the calling test unless `check` gives [`Verdict::Pass`]: panics
/// with the text report on any other verdict, and with the error when the
/// check gave none.  Returns the report when it passes.  Called by
/// [`assert_gradient!`].
#[track_caller]
pub fn assert_pass(model: &Model, x: &[f32], opts: &Options) -> Report {
    match check(model, x, opts) {
        Ok(r) if r.passed() => r,
        Ok(r) => panic!(
            "gradcheck: the backward of {:?} does not pass: verdict {}\n{}",
            model.name,
            r.verdict(),
            r
        ),
        Err(e) => panic!("gradcheck: the check of {:?} gave no verdict: {}", model.name, e),
    }
}

/// `assert_gradient!(model, x)` or `assert_gradient!(model, x, options)`:
/// in a `#[test]`, check the model at x and fail the test with the
/// library's text report on anything but a pass (fail, precision,
/// inconclusive, non-smooth, non-deterministic) or with the error when the
/// check gave no verdict.  Evaluates to the [`Report`].
#[macro_export]
macro_rules! assert_gradient {
    ($model:expr, $x:expr) => {
        $crate::assert_pass(&$model, &$x[..], &$crate::Options::default())
    };
    ($model:expr, $x:expr, $opts:expr) => {
        $crate::assert_pass(&$model, &$x[..], &$opts)
    };
}
