#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""diagnosis.py -- the diagnosis table (issue 36): every mutant that
`gradcheck list` names, checked with its f64 twin and without
(`gradcheck run MODEL --mutant M --format json`), and the models of
tests/check_diagnosis_catalogue.c (their rows from GC_CATALOGUE_TSV), each
diagnosis kind classified against the mutant's known nature:

  right   the kind is one of those the bug's nature gives (below, with a
          one-line reason per mutant);
  partly  the unexplained kind ("logic") where a more specific one was
          expected, or the right kind missing a required word;
  wrong   another specific kind;
  n/a     the check passes (the mutant is below the resolution there, or
          does not touch the gradient, or a declared class covers it):
          nothing to diagnose;
  missed  the check passes where the bug should fail it.

Usage: bench/diagnosis.py [GRADCHECK [CATALOGUE_BINARY [OUT.md]]]
(defaults gradcheck/gradcheck, tests/check_diagnosis_catalogue,
bench/results/diagnosis.md; a TSV beside it).  BEFORE_GRADCHECK: another
build's gradcheck (the one before a change), run on the same mutants for a
"before" column; without it the committed table's column is kept (merged
by mutant and twin).  The catalogue's models cannot run there (their
kinds are new), and their column is what this change's author observed on
the commit before it (CATALOGUE_BEFORE).
"""

import json
import os
import subprocess
import sys
import tempfile

GRADCHECK = sys.argv[1] if len(sys.argv) > 1 else "gradcheck/gradcheck"
CATALOGUE = sys.argv[2] if len(sys.argv) > 2 else \
    "tests/check_diagnosis_catalogue"
OUT = sys.argv[3] if len(sys.argv) > 3 else "bench/results/diagnosis.md"

# model/mutant -> (kinds that are right with the twin, without it, reason)
# None: the check passes there by design (n/a).
EXPECT = {
    "gdn/scratch-zeros": ({"logic"}, {"logic"},
                          "zeros for saved states: missing terms, no "
                          "closed pattern"),
    "gdn/scratch-shift-chunk": ({"logic"}, {"logic"},
                                "the previous chunk's state: wrong terms, "
                                "not a shift of the gradient itself"),
    "gdn/scratch-shift-row": ({"logic"}, {"logic"},
                              "Vnew read one row on inside the backward: "
                              "wrong terms, not a shifted gradient"),
    "gdn/pad-leak": ({"logic", "axis-offset"}, {"logic", "axis-offset"},
                     "padding rows' gradients added into the last real "
                     "row: extra terms there"),
    "gdn/no-read-scale": ({"constant-factor"}, {"constant-factor"},
                          "dq without the read scale K^-0.5: factor "
                          "K^0.5"),
    "gdn/no-dg-cumsum": ({"logic"}, {"logic"},
                         "the reverse cumulative sum skipped: chunk "
                         "structure, no factor"),
    "gdn/dbeta-sign": ({"sign-flip"}, {"sign-flip"}, "dbeta negated"),
    "gdn/a-transposed": ({"logic"}, {"logic"},
                         "A for A^T in the WY backward: no closed pattern"),
    "gdn/dv-scale-1e-6": ({"constant-factor"}, None,
                          "dv x (1 + 1e-6): a factor the twin resolves, "
                          "below f32's resolution"),
    "gdn/ds-bf16": ({"precision"}, {"rounding-suspected", "rounding"},
                    "dS stored in bf16 in the f32 path: a precision loss, "
                    "rounding of 2^-8"),
    "gdn/jvp-no-dk": (None, None,
                      "a bug of the tangent (gradcheck jvp), not of the "
                      "gradient"),
    "kda/softplus-outside": ({"forward-mismatch"}, {"forward-mismatch"},
                             "forward and backward alike changed: the f32 "
                             "forward computes another function"),
    "kda/chunk-no-read-scale": ({"forward-mismatch"}, {"forward-mismatch"},
                                "forward and backward alike: another "
                                "function"),
    "kda/double-scale": ({"forward-mismatch"}, {"forward-mismatch"},
                         "forward and backward alike: another function"),
    "kda/gate-grad-no-sigmoid": ({"logic"}, {"logic"},
                                 "dg_raw without sigmoid(x): a per-element "
                                 "factor, no constant"),
    "kda/gva-no-group-sum": ({"logic"}, {"logic"},
                             "one value head for the group's sum: no "
                             "closed pattern"),
    "tanh-gemm/no-tanh-derivative": ({"logic"}, {"logic"},
                                     "1 - tanh^2 left out: a per-element "
                                     "factor"),
    "tanh-gemm/dw-twice": ({"constant-factor"}, {"constant-factor"},
                           "dW doubled"),
    "tanh-gemm/dx-zero": ({"zero-region"}, {"zero-region"}, "dX zero"),
    "tanh-gemm/dw-sign": ({"sign-flip"}, {"sign-flip"}, "dW negated"),
    "tanh-gemm/dw-scale-1e-6": ({"constant-factor"}, None,
                                "dW x (1 + 1e-6): below f32's resolution"),
    "tanh-gemm/dx-bf16-sum": ({"precision"}, {"rounding-suspected"},
                              "bf16 partial sums in the f32 path: a "
                              "precision loss"),
}

# tanh-gemm's tangent and HVP mutants leave the gradient alone.
for _m in ("jvp-no-dx", "hvp-no-second-order", "hvp-transposed",
           "hvp-scale-1e-6"):
    EXPECT["tanh-gemm/" + _m] = (None, None, "a bug of the tangent or the "
                                 "HVP, not of the gradient")
# gdn with bf16 / fp16 storage: the same bugs under declared classes;
# the precision losses may pass without the twin (the class covers them).
for _v in ("gdn-bf16", "gdn-fp16"):
    for _k, (_a, _b, _r) in list(EXPECT.items()):
        if _k.startswith("gdn/"):
            EXPECT[_v + _k[3:]] = (_a, _b, _r + " (" + _v + ")")
    EXPECT[_v + "/ds-bf16"] = ({"precision", "PASSOK"}, {"rounding-suspected",
                                               "rounding", "PASSOK"},
                               "dS in bf16: a precision loss")
    EXPECT[_v + "/acc-lowp"] = ({"precision", "PASSOK"}, {"rounding-suspected",
                                                "rounding", "PASSOK"},
                                "sums kept in the storage format: a "
                                "precision loss")

# catalogue rows: (model, bug) -> (right kinds, required words, reason)
CATALOGUE_EXPECT = {
    ("rnn", 1): ({"logic"}, "the error enters at step 6",
                 "W^T -> W in the recurrence: shared W, U, b fail alike; "
                 "xs localises (0-6 fail)"),
    ("rnn", 2): ({"logic"}, "the error enters at step 3",
                 "step 3's loss term dropped: shared weights alike; xs "
                 "0-3 fail"),
    ("gru", 1): ({"logic"}, "the error enters at step 5",
                 "GRU-like, per-step input blocks: step 5's loss term "
                 "dropped; six shared gate weights alike"),
    ("gru", 2): ({"logic"}, "the error enters at step 6",
                 "GRU-like: recurrent Uh transposed in the backward"),
    ("stair", 1): ({"staircase"}, "steps spanning structure",
                   "forward quantised to stairs finer than the step, the "
                   "backward the smooth surrogate's"),
    ("attn", 1): ({"logic"}, "fail alike, wholly",
                  "mask ignored in the backward: every tensor, V's masked "
                  "rows against reference 0"),
    ("attn", 2): ({"logic"}, "passes: V",
                  "softmax backward without its row sum: V passes"),
    ("scale", 1): ({"sign-flip"}, "one element",
                   "one-element s negated"),
    ("mean14", 1): ({"constant-factor"}, "= N",
                    "1/N dropped in both paths: exact x14"),
    ("bf16", 1): ({"rounding-suspected"}, "bf16",
                  "correct backward rounded to bf16, undeclared"),
    ("bf16", 2): ({"constant-factor"}, "",
                  "x1.03 on alternate elements: a factor, no rounding"),
    ("deep", 1): ({"constant-factor"}, "first: ",
                  "backward x1.001 under an untouched forward deeper than "
                  "the default depth (the first row: depth defaulted)"),
    ("hsig", 1): ({"twin-differs"}, "g32 agrees",
                  "the twin multiplies by float32(1/6), the reference by "
                  "1/6"),
}

# The catalogue's models on 274c276 (before issue 36), as observed when
# the models were first run: kind, class.
CATALOGUE_BEFORE = {
    ("rnn", 1, "on"): ("logic", "partly"),   # b led, W, U "weaker leads"
    ("rnn", 2, "on"): ("logic", "partly"),
    ("attn", 1, "on"): ("logic", "partly"),  # too few, on temp
    ("attn", 2, "on"): ("logic", "partly"),
    ("scale", 1, "off"): ("logic", "partly"),  # too few, ratio -1
    ("scale", 1, "on"): ("logic", "partly"),
    ("mean14", 1, "off"): ("constant-factor", "right"),
    ("mean14", 1, "on"): ("logic", "partly"),  # "from 14 to 14.0000001"
    ("bf16", 1, "off"): ("logic", "partly"),   # "from 0.9972 to 1.003"
    ("bf16", 2, "off"): ("constant-factor", "right"),
    ("hsig", 1, "on"): ("logic", "partly"),
    # not run there (the suite is newer): what its code does at level 2
    ("deep", 1, "off"): ("forward-mismatch", "wrong", "from the code"),
    # newer models: what the code there does with their failures (the
    # lead tensor's pattern, the others as weaker leads; no staircase kind:
    # the failures read as a logic error)
    ("gru", 1, "off"): ("logic", "partly", "from the code"),
    ("gru", 1, "on"): ("logic", "partly", "from the code"),
    ("gru", 2, "off"): ("logic", "partly", "from the code"),
    ("gru", 2, "on"): ("logic", "partly", "from the code"),
    ("stair", 1, "off"): ("logic", "partly", "from the code"),
    ("stair", 1, "on"): ("logic", "partly", "from the code"),
}

SPECIFIC = {"constant-factor", "sign-flip", "zero-region", "shifted-window",
            "axis-offset", "approximate-shift", "forward-mismatch",
            "precision", "rounding", "rounding-suspected", "twin-differs",
            "non-smooth", "staircase"}


def classify(kind, verdict, right, words="", text=""):
    if right is None:
        return "n/a" if verdict in ("pass", "inconclusive") else (
            "wrong" if kind in SPECIFIC else "partly")
    if verdict in ("pass", "inconclusive"):
        return "n/a" if "PASSOK" in right else "missed"
    if kind in right:
        return "right" if not words or words in text else "partly"
    if kind == "logic" or kind not in SPECIFIC:
        return "partly"
    return "wrong"


def mutants():
    out = subprocess.run([GRADCHECK, "list"], capture_output=True,
                         text=True, check=True).stdout
    model, inm = None, False
    for line in out.splitlines():
        if line and not line.startswith(" "):
            model = line.split()[0]
            inm = False
        elif line.strip() == "mutants:":
            inm = True
        elif line.strip().startswith("checks:"):
            inm = False
        elif inm and line.startswith("    "):
            yield model, line.split()[0]


def run(model, mutant, twin, gradcheck=None):
    p = subprocess.run([gradcheck or GRADCHECK, "run", model, "--mutant", mutant,
                        "--format", "json", "--quiet", "--twin", twin],
                       capture_output=True, text=True)
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return "error", "none", p.stderr.strip()[:200]
    return (j.get("verdict", "?"), j["diagnosis"]["kind"],
            j["diagnosis"]["text"])


def previous_before():
    """The committed table's "before" column, by (mutant, twin): kept
    where no BEFORE_GRADCHECK is given (a regeneration must not lose the
    column the commit before issue 36 gave)."""
    prev = {}
    try:
        with open(os.path.splitext(OUT)[0] + ".tsv") as f:
            next(f)
            for line in f:
                c = line.rstrip("\n").split("\t")
                if len(c) >= 8 and c[7]:
                    prev[(c[0], c[1])] = c[7]
    except (OSError, StopIteration):
        pass
    return prev


def main():
    rows = []
    before = os.environ.get("BEFORE_GRADCHECK")
    prev = previous_before()
    for model, mutant in mutants():
        key = f"{model}/{mutant}"
        if key not in EXPECT:
            rows.append((key, "?", "?", "?", "unlisted", "", "", ""))
            continue
        wt, wo, reason = EXPECT[key]
        for twin, right in (("on", wt), ("off", wo)):
            v, k, t = run(model, mutant, twin)
            b = prev.get((key, twin), "")
            if before:
                bv, bk, _ = run(model, mutant, twin, before)
                b = f"{bk} ({classify(bk, bv, right)})"
            rows.append((key, twin, v, k, classify(k, v, right), reason, t,
                         b))
    with tempfile.TemporaryDirectory() as d:
        tsv = os.path.join(d, "cat.tsv")
        env = dict(os.environ, GC_CATALOGUE_TSV=tsv, CK_FORK="no")
        subprocess.run([CATALOGUE], env=env, capture_output=True)
        seen = set()
        for line in open(tsv):
            m, bug, twin, v, k, t = line.rstrip("\n").split("\t")
            bug = int(bug)
            if bug == 0 or (m, bug, twin) in seen:
                continue
            seen.add((m, bug, twin))
            right, words, reason = CATALOGUE_EXPECT[(m, bug)]
            tw = "on" if twin == "1" else "off"
            bk, bc, *note = CATALOGUE_BEFORE.get((m, bug, tw), ("?", "?"))
            rows.append((f"catalogue {m}#{bug}", tw, v, k,
                         classify(k, v, right, words, t), reason, t,
                         f"{bk} ({bc}, {note[0] if note else 'observed'})"))
    counts = {}
    for r in rows:
        counts[r[4]] = counts.get(r[4], 0) + 1
    base = os.path.splitext(OUT)[0]
    with open(base + ".tsv", "w") as f:
        f.write("mutant\ttwin\tverdict\tkind\tclass\treason\ttext\t"
                "before\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    with open(OUT, "w") as f:
        f.write("# Diagnosis by mutant (issue 36)\n\n")
        f.write("Produced by `bench/diagnosis.py`: each built-in mutant "
                "with the f64 twin on and off, and the models of "
                "`tests/check_diagnosis_catalogue.c`; the kind classified "
                "against the mutant's nature (the script lists the "
                "expected kinds with a reason each). right: the expected "
                "kind; partly: `logic` (unexplained) where a specific kind "
                "was expected, or a required word missing; wrong: another "
                "specific kind; n/a: the check passes by design (a bug "
                "below that resolution, or not of the gradient). Full "
                "texts: `diagnosis.tsv`.\n\n")
        f.write("Totals: " + ", ".join(f"{k} {v}" for k, v in
                                        sorted(counts.items())) + "\n\n")
        bcounts = {}
        for r in rows:
            if r[7]:
                c = r[7].split("(")[1].split(",")[0].rstrip(")")
                bcounts[c] = bcounts.get(c, 0) + 1
        if bcounts:
            f.write("Before (the commit before issue 36; the catalogue's "
                    "models as observed there): " +
                    ", ".join(f"{k} {v}" for k, v in sorted(bcounts.items()))
                    + "\n\n")
        f.write("| mutant | twin | verdict | kind | class | before | why "
                "that kind |\n|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | "
                    f"{r[7]} | {r[5]} |\n")
    print("Totals:", counts)
    for r in rows:
        if r[4] not in ("right", "n/a"):
            print(r[4], r[0], r[1], r[3], "|", r[6][:300])


if __name__ == "__main__":
    main()
