// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! Bad input: closures that return the wrong length, panic, return NaN or
//! are not functions of their input when called from several threads; bad
//! arguments.  Each gives a clear error (or the library's verdict), never
//! undefined behaviour.
use gradcheck::{
    assert_gradient, check, CallbackFailure, Directions, Error, Format, Model, Options, Status,
    Verdict,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const N: usize = 6;

fn x() -> Vec<f32> {
    (0..N).map(|i| i as f32 * 0.3 - 0.8).collect()
}

/// sum tanh(x_i): a correct model with an f64 forward.
fn tanh_model() -> Model {
    Model::new(
        "tanh-sum",
        N,
        |x: &[f32]| x.iter().map(|v| v.tanh()).sum(),
        |x: &[f32]| x.iter().map(|v| 1.0 - v.tanh() * v.tanh()).collect(),
    )
    .loss_f64(|x: &[f64]| x.iter().map(|v| v.tanh()).sum())
    .depths(N + 2, 4)
}

#[test]
fn a_correct_model_passes() {
    let r = assert_gradient!(tanh_model(), x());
    assert_eq!(r.verdict(), Verdict::Pass);
    assert_eq!(r.n(), N);
    assert_eq!(r.reference(), "f64");
    // the command's exit status for a pass (manual: "Exit status")
    assert_eq!(r.exit_status(), 0);
}

#[test]
fn a_wrong_gradient_fails() {
    let m = Model::new(
        "tanh-wrong",
        N,
        |x: &[f32]| x.iter().map(|v| v.tanh()).sum(),
        |x: &[f32]| x.iter().map(|v| 1.0 - v.tanh()).collect(),
    )
    .loss_f64(|x: &[f64]| x.iter().map(|v| v.tanh()).sum());
    let r = check(&m, &x(), &Options::default()).unwrap();
    assert_eq!(r.verdict(), Verdict::Fail);
    assert!(!r.passed());
    // the command's exit status for a failure (manual: "Exit status")
    assert_eq!(r.exit_status(), 1);
}

#[test]
fn a_gradient_of_the_wrong_length_is_a_callback_error() {
    let m = Model::new("short", N, |x: &[f32]| x.iter().sum(), |x: &[f32]| vec![1.0; x.len() - 1]);
    match check(&m, &x(), &Options::default()) {
        Err(Error::Callback { callback, failure, .. }) => {
            assert_eq!(callback, "grad");
            assert_eq!(failure, CallbackFailure::WrongLength { got: N - 1, expected: N });
        }
        other => panic!("expected a callback error, got {:?}", other.map(|r| r.verdict())),
    }
    let m = tanh_model().grad_f64(|x: &[f64]| vec![0.0; x.len() + 3]);
    match check(&m, &x(), &Options::default()) {
        Err(e @ Error::Callback { .. }) => {
            assert_eq!(e.status(), Status::Callback);
            let s = e.to_string();
            assert!(s.contains("grad_f64") && s.contains("returned 9 elements"), "{}", s);
        }
        other => panic!("expected a callback error, got {:?}", other.map(|r| r.verdict())),
    }
}

#[test]
fn a_panic_is_caught_at_the_boundary() {
    let m = Model::new("panics", N, |x: &[f32]| x.iter().sum(), |_: &[f32]| -> Vec<f32> {
        panic!("the backward's own panic")
    });
    match check(&m, &x(), &Options::default()) {
        Err(Error::Callback { callback, failure: CallbackFailure::Panic(msg), .. }) => {
            assert_eq!(callback, "grad");
            assert_eq!(msg, "the backward's own panic");
        }
        other => panic!("expected a caught panic, got {:?}", other.map(|r| r.verdict())),
    }
    let m = tanh_model().loss_f64(|_: &[f64]| -> f64 { panic!("formatted {}", 42) });
    match check(&m, &x(), &Options::default()) {
        Err(Error::Callback { callback, failure: CallbackFailure::Panic(msg), .. }) => {
            assert_eq!(callback, "loss_f64");
            assert_eq!(msg, "formatted 42");
        }
        other => panic!("expected a caught panic, got {:?}", other.map(|r| r.verdict())),
    }
}

#[test]
fn panics_on_several_threads_are_caught_and_counted() {
    let m = Model::new("panics-mt", N, |x: &[f32]| x.iter().sum(), |_: &[f32]| -> Vec<f32> {
        panic!("every call")
    })
    .loss_f64(|x: &[f64]| x.iter().sum());
    let opts = Options { threads: 4, ..Options::default() };
    match check(&m, &x(), &opts) {
        Err(Error::Callback { failed_calls, failure: CallbackFailure::Panic(_), .. }) => {
            assert!(failed_calls >= 1)
        }
        other => panic!("expected a caught panic, got {:?}", other.map(|r| r.verdict())),
    }
}

#[test]
fn nan_is_the_library_s_nonfinite_error() {
    let m = Model::new("nan-loss", N, |_: &[f32]| f32::NAN, |x: &[f32]| vec![1.0; x.len()]);
    match check(&m, &x(), &Options::default()) {
        Err(Error::Library { status, detail, .. }) => {
            assert_eq!(status, Status::NonFinite);
            assert!(!detail.is_empty(), "the library says where");
        }
        other => panic!("expected GC_ENONFINITE, got {:?}", other.map(|r| r.verdict())),
    }
    let m = tanh_model().grad_f64(|x: &[f64]| vec![f64::NAN; x.len()]);
    let e = check(&m, &x(), &Options::default()).map(|r| r.verdict()).unwrap_err();
    assert_eq!(e.status(), Status::NonFinite, "{}", e);
}

#[test]
fn a_closure_that_is_not_a_function_across_threads_is_nondeterministic() {
    // the gradient drifts with every call: different bits for the same x
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let m = Model::new(
        "drifting",
        N,
        |x: &[f32]| x.iter().map(|v| v * v).sum(),
        move |x: &[f32]| {
            let k = c.fetch_add(1, Ordering::SeqCst) as f32;
            x.iter().map(|v| 2.0 * v + k * 1e-3).collect()
        },
    )
    .loss_f64(|x: &[f64]| x.iter().map(|v| v * v).sum());
    let opts = Options { threads: 4, ..Options::default() };
    let r = check(&m, &x(), &opts).expect("a verdict");
    assert_eq!(r.verdict(), Verdict::NonDeterministic, "{}", r);
    assert!(calls.load(Ordering::SeqCst) > 1);
    let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert_gradient!(m, x(), opts);
    }))
    .expect_err("assert_gradient! fails on anything but a pass");
    let msg = e.downcast_ref::<String>().unwrap();
    assert!(msg.contains("non-deterministic") || msg.contains("nondeterministic"), "{}", msg);
}

#[test]
fn bad_arguments_are_errors() {
    let m = tanh_model();
    match check(&m, &x()[..N - 1], &Options::default()) {
        Err(Error::Argument(s)) => assert!(s.contains("5 elements") && s.contains("n = 6"), "{}", s),
        other => panic!("expected an argument error, got {:?}", other.map(|r| r.verdict())),
    }
    let m = Model::new("nul\0name", N, |x: &[f32]| x.iter().sum(), |x: &[f32]| vec![1.0; x.len()]);
    assert!(matches!(check(&m, &x(), &Options::default()), Err(Error::Argument(_))));
    let m = tanh_model().block("w", 0, &[1, 1, 1, 1, 1, 1, N]);
    assert!(matches!(check(&m, &x(), &Options::default()), Err(Error::Argument(_))));
    // the library's own refusals
    let m = Model::new("empty", 0, |_: &[f32]| 0.0, |_: &[f32]| Vec::new());
    assert_eq!(check(&m, &[], &Options::default()).unwrap_err().status(), Status::Empty);
    let m = tanh_model().block("w", 0, &[N - 1]);
    assert_eq!(check(&m, &x(), &Options::default()).unwrap_err().status(), Status::Inval);
    let opts = Options { directions: Directions::List(vec![N]), ..Options::default() };
    assert_eq!(check(&tanh_model(), &x(), &opts).unwrap_err().status(), Status::Direction);
    let opts = Options { false_alarm: 2.0, ..Options::default() };
    assert_eq!(check(&tanh_model(), &x(), &opts).unwrap_err().status(), Status::Inval);
    let mut p = x();
    p[2] = f32::INFINITY;
    assert_eq!(check(&tanh_model(), &p, &Options::default()).unwrap_err().status(), Status::Point);
}

/// A check that gives no verdict has the exit status `gradcheck run`
/// gives the same stop (manual: "Exit status": a status other than
/// GC_OK decides alone): 2 for a refusal, 3 when memory runs out, 5 when
/// the model failed.
#[test]
fn an_error_has_the_command_s_exit_status() {
    // refused: an argument the crate cannot hand over, the library's own
    // refusals of the model, the options and the point
    let e = check(&tanh_model(), &x()[..N - 1], &Options::default()).unwrap_err();
    assert!(matches!(e, Error::Argument(_)));
    assert_eq!(e.exit_status(), 2, "{}", e);
    let m = Model::new("empty", 0, |_: &[f32]| 0.0, |_: &[f32]| Vec::new());
    let e = check(&m, &[], &Options::default()).unwrap_err();
    assert_eq!((e.status(), e.exit_status()), (Status::Empty, 2), "{}", e);
    let opts = Options { directions: Directions::List(vec![N]), ..Options::default() };
    let e = check(&tanh_model(), &x(), &opts).unwrap_err();
    assert_eq!((e.status(), e.exit_status()), (Status::Direction, 2), "{}", e);
    let opts = Options { false_alarm: 2.0, ..Options::default() };
    let e = check(&tanh_model(), &x(), &opts).unwrap_err();
    assert_eq!((e.status(), e.exit_status()), (Status::Inval, 2), "{}", e);
    let mut p = x();
    p[2] = f32::NAN;
    let e = check(&tanh_model(), &p, &Options::default()).unwrap_err();
    assert_eq!((e.status(), e.exit_status()), (Status::Point, 2), "{}", e);
    // memory: directions that cannot be allocated
    let opts = Options { directions: Directions::Random(usize::MAX / 2), ..Options::default() };
    let e = check(&tanh_model(), &x(), &opts).unwrap_err();
    assert_eq!((e.status(), e.exit_status()), (Status::NoMem, 3), "{}", e);
    // the model failed: a NaN loss, a panicking closure (GC_ECALLBACK)
    let m = Model::new("nan-loss", N, |_: &[f32]| f32::NAN, |x: &[f32]| vec![1.0; x.len()]);
    let e = check(&m, &x(), &Options::default()).unwrap_err();
    assert_eq!((e.status(), e.exit_status()), (Status::NonFinite, 5), "{}", e);
    let m = Model::new("panics", N, |x: &[f32]| x.iter().sum(), |_: &[f32]| -> Vec<f32> {
        panic!("the backward's own panic")
    });
    let e = check(&m, &x(), &Options::default()).unwrap_err();
    assert!(matches!(e, Error::Callback { .. }));
    assert_eq!(e.exit_status(), 5, "{}", e);
}

#[test]
fn every_status_code_of_the_library_is_named() {
    for c in 0..gradcheck::ffi::GC_STATUS_COUNT {
        let s = Status::from_code(c);
        assert!(!matches!(s, Status::Other(_)), "code {} unmapped", c);
        assert_eq!(s.code(), c);
        assert_ne!(s.to_string(), "unknown status", "code {}", c);
    }
    let past = gradcheck::ffi::GC_STATUS_COUNT;
    assert_eq!(Status::from_code(past), Status::Other(past));
    for c in 0..7 {
        assert_eq!(Verdict::from_code(c).code(), c);
        assert!(!matches!(Verdict::from_code(c), Verdict::Other(_)));
    }
    assert_eq!(Verdict::Pass.to_string(), "pass");
}

#[test]
fn reports_in_every_format() {
    let m = tanh_model().block("w", 0, &[2, 3]);
    let r = check(&m, &x(), &Options::default()).unwrap();
    assert!(r.report(Format::Json).trim_start().starts_with('{'));
    let tap = r.report(Format::Tap);
    assert!(tap.contains(&format!("1..{}", N)), "{}", tap);
    assert!(!r.report(Format::Markdown).is_empty());
    assert!(r.to_string().contains("verdict: PASS"));
    assert!(r.derivation(0, Format::Text).is_some());
    assert!(r.derivation(N, Format::Text).is_none());
    assert_eq!(r.param_name(4), "w[1,1]");
    let d = &r.directions()[4];
    assert_eq!(d.index, Some(4));
    assert_eq!(d.terms.len(), 3);
    let sum: f64 = d.terms.iter().map(|t| t.value).sum();
    assert!((sum - d.bar).abs() <= 1e-12 * d.bar.abs().max(1e-300), "bar = sum of terms");
    // a report outlives the model and moves between threads
    drop(m);
    let h = std::thread::spawn(move || r.verdict());
    assert_eq!(h.join().unwrap(), Verdict::Pass);
}

#[test]
fn rounding_classes_reach_the_library() {
    use gradcheck::{Precision, PrecisionKind};
    let bf16 = |u: f64| Precision {
        name: "bf16 storage".to_string(),
        kind: PrecisionKind::Storage,
        unit_roundoff: u,
        underflow: 2f64.powi(-134),
        forward_depth: 1,
        backward_depth: 1,
        mode_reached: false,
    };
    // the library validates the class: u in (0, 1/2]
    let e = check(&tanh_model().precision(bf16(0.9)), &x(), &Options::default()).unwrap_err();
    assert_eq!(e.status(), Status::Inval, "{}", e);
    let r = check(&tanh_model().precision(bf16(2f64.powi(-8))), &x(), &Options::default()).unwrap();
    assert!(r.to_string().contains("bf16 storage"), "the class is in the report:\n{}", r);
}

#[test]
fn random_directions() {
    let opts = Options { directions: Directions::Random(3), seed: 7, ..Options::default() };
    let r = check(&tanh_model(), &x(), &opts).unwrap();
    let d = r.directions();
    assert_eq!(d.len(), 3);
    assert!(d.iter().all(|d| d.index.is_none()));
    let again = check(&tanh_model(), &x(), &opts).unwrap().directions();
    assert_eq!(d[0].analytic.to_bits(), again[0].analytic.to_bits(), "seeded");
}

/// Screened directions (manual: "Screening"): a correct model passes on
/// the first round alone (4 random directions over its 6 elements); a
/// wrong one takes every coordinate, which replace the random ones; 0 is
/// the library's refusal.
#[test]
fn screened_directions() {
    let opts = Options { directions: Directions::Screen(4), ..Options::default() };
    let r = check(&tanh_model(), &x(), &opts).unwrap();
    assert_eq!(r.verdict(), Verdict::Pass, "{}", r);
    let d = r.directions();
    assert_eq!(d.len(), 4);
    assert!(d.iter().all(|d| d.index.is_none()));
    let wrong = Model::new(
        "tanh-wrong",
        N,
        |x: &[f32]| x.iter().map(|v| v.tanh()).sum(),
        |x: &[f32]| x.iter().map(|v| 1.0 - v.tanh()).collect(),
    )
    .loss_f64(|x: &[f64]| x.iter().map(|v| v.tanh()).sum());
    let r = check(&wrong, &x(), &opts).unwrap();
    assert_eq!(r.verdict(), Verdict::Fail);
    let d = r.directions();
    assert_eq!(d.iter().filter(|d| d.index.is_some()).count(), N, "{}", r);
    assert!(r.to_string().contains("then every coordinate"), "{}", r);
    let opts = Options { directions: Directions::Screen(0), ..Options::default() };
    let e = check(&tanh_model(), &x(), &opts).unwrap_err();
    assert_eq!(e.status(), Status::Inval, "{}", e);
}

/// An error speaks to a Rust caller: the references as `Reference::*`,
/// not the command line's `--ref`; a closure's failure without the
/// trampolines' private return code; a status with nothing to add said
/// once (a new user's trial read "--ref f64 or --ref f32
/// (gc_options.reference)", "[loss_f32 returned 21075 ...]" and "the
/// model has no parameters (n = 0): the model has no parameters (n = 0)").
#[test]
fn errors_speak_rust() {
    let opts = Options { reference: Some(gradcheck::Reference::Mpfr), ..Options::default() };
    let e = check(&tanh_model(), &x(), &opts).unwrap_err();
    assert_eq!(e.status(), Status::NoRef);
    let s = e.to_string();
    assert!(s.contains("Reference::F64") && s.contains("Options::reference"), "{}", s);
    assert!(!s.contains("--ref"), "{}", s);
    // a panic away from the centre: the library saw the trampoline's code
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let m = Model::new(
        "panics-later",
        N,
        move |x: &[f32]| {
            if c.fetch_add(1, Ordering::SeqCst) > 0 {
                panic!("not at the centre")
            }
            x.iter().map(|v| v.tanh()).sum()
        },
        |x: &[f32]| x.iter().map(|v| 1.0 - v.tanh() * v.tanh()).collect(),
    );
    let e = check(&m, &x(), &Options::default()).unwrap_err();
    assert!(matches!(e, Error::Callback { .. }), "{}", e);
    let s = e.to_string();
    assert!(!s.contains("21075") && s.contains("not at the centre"), "{}", s);
    let m = Model::new("empty", 0, |_: &[f32]| 0.0, |_: &[f32]| Vec::new());
    let s = check(&m, &[], &Options::default()).unwrap_err().to_string();
    let msg = Status::Empty.to_string();
    assert_eq!(s.matches(msg.as_str()).count(), 1, "{}", s);
}
