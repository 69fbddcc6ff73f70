// SPDX-License-Identifier: LGPL-3.0-or-later
// Copyright (C) 2026 The gradcheck authors
//! The incident, in Rust: a chunked gated recurrence whose hand-written
//! backward reads a padded scratch (after the burn-gdn2 custom node of
//! incident 2026-10-02), and its mutants.
//!
//! Per step t, with a_t = exp(g_t) (g_t < 0: a decay), a K x V state
//! from a fixed initial state S_{-1}:
//!   S_t = a_t S_{t-1} + k_t v_t^T,   o_t = scale S_t^T q_t,
//!   L = sum_t sum_j w_{t,j} o_{t,j},   scale = K^-0.5,
//! w fixed (not a parameter).  The forward is the plain recurrence.  The
//! backward is chunked: the inputs are copied into a scratch of
//! ceil(T/BT) BT rows plus one guard row, zero-padded (g = 0, a = 1,
//! k = v = q = w = 0: the padding changes nothing), the states at the
//! chunk starts are kept, and each chunk, last first, recomputes its
//! states from its start and runs the adjoint recurrence
//!   dS_t = a_{t+1} dS_{t+1} + scale q_t w_t^T,
//!   dq_t = scale S_t w_t,  dk_t = dS_t v_t,  dv_t = dS_t^T k_t,
//!   dg_t = a_t <dS_t, S_{t-1}>.
//! One generic source over [`Real`] gives the f32 backward under test
//! and its f64 twin, and, on absolute values, the magnitude backward.
#![allow(dead_code)]

use std::ops::{Add, Mul, Sub};

/// Sequence length, chunk size (T not a multiple: the last chunk is
/// padded), key and value dimensions.
pub const T: usize = 7;
pub const BT: usize = 4;
pub const K: usize = 8;
pub const V: usize = 2;
/// Parameters: q [T,K], k [T,K], v [T,V], g [T].
pub const N: usize = T * (2 * K + V + 1);
const OQ: usize = 0;
const OK: usize = T * K;
const OV: usize = 2 * T * K;
const OG: usize = 2 * T * K + T * V;

/// The element types the same source is compiled for.
pub trait Real: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    fn zero() -> Self;
    fn from_f64(v: f64) -> Self;
    fn exp(self) -> Self;
    fn abs(self) -> Self;
}
impl Real for f32 {
    fn zero() -> f32 { 0.0 }
    fn from_f64(v: f64) -> f32 { v as f32 }
    fn exp(self) -> f32 { f32::exp(self) }
    fn abs(self) -> f32 { f32::abs(self) }
}
impl Real for f64 {
    fn zero() -> f64 { 0.0 }
    fn from_f64(v: f64) -> f64 { v }
    fn exp(self) -> f64 { f64::exp(self) }
    fn abs(self) -> f64 { f64::abs(self) }
}

/// The backward as written, and the bugs a padded-scratch backward can
/// have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutant {
    /// The correct backward
    None,
    /// The scratch is filled for whole chunks only: the last, partial
    /// chunk's real rows read the padding's zeros
    ZeroPadding,
    /// The backward's window of each chunk starts one row on
    ShiftedWindow,
    /// dq without the read scale K^-0.5
    MissingScale,
    /// dg reads the state after the step, S_t, for S_{t-1}
    GateState,
}

/// All mutants (not None).
pub const MUTANTS: [Mutant; 4] = [
    Mutant::ZeroPadding,
    Mutant::ShiftedWindow,
    Mutant::MissingScale,
    Mutant::GateState,
];

/// The loss weights w_{t,j}: exact in f32 and f64, none zero (a zero
/// weight on the last step makes its dv exactly 0: a direction no bar
/// can judge, inconclusive without the twin).
fn weight<R: Real>(t: usize, j: usize) -> R {
    R::from_f64(((t * V + j) % 5) as f64 * 0.25 - 0.625)
}

/// The initial state S_{-1} (a constant, as FLA's initial_state): not
/// zero, else dg_0 = a_0 <dS_0, S_{-1}> would be exactly 0.
fn initial_state<R: Real>() -> Vec<R> {
    (0..K * V).map(|e| R::from_f64((e % 3) as f64 * 0.25 - 0.125)).collect()
}

fn scale<R: Real>() -> R {
    R::from_f64(1.0 / (K as f64).sqrt())
}

/// The loss (abs: every input and weight by its absolute value, the
/// magnitude of the loss's computation).
pub fn forward<R: Real>(x: &[R], abs: bool) -> R {
    let f = |v: R| if abs { v.abs() } else { v };
    let mut s: Vec<R> = initial_state::<R>().into_iter().map(f).collect();
    let mut loss = R::zero();
    for t in 0..T {
        let a = x[OG + t].exp();
        for i in 0..K {
            for j in 0..V {
                s[i * V + j] = a * s[i * V + j] + f(x[OK + t * K + i]) * f(x[OV + t * V + j]);
            }
        }
        for j in 0..V {
            let mut o = R::zero();
            for i in 0..K {
                o = o + f(x[OQ + t * K + i]) * s[i * V + j];
            }
            loss = loss + f(weight::<R>(t, j)) * (scale::<R>() * o);
        }
    }
    loss
}

/// The chunked backward through a padded scratch (abs: on absolute
/// values, the magnitude backward).
pub fn backward<R: Real>(x: &[R], m: Mutant, abs: bool) -> Vec<R> {
    let f = |v: R| if abs { v.abs() } else { v };
    let nc = (T + BT - 1) / BT;
    let rows = nc * BT + 1; // the padding and one guard row
    let filled = if m == Mutant::ZeroPadding { (T / BT) * BT } else { T };
    // the scratch: q, k [rows, K], v, w [rows, V], a [rows]
    let mut sq = vec![R::zero(); rows * K];
    let mut sk = vec![R::zero(); rows * K];
    let mut sv = vec![R::zero(); rows * V];
    let mut sw = vec![R::zero(); rows * V];
    let mut sa = vec![R::from_f64(1.0); rows];
    for t in 0..filled {
        for i in 0..K {
            sq[t * K + i] = f(x[OQ + t * K + i]);
            sk[t * K + i] = f(x[OK + t * K + i]);
        }
        for j in 0..V {
            sv[t * V + j] = f(x[OV + t * V + j]);
            sw[t * V + j] = f(weight::<R>(t, j));
        }
        sa[t] = x[OG + t].exp();
    }
    // the states at the chunk starts
    let mut h = vec![R::zero(); (nc + 1) * K * V];
    for (e, v) in initial_state::<R>().into_iter().enumerate() {
        h[e] = f(v);
    }
    for c in 0..nc {
        let (prev, next) = h.split_at_mut((c + 1) * K * V);
        let st = &mut next[..K * V];
        st.copy_from_slice(&prev[c * K * V..]);
        for r in c * BT..(c + 1) * BT {
            for i in 0..K {
                for j in 0..V {
                    st[i * V + j] = sa[r] * st[i * V + j] + sk[r * K + i] * sv[r * V + j];
                }
            }
        }
    }
    let mut grad = vec![R::zero(); N];
    let sc = scale::<R>();
    let mut dnext = vec![R::zero(); K * V]; // a_{t+1} dS_{t+1}
    for c in (0..nc).rev() {
        let base = if m == Mutant::ShiftedWindow { c * BT + 1 } else { c * BT };
        // the chunk's states, S before row 0 first
        let mut states = vec![R::zero(); (BT + 1) * K * V];
        states[..K * V].copy_from_slice(&h[c * K * V..(c + 1) * K * V]);
        for l in 0..BT {
            let r = base + l;
            for i in 0..K {
                for j in 0..V {
                    states[(l + 1) * K * V + i * V + j] =
                        sa[r] * states[l * K * V + i * V + j] + sk[r * K + i] * sv[r * V + j];
                }
            }
        }
        for l in (0..BT).rev() {
            let r = base + l;
            let t = c * BT + l;
            let s_t = &states[(l + 1) * K * V..(l + 2) * K * V];
            let s_prev = if m == Mutant::GateState { s_t } else { &states[l * K * V..(l + 1) * K * V] };
            let mut ds = vec![R::zero(); K * V];
            for i in 0..K {
                for j in 0..V {
                    ds[i * V + j] = dnext[i * V + j] + sc * sq[r * K + i] * sw[r * V + j];
                }
            }
            if t < T {
                for i in 0..K {
                    let mut dq = R::zero();
                    let mut dk = R::zero();
                    for j in 0..V {
                        dq = dq + s_t[i * V + j] * sw[r * V + j];
                        dk = dk + ds[i * V + j] * sv[r * V + j];
                    }
                    grad[OQ + t * K + i] = if m == Mutant::MissingScale { dq } else { sc * dq };
                    grad[OK + t * K + i] = dk;
                }
                for j in 0..V {
                    let mut dv = R::zero();
                    for i in 0..K {
                        dv = dv + ds[i * V + j] * sk[r * K + i];
                    }
                    grad[OV + t * V + j] = dv;
                }
                let mut dot = R::zero();
                for e in 0..K * V {
                    dot = dot + ds[e] * s_prev[e];
                }
                grad[OG + t] = sa[r] * dot;
            }
            for e in 0..K * V {
                dnext[e] = sa[r] * ds[e];
            }
        }
    }
    grad
}

/// The accumulation depths, counted on the code above: the forward's
/// longest chain is the state's 2 roundings a step, o's K products and
/// sums, the scale and weight, and the loss's T V-term sum; the
/// backward's, dS's 3 a step over T steps after S's 2 a step, and dg's
/// K V-term dot product.
pub const FORWARD_DEPTH: usize = 2 * T + K + 3 + T * V + 1;
pub const BACKWARD_DEPTH: usize = 2 * T + 3 * T + K * V + 3;

/// The point: q, k, v in [-1, 1], g in [-0.6, -0.05] (decays), from a
/// fixed generator.
pub fn point() -> Vec<f32> {
    let mut s: u64 = 0x9e3779b97f4a7c15;
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64) / ((1u64 << 53) as f64)
    };
    let mut x = vec![0f32; N];
    for e in x.iter_mut().take(OG) {
        *e = (2.0 * next() - 1.0) as f32;
    }
    for e in x.iter_mut().skip(OG) {
        *e = (-0.05 - 0.55 * next()) as f32;
    }
    x
}

/// The model of `m` for gradcheck: f32 forward and backward, the f64
/// forward and twin (the same source), magnitudes, depths, blocks and K.
pub fn model(m: Mutant) -> gradcheck::Model {
    let name = format!("gated-chunked-{:?}", m);
    gradcheck::Model::new(&name, N, |x: &[f32]| forward(x, false), move |x: &[f32]| backward(x, m, false))
        .loss_f64(|x: &[f64]| forward(x, false))
        .grad_f64(move |x: &[f64]| backward(x, m, false))
        .grad_magnitude(move |x: &[f32]| backward(x, Mutant::None, true))
        .loss_magnitude(|x: &[f32]| forward(x, true))
        .depths(FORWARD_DEPTH, BACKWARD_DEPTH)
        .block("q", OQ, &[T, K])
        .block("k", OK, &[T, K])
        .block("v", OV, &[T, V])
        .block("g", OG, &[T])
        .constant("K", K as f64)
        .constant("BT", BT as f64)
}
