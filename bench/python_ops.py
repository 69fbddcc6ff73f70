# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""python_ops.py -- five custom torch ops of the kind users write, each
with a hand-written backward, correct or with one of its own realistic
bugs or one of the generic ones, for make bench's side-by-side table
(bench/python_side.py).  Every op is dtype-generic: the same code runs in
float32 (the op as shipped) and float64 (its reference and twin).

  gla        a gated linear-attention recurrence: S_t = diag(exp g_t) S_{t-1}
             + k_t v_t^T, o_t = scale S_t^T q_t (q, k, g: T x K; v: T x V)
  layernorm  y = (x - mean) / sqrt(var + eps) * w + b over the last axis
  xent       softmax cross-entropy of logits / temperature with label
             smoothing and an ignore index, mean over the kept rows
  conv1d     y = w * x + b, a 1-D cross-correlation (stride 1, padding
             PAD) of x (C_in x L) with w (C_out x C_in x Kw), bias b (C_out)
  attention  single-head o = softmax(q k^T / sqrt(d)) v (q: Tq x d; k, v:
             Tk x d; the inputs have Tq = Tk, so a transposed p is
             shape-legal, as in self-attention)

The generic bugs, the same for every op (generic()): "scale-1e-3" and
"scale-1e-6", the gradient of the op's first input times (1 + 1e-3) or
(1 + 1e-6), and "sign", the gradient of its last input negated (not for
xent, whose own "sign-flip" is one).

OPS[name] = (make(bug) -> autograd.Function, inputs(dtype) -> tuple,
reference(*inputs) -> the same op in plain torch, for autograd's gradient:
the ground truth of what each bug changes), BUGS[name] = the op's own
bugs, then the generic ones.
"""

import torch

GENERIC = ["scale-1e-3", "scale-1e-6", "sign"]
BUGS = {
    "gla": ["decay-order", "dg-no-exp", "dq-no-scale", "dg-state-t",
            "dq-state-prev"] + GENERIC,
    "layernorm": ["no-mean-term", "no-proj-term", "unbiased-var",
                  "dw-uses-xc", "dx-no-weight"] + GENERIC,
    "xent": ["divide-by-n", "ignore-not-masked", "no-smoothing",
             "sign-flip", "no-temperature"] + GENERIC[:2],
    "conv1d": ["off-by-one", "dw-flipped", "db-mean"] + GENERIC,
    "attention": ["no-softmax-jacobian-term", "no-scale-dq",
                  "dv-transposed"] + GENERIC,
}


def generic(bug, grads):
    """The backward's gradients (a tuple, one per input) with the generic
    bug, if bug is one: the first input's times (1 + 1e-3) or (1 + 1e-6),
    or the last input's negated."""
    grads = list(grads)
    if bug == "scale-1e-3":
        grads[0] = grads[0] * (1 + 1e-3)
    elif bug == "scale-1e-6":
        grads[0] = grads[0] * (1 + 1e-6)
    elif bug == "sign":
        grads[-1] = -grads[-1]
    return tuple(grads)


# ------------------------------------------------------------------ gla
def gla(bug=None):
    class GatedLinearAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, g):
            T, K = q.shape
            scale = K ** -0.5
            S = q.new_zeros(K, v.shape[1])
            o = []
            for t in range(T):
                S = torch.exp(g[t])[:, None] * S + k[t][:, None] * v[t][None, :]
                o.append(scale * (S.t() @ q[t]))
            ctx.save_for_backward(q, k, v, g)
            return torch.stack(o)

        @staticmethod
        def backward(ctx, do):
            q, k, v, g = ctx.saved_tensors
            T, K = q.shape
            scale = K ** -0.5
            states = [q.new_zeros(K, v.shape[1])]
            for t in range(T):
                states.append(torch.exp(g[t])[:, None] * states[-1]
                              + k[t][:, None] * v[t][None, :])
            dq, dk, dv, dg = [torch.zeros_like(a) for a in (q, k, v, g)]
            dS = torch.zeros_like(states[0])
            for t in reversed(range(T)):
                a = torch.exp(g[t])
                dS = dS + scale * q[t][:, None] * do[t][None, :]
                s_q = states[t] if bug == "dq-state-prev" else states[t + 1]
                dq[t] = (1.0 if bug == "dq-no-scale" else scale) * (s_q @ do[t])
                if bug == "decay-order":
                    dS = a[:, None] * dS        # decayed before its use
                dk[t] = dS @ v[t]
                dv[t] = dS.t() @ k[t]
                s_g = states[t + 1] if bug == "dg-state-t" else states[t]
                r = (dS * s_g).sum(1)
                dg[t] = r if bug == "dg-no-exp" else a * r
                if bug != "decay-order":
                    dS = a[:, None] * dS
            return generic(bug, (dq, dk, dv, dg))
    return GatedLinearAttention


def gla_inputs(dtype, T=6, K=4, V=4, seed=1):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(T, K, generator=gen, dtype=torch.float64)
    k = torch.randn(T, K, generator=gen, dtype=torch.float64)
    v = torch.randn(T, V, generator=gen, dtype=torch.float64)
    g = -torch.rand(T, K, generator=gen, dtype=torch.float64) * 0.5 - 0.05
    return tuple(t.to(torch.float32).to(dtype) for t in (q, k, v, g))


def gla_reference(q, k, v, g):
    T, K = q.shape
    S = q.new_zeros(K, v.shape[1])
    o = []
    for t in range(T):
        S = torch.exp(g[t])[:, None] * S + torch.outer(k[t], v[t])
        o.append(K ** -0.5 * (S.t() @ q[t]))
    return torch.stack(o)


# ------------------------------------------------------------ layernorm
EPS = 1e-5


def layernorm(bug=None):
    class LayerNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            xc = x - x.mean(-1, keepdim=True)
            rstd = 1 / torch.sqrt((xc * xc).mean(-1, keepdim=True) + EPS)
            ctx.save_for_backward(x, w)
            return xc * rstd * w + b

        @staticmethod
        def backward(ctx, go):
            x, w = ctx.saved_tensors
            D = x.shape[-1]
            xc = x - x.mean(-1, keepdim=True)
            var = (xc * xc).sum(-1, keepdim=True) / (
                D - 1 if bug == "unbiased-var" else D)
            rstd = 1 / torch.sqrt(var + EPS)
            xh = xc * rstd
            gxh = go if bug == "dx-no-weight" else go * w
            gx = gxh
            if bug != "no-mean-term":
                gx = gx - gxh.mean(-1, keepdim=True)
            if bug != "no-proj-term":
                gx = gx - xh * (gxh * xh).mean(-1, keepdim=True)
            gx = rstd * gx
            gw = (go * (xc if bug == "dw-uses-xc" else xh)).sum(0)
            return generic(bug, (gx, gw, go.sum(0)))
    return LayerNorm


def layernorm_inputs(dtype, N=4, D=12, seed=2):
    gen = torch.Generator().manual_seed(seed)
    x = 2 * torch.randn(N, D, generator=gen, dtype=torch.float64) + 0.5
    w = 1 + 0.3 * torch.randn(D, generator=gen, dtype=torch.float64)
    b = 0.1 * torch.randn(D, generator=gen, dtype=torch.float64)
    return tuple(t.to(torch.float32).to(dtype) for t in (x, w, b))


def layernorm_reference(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS)


# ----------------------------------------------------------------- xent
TEMP, SMOOTH, IGNORE = 2.0, 0.1, -100
TARGET = [3, 0, IGNORE, 7, 7, 1]


def xent(bug=None):
    class SoftmaxCrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits):
            tgt = torch.tensor(TARGET)
            keep = tgt != IGNORE
            z = logits / TEMP
            logp = z - torch.logsumexp(z, -1, keepdim=True)
            C = logits.shape[-1]
            nll = -logp[keep].gather(1, tgt[keep][:, None])[:, 0]
            smooth = -logp[keep].mean(-1)
            ctx.save_for_backward(logits)
            return ((1 - SMOOTH) * nll + SMOOTH * smooth).sum() / keep.sum()

        @staticmethod
        def backward(ctx, go):
            (logits,) = ctx.saved_tensors
            tgt = torch.tensor(TARGET)
            keep = tgt != IGNORE
            N, C = logits.shape
            temp = 1.0 if bug == "no-temperature" else TEMP
            p = torch.softmax(logits / TEMP, -1)
            onehot = torch.zeros_like(p)
            onehot[keep, tgt[keep]] = 1
            y = onehot if bug == "no-smoothing" else (
                (1 - SMOOTH) * onehot + SMOOTH / C)
            gl = (y - p) if bug == "sign-flip" else (p - y)
            if bug != "ignore-not-masked":
                gl = gl * keep[:, None].to(p.dtype)
            denom = N if bug == "divide-by-n" else keep.sum()
            return generic(bug, (go * gl / denom / temp,))
    return SoftmaxCrossEntropy


def xent_inputs(dtype, N=6, C=10, seed=3):
    gen = torch.Generator().manual_seed(seed)
    z = 3 * torch.randn(N, C, generator=gen, dtype=torch.float64)
    return (z.to(torch.float32).to(dtype),)


def xent_reference(logits):
    return torch.nn.functional.cross_entropy(
        logits / TEMP, torch.tensor(TARGET), ignore_index=IGNORE,
        label_smoothing=SMOOTH)


# --------------------------------------------------------------- conv1d
PAD = 1


def conv1d(bug=None):
    class Conv1d(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            Kw = w.shape[2]
            cols = torch.nn.functional.pad(x, (PAD, PAD)).unfold(1, Kw, 1)
            ctx.save_for_backward(x, w)
            return torch.einsum("ocj,ctj->ot", w, cols) + b[:, None]

        @staticmethod
        def backward(ctx, gy):
            x, w = ctx.saved_tensors
            L = x.shape[1]
            Kw = w.shape[2]
            Lout = gy.shape[1]
            xp = torch.nn.functional.pad(x, (PAD, PAD))
            dxp = torch.zeros_like(xp)
            dw = torch.zeros_like(w)
            for j in range(Kw):            # tap j reads xp[:, t + j]
                dxp[:, j:j + Lout] += w[:, :, j].t() @ gy
                jx = Kw - 1 - j if bug == "dw-flipped" else j
                dw[:, :, j] = gy @ xp[:, jx:jx + Lout].t()
            start = PAD - 1 if bug == "off-by-one" else PAD
            dx = dxp[:, start:start + L]
            db = gy.mean(1) if bug == "db-mean" else gy.sum(1)
            return generic(bug, (dx, dw, db))
    return Conv1d


def conv1d_inputs(dtype, C_in=3, C_out=4, L=10, Kw=3, seed=4):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(C_in, L, generator=gen, dtype=torch.float64)
    w = torch.randn(C_out, C_in, Kw, generator=gen, dtype=torch.float64)
    b = 0.1 * torch.randn(C_out, generator=gen, dtype=torch.float64)
    return tuple(t.to(torch.float32).to(dtype) for t in (x, w, b))


def conv1d_reference(x, w, b):
    return torch.nn.functional.conv1d(x[None], w, b, padding=PAD)[0]


# ------------------------------------------------------------ attention
def attention(bug=None):
    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v):
            scale = q.shape[1] ** -0.5
            p = torch.softmax(q @ k.t() * scale, -1)
            ctx.save_for_backward(q, k, v, p)
            return p @ v

        @staticmethod
        def backward(ctx, do):
            q, k, v, p = ctx.saved_tensors
            scale = q.shape[1] ** -0.5
            dv = (p if bug == "dv-transposed" else p.t()) @ do
            dp = do @ v.t()
            ds = p * dp
            if bug != "no-softmax-jacobian-term":
                ds = ds - p * (p * dp).sum(-1, keepdim=True)
            dq = ds @ k * (1.0 if bug == "no-scale-dq" else scale)
            dk = ds.t() @ q * scale
            return generic(bug, (dq, dk, dv))
    return Attention


def attention_inputs(dtype, Tq=6, Tk=6, d=4, seed=5):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(Tq, d, generator=gen, dtype=torch.float64)
    k = torch.randn(Tk, d, generator=gen, dtype=torch.float64)
    v = torch.randn(Tk, d, generator=gen, dtype=torch.float64)
    return tuple(t.to(torch.float32).to(dtype) for t in (q, k, v))


def attention_reference(q, k, v):
    return torch.softmax(q @ k.t() / q.shape[1] ** 0.5, -1) @ v


OPS = {
    "gla": (gla, gla_inputs, gla_reference),
    "layernorm": (layernorm, layernorm_inputs, layernorm_reference),
    "xent": (xent, xent_inputs, xent_reference),
    "conv1d": (conv1d, conv1d_inputs, conv1d_reference),
    "attention": (attention, attention_inputs, attention_reference),
}
