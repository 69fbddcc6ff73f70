// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! Link libgradcheck: from the directory in GRADCHECK_LIB_DIR when it is
//! set (tests/rust.sh points it at the in-tree lib/.libs), else from what
//! `pkg-config --libs gradcheck` names (an installed gradcheck).  The
//! directory is also written into the binaries' rpath, so that tests and
//! examples find the same library at run time without LD_LIBRARY_PATH.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=GRADCHECK_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");
    let mut dirs: Vec<String> = Vec::new();
    match env::var("GRADCHECK_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => dirs.push(dir),
        _ => {
            let pc = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
            let out = Command::new(&pc).args(&["--libs", "gradcheck"]).output();
            match out {
                Ok(o) if o.status.success() => {
                    let text = String::from_utf8_lossy(&o.stdout).to_string();
                    for word in text.split_whitespace() {
                        if let Some(d) = word.strip_prefix("-L") {
                            dirs.push(d.to_string());
                        }
                    }
                }
                Ok(o) => panic!(
                    "gradcheck: `{} --libs gradcheck` failed ({}): {}\n\
                     set GRADCHECK_LIB_DIR to the directory holding libgradcheck.so, \
                     or PKG_CONFIG_PATH to the one holding gradcheck.pc",
                    pc,
                    o.status,
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
                Err(e) => panic!(
                    "gradcheck: cannot run `{}` ({}); set GRADCHECK_LIB_DIR to the \
                     directory holding libgradcheck.so",
                    pc, e
                ),
            }
        }
    }
    for d in &dirs {
        println!("cargo:rustc-link-search=native={}", d);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", d);
    }
    println!("cargo:rustc-link-lib=dylib=gradcheck");
}
