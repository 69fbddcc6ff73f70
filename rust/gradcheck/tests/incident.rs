// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! The incident, in Rust: the test the authors of the padded-scratch
//! custom backward would have written instead of `REL_BAR = 0.25`.  The
//! bar of every direction is the library's, derived for this model at
//! this point; the correct backward passes, and every mutant -- the bugs
//! the incident's REL_BAR was meant to catch: the padding's zeros read for
//! real rows, a window shifted by one row, the missing read scale, the
//! gate's state off by one step -- fails.
mod gated;

use gated::{model, point, Mutant, MUTANTS};
use gradcheck::{assert_gradient, check, Options, Verdict};

#[test]
fn the_padded_scratch_backward_passes_the_derived_bar() {
    let x = point();
    let r = assert_gradient!(model(Mutant::None), x);
    // with the twin: the algorithm and the f32 arithmetic both judged
    let d = r.directions();
    assert_eq!(d.len(), gated::N);
    assert!(d.iter().all(|d| d.analytic_f64.is_finite()), "the twin judged every direction");
    assert!(d.iter().all(|d| d.nu <= 1.0 && d.bar > 0.0));
}

#[test]
fn it_passes_without_the_twin_and_in_parallel() {
    let x = point();
    let opts = Options { no_twin: true, threads: 3, ..Options::default() };
    let r = assert_gradient!(model(Mutant::None), x, opts);
    assert!(r.directions().iter().all(|d| d.analytic_f64.is_nan()), "no twin was used");
}

#[test]
fn every_mutant_fails() {
    let x = point();
    for &m in MUTANTS.iter() {
        for &no_twin in [false, true].iter() {
            let opts = Options { no_twin, ..Options::default() };
            let r = check(&model(m), &x, &opts).expect("the check runs to a verdict");
            assert_eq!(r.verdict(), Verdict::Fail, "mutant {:?} (no_twin {}):\n{}", m, no_twin, r);
            assert!(r.n_failed() > 0);
        }
    }
}

#[test]
fn assert_gradient_fails_a_mutant_with_the_report() {
    let x = point();
    let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert_gradient!(model(Mutant::ZeroPadding), x);
    }))
    .expect_err("assert_gradient! panics on a failing backward");
    let msg = e.downcast_ref::<String>().expect("a formatted message");
    assert!(msg.contains("verdict: FAIL"), "the text report is in the message: {}", msg);
}

#[test]
fn the_missing_scale_is_named_as_the_incident_named_it() {
    // incident 2026-10-02: "ratio 2.8284, K**-0.5 = 0.3536"
    let r = check(&model(Mutant::MissingScale), &point(), &Options::default()).unwrap();
    assert_eq!(r.verdict(), Verdict::Fail);
    assert!(r.diagnosis().contains("K^0.5"), "diagnosis: {}", r.diagnosis());
    let w = r.worst().expect("a worst direction");
    let name = r.param_name(r.directions()[w].index.expect("a coordinate"));
    assert!(name.starts_with("q["), "the failures are dq's: {}", name);
}
