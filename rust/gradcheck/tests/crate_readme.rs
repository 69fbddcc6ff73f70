// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! rust/gradcheck/README.md's test (the block after `<!-- crate-test -->`),
//! verbatim after this header, run as a test of its own; and a test that
//! the README's block is this file's body.
use gradcheck::{assert_gradient, Model};

// L(w) = sum_i tanh(w_i)^2 over a 4 x 4 tensor "w"; the second closure is
// the backward under test, the f64 closures the same code in f64 (the
// reference forward, and the twin of the backward, which lets the check
// judge the algorithm and the f32 arithmetic apart)
#[test]
fn tanh2_backward() {
    let model = Model::new("tanh2", 16,
        |x: &[f32]| x.iter().map(|v| v.tanh() * v.tanh()).sum(),
        |x: &[f32]| x.iter().map(|v| 2.0 * v.tanh() * (1.0 - v.tanh() * v.tanh())).collect())
        .loss_f64(|x: &[f64]| x.iter().map(|v| v.tanh() * v.tanh()).sum())
        .grad_f64(|x: &[f64]| x.iter().map(|v| 2.0 * v.tanh() * (1.0 - v.tanh() * v.tanh())).collect())
        .block("w", 0, &[4, 4]);
    let x: Vec<f32> = (0..16).map(|i| -2.0 + 4.0 * i as f32 / 15.0).collect();
    assert_gradient!(model, x);   // panics with the text report unless PASS
}

#[test]
fn the_crate_readme_block_is_this_file() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("the crate's README.md");
    let tag = "<!-- crate-test -->\n```rust\n";
    let start = readme.find(tag).expect("README.md has a crate-test block") + tag.len();
    let block = &readme[start..start + readme[start..].find("```").expect("a closed block")];
    let me = std::fs::read_to_string(dir.join("tests/crate_readme.rs")).unwrap();
    assert!(me.contains(block), "the crate README's block and tests/crate_readme.rs differ");
}
