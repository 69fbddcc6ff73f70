#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""python_side.py -- make bench's Python side-by-side table: custom torch
ops (bench/python_ops.py), each correct and with its bugs, checked by
torch.autograd.gradcheck in float32 with its defaults, in float64 (full
Jacobian), in float64 fast mode, and by gradcheck.torch.check_function in
float32 (the op as shipped; its default, screened directions, manual
"Screening"; every coordinate; every coordinate without the twin), in one
run: false alarms, catches and wall time per cell.

  python_side.py OUTDIR [REPS]

Each cell runs REPS times (default 3), the cells interleaved rep by rep;
its time is the median wall-clock time of the check call, on one torch
thread (torch.set_num_threads(1)) for every checker.  Before anything is
timed, every op's forward is compared with plain torch's (python_ops'
reference) in float64 and every bug's gradient with autograd's: the table
states by how much each bug changes the gradient (relative 2-norm over all
inputs, with a fixed cotangent), so that a miss is a miss of a real
change.  Writes OUTDIR/python-side.json (every cell) and
OUTDIR/python-side.md (the tables report.md includes).
"""

import collections
import json
import os
import platform
import statistics
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_ops as P                                  # noqa: E402
from gradcheck import CheckError, Verdict               # noqa: E402
from gradcheck.torch import check_function              # noqa: E402

CHECKERS = ["torch-f32", "torch-f64", "torch-f64-fast", "gradcheck-f32",
            "gradcheck-f32-all", "gradcheck-f32-notwin"]
HEAD = {"torch-f32": "torch f32 (defaults)",
        "torch-f64": "torch f64 (full)",
        "torch-f64-fast": "torch f64 fast_mode",
        "gradcheck-f32": "gradcheck f32 (default: screened)",
        "gradcheck-f32-all": "gradcheck f32 (all coordinates)",
        "gradcheck-f32-notwin": "gradcheck f32 (all coordinates, twin=False)"}
OPTIONS = {"gradcheck-f32": {},
           "gradcheck-f32-all": {"directions": "all"},
           "gradcheck-f32-notwin": {"directions": "all", "twin": False}}


def bug_size(name, bug):
    make, inputs, ref = P.OPS[name]
    xs = [t.requires_grad_() for t in inputs(torch.float64)]
    out = ref(*xs)
    c = torch.randn(out.shape, dtype=torch.float64,
                    generator=torch.Generator().manual_seed(0))
    gt = torch.autograd.grad((out * c).sum(), xs)
    xs2 = [t.detach().clone().requires_grad_() for t in xs]
    o = make(bug).apply(*xs2)
    if not torch.allclose(o, out.detach(), rtol=1e-12, atol=1e-12):
        sys.exit("python_side.py: %s: the op's forward is not plain torch's"
                 % name)
    g = torch.autograd.grad((o * c).sum(), xs2)
    num = sum(((a - b) ** 2).sum() for a, b in zip(g, gt)) ** 0.5
    den = sum((b ** 2).sum() for b in gt) ** 0.5
    return float(num / den)


def run_cell(name, bug, checker):
    make, inputs, _ = P.OPS[name]
    op = make(bug)
    if checker.startswith("gradcheck-f32"):
        ins = inputs(torch.float32)
        kw = OPTIONS[checker]
        t0 = time.perf_counter()
        try:
            r = check_function(op.apply, *ins, **kw)
            out = str(r.verdict)
            extra = {"n_failed": r.n_failed,
                     "n_directions": len(r.directions),
                     "n_inconclusive": r.n_inconclusive,
                     "resolution_median": float(statistics.median(
                         r.directions.resolution)),
                     "diagnosis": r.json["diagnosis"]["kind"]}
        except CheckError as e:
            out, extra = "error", {"error": str(e)}
        return out, time.perf_counter() - t0, extra
    dt = torch.float32 if checker == "torch-f32" else torch.float64
    ins = [t.requires_grad_() for t in inputs(dt)]
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = torch.autograd.gradcheck(
                op.apply, ins, raise_exception=False,
                fast_mode=checker == "torch-f64-fast")
        out, extra = ("pass" if ok else "fail"), {}
    except Exception as e:              # noqa: BLE001 -- a cell's outcome
        out, extra = "error", {"error": "%s: %s" % (type(e).__name__, e)}
    return out, time.perf_counter() - t0, extra


def forward_calls(name):
    """The correct op's forward calls per dtype in one untimed check by
    gradcheck (float32 op, float64 reference and twin; its default and
    every coordinate) and by torch.autograd.gradcheck in float64: what a
    check's time is made of, per coordinate."""
    make, inputs, _ = P.OPS[name]
    op = make(None)
    cnt = collections.Counter()

    def counted(*a):
        cnt[str(a[0].dtype).replace("torch.", "")] += 1
        return op.apply(*a)
    out = {}
    for ch in ("gradcheck-f32", "gradcheck-f32-all"):
        check_function(counted, *inputs(torch.float32), **OPTIONS[ch])
        out[ch] = dict(cnt)
        cnt.clear()
    ins = [t.requires_grad_() for t in inputs(torch.float64)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.autograd.gradcheck(counted, ins, raise_exception=False)
    out["torch-f64"] = dict(cnt)
    return out


def main():
    outdir = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.set_num_threads(1)
    cells = {}
    sizes = {}
    for name in P.OPS:
        for bug in [None] + P.BUGS[name]:
            sizes[name, bug] = bug_size(name, bug)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for rep in range(reps):
        for name in P.OPS:
            for bug in [None] + P.BUGS[name]:
                for ch in CHECKERS:
                    out, sec, extra = run_cell(name, bug, ch)
                    c = cells.setdefault((name, bug, ch), {
                        "op": name, "bug": bug or "none", "checker": ch,
                        "outcomes": [], "seconds": [],
                        "gradient_change": sizes[name, bug]})
                    c["outcomes"].append(out)
                    c["seconds"].append(sec)
                    c.update(extra)
    for c in cells.values():
        c["outcome"] = c["outcomes"][0]
        c["stable"] = len(set(c["outcomes"])) == 1
        c["median_s"] = statistics.median(c["seconds"])
    n = {name: sum(t.numel() for t in P.OPS[name][1](torch.float32))
         for name in P.OPS}
    calls = {name: forward_calls(name) for name in P.OPS}
    info = {"started": started, "reps": reps, "torch": torch.__version__,
            "python": platform.python_version(), "machine": platform.machine(),
            "parameters": n, "forward_calls": calls,
            "cells": list(cells.values())}
    with open(os.path.join(outdir, "python-side.json"), "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    with open(os.path.join(outdir, "python-side.md"), "w") as f:
        f.write(markdown(info, cells, n, calls))
    print("python_side.py: wrote %s/python-side.json and python-side.md"
          % outdir)


def markdown(info, cells, n, calls):
    L = []
    w = L.append
    w("### From Python: custom torch ops, side by side with "
      "torch.autograd.gradcheck")
    w("")
    w("%d custom torch.autograd.Functions with hand-written backwards "
      "(bench/python_ops.py: %s), each correct and with its realistic bugs "
      "(and on every op a x(1 + 1e-3) and a x(1 + 1e-6) error on the first "
      "input's gradient), checked by "
      "torch.autograd.gradcheck (float32 with its defaults, float64, float64 "
      "fast_mode) and by gradcheck.torch.check_function in float32, the op "
      "as shipped (its backward in float32; the same op in float64 as the "
      "reference forward and twin): with its defaults (screened directions: "
      "8 random directions within each input tensor of more than 8 "
      "elements, the others' coordinates, then every coordinate of a "
      "tensor where one did not pass or none resolved finely enough; "
      "manual: \"Screening\"), over every coordinate, and over every "
      "coordinate without the twin.  One run, %s, torch %s, 1 thread, %d "
      "reps per cell interleaved; times are medians of the check call's wall "
      "clock.  Bug size: the relative 2-norm change of the gradient against "
      "autograd's of plain torch in float64 (python_side.py)."
      % (len(P.OPS), ", ".join(P.OPS), info["started"], info["torch"],
         info["reps"]))
    w("")
    w("| op (n) | bug | bug size | " + " | ".join(HEAD[c] for c in CHECKERS)
      + " |")
    w("|---|---|---|" + "---|" * len(CHECKERS))
    for name in P.OPS:
        for bug in [None] + P.BUGS[name]:
            row = []
            for ch in CHECKERS:
                c = cells[name, bug, ch]
                o = c["outcome"] + ("" if c["stable"] else "*")
                if bug is None and c["outcome"] != "pass":
                    o = "**%s**" % o
                if bug is not None and c["outcome"] == "pass":
                    o = "**pass**"
                row.append("%s %.3g s" % (o, c["median_s"]))
            w("| %s (%d) | %s | %.2g | %s |" % (
                name, n[name], bug or "none (correct)",
                cells[name, bug, CHECKERS[0]]["gradient_change"],
                " | ".join(row)))
    w("")
    w("Per checker: false alarms (the correct op not passed), catches (a "
      "bug failed), inconclusive (neither; gradcheck only), misses (a bug "
      "passed; of them, in parentheses, bugs torch f64 full catches), and "
      "the time of its check of each op (the correct op's cell; of every "
      "cell, median) over torch f64 full's in the same run.")
    w("")
    w("| checker | false alarms | catches | inconclusive | misses | "
      "time / torch f64 full, correct ops (%s) | median, correct ops | "
      "median, every cell |" % ", ".join(P.OPS))
    w("|---|---|---|---|---|---|---|---|")
    for ch in CHECKERS:
        fa = sum(cells[nm, None, ch]["outcome"] not in ("pass",)
                 for nm in P.OPS)
        caught = inc = miss = total = miss_full = 0
        for nm in P.OPS:
            for bug in P.BUGS[nm]:
                o = cells[nm, bug, ch]["outcome"]
                total += 1
                caught += o in ("fail", "precision", "error")
                inc += o == "inconclusive"
                miss += o == "pass"
                miss_full += (o != "fail" and cells[nm, bug, "torch-f64"]
                              ["outcome"] == "fail")
        rs = [cells[nm, None, ch]["median_s"]
              / cells[nm, None, "torch-f64"]["median_s"] for nm in P.OPS]
        every = [cells[nm, b, ch]["median_s"]
                 / cells[nm, b, "torch-f64"]["median_s"]
                 for nm in P.OPS for b in [None] + P.BUGS[nm]]
        w("| %s | %d of %d | %d of %d | %d | %d (%d) | %s | %.2f | %.2f |" % (
            HEAD[ch], fa, len(P.OPS), caught, total, inc, miss, miss_full,
            ", ".join("%.2f" % x for x in rs), statistics.median(rs),
            statistics.median(every)))
    w("")
    per = [(calls[nm]["gradcheck-f32"].get("float64", 0) / n[nm],
            calls[nm]["gradcheck-f32-all"].get("float64", 0) / n[nm],
            calls[nm]["torch-f64"].get("float64", 0) / n[nm]) for nm in P.OPS]
    w("Calls of the op's float64 forward per coordinate in one untimed "
      "check of the correct op (%s; the centre's few "
      "calls and the twin's backward included): gradcheck f32's default %s; "
      "every coordinate %s; torch f64 full %s.  Per direction gradcheck's "
      "are the stencil's four "
      "(x +- h, "
      "x +- 2h: D(h), the truncation term, the kink estimate) and "
      "Richardson's six, eight where its step doubles (x +- h', +- 2h', "
      "+- 4h', +- 8h', h' = 2^11 h: the twin's R(h) and its terms) where "
      "D(h)'s own terms exceed one f32 rounding of it (manual: "
      "\"Richardson's stencil\"), every "
      "one a number of the report (manual: \"Python side by side\")."
      % (", ".join(P.OPS), ", ".join("%.2f" % a for a, _, _ in per),
         ", ".join("%.2f" % b for _, b, _ in per),
         ", ".join("%.2f" % c for _, _, c in per)))
    w("")
    w("An outcome marked * differed between reps (the first is shown).  "
      "torch's f32 false alarms are its defaults (eps 1e-6, atol 1e-5, rtol "
      "1e-3) meeting float32 rounding; gradcheck's bar is derived from the "
      "same rounding (manual: \"Deriving the pass bar\").")
    w("")
    return "\n".join(L)


if __name__ == "__main__":
    main()
