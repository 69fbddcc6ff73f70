// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! README.md's Rust example is examples/readme.rs's main, verbatim (which
//! tests/rust.sh runs, and which must print a PASS).
use std::path::PathBuf;

#[test]
fn the_readme_example_is_examples_readme_rs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(dir.join("../../README.md")).expect("README.md beside rust/");
    let tag = "<!-- rust-example -->\n```rust\n";
    let start = readme.find(tag).expect("README.md has a rust-example block") + tag.len();
    let block = &readme[start..start + readme[start..].find("```").expect("a closed block")];
    let example = std::fs::read_to_string(dir.join("examples/readme.rs")).unwrap();
    let open = "fn main() {\n";
    let body = &example[example.find(open).unwrap() + open.len()..example.rfind("}\n").unwrap()];
    assert_eq!(block, body, "README.md's block and examples/readme.rs's main differ");
    assert!(block.contains("assert_gradient!"));
}
