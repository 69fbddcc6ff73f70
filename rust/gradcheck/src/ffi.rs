// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! The C interface of libgradcheck (lib/gradcheck.h), declared by hand.
//!
//! Only what the crate uses is declared: the layouts of `gc_model`
//! (`GC_MODEL_ABI` 3), `gc_options`, `gc_block`, `gc_constant`,
//! `gc_precision`, `gc_direction` with its `gc_term`s, `gc_diagnosis`, the
//! head of `gc_result` (its fields up to `diagnosis`; the crate only reads
//! a result the library allocated), and the functions called.  The test
//! `tests/header.rs` compiles a C program against gradcheck.h and compares
//! every size, offset, constant and arity below with the header's: a change
//! of the header fails it.  Nothing of the check's logic is here.
//! The structs and their fields are gradcheck.h's, documented there.
#![allow(non_camel_case_types, missing_docs)]

use std::os::raw::{c_char, c_double, c_float, c_int, c_long, c_uint, c_void};

/// `GC_MODEL_ABI`: the `gc_model` layout mirrored below.
pub const GC_MODEL_ABI: c_int = 3;
/// `GC_MAX_DIMS`
pub const GC_MAX_DIMS: usize = 6;
/// `GC_MAX_PRECISIONS`
pub const GC_MAX_PRECISIONS: usize = 8;
/// `GC_TERM_MAX_INPUTS`
pub const GC_TERM_MAX_INPUTS: usize = 10;
/// `GC_N_TERMS`
pub const GC_N_TERMS: usize = 3;
/// `GC_STATUS_COUNT`
pub const GC_STATUS_COUNT: c_int = 17;

pub type mpfr_prec_t = c_long;

pub type gc_loss_f32_fn = Option<unsafe extern "C" fn(*mut c_void, *const c_float, *mut c_float) -> c_int>;
pub type gc_grad_f32_fn = Option<unsafe extern "C" fn(*mut c_void, *const c_float, *mut c_float) -> c_int>;
pub type gc_loss_f64_fn = Option<unsafe extern "C" fn(*mut c_void, *const c_double, *mut c_double) -> c_int>;
pub type gc_grad_f64_fn = Option<unsafe extern "C" fn(*mut c_void, *const c_double, *mut c_double) -> c_int>;
/// Callbacks the crate never sets (MPFR, outputs, higher order): NULL.
pub type gc_unused_fn = Option<unsafe extern "C" fn()>;

#[repr(C)]
pub struct gc_block {
    pub name: *const c_char,
    pub offset: usize,
    pub count: usize,
    pub ndim: usize,
    pub shape: [usize; GC_MAX_DIMS],
}

#[repr(C)]
pub struct gc_constant {
    pub name: *const c_char,
    pub value: c_double,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct gc_precision {
    pub name: *const c_char,
    pub kind: c_int,
    pub unit_roundoff: c_double,
    pub underflow: c_double,
    pub forward_depth: usize,
    pub backward_depth: usize,
    pub mode_reached: c_int,
}

#[repr(C)]
pub struct gc_model {
    pub abi: c_int,
    pub name: *const c_char,
    pub n: usize,
    pub loss_f32: gc_loss_f32_fn,
    pub grad_f32: gc_grad_f32_fn,
    pub loss_mpfr: gc_unused_fn,
    pub loss_f64: gc_loss_f64_fn,
    pub grad_magnitude_f32: gc_grad_f32_fn,
    pub loss_magnitude_f32: gc_loss_f32_fn,
    pub ctx: *mut c_void,
    pub forward_depth: usize,
    pub backward_depth: usize,
    pub n_blocks: usize,
    pub blocks: *const gc_block,
    pub n_constants: usize,
    pub constants: *const gc_constant,
    pub n_outputs: usize,
    pub outputs_f32: gc_unused_fn,
    pub outputs_mpfr: gc_unused_fn,
    pub outputs_magnitude_f32: gc_unused_fn,
    pub output_depth: usize,
    pub n_output_blocks: usize,
    pub output_blocks: *const gc_block,
    pub grad_f64: gc_grad_f64_fn,
    pub n_precisions: usize,
    pub precisions: *const gc_precision,
    pub jvp_f32: gc_unused_fn,
    pub hvp_f32: gc_unused_fn,
    pub tangent_depth: usize,
    pub hvp_depth: usize,
    pub hvp_f64: gc_unused_fn,
}

#[repr(C)]
pub struct gc_options {
    pub reference: c_int,
    pub precision: mpfr_prec_t,
    pub step: c_double,
    pub directions: c_int,
    pub n_random: usize,
    pub indices: *const usize,
    pub n_indices: usize,
    pub seed: u64,
    pub false_alarm: c_double,
    pub threads: c_uint,
    pub shard_index: usize,
    pub shard_count: usize,
    pub progress: gc_unused_fn,
    pub progress_ctx: *mut c_void,
    pub random_per_block: c_int,
    pub timeout: c_double,
    pub exact_step: c_int,
    pub no_twin: c_int,
    pub model_identity: *const c_char,
    pub device: *const c_char,
    pub loss_note: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct gc_input {
    pub name: *const c_char,
    pub value: c_double,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct gc_term {
    pub name: *const c_char,
    pub formula: *const c_char,
    pub section: *const c_char,
    pub value: c_double,
    pub n_inputs: usize,
    pub inputs: [gc_input; GC_TERM_MAX_INPUTS],
}

#[repr(C)]
pub struct gc_direction {
    pub id: usize,
    pub index: usize,
    pub verdict: c_int,
    pub analytic: c_double,
    pub reference: c_double,
    pub diff: c_double,
    pub bar: c_double,
    pub nu: c_double,
    pub resolution: c_double,
    pub step: c_double,
    pub d2h: c_double,
    pub jump: c_double,
    pub forward_error_ulps: c_double,
    pub terms: [gc_term; GC_N_TERMS],
    pub level: c_int,
    pub jump_next: c_double,
    pub bar_worst_case: c_double,
    pub nu_worst_case: c_double,
    pub decided_by: c_int,
    pub analytic_f64: c_double,
    pub richardson: c_double,
    pub richardson_terms: [gc_term; 2],
    pub richardson_used: c_int,
    pub bar_f64: c_double,
    pub nu_f64: c_double,
    pub resolution_f64: c_double,
    pub verdict_algorithm: c_int,
    pub adjoint_f64: gc_term,
    pub arith_diff: c_double,
    pub arith_bar: c_double,
    pub nu_arith: c_double,
    pub arith: c_int,
    pub arith_floor: c_double,
    pub arith_floor_probe: c_double,
    pub arith_factor: c_double,
    pub arith_factor_points: c_uint,
    pub arith_drift: c_double,
}

#[repr(C)]
pub struct gc_diagnosis {
    pub kind: c_int,
    pub factor: c_double,
    pub closed_form: [c_char; 64],
    pub shift: c_long,
    pub first: usize,
    pub last: usize,
    pub block: [c_char; 64],
    pub text: [c_char; 640],
}

/// The head of `gc_result`, its fields up to `diagnosis`.  Never
/// allocated by the crate: only read through a pointer from `gc_check`.
#[repr(C)]
pub struct gc_result {
    pub kind: c_int,
    pub status: c_int,
    pub callback_code: c_int,
    pub detail: [c_char; 160],
    pub verdict: c_int,
    pub model_name: [c_char; 64],
    pub n: usize,
    pub reference: c_int,
    pub precision: mpfr_prec_t,
    pub false_alarm: c_double,
    pub lambda_forward: c_double,
    pub lambda_backward: c_double,
    pub forward_depth: usize,
    pub backward_depth: usize,
    pub step_exponent: c_double,
    pub loss_f32: c_double,
    pub loss_magnitude: c_double,
    pub loss_reference: c_double,
    pub forward_error_ulps: c_double,
    pub forward_budget_ulps: c_double,
    pub truncation_source: c_int,
    pub n_directions: usize,
    pub n_total: usize,
    pub n_failed: usize,
    pub n_nonsmooth: usize,
    pub worst: usize,
    pub worst_nu: c_double,
    pub shard_index: usize,
    pub shard_count: usize,
    pub seed: u64,
    pub direction_kind: c_int,
    pub dirs: *mut gc_direction,
    pub diagnosis: gc_diagnosis,
}

extern "C" {
    /// `gc_strerror`: a static description of a status.
    pub fn gc_strerror(status: c_int) -> *const c_char;
    /// `gc_verdict_name`: "pass", "fail", ...
    pub fn gc_verdict_name(v: c_int) -> *const c_char;
    /// `gc_exit_status`: the command's exit status of a check's status
    /// and verdict.
    pub fn gc_exit_status(status: c_int, verdict: c_int) -> c_int;
    /// `gc_reference_name`: "mpfr", "f32", "f64", "auto".
    pub fn gc_reference_name(r: c_int) -> *const c_char;
    /// `gc_options_init`: fill the defaults.
    pub fn gc_options_init(opts: *mut gc_options);
    /// `gc_check`: run the check; *result to free with gc_result_free.
    pub fn gc_check(
        model: *const gc_model,
        x: *const c_float,
        opts: *const gc_options,
        result: *mut *mut gc_result,
    ) -> c_int;
    /// `gc_result_free`
    pub fn gc_result_free(result: *mut gc_result);
    /// `gc_report`: a new string (free with free), NULL when memory runs out.
    pub fn gc_report(result: *const gc_result, format: c_int) -> *mut c_char;
    /// `gc_derivation`: one direction's derivation, NULL out of range.
    pub fn gc_derivation(result: *const gc_result, dir: usize, format: c_int) -> *mut c_char;
    /// `gc_param_name`: a parameter's name into buf.
    pub fn gc_param_name(
        result: *const gc_result,
        index: usize,
        buf: *mut c_char,
        size: usize,
    ) -> *mut c_char;
    /// The C library's free, for the strings gc_report returns.
    pub fn free(p: *mut c_void);
}
