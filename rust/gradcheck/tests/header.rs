// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! The hand-written declarations of src/ffi.rs are kept in step with
//! lib/gradcheck.h: a C program compiled against the header prints the
//! size and offset of every mirrored field, the size of every mirrored
//! struct and the value of every mirrored constant, and each is compared
//! with the Rust side's; the header's prototypes (comments stripped) give
//! the arity of every declared function.  A field inserted, removed,
//! reordered or retyped, or a function's parameters changed, fails it.
//!
//! The header is found in the directories of GRADCHECK_INCLUDE_DIRS
//! (':'-separated; tests/rust.sh sets the source and the build tree's
//! lib/, gradcheck-version.h being generated), else in ../../lib of the
//! crate; the compiler is $CC, else cc.
use gradcheck::ffi;
use std::collections::BTreeMap;
use std::mem::{size_of, size_of_val};
use std::path::PathBuf;
use std::process::Command;

/// (key, C expression, Rust value)
type Rows = Vec<(String, String, usize)>;

macro_rules! layout {
    ($rows:ident, $whole:expr, $t:ident { $($f:ident),* $(,)? }) => {{
        // every mirrored struct is valid all-zero: pointers, Option<fn>, numbers
        let v: ffi::$t = unsafe { std::mem::zeroed() };
        let base = &v as *const ffi::$t as usize;
        let t = stringify!($t);
        if $whole {
            $rows.push((format!("sizeof {}", t), format!("sizeof ({})", t), size_of::<ffi::$t>()));
        }
        $(
            let f = stringify!($f);
            $rows.push((format!("offsetof {}.{}", t, f), format!("offsetof ({}, {})", t, f),
                        &v.$f as *const _ as usize - base));
            $rows.push((format!("sizeof {}.{}", t, f), format!("sizeof (((const {} *) 0)->{})", t, f),
                        size_of_val(&v.$f)));
        )*
    }};
}

fn rows() -> Rows {
    let mut r: Rows = Vec::new();
    layout!(r, true, gc_block { name, offset, count, ndim, shape });
    layout!(r, true, gc_constant { name, value });
    layout!(r, true, gc_precision { name, kind, unit_roundoff, underflow, forward_depth,
                                    backward_depth, mode_reached });
    layout!(r, true, gc_model { abi, name, n, loss_f32, grad_f32, loss_mpfr, loss_f64,
        grad_magnitude_f32, loss_magnitude_f32, ctx, forward_depth, backward_depth, n_blocks,
        blocks, n_constants, constants, n_outputs, outputs_f32, outputs_mpfr,
        outputs_magnitude_f32, output_depth, n_output_blocks, output_blocks, grad_f64,
        n_precisions, precisions, jvp_f32, hvp_f32, tangent_depth, hvp_depth, hvp_f64 });
    layout!(r, true, gc_options { reference, precision, step, directions, n_random, indices,
        n_indices, seed, false_alarm, threads, shard_index, shard_count, progress, progress_ctx,
        random_per_block, timeout, exact_step, no_twin, model_identity, device, loss_note });
    layout!(r, true, gc_input { name, value });
    layout!(r, true, gc_term { name, formula, section, value, n_inputs, inputs });
    layout!(r, true, gc_direction { id, index, verdict, analytic, reference, diff, bar, nu,
        resolution, step, d2h, jump, forward_error_ulps, terms, level, jump_next,
        bar_worst_case, nu_worst_case, decided_by, analytic_f64, richardson, richardson_terms,
        richardson_used, bar_f64, nu_f64, resolution_f64, verdict_algorithm, adjoint_f64,
        arith_diff, arith_bar, nu_arith, arith, arith_floor,
        arith_floor_probe, arith_factor, arith_factor_points, arith_drift });
    layout!(r, true, gc_diagnosis { kind, factor, closed_form, shift, first, last, block, text });
    // the head of gc_result only: the crate reads a result, never sizes one
    layout!(r, false, gc_result { kind, status, callback_code, detail, verdict, model_name, n,
        reference, precision, false_alarm, lambda_forward, lambda_backward, forward_depth,
        backward_depth, step_exponent, loss_f32, loss_magnitude, loss_reference,
        forward_error_ulps, forward_budget_ulps, truncation_source, n_directions, n_total,
        n_failed, n_nonsmooth, worst, worst_nu, shard_index, shard_count, seed, direction_kind,
        dirs, diagnosis });
    let consts: &[(&str, usize)] = &[
        ("GC_MODEL_ABI", ffi::GC_MODEL_ABI as usize),
        ("GC_MAX_DIMS", ffi::GC_MAX_DIMS),
        ("GC_MAX_PRECISIONS", ffi::GC_MAX_PRECISIONS),
        ("GC_TERM_MAX_INPUTS", ffi::GC_TERM_MAX_INPUTS),
        ("GC_N_TERMS", ffi::GC_N_TERMS),
        ("GC_STATUS_COUNT", ffi::GC_STATUS_COUNT as usize),
        ("sizeof (mpfr_prec_t)", size_of::<ffi::mpfr_prec_t>()),
        ("sizeof (gc_status)", size_of::<std::os::raw::c_int>()),
        ("sizeof (gc_verdict)", size_of::<std::os::raw::c_int>()),
    ];
    for (c, v) in consts {
        r.push((c.to_string(), c.to_string(), *v));
    }
    // the crate's enums against the header's
    use gradcheck::{Status, Verdict};
    let statuses = [
        ("GC_OK", Status::Ok), ("GC_EINVAL", Status::Inval), ("GC_EEMPTY", Status::Empty),
        ("GC_ENOMEM", Status::NoMem), ("GC_ECALLBACK", Status::Callback),
        ("GC_ENONFINITE", Status::NonFinite), ("GC_ESTEP", Status::Step),
        ("GC_EPREC", Status::Prec), ("GC_ENOREF", Status::NoRef),
        ("GC_EDIRECTION", Status::Direction), ("GC_EABI", Status::Abi),
        ("GC_EFORMAT", Status::Format), ("GC_EMISMATCH", Status::Mismatch),
        ("GC_EOVERRUN", Status::Overrun), ("GC_ETIMEOUT", Status::Timeout),
        ("GC_EPOINT", Status::Point), ("GC_EUNWRITTEN", Status::Unwritten),
    ];
    for (c, s) in statuses.iter() {
        r.push((c.to_string(), c.to_string(), s.code() as usize));
    }
    let verdicts = [
        ("GC_PASS", Verdict::Pass), ("GC_FAIL", Verdict::Fail), ("GC_NONSMOOTH", Verdict::NonSmooth),
        ("GC_ERROR", Verdict::Error), ("GC_INCONCLUSIVE", Verdict::Inconclusive),
        ("GC_NONDETERMINISTIC", Verdict::NonDeterministic), ("GC_PRECISION", Verdict::Precision),
    ];
    for (c, v) in verdicts.iter() {
        r.push((c.to_string(), c.to_string(), v.code() as usize));
    }
    // the codes check() passes for Reference, Format, Directions, PrecisionKind
    for (c, v) in [("GC_REF_MPFR", 0), ("GC_REF_F32", 1), ("GC_REF_F64", 2), ("GC_REF_AUTO", 3),
                   ("GC_FMT_TEXT", 0), ("GC_FMT_JSON", 1), ("GC_FMT_MARKDOWN", 2), ("GC_FMT_TAP", 3),
                   ("GC_DIR_ALL", 0), ("GC_DIR_RANDOM", 1), ("GC_DIR_LIST", 2),
                   ("GC_PREC_STORAGE", 0), ("GC_PREC_ARITHMETIC", 1),
                   ("GC_PREC_APPROXIMATION", 2)].iter() {
        r.push((c.to_string(), c.to_string(), *v));
    }
    r
}

fn include_dirs() -> Vec<PathBuf> {
    match std::env::var("GRADCHECK_INCLUDE_DIRS") {
        Ok(s) if !s.is_empty() => s.split(':').map(PathBuf::from).collect(),
        _ => vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../lib")],
    }
}

fn header() -> PathBuf {
    let dirs = include_dirs();
    for d in &dirs {
        let h = d.join("gradcheck.h");
        if h.is_file() {
            return h;
        }
    }
    panic!("gradcheck.h is not in {:?}: set GRADCHECK_INCLUDE_DIRS", dirs);
}

#[test]
fn layouts_and_constants_match_the_header() {
    let h = header();
    let rows = rows();
    let mut c = String::from("#include <stddef.h>\n#include <stdio.h>\n#include <gradcheck.h>\nint main (void)\n{\n");
    for (k, expr, _) in &rows {
        c.push_str(&format!("  printf (\"%s\\t%lu\\n\", \"{}\", (unsigned long) ({}));\n", k, expr));
    }
    c.push_str("  return 0;\n}\n");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    for d in include_dirs() {
        cmd.arg(format!("-I{}", d.display()));
    }
    let out = cmd.arg("-o").arg(&exe).arg(&src).output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {:?}: {} (set CC)", cc, e));
    assert!(out.status.success(), "{} cannot compile a program against {}:\n{}", cc, h.display(),
            String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let c_side: BTreeMap<String, usize> = String::from_utf8(out.stdout).unwrap().lines()
        .map(|l| { let mut p = l.split('\t'); (p.next().unwrap().to_string(), p.next().unwrap().parse().unwrap()) })
        .collect();
    let mut bad = Vec::new();
    for (k, _, v) in &rows {
        if c_side[k] != *v {
            bad.push(format!("{}: header {}, src/ffi.rs {}", k, c_side[k], v));
        }
    }
    assert!(bad.is_empty(), "src/ffi.rs is out of step with {}:\n{}", h.display(), bad.join("\n"));
    assert!(rows.len() > 300, "{} rows compared", rows.len());
}

/// The prototypes of gradcheck.h, comments stripped: name -> arity.
fn prototypes() -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(header()).unwrap();
    let mut code = String::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("/*") {
        code.push_str(&rest[..i]);
        let j = rest[i..].find("*/").expect("a closed comment");
        rest = &rest[i + j + 2..];
    }
    code.push_str(rest);
    let mut map = BTreeMap::new();
    let mut i = 0;
    while let Some(k) = code[i..].find("gc_") {
        let start = i + k;
        let name: String = code[start..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let after = code[start + name.len()..].trim_start();
        let before = code[..start].trim_end();
        if after.starts_with('(') && !before.ends_with("(*") && !before.ends_with('(') {
            let close = after.find(')').unwrap();
            let params = &after[1..close];
            let tail = after[close + 1..].trim_start();
            if tail.starts_with(';') {
                let n = if params.trim() == "void" { 0 } else { params.split(',').count() };
                map.insert(name.clone(), n);
            }
        }
        i = start + name.len().max(1);
    }
    map
}

#[test]
fn prototypes_match_the_header() {
    use std::os::raw::c_void;
    // each declaration of src/ffi.rs, coerced to a pointer of its arity
    // (a compile error when the extern block changes), against the header
    let declared: &[(&str, usize, *const c_void)] = &[
        ("gc_strerror", 1, ffi::gc_strerror as unsafe extern "C" fn(_) -> _ as *const c_void),
        ("gc_verdict_name", 1, ffi::gc_verdict_name as unsafe extern "C" fn(_) -> _ as *const c_void),
        ("gc_exit_status", 2, ffi::gc_exit_status as unsafe extern "C" fn(_, _) -> _ as *const c_void),
        ("gc_reference_name", 1, ffi::gc_reference_name as unsafe extern "C" fn(_) -> _ as *const c_void),
        ("gc_options_init", 1, ffi::gc_options_init as unsafe extern "C" fn(_) as *const c_void),
        ("gc_check", 4, ffi::gc_check as unsafe extern "C" fn(_, _, _, _) -> _ as *const c_void),
        ("gc_result_free", 1, ffi::gc_result_free as unsafe extern "C" fn(_) as *const c_void),
        ("gc_report", 2, ffi::gc_report as unsafe extern "C" fn(_, _) -> _ as *const c_void),
        ("gc_derivation", 3, ffi::gc_derivation as unsafe extern "C" fn(_, _, _) -> _ as *const c_void),
        ("gc_param_name", 4, ffi::gc_param_name as unsafe extern "C" fn(_, _, _, _) -> _ as *const c_void),
    ];
    let protos = prototypes();
    assert!(protos.len() > 20, "the header's prototypes were read: {:?}", protos);
    for (name, arity, p) in declared {
        assert!(!p.is_null());
        match protos.get(*name) {
            Some(n) => assert_eq!(n, arity, "{}: {} parameters in gradcheck.h, {} in src/ffi.rs", name, n, arity),
            None => panic!("{} is not declared in gradcheck.h", name),
        }
    }
    // the ABI the crate's gc_model mirrors is the header's current one:
    // checked in layouts_and_constants_match_the_header (GC_MODEL_ABI)
}
