#!/usr/bin/env python3
"""Measures, on this machine's GPU, the kernels that servesim's LoRA and speculative-decoding
models charge by a roofline today, in the kernel tables' columns (scripts/profile_gpu.py):

lora (kinds lora_shrink, lora_expand): the multi-LoRA shrink and expand of every LoRA layer of
  a decoder layer (qkv_proj: 3 slices, o_proj, gate_up_proj: 2 slices, down_proj: the modules
  models/lora_shapes.h counts, column-parallel ones with B split over TP, row-parallel ones with
  A split) per TP shard, with the Triton SGMV kernels of scripts/lora_sgmv.py (op = the layer;
  "_loop" appended when the PyTorch per-segment loop is timed instead: no Triton, or its result
  differed from the loop's by more than 2 % of the largest value, said on stderr). A batch of
  m_tokens tokens spread evenly over `batch` adapters (slots 0 .. batch - 1 of 2 · batch), adapters
  of rank kv_len; q_len = the layer's slices. Shrink: n = slices × rank, k = the layer's input
  width per rank; output fp32. Expand: n = the slices' output widths per rank, k = rank; adds
  into the layer's bf16 output. tflops = 2 · m_tokens · n · k / time; gbps = the adapters'
  weights, the input and the output read and written / time.
verify (kind attn_verify): the attention of a speculative-decoding verification step, `batch`
  sequences of q_len new tokens (the target token plus K = q_len - 1 draft tokens; q_len 1 is an
  ordinary decode step) over kv_len keys each (the new tokens the last q_len of them), contiguous
  K/V, bf16, through PyTorch SDPA with a causal mask aligned to the lower right, as vLLM's
  FlashAttention backends apply it: new token i sees keys 0 .. kv_len - q_len + i. op
  sdpa_causal_lower_right (torch.nn.attention.bias.causal_lower_right: the fused kernels),
  sdpa_bool_mask (an explicit mask, on PyTorch versions without it), unfused_mask (PyTorch 1.x:
  two matmuls and a softmax; for testing the script only) or sdpa (q_len 1: no mask needed);
  "_expandkv" appended when K/V heads are repeated to the query heads inside the timed call
  (SDPA without enable_gqa). m_tokens = batch × q_len; tflops counts the full q_len × kv_len
  scores; gbps = K/V bytes read / time.

Timing as profile_gpu.py's: on CUDA the median of 7 replays of a CUDA graph of 10 (LoRA) or 5
(attention) back-to-back calls, divided by the calls; on the CPU wall-clock (for testing the
script, not for profiles). --tiny: shapes a CPU runs in seconds (ctest profile_lora_verify_script,
with tests/scripts/triton_shim standing in for Triton).

Usage:
  python3 scripts/profile_lora_verify.py OUTDIR                # on the GPU
  python3 scripts/profile_lora_verify.py OUTDIR --device cpu --tiny
Writes OUTDIR/lora_verify_<tag>.csv (tag from --tag, else h100/h200/the device name).
"""
import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lora_sgmv  # noqa: E402
from profile_device import device_tag, make_timer  # noqa: E402
from profile_shapes import COLUMNS  # noqa: E402

# model: (hidden, intermediate, q heads, kv heads, head_dim), TP degrees. Dense models with
# grouped-query attention that servesim serves LoRA adapters on (models/lora_shapes.h refuses
# MoE and MLA models).
MODELS = {
    "llama-3.1-8b": ((4096, 14336, 32, 8, 128), [1, 2]),
    "llama-3.1-70b": ((8192, 28672, 64, 8, 128), [2, 4, 8]),
    "qwen2.5-7b": ((3584, 18944, 28, 4, 128), [1]),
}
RANKS = [8, 16, 32, 64, 128]  # vLLM's --max-lora-rank choices up to 128; servesim's default 16
ADAPTERS = [1, 2, 4, 8]  # distinct adapters in the batch (--max-loras)
LORA_TOKENS = [1, 4, 16, 64, 256, 1024, 4096]
Q_LENS = [1, 2, 4, 6]  # K = 0, 1, 3, 5 draft tokens
VERIFY_BATCHES = [1, 8, 32, 64, 128, 256]
VERIFY_LENS = [512, 1024, 2048, 4096, 8192]

TINY_MODELS = {"tiny": ((64, 128, 4, 2, 16), [1, 2])}
TINY_RANKS = [8, 16]
TINY_ADAPTERS = [1, 2]
TINY_LORA_TOKENS = [1, 5]
TINY_VERIFY_BATCHES = [1, 2]
TINY_VERIFY_LENS = [16, 32]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir", help="folder for lora_verify_<tag>.csv")
    p.add_argument("--device", default=None, help="cuda or cpu [cuda when available]")
    p.add_argument("--tag", default=None, help="the gpu column and file tag [from the device]")
    p.add_argument("--tiny", action="store_true", help="tiny shapes (CI; CPU)")
    p.add_argument("--budget-s", type=float, default=480.0,
                   help="stop starting new measurements after this many seconds [480]")
    p.add_argument("--sections", default="lora,verify",
                   help="comma-separated subset of lora, verify [lora,verify]")
    p.add_argument("--models", default=None,
                   help="comma-separated subset of the models measured [all of them, in order]")
    a = p.parse_args(argv)
    a.sections = set(x for x in a.sections.split(",") if x)
    bad = a.sections - {"lora", "verify"}
    if bad or not a.sections:
        p.error(f"--sections: unknown {sorted(bad)}; expected lora, verify or both")
    return a


def lora_layers(dims, tp):
    """(layer, input width, [output width of each slice]) of a decoder layer's LoRA layers on
    one TP rank, as models/lora_shapes.h counts them: KV heads at least one per rank."""
    h, inter, qh, kvh, hd = dims
    kv = max(1, -(-kvh // tp)) * hd
    return [("qkv_proj", h, [qh * hd // tp, kv, kv]), ("o_proj", qh * hd // tp, [h]),
            ("gate_up_proj", h, [inter // tp, inter // tp]), ("down_proj", inter // tp, [h])]


def lora_kernels(torch, device, use_triton, x, a, z, b, out, st, lo, longest, offsets, rank):
    """(shrink, expand, checked): callables for the Triton kernels when use_triton and they agree
    with the PyTorch loop to 2 % of the largest value, else for the loop."""
    ref_z = lora_sgmv.shrink_reference(torch, x, a, st, lo, 1.0)
    ref_out = lora_sgmv.expand_reference(torch, ref_z, b, st, lo, offsets, rank, out.clone())
    if use_triton:
        try:
            shrink = lora_sgmv.make_shrink(torch, x, a, z, st, lo, longest, 1.0)
            shrink()
            err_z = float((z - ref_z).abs().max() / ref_z.abs().max().clamp_min(1e-30))
            got = out.clone()
            lora_sgmv.make_expand(torch, ref_z, b, got, st, lo, offsets, longest, rank)()
            err_o = float((got.float() - ref_out.float()).abs().max()
                          / ref_out.float().abs().max().clamp_min(1e-30))
            if err_z < 0.02 and err_o < 0.02:
                return shrink, lora_sgmv.make_expand(torch, z, b, out, st, lo, offsets, longest,
                                                     rank), True
            print(f"lora: triton result off (shrink {err_z:.3g}, expand {err_o:.3g}); the loop "
                  "is timed", file=sys.stderr, flush=True)
        except Exception as e:  # a Triton that cannot compile this shape: the loop instead
            print("lora: triton failed, the loop is timed:", repr(e)[:300], file=sys.stderr,
                  flush=True)
    starts, loras = st.tolist(), lo.tolist()
    return (lambda: lora_sgmv.shrink_reference(torch, x, a, starts, loras, 1.0),
            lambda: lora_sgmv.expand_reference(torch, z, b, starts, loras, offsets, rank, out),
            False)


def measure_lora(torch, device, timed, w, tag, models, ranks, adapters_list, tokens, deadline):
    """The lora section (module docstring). Returns (rows, rows timed with the loop)."""
    rows = loops = 0
    bf16 = torch.bfloat16
    use_triton = lora_sgmv.triton is not None and (
        device.type == "cuda" or getattr(lora_sgmv.triton, "runs_on_cpu", False))
    for model, (dims, tps) in models.items():
        for tp in tps:
            for layer, k_in, widths in lora_layers(dims, tp):
                offsets = [0]
                for n in widths:
                    offsets.append(offsets[-1] + n)
                slices = len(widths)
                for rank in ranks:
                    for adapters in adapters_list:
                        slots = 2 * adapters  # the batch uses half the loaded slots
                        a = torch.randn(slots, slices * rank, k_in, device=device,
                                        dtype=bf16) * 0.02
                        b = torch.randn(slots, offsets[-1], rank, device=device,
                                        dtype=bf16) * 0.02
                        for m in tokens:
                            if time.time() > deadline:
                                return rows, loops
                            if adapters > m:
                                continue
                            st, lo, longest = lora_sgmv.segments(torch, m, adapters, device)
                            x = torch.randn(m, k_in, device=device, dtype=bf16)
                            z = torch.zeros(m, slices * rank, device=device,
                                            dtype=torch.float32)
                            out = torch.randn(m, offsets[-1], device=device, dtype=bf16)
                            shrink, expand, fast = lora_kernels(torch, device, use_triton, x, a,
                                                                z, b, out, st, lo, longest,
                                                                offsets, rank)
                            op = layer if fast else layer + "_loop"
                            loops += 0 if fast else 1
                            n_out = offsets[-1]
                            for kind, fn, n, k, moved in (
                                    ("lora_shrink", shrink, slices * rank, k_in,
                                     adapters * slices * rank * k_in * 2 + m * k_in * 2
                                     + m * slices * rank * 4),
                                    ("lora_expand", expand, n_out, rank,
                                     adapters * n_out * rank * 2 + m * slices * rank * 4
                                     + 2 * m * n_out * 2)):
                                try:
                                    us = timed(fn)
                                except Exception as e:  # report, go on
                                    print("lora fail", model, tp, layer, rank, adapters, m, kind,
                                          repr(e)[:200], file=sys.stderr, flush=True)
                                    continue
                                w.writerow([tag, kind, "bf16", model, tp, op, m, n, k, adapters,
                                            slices, rank, "", "", "", f"{us:.2f}",
                                            f"{2 * m * n * k / us / 1e6:.1f}",
                                            f"{moved / us / 1e3:.1f}"])
                                rows += 1
                        del a, b
    return rows, loops


def make_verify_attention(torch, F, device):
    """attend(q, k, v) -> (fn, op): q [B, H, q_len, d], k and v [B, Hkv, L, d]; fn runs the
    verification attention with the lower-right causal mask (module docstring)."""
    has_sdpa = hasattr(F, "scaled_dot_product_attention")
    lower_right = None
    if has_sdpa:
        try:
            from torch.nn.attention.bias import causal_lower_right as lower_right
        except ImportError:  # PyTorch < 2.3
            pass

    def sdpa_gqa(q, k, v, **kw):
        if q.shape[1] == k.shape[1]:
            return (lambda: F.scaled_dot_product_attention(q, k, v, **kw)), ""
        try:
            F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
            return (lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)), ""
        except (TypeError, RuntimeError, NotImplementedError):
            rep = q.shape[1] // k.shape[1]
            return (lambda: F.scaled_dot_product_attention(
                q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), **kw)), "_expandkv"

    def attend(q, k, v):
        q_len, L = q.shape[2], k.shape[2]
        if has_sdpa and q_len == 1:
            fn, suffix = sdpa_gqa(q, k, v)
            return fn, "sdpa" + suffix
        # new token i (0-based) sees keys 0 .. L - q_len + i
        allowed = torch.ones(q_len, L, dtype=torch.bool, device=q.device).tril(L - q_len)
        if lower_right is not None:
            fn, suffix = sdpa_gqa(q, k, v, attn_mask=lower_right(q_len, L))
            return fn, "sdpa_causal_lower_right" + suffix
        if has_sdpa:
            fn, suffix = sdpa_gqa(q, k, v, attn_mask=allowed)
            return fn, "sdpa_bool_mask" + suffix
        rep = q.shape[1] // k.shape[1]

        def unfused():
            kk, vv = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
            s = (q @ kk.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
            s = s.masked_fill(~allowed, float("-inf"))
            return torch.softmax(s.float(), -1).to(q.dtype) @ vv
        return unfused, "unfused_mask" + ("_expandkv" if rep > 1 else "")
    return attend


def measure_verify(torch, F, device, timed, w, tag, models, batches, lens, deadline):
    """The verify section (module docstring), per (q heads, kv heads, head_dim) of the models'
    TP shards. Returns rows."""
    rows = 0
    attend = make_verify_attention(torch, F, device)
    heads = sorted({(d[2] // t, max(1, d[3] // t), d[4]) for d, tps in models.values()
                    for t in tps})
    bf16 = torch.bfloat16
    for qh, kvh, hd in heads:
        for q_len in Q_LENS:
            for B in batches:
                for L in lens:
                    if time.time() > deadline:
                        return rows
                    kvbytes = B * L * kvh * hd * 2 * 2
                    if kvbytes > 24e9:
                        continue
                    q = torch.randn(B, qh, q_len, hd, device=device, dtype=bf16)
                    k = torch.randn(B, kvh, L, hd, device=device, dtype=bf16)
                    v = torch.randn(B, kvh, L, hd, device=device, dtype=bf16)
                    try:
                        fn, op = attend(q, k, v)
                        us = timed(fn, inner=5)
                    except Exception as e:  # report, go on
                        print("verify fail", qh, kvh, hd, q_len, B, L, repr(e)[:200],
                              file=sys.stderr, flush=True)
                        continue
                    fl = 4 * B * qh * q_len * L * hd
                    w.writerow([tag, "attn_verify", "bf16", "", "", op, B * q_len, "", "", B,
                                q_len, L, qh, kvh, hd, f"{us:.2f}", f"{fl / us / 1e6:.1f}",
                                f"{kvbytes / us / 1e3:.1f}"])
                    rows += 1
    return rows


def main(argv):
    args = parse_args(argv)
    import torch  # imported here so that --help works without PyTorch
    import torch.nn.functional as F

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("profile_lora_verify.py: --device cuda but torch.cuda.is_available() is False")
    tag = args.tag or device_tag(torch, device)
    timed = make_timer(torch, device)
    models = TINY_MODELS if args.tiny else MODELS
    if args.models is not None:
        chosen = [x for x in args.models.split(",") if x]
        unknown = [x for x in chosen if x not in models]
        if unknown:
            sys.exit(f"profile_lora_verify.py: --models: unknown {unknown}; expected some of "
                     f"{', '.join(models)}")
        models = {x: models[x] for x in chosen}
    torch.manual_seed(0)
    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, f"lora_verify_{tag}.csv")
    t_start = time.time()
    deadline = t_start + args.budget_s
    rows = loops = 0
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        if "lora" in args.sections:
            rows, loops = measure_lora(
                torch, device, timed, w, tag, models, TINY_RANKS if args.tiny else RANKS,
                TINY_ADAPTERS if args.tiny else ADAPTERS,
                TINY_LORA_TOKENS if args.tiny else LORA_TOKENS, deadline)
            f.flush()
        if "verify" in args.sections:
            rows += measure_verify(torch, F, device, timed, w, tag, models,
                                   TINY_VERIFY_BATCHES if args.tiny else VERIFY_BATCHES,
                                   TINY_VERIFY_LENS if args.tiny else VERIFY_LENS, deadline)
    triton = lora_sgmv.triton
    print(f"wrote {path} rows {rows} in {time.time() - t_start:.0f} s on {device} "
          f"(torch {torch.__version__}, triton "
          f"{getattr(triton, '__version__', 'none') if triton else 'none'}; "
          f"{loops} LoRA shapes timed with the PyTorch loop)")


if __name__ == "__main__":
    main(sys.argv[1:])
