#!/usr/bin/env python3
"""Measures Qwen3-Next's Gated DeltaNet kernels on this machine's GPU, in the CSV format of
scripts/profile_gpu.py (the same columns), for the shapes servesim's cost model prices
(models/linear_attention.h; docs/models.md "Qwen3-Next").

vLLM (Qwen3NextGatedDeltaNet._forward_core, vllm/model_executor/models/qwen3_next.py) runs a
step's DeltaNet layers in one of two forms:
  - chunked (kind deltanet_chunked): any prefill in the step sends every sequence, decodes
    included, through chunk_gated_delta_rule, which works in 64-token chunks per sequence
    (kkt, solve_tril, w/u, the chunk states, the output);
  - recurrent (kind deltanet_recurrent): a pure-decode step runs
    fused_recurrent_gated_delta_rule, one token per sequence, on the states in place.
Both here take q, k [T, key heads, dk] and v [T, value heads, dv] (T tokens of all sequences
one after the other, cu_seqlens marking them), g (log decay) and beta [T, value heads], and a
pool of states [sequences, value heads, dk, dv] in bf16; q and k are l2-normalised in the kernel,
as vLLM's use_qk_l2norm_in_kernel=True asks.

The kernels are this script's own Triton kernels: the recurrent one walks a sequence's tokens
with the state of one value head (a block of its columns) in registers; the chunked one walks a
sequence's chunks, forms the chunk's lower-triangular system (I + A) with A = beta * K K^T *
decay, inverts it by the product (I - N)^-1 = (I + N)(I + N^2)(I + N^4)...(I + N^32) of the
nilpotent N = -A (exact for a strictly lower-triangular 64 x 64 matrix), and applies the
WY form: v' = T (beta V) - T (beta e^g K) H, O = (Q H) e^g + (Q K^T * decay, causal) v',
H <- e^g_last H + (K e^(g_last - g))^T v'. Each is checked against this script's PyTorch
reference (a token-by-token recurrence) before it is timed; where Triton is missing (the CPU
test) or a check fails, the PyTorch forms are timed instead (the chunked form batched over all
chunks with the state recurrence across chunks in a loop; the recurrent form vectorised over the
sequences), and the op column says which: triton_chunk64, torch_chunk64, triton_recurrent,
torch_recurrent.

Rows (columns as scripts/profile_gpu.py): model, tp, op; m_tokens = T, batch = sequences,
q_len = tokens per sequence, q_heads = key heads per rank, kv_heads = value heads per rank,
head_dim = dk, n = dv, k = the chunk size (64; 1 for the recurrent form); tflops = servesim's
FLOP count of the form (models/linear_attention.h: chunked 64 rows per chunk of
6 dk dv + 2 C (3 dk + 2 dv) + C^2 / 3 per value head; recurrent 7 dk dv per token and value head)
over the time; gbps = the bytes every form must move (q, k, v, g, beta in, o out, the states read
and written) over the time.

Usage:
  python3 scripts/profile_deltanet.py OUTDIR                  # on the GPU, a few minutes
  python3 scripts/profile_deltanet.py OUTDIR --device cpu --tiny   # what CI runs
Writes OUTDIR/deltanet_<tag>.csv (tag from --tag, else h100/h200/the device name).
"""
import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_gpu import COLUMNS, device_tag, make_timer  # noqa: E402

CHUNK = 64
# model: (linear key heads, value heads, key head dim, value head dim), TP degrees. From
# Qwen3-Next-80B-A3B's config.json (linear_num_key_heads 16, linear_num_value_heads 32,
# linear_key_head_dim 128, linear_value_head_dim 128); vLLM splits the heads over TP.
MODELS = {"qwen3-next-80b-a3b": ((16, 32, 128, 128), [1, 2, 4, 8])}
TINY_MODELS = {"tiny-deltanet": ((2, 4, 16, 16), [1, 2])}
# Chunked: (sequences, tokens each): one prefill of L tokens, and B decodes beside a prefill
# (a step with a prefill runs its decodes in the chunked form, one token each).
CHUNKED_SHAPES = ([(1, L) for L in (64, 256, 1024, 2048, 4096, 8192)]
                  + [(B, 1) for B in (8, 64, 256)] + [(4, 2048)])
RECURRENT_BATCHES = [1, 8, 32, 64, 128, 256, 512]
TINY_CHUNKED_SHAPES = [(1, 64), (1, 100), (3, 1), (2, 70)]
TINY_RECURRENT_BATCHES = [1, 3]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir", help="folder for deltanet_<tag>.csv")
    p.add_argument("--device", default=None, help="cuda or cpu [cuda when available]")
    p.add_argument("--tag", default=None, help="the gpu column and file tag [from the device]")
    p.add_argument("--tiny", action="store_true", help="tiny shapes (CI; CPU)")
    p.add_argument("--no-triton", action="store_true",
                   help="time the PyTorch forms only (the Triton kernels are not tried)")
    p.add_argument("--budget-s", type=float, default=300.0,
                   help="stop starting new measurements after this many seconds [300]")
    return p.parse_args(argv)


def chunked_flops_per_head(dk, dv, c=CHUNK):
    """servesim's chunked_delta_rule_flops_per_head (models/linear_attention.h)."""
    return 6.0 * dk * dv + 2.0 * c * (3.0 * dk + 2.0 * dv) + c * c / 3.0


def min_bytes(seqs, tokens, nk, nv, dk, dv):
    """q, k, v, g, beta in and o out at 2 bytes; each sequence's state read and written."""
    return 2 * (tokens * (2 * nk * dk + nv * dv + 2 * nv + nv * dv) + seqs * 2 * nv * dk * dv)


def make_inputs(torch, device, lens, nk, nv, dk, dv, seed=0):
    gen = torch.Generator(device="cpu").manual_seed(seed)
    T = sum(lens)
    bf16 = torch.bfloat16

    def rnd(*shape):
        return torch.randn(*shape, generator=gen).to(device=device, dtype=bf16)
    q, k, v = rnd(T, nk, dk), rnd(T, nk, dk), rnd(T, nv, dv)
    g = torch.nn.functional.logsigmoid(torch.randn(T, nv, generator=gen) + 3.0).to(device)
    beta = torch.sigmoid(torch.randn(T, nv, generator=gen)).to(device=device, dtype=bf16)
    state = (0.1 * torch.randn(len(lens), nv, dk, dv, generator=gen)).to(device=device,
                                                                         dtype=bf16)
    cu = torch.tensor([0] + list(_cumsum(lens)), dtype=torch.int32, device=device)
    return q, k, v, g, beta, state, cu


def _cumsum(xs):
    s = 0
    for x in xs:
        s += x
        yield s


def l2norm(torch, x):
    x = x.float()
    return x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-6)


def reference(torch, q, k, v, g, beta, state, cu):
    """Token by token, fp32: S <- e^g S; u = S^T k; S += k (beta (v - u))^T; o = S^T q / sqrt(dk).
    Returns (o [T, nv, dv] fp32, final states [N, nv, dk, dv] fp32)."""
    T, nk, dk = k.shape
    nv, dv = v.shape[1], v.shape[2]
    rep = nv // nk
    qn = l2norm(torch, q).repeat_interleave(rep, 1) * dk ** -0.5
    kn = l2norm(torch, k).repeat_interleave(rep, 1)
    o = torch.zeros(T, nv, dv, device=q.device)
    out = state.float().clone()
    bounds = cu.tolist()
    for n in range(len(bounds) - 1):
        S = out[n]
        for t in range(bounds[n], bounds[n + 1]):
            S = S * torch.exp(g[t].float())[:, None, None]
            u = torch.einsum("hkv,hk->hv", S, kn[t])
            S = S + torch.einsum("hk,hv->hkv", kn[t],
                                 beta[t].float()[:, None] * (v[t].float() - u))
            o[t] = torch.einsum("hkv,hk->hv", S, qn[t])
        out[n] = S
    return o, out


def torch_recurrent(torch, q, k, v, g, beta, state, idx):
    """One token per sequence (a decode step), vectorised over the sequences; the states of
    rows `idx` of the pool updated in place."""
    nk, dk = k.shape[1], k.shape[2]
    nv = v.shape[1]
    rep = nv // nk
    qn = l2norm(torch, q).repeat_interleave(rep, 1) * dk ** -0.5
    kn = l2norm(torch, k).repeat_interleave(rep, 1)
    S = state[idx].float() * torch.exp(g.float())[:, :, None, None]
    u = torch.einsum("bhkv,bhk->bhv", S, kn)
    S = S + torch.einsum("bhk,bhv->bhkv", kn, beta.float()[:, :, None] * (v.float() - u))
    state[idx] = S.to(state.dtype)
    return torch.einsum("bhkv,bhk->bhv", S, qn).to(v.dtype)


def tri_inverse(torch, A, product=False):
    """(I + A)^-1 for strictly lower-triangular A [..., C, C], fp32: a triangular solve, or
    (product=True, and where PyTorch has no solve_triangular) the product form the Triton
    kernel uses."""
    C = A.shape[-1]
    eye = torch.eye(C, device=A.device, dtype=A.dtype)
    if not product and hasattr(torch, "linalg") and hasattr(torch.linalg, "solve_triangular"):
        return torch.linalg.solve_triangular(eye + A, eye.expand_as(A), upper=False,
                                             unitriangular=True)
    N = -A  # (I - N)^-1 = (I + N)(I + N^2)(I + N^4)...
    P, M, power = eye + N, N, 2
    while power < C:
        M = M @ M
        P = P + P @ M
        power *= 2
    return P


def torch_chunked(torch, q, k, v, g, beta, state, cu, lens, c=CHUNK):
    """The chunked form in PyTorch: every sequence padded to whole chunks, the intra-chunk parts
    batched over all chunks, the state carried across chunks in a loop. Updates the states of
    the N sequences (pool rows 0..N-1) and returns o [T, nv, dv]."""
    T, nk, dk = k.shape
    nv, dv = v.shape[1], v.shape[2]
    rep = nv // nk
    N = len(lens)
    NT = max((L + c - 1) // c for L in lens)
    dev = q.device

    def pad(x, width):  # [T, H, D] -> [N, NT * c, H, D], zeros past each sequence
        out = torch.zeros(N, NT * c, *x.shape[1:], device=dev, dtype=torch.float32)
        start = 0
        for n, L in enumerate(lens):
            out[n, :L] = x[start:start + L].float()
            start += L
        return out
    qn = pad(l2norm(torch, q).repeat_interleave(rep, 1) * dk ** -0.5, dk)
    kn = pad(l2norm(torch, k).repeat_interleave(rep, 1), dk)
    vv = pad(v, dv)
    gg = pad(g[..., None], 1)[..., 0]
    bb = pad(beta[..., None], 1)[..., 0]

    def chunks(x):  # [N, NT*c, H, ...] -> [N, H, NT, c, ...]
        x = x.reshape(N, NT, c, nv, *x.shape[3:])
        return x.permute(0, 3, 1, 2, *range(4, x.dim())).contiguous()
    Q, K, V, G, B = chunks(qn), chunks(kn), chunks(vv), chunks(gg), chunks(bb)
    gc = G.cumsum(-1)  # within each chunk
    causal = torch.ones(c, c, device=dev, dtype=torch.bool).tril()
    lower = torch.ones(c, c, device=dev).tril(-1)
    # e^(gc_i - gc_j) for j <= i, 0 above the diagonal (never e^(+large) there)
    decay = torch.exp((gc[..., :, None] - gc[..., None, :]).masked_fill(~causal, float("-inf")))
    A = B[..., :, None] * (K @ K.transpose(-1, -2)) * decay * lower
    Tinv = tri_inverse(torch, A)
    W = Tinv @ (B[..., None] * torch.exp(gc)[..., None] * K)
    U = Tinv @ (B[..., None] * V)
    QK = (Q @ K.transpose(-1, -2)) * decay
    H = state[:N].float()
    O = torch.empty(N, nv, NT, c, dv, device=dev)
    for i in range(NT):
        vn = U[:, :, i] - W[:, :, i] @ H
        O[:, :, i] = (Q[:, :, i] @ H) * torch.exp(gc[:, :, i])[..., None] + QK[:, :, i] @ vn
        last = gc[:, :, i, -1]
        H = (H * torch.exp(last)[..., None, None]
             + (K[:, :, i] * torch.exp(last[..., None] - gc[:, :, i])[..., None])
             .transpose(-1, -2) @ vn)
    state[:N] = H.to(state.dtype)
    O = O.permute(0, 2, 3, 1, 4).reshape(N, NT * c, nv, dv)
    return torch.cat([O[n, :L] for n, L in enumerate(lens)]).to(v.dtype)


def make_triton(torch):
    """(chunked, recurrent) Triton launchers, or None without Triton."""
    try:
        import triton
        import triton.language as tl
    except Exception:  # noqa: BLE001 (no Triton, or one that does not load)
        return None

    @triton.jit
    def recurrent_kernel(Q, K, V, G, BETA, S, O, CU, IDX, scale, NK: tl.constexpr,
                         NV: tl.constexpr, DK: tl.constexpr, DV: tl.constexpr,
                         BV: tl.constexpr):
        n = tl.program_id(0)
        hv = tl.program_id(1)
        vb = tl.program_id(2)
        hk = hv // (NV // NK)
        rk = tl.arange(0, DK)
        rv = vb * BV + tl.arange(0, BV)
        row = tl.load(IDX + n)
        s_ptr = S + ((row * NV + hv) * DK + rk[:, None]) * DV + rv[None, :]
        h = tl.load(s_ptr).to(tl.float32)
        start = tl.load(CU + n)
        end = tl.load(CU + n + 1)
        for t in range(start, end):
            q = tl.load(Q + (t * NK + hk) * DK + rk).to(tl.float32)
            k = tl.load(K + (t * NK + hk) * DK + rk).to(tl.float32)
            q = q / tl.sqrt(tl.sum(q * q, 0) + 1e-6) * scale
            k = k / tl.sqrt(tl.sum(k * k, 0) + 1e-6)
            v = tl.load(V + (t * NV + hv) * DV + rv).to(tl.float32)
            b = tl.load(BETA + t * NV + hv).to(tl.float32)
            h = h * tl.exp(tl.load(G + t * NV + hv).to(tl.float32))
            u = tl.sum(h * k[:, None], 0)
            h = h + k[:, None] * (b * (v - u))[None, :]
            o = tl.sum(h * q[:, None], 0)
            tl.store(O + (t * NV + hv) * DV + rv, o.to(O.dtype.element_ty))
        tl.store(s_ptr, h.to(S.dtype.element_ty))

    @triton.jit
    def chunked_kernel(Q, K, V, G, BETA, S, O, CU, scale, NK: tl.constexpr, NV: tl.constexpr,
                       DK: tl.constexpr, DV: tl.constexpr, BV: tl.constexpr, C: tl.constexpr,
                       LOG2C: tl.constexpr):
        n = tl.program_id(0)
        hv = tl.program_id(1)
        vb = tl.program_id(2)
        hk = hv // (NV // NK)
        rk = tl.arange(0, DK)
        rv = vb * BV + tl.arange(0, BV)
        rc = tl.arange(0, C)
        eye = (rc[:, None] == rc[None, :]).to(tl.float32)
        lower = rc[:, None] > rc[None, :]
        causal = rc[:, None] >= rc[None, :]
        s_ptr = S + ((n * NV + hv) * DK + rk[:, None]) * DV + rv[None, :]
        h = tl.load(s_ptr).to(tl.float32)
        start = tl.load(CU + n)
        end = tl.load(CU + n + 1)
        for c0 in range(start, end, C):
            t = c0 + rc
            m = t < end
            q = tl.load(Q + (t[:, None] * NK + hk) * DK + rk[None, :], mask=m[:, None],
                        other=0.0).to(tl.float32)
            k = tl.load(K + (t[:, None] * NK + hk) * DK + rk[None, :], mask=m[:, None],
                        other=0.0).to(tl.float32)
            q = q / tl.sqrt(tl.sum(q * q, 1) + 1e-6)[:, None] * scale
            k = k / tl.sqrt(tl.sum(k * k, 1) + 1e-6)[:, None]
            v = tl.load(V + (t[:, None] * NV + hv) * DV + rv[None, :], mask=m[:, None],
                        other=0.0).to(tl.float32)
            g = tl.load(G + t * NV + hv, mask=m, other=0.0).to(tl.float32)
            b = tl.load(BETA + t * NV + hv, mask=m, other=0.0).to(tl.float32)
            gc = tl.sum(tl.where(causal, g[None, :], 0.0), 1)  # cumulative within the chunk
            gl = tl.sum(tl.where(rc == C - 1, gc, 0.0), 0)
            dec = tl.exp(tl.where(causal, gc[:, None] - gc[None, :], float("-inf")))
            kk = tl.dot(k, tl.trans(k), input_precision="ieee")
            nil = -tl.where(lower, b[:, None] * kk * dec, 0.0)  # N = -A
            p = eye + nil
            mm = nil
            for _ in tl.static_range(LOG2C - 1):
                mm = tl.dot(mm, mm, input_precision="ieee")
                p = p + tl.dot(p, mm, input_precision="ieee")
            w = tl.dot(p, (b * tl.exp(gc))[:, None] * k, input_precision="ieee")
            u = tl.dot(p, b[:, None] * v, input_precision="ieee")
            vn = u - tl.dot(w, h, input_precision="ieee")
            qk = tl.where(causal, tl.dot(q, tl.trans(k), input_precision="ieee") * dec, 0.0)
            o = (tl.dot(q, h, input_precision="ieee") * tl.exp(gc)[:, None]
                 + tl.dot(qk, vn, input_precision="ieee"))
            tl.store(O + (t[:, None] * NV + hv) * DV + rv[None, :], o.to(O.dtype.element_ty),
                     mask=m[:, None])
            kd = k * tl.exp(gl - gc)[:, None]
            h = h * tl.exp(gl) + tl.dot(tl.trans(kd), vn, input_precision="ieee")
        tl.store(s_ptr, h.to(S.dtype.element_ty))

    def recurrent(q, k, v, g, beta, state, cu, idx):
        N = cu.numel() - 1
        nk, dk = k.shape[1], k.shape[2]
        nv, dv = v.shape[1], v.shape[2]
        bv = min(dv, 32)
        o = torch.empty_like(v)

        def call():
            recurrent_kernel[(N, nv, dv // bv)](q, k, v, g, beta, state, o, cu, idx, dk ** -0.5,
                                                NK=nk, NV=nv, DK=dk, DV=dv, BV=bv, num_warps=4)
            return o
        return call

    def chunked(q, k, v, g, beta, state, cu):
        N = cu.numel() - 1
        nk, dk = k.shape[1], k.shape[2]
        nv, dv = v.shape[1], v.shape[2]
        bv = min(dv, 32)
        o = torch.empty_like(v)

        def call():
            chunked_kernel[(N, nv, dv // bv)](q, k, v, g, beta, state, o, cu, dk ** -0.5, NK=nk,
                                              NV=nv, DK=dk, DV=dv, BV=bv, C=CHUNK,
                                              LOG2C=CHUNK.bit_length() - 1, num_warps=4)
            return o
        return call

    return chunked, recurrent


def check_triton(torch, device, kernels, nk, nv, dk, dv):
    """Raises unless both Triton kernels match the reference on two small batches."""
    chunked, recurrent = kernels
    for lens in ([70, 1, 130], [1, 1, 1, 1]):
        q, k, v, g, beta, state, cu = make_inputs(torch, device, lens, nk, nv, dk, dv, seed=1)
        ref_o, ref_s = reference(torch, q, k, v, g, beta, state, cu)
        s = state.clone()
        got = chunked(q, k, v, g, beta, s, cu)().float()
        _close("chunked output", got, ref_o)
        _close("chunked state", s.float(), ref_s)
        if max(lens) == 1:
            s = state.clone()
            idx = torch.arange(len(lens), device=device)
            got = recurrent(q, k, v, g, beta, s, cu, idx)().float()
            _close("recurrent output", got, ref_o)
            _close("recurrent state", s.float(), ref_s)


def _close(what, got, ref):
    err = (got - ref).abs().max().item() / max(1e-6, ref.abs().max().item())
    if not err < 3e-2:  # bf16 inputs and outputs: a few roundings of 2^-8 each
        raise RuntimeError(f"{what}: relative error {err:.3g} against the reference")


def measure(torch, device, timed, w, tag, models, chunked_shapes, recurrent_batches, triton,
            deadline):
    rows = 0
    for model, ((nk_all, nv_all, dk, dv), tps) in models.items():
        for tp in tps:
            if nk_all % tp or nv_all % tp:
                continue
            nk, nv = nk_all // tp, nv_all // tp
            for seqs, L in chunked_shapes:
                if time.time() > deadline:
                    return rows
                lens = [L] * seqs
                q, k, v, g, beta, state, cu = make_inputs(torch, device, lens, nk, nv, dk, dv)
                if triton is not None:
                    fn, op = triton[0](q, k, v, g, beta, state, cu), "triton_chunk64"
                else:
                    fn = (lambda q=q, k=k, v=v, g=g, beta=beta, state=state, cu=cu, lens=lens:
                          torch_chunked(torch, q, k, v, g, beta, state, cu, lens))
                    op = "torch_chunk64"
                us = timed(fn, inner=3)
                T = seqs * L
                chunks = seqs * ((L + CHUNK - 1) // CHUNK)
                fl = chunks * CHUNK * nv * chunked_flops_per_head(dk, dv)
                by = min_bytes(seqs, T, nk, nv, dk, dv)
                w.writerow([tag, "deltanet_chunked", "bf16", model, tp, op, T, dv, CHUNK, seqs, L,
                            "", nk, nv, dk, f"{us:.2f}", f"{fl / us / 1e6:.3f}",
                            f"{by / us / 1e3:.1f}"])
                rows += 1
            for B in recurrent_batches:
                if time.time() > deadline:
                    return rows
                lens = [1] * B
                q, k, v, g, beta, state, cu = make_inputs(torch, device, lens, nk, nv, dk, dv)
                idx = torch.arange(B, device=device)
                if triton is not None:
                    fn, op = triton[1](q, k, v, g, beta, state, cu, idx), "triton_recurrent"
                else:
                    fn = (lambda q=q, k=k, v=v, g=g, beta=beta, state=state, idx=idx:
                          torch_recurrent(torch, q, k, v, g, beta, state, idx))
                    op = "torch_recurrent"
                us = timed(fn, inner=5)
                fl = B * nv * 7.0 * dk * dv
                by = min_bytes(B, B, nk, nv, dk, dv)
                w.writerow([tag, "deltanet_recurrent", "bf16", model, tp, op, B, dv, 1, B, 1, "",
                            nk, nv, dk, f"{us:.2f}", f"{fl / us / 1e6:.3f}",
                            f"{by / us / 1e3:.1f}"])
                rows += 1
    return rows


def self_check(torch, device, nk, nv, dk, dv):
    """The PyTorch forms against the token-by-token reference, and the product-form inverse of
    the Triton kernel against a triangular solve (raises on a mismatch)."""
    gen = torch.Generator(device="cpu").manual_seed(4)
    A = (0.3 * torch.randn(2, CHUNK, CHUNK, generator=gen)).tril(-1).to(device)
    eye = torch.eye(CHUNK, device=device)
    _close("product-form inverse", (eye + A) @ tri_inverse(torch, A, product=True),
           eye.expand_as(A))
    lens = [70, 1, 130]
    q, k, v, g, beta, state, cu = make_inputs(torch, device, lens, nk, nv, dk, dv, seed=2)
    ref_o, ref_s = reference(torch, q, k, v, g, beta, state, cu)
    s = state.clone()
    _close("torch chunked output", torch_chunked(torch, q, k, v, g, beta, s, cu, lens).float(),
           ref_o)
    _close("torch chunked state", s.float(), ref_s)
    lens = [1, 1, 1]
    q, k, v, g, beta, state, cu = make_inputs(torch, device, lens, nk, nv, dk, dv, seed=3)
    ref_o, ref_s = reference(torch, q, k, v, g, beta, state, cu)
    s = state.clone()
    idx = torch.arange(3, device=device)
    _close("torch recurrent output",
           torch_recurrent(torch, q, k, v, g, beta, s, idx).float(), ref_o)
    _close("torch recurrent state", s.float(), ref_s)


def main(argv):
    args = parse_args(argv)
    import torch  # imported here so that --help works without PyTorch

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("profile_deltanet.py: --device cuda but torch.cuda.is_available() is False")
    tag = args.tag or device_tag(torch, device)
    timed = make_timer(torch, device)
    models = TINY_MODELS if args.tiny else MODELS
    chunked_shapes = TINY_CHUNKED_SHAPES if args.tiny else CHUNKED_SHAPES
    recurrent_batches = TINY_RECURRENT_BATCHES if args.tiny else RECURRENT_BATCHES
    (nk, nv, dk, dv), _ = next(iter(models.values()))
    self_check(torch, device, nk, nv, dk, dv)
    triton = None
    if device.type == "cuda" and not args.no_triton:
        triton = make_triton(torch)
        if triton is not None:
            try:
                check_triton(torch, device, triton, nk, nv, dk, dv)
                print("deltanet: triton kernels checked against the reference", file=sys.stderr)
            except Exception as e:  # noqa: BLE001 (time the PyTorch forms instead)
                print("deltanet triton kernels off:", repr(e)[:300], file=sys.stderr)
                triton = None
    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, f"deltanet_{tag}.csv")
    t0 = time.time()
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        rows = measure(torch, device, timed, w, tag, models, chunked_shapes, recurrent_batches,
                       triton, t0 + args.budget_s)
    print(f"wrote {path} rows {rows} in {time.time() - t0:.0f} s on {device} "
          f"({'triton' if triton is not None else 'pytorch'} kernels, torch {torch.__version__})")


if __name__ == "__main__":
    main(sys.argv[1:])
