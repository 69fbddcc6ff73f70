// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! README.md's Rust example (the block after `<!-- rust-example -->`), as
//! the body of main, verbatim: tests/readme.rs checks that they agree, and
//! tests/rust.sh runs it (a pass prints the text report).
fn main() {
use gradcheck::{assert_gradient, Model};
let model = Model::new("tanh2", 16,
    |x: &[f32]| x.iter().map(|v| v.tanh() * v.tanh()).sum(),  // the f32 forward
    |x: &[f32]| x.iter().map(|v| 2.0 * v.tanh() * (1.0 - v.tanh() * v.tanh())).collect())
    .loss_f64(|x: &[f64]| x.iter().map(|v| v.tanh() * v.tanh()).sum());  // same code, f64
let x: Vec<f32> = (0..16).map(|i| -2.0 + 4.0 * i as f32 / 15.0).collect();
println!("{}", assert_gradient!(model, x));  // panics with the report unless PASS
}
