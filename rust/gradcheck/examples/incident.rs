// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! The incident, in Rust: check the padded-scratch backward of a chunked
//! gated recurrence, and each of its mutants, with the derived bar -- the
//! check its authors would have written instead of `REL_BAR = 0.25`.
//! Run: `cargo run --example incident` (exit 0 when the correct backward
//! passes and every mutant fails).
#[path = "../tests/gated/mod.rs"]
mod gated;

use gated::{model, point, Mutant, MUTANTS};
use gradcheck::{check, Options, Verdict};

fn main() {
    let x = point();
    let mut ok = true;
    for &m in [Mutant::None].iter().chain(MUTANTS.iter()) {
        match check(&model(m), &x, &Options::default()) {
            Ok(r) => {
                let want_pass = m == Mutant::None;
                println!("== {:?}: {} (worst nu {:.3e})", m, r.verdict(), r.worst_nu());
                if want_pass {
                    println!("{}", r);
                } else {
                    println!("   {}", r.diagnosis());
                }
                ok &= (r.verdict() == Verdict::Pass) == want_pass;
            }
            Err(e) => {
                println!("== {:?}: {}", m, e);
                ok = false;
            }
        }
    }
    std::process::exit(if ok { 0 } else { 1 });
}
