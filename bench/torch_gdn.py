#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""torch_gdn.py -- the built-in gdn model's loss, naive in torch float64, for
the side-by-side speed table of make bench (bench/run.sh speed).

The point is the one gradcheck itself checks: the tensors `gradcheck run gdn
--dump DIR` writes (q, k, v, g, beta_logit, S0 and the seeded cotangents
dO, dS_T, all f32), read as float64.  The function is the reference forward
of models/gdn.c (loss_f64, the naive recurrence of
shared/reference/models-kda-gdn.md section 2.3 with the op's own
normalisation and sigmoid):

    qn = q / sqrt(|q|^2 + eps), kn likewise (eps = 1e-6f, read as a double)
    beta = sigmoid(beta_logit)
    S <- exp(g_t) S;  e = beta_t (v_t - S^T kn_t);  S <- S + kn_t e^T
    o_t = K^-1/2 S^T qn_t
    L = sum_t <o_t, dO_t> + <S_T, dS_T>

vectorised over batch and heads, one Python step per time step (as FLA's
naive_recurrent_gated_delta_rule).  The shape keys NORM and SIGMOID are the
model's defaults (1, 1); the dump names the beta tensor beta_logit then.

Usage:
  torch_gdn.py DIR --loss [--check-loss L]   print the loss; with L (the
        loss_reference of gradcheck's JSON report at the same point),
        print both and exit 1 unless they agree to 1e-12 relative
  torch_gdn.py DIR --estimate                seconds a full gradcheck would
        take: 2n forwards (its numerical Jacobian) at the measured cost of one
  torch_gdn.py DIR --gradcheck full|fast     time torch.autograd.gradcheck
        (defaults; fast: fast_mode=True) on 1 thread; prints the result and
        the in-process seconds; exit 0 when it returns True, 1 otherwise

numpy reads the .npy files; torch is Debian's python3-torch.  Nothing here
is part of make check.
"""

import argparse
import os
import sys
import time

import numpy as np
import torch

EPS = float(np.float32(1e-6))   # GCM_L2_EPS, 1e-6f, as the f64 reference reads it


def load(d):
    names = ["q", "k", "v", "g", "beta_logit", "S0", "dO", "dS_T",
             "grad_q", "grad_k", "grad_v", "grad_g", "grad_beta_logit", "grad_S0"]
    for nm in names:
        if not os.path.exists(os.path.join(d, nm + ".npy")):
            sys.exit("torch_gdn.py: %s/%s.npy missing (not a dump of gdn with "
                     "SIGMOID=1?)" % (d, nm))
    with open(os.path.join(d, "manifest.txt")) as f:
        if "model gdn\n" not in f.read():
            sys.exit("torch_gdn.py: %s is not a dump of the gdn model" % d)
    t = {nm: torch.from_numpy(np.load(os.path.join(d, nm + ".npy")).astype(np.float64))
         for nm in names}
    return t


def make_loss(dO, dST, norm=True):
    K = dST.shape[2]
    scale = 1.0 / float(np.sqrt(K))

    def loss(q, k, v, g, b, S0):
        T = q.shape[1]
        if norm:
            q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + EPS)
            k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + EPS)
        beta = torch.sigmoid(b)
        S = S0
        L = torch.zeros((), dtype=torch.float64)
        for t in range(T):
            S = S * torch.exp(g[:, t])[..., None, None]
            kt = k[:, t]
            e = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhk,bhkv->bhv", kt, S))
            S = S + kt[..., :, None] * e[..., None, :]
            o = torch.einsum("bhk,bhkv->bhv", q[:, t], S)
            L = L + scale * (o * dO[:, t]).sum()
        return L + (S * dST).sum()

    return loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--loss", action="store_true")
    ap.add_argument("--check-loss", type=float)
    ap.add_argument("--estimate", action="store_true")
    ap.add_argument("--gradcheck", choices=["full", "fast"])
    a = ap.parse_args()
    torch.set_num_threads(1)
    t = load(a.dir)
    fn = make_loss(t["dO"], t["dS_T"])
    inputs = [t[nm] for nm in ["q", "k", "v", "g", "beta_logit", "S0"]]
    n = sum(x.numel() for x in inputs)
    if a.loss or a.check_loss is not None:
        with torch.no_grad():
            L = fn(*inputs).item()
        print("torch f64 loss %.17g (n %d)" % (L, n))
        # the gradient, against the f32 backward's in the same dump
        xs = [x.clone().requires_grad_(True) for x in inputs]
        gs = torch.autograd.grad(fn(*xs), xs)
        num = max((gt - t["grad_" + nm]).abs().max().item()
                  for gt, nm in zip(gs, ["q", "k", "v", "g", "beta_logit", "S0"]))
        den = max(gt.abs().max().item() for gt in gs)
        print("torch autograd gradient vs gradcheck's f32 backward: max |diff| / max |g| %.3g" % (num / den))
        if a.check_loss is not None:
            rel = abs(L - a.check_loss) / abs(a.check_loss)
            print("gradcheck reference loss %.17g, relative difference %.3g" % (a.check_loss, rel))
            if not rel <= 1e-12:
                print("torch_gdn.py: the torch loss differs from gradcheck's: "
                      "not the same function", file=sys.stderr)
                return 1
        return 0
    if a.estimate:
        # as gradcheck calls it: inputs that require grad, grad mode on (its
        # numerical Jacobian builds the graph too; under no_grad the
        # forward is about twice as fast and the estimate half the time)
        xs = [x.clone().requires_grad_(True) for x in inputs]
        fn(*xs)
        ts = []
        t_end = time.perf_counter() + 1.0
        while len(ts) < 5 or (len(ts) < 50 and time.perf_counter() < t_end):
            t0 = time.perf_counter()
            fn(*xs)
            ts.append(time.perf_counter() - t0)
        f = sorted(ts)[len(ts) // 2]
        print("n %d forward_s %.6g full_gradcheck_estimate_s %.6g" % (n, f, 2 * n * f))
        return 0
    if a.gradcheck:
        xs = [x.clone().requires_grad_(True) for x in inputs]
        t0 = time.perf_counter()
        try:
            ok = torch.autograd.gradcheck(fn, xs, fast_mode=(a.gradcheck == "fast"))
        except Exception as e:   # gradcheck raises on a mismatch by default
            ok = False
            print("torch gradcheck raised: %s" % str(e).splitlines()[0])
        s = time.perf_counter() - t0
        print("torch gradcheck %s n %d result %s in_process_s %.6g"
              % (a.gradcheck, n, ok, s))
        return 0 if ok else 1
    ap.error("one of --loss, --check-loss, --estimate, --gradcheck")


if __name__ == "__main__":
    sys.exit(main())
