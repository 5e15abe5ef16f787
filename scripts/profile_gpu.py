#!/usr/bin/env python3
"""Measures the kernels a transformer serving step is made of on this machine's GPU, as the
kernel tables servesim ships (data/realdata/gpu_kernels_h100_h200/kernels_h100.csv: same
columns): dense linear layers (bf16, and fp8 where PyTorch and the GPU have it) of common models
at each tensor-parallel shard, attention through PyTorch SDPA (causal prefill of one sequence;
decode of a batch over contiguous K/V), each layer's elementwise chain compiled as vLLM V1 runs
it, and (not in the default sections) MoE routed experts as grouped GEMMs (moe: gpt-oss, Mixtral;
moe-frontier: DeepSeek, Kimi-K2, Qwen3-MoE, GLM-4.5, Llama-4, Qwen3-Next, per TP and EP shard)
and multi-head latent attention (mla: scripts/profile_mla.py).

Derived from data/realdata/gpu_kernels_h100_h200/measure.py (the program that made the shipped
H100/H200 tables); differences: command-line options, a CPU path (wall-clock timing, no CUDA
graphs; for testing the script, not for profiles), PyTorch versions without SDPA's enable_gqa
(K/V heads are expanded first) and a --tiny mode for CI.

On CUDA each time is the median of 7 replays of a CUDA graph holding 10 (linear) or 5 (attention)
back-to-back calls, divided by the calls: launch gaps are excluded, as in vLLM's graph-captured
steps. fp8 GEMMs need M divisible by 16, so rows with fewer tokens run at M = 16.

Usage:
  python3 scripts/profile_gpu.py OUTDIR                 # on the GPU, ~8 minutes
  python3 scripts/profile_gpu.py OUTDIR --device cpu --tiny   # what CI runs
  servesim calibrate --gpu h100-pcie --kernels OUTDIR/kernels_<tag>.csv --out my-h100-pcie.json
Writes OUTDIR/kernels_<tag>.csv (tag from --tag, else h100/h200/the device name).
"""
import argparse
import csv
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_mla import MLA_MODELS, TINY_MLA_MODELS, measure_mla  # noqa: E402

COLUMNS = ["gpu", "kind", "dtype", "model", "tp", "op", "m_tokens", "n", "k", "batch", "q_len",
           "kv_len", "q_heads", "kv_heads", "head_dim", "time_us", "tflops", "gbps"]

MODELS = {  # hidden, intermediate, q heads, kv heads, head_dim, vocab
    "llama-3.1-8b": (4096, 14336, 32, 8, 128, 128256),
    "llama-3.1-70b": (8192, 28672, 64, 8, 128, 128256),
    "llama-2-7b": (4096, 11008, 32, 32, 128, 32000),
    "codellama-34b": (8192, 22016, 64, 8, 128, 32016),
    "qwen2.5-32b": (5120, 27648, 40, 8, 128, 152064),
    # The rest of servesim's catalog (models/catalog), not in the shipped H100/H200 tables.
    # MoE models (MOE below): their attention projections and LM head only; the routed experts
    # are not dense GEMMs (servesim charges them by the roofline).
    "gpt-oss-120b": (2880, 2880, 64, 8, 64, 201088),
    "qwen3-32b": (5120, 25600, 64, 8, 128, 151936),
    "qwen3-14b": (5120, 17408, 40, 8, 128, 151936),
    "qwen2.5-72b": (8192, 29568, 64, 8, 128, 152064),
    "qwen2.5-7b": (3584, 18944, 28, 4, 128, 152064),
    "llama-2-13b": (5120, 13824, 40, 40, 128, 32000),
    "llama-2-70b": (8192, 28672, 64, 8, 128, 32000),
    "mistral-7b": (4096, 14336, 32, 8, 128, 32000),
    "mixtral-8x7b": (4096, 14336, 32, 8, 128, 32000),
    "mixtral-8x22b": (6144, 16384, 48, 8, 128, 32768),
    # Frontier MoE models with grouped-query attention: attention projections and LM head (their
    # experts: --sections moe-frontier; DeepSeek and Kimi-K2's MLA layers: --sections mla).
    "qwen3-235b-a22b": (4096, 1536, 64, 4, 128, 151936),
    "qwen3-30b-a3b": (2048, 768, 32, 4, 128, 151936),
    "glm-4.5": (5120, 1536, 96, 8, 128, 151552),
    "glm-4.5-air": (4096, 1408, 96, 8, 128, 151552),
    "llama-4-scout": (5120, 8192, 40, 8, 128, 202048),
}
MOE = {"gpt-oss-120b", "mixtral-8x7b", "mixtral-8x22b", "qwen3-235b-a22b", "qwen3-30b-a3b",
       "glm-4.5", "glm-4.5-air", "llama-4-scout"}
TPS = {"llama-3.1-8b": [1, 2], "llama-3.1-70b": [1, 2, 4, 8], "llama-2-7b": [1],
       "codellama-34b": [1, 2], "qwen2.5-32b": [1, 2], "gpt-oss-120b": [1, 2, 4, 8],
       "qwen3-32b": [1, 2, 4], "qwen3-14b": [1, 2], "qwen2.5-72b": [1, 2, 4, 8],
       "qwen2.5-7b": [1, 2], "llama-2-13b": [1, 2], "llama-2-70b": [1, 2, 4, 8],
       "mistral-7b": [1, 2], "mixtral-8x7b": [1, 2, 4, 8], "mixtral-8x22b": [2, 4, 8],
       "qwen3-235b-a22b": [4, 8], "qwen3-30b-a3b": [1, 2], "glm-4.5": [8],
       "glm-4.5-air": [2, 4], "llama-4-scout": [4, 8]}
# Elementwise chain (below): the dense models above plus the ones servesim's measured runs use
# whose GEMM shapes are not above, and gpt-oss-120b (MoE: the SwiGLU runs on top-k rows per token
# over the experts' intermediate width; its MXFP4 experts take bf16 activations, so no fp8 quant).
# model: (hidden, intermediate, q heads, kv heads, head_dim, top-k or 1), TP degrees, dtypes
ELEMENTWISE = {
    "llama-3.1-70b": ((8192, 28672, 64, 8, 128, 1), [1, 2, 4, 8], ["fp8", "bf16"]),
    "gpt-oss-120b": ((2880, 2880, 64, 8, 64, 4), [1, 2, 4, 8], ["bf16"]),
    "llama-3.1-8b": ((4096, 14336, 32, 8, 128, 1), [1, 2], ["bf16", "fp8"]),
    "codellama-34b": ((8192, 22016, 64, 8, 128, 1), [1, 2, 4], ["bf16"]),
    "qwen3-32b": ((5120, 25600, 64, 8, 128, 1), [1, 2], ["bf16"]),
    "llama-2-7b": ((4096, 11008, 32, 32, 128, 1), [1], ["bf16"]),
    "qwen2.5-32b": ((5120, 27648, 40, 8, 128, 1), [1, 2], ["bf16"]),
    "qwen3-14b": ((5120, 17408, 40, 8, 128, 1), [1, 2], ["bf16"]),
    "qwen2.5-72b": ((8192, 29568, 64, 8, 128, 1), [2, 4, 8], ["bf16"]),
    "qwen2.5-7b": ((3584, 18944, 28, 4, 128, 1), [1], ["bf16"]),
    "llama-2-13b": ((5120, 13824, 40, 40, 128, 1), [1], ["bf16"]),
    "mixtral-8x7b": ((4096, 14336, 32, 8, 128, 2), [1, 2, 4], ["bf16"]),
    "mixtral-8x22b": ((6144, 16384, 48, 8, 128, 2), [4, 8], ["bf16"]),
}
TINY_ELEMENTWISE = {"tiny": ((64, 128, 4, 2, 16, 1), [1, 2], ["bf16"])}
# MoE routed experts (--sections moe): model: (hidden, expert intermediate, experts, top-k),
# TP degrees (each expert TP-sharded, vLLM's default), EP degrees (--enable-expert-parallel: each
# rank holds experts / EP whole experts). From the models' config.json.
MOE_EXPERTS = {
    "gpt-oss-120b": ((2880, 2880, 128, 4), [1, 2, 4, 8], []),
    "mixtral-8x7b": ((4096, 14336, 8, 2), [1, 2, 4, 8], []),
    "mixtral-8x22b": ((6144, 16384, 8, 2), [2, 4, 8], []),
}
# The frontier MoE models (--sections moe-frontier): DeepSeek-V3/R1, Kimi-K2 (DeepSeek's
# architecture, 384 experts), Qwen3-235B-A22B / 30B-A3B, GLM-4.5 / -Air, Llama-4 Scout /
# Maverick (top-1), Qwen3-Next-80B-A3B (512 experts, top-10).
MOE_FRONTIER = {
    "deepseek-v3": ((7168, 2048, 256, 8), [4, 8], [4, 8]),
    "kimi-k2": ((7168, 2048, 384, 8), [8], [8]),
    "qwen3-235b-a22b": ((4096, 1536, 128, 8), [2, 4, 8], [4, 8]),
    "qwen3-30b-a3b": ((2048, 768, 128, 8), [1, 2, 4], [2, 4]),
    "glm-4.5": ((5120, 1536, 160, 8), [4, 8], [8]),
    "glm-4.5-air": ((4096, 1408, 128, 8), [1, 2, 4], [4]),
    "llama-4-scout": ((5120, 8192, 16, 1), [1, 2, 4, 8], [8]),
    "llama-4-maverick": ((5120, 8192, 128, 1), [4, 8], [8]),
    "qwen3-next-80b-a3b": ((2048, 512, 512, 10), [1, 2, 4], [4]),
}
TINY_MOE_EXPERTS = {"tiny": ((64, 64, 8, 2), [1, 2], [2])}
TOKENS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
PREFILL_LENS = [256, 512, 1024, 2048, 4096, 8192]
DECODE_BATCHES = [1, 8, 32, 64, 128, 256]
DECODE_LENS = [512, 1024, 2048, 4096, 8192]

# --tiny: shapes small enough for a CPU in a few seconds (CI exercises the script end to end).
TINY_MODELS = {"tiny": (64, 128, 4, 2, 16, 256)}
TINY_TPS = {"tiny": [1, 2]}
TINY_TOKENS = [1, 8, 16, 32]
TINY_PREFILL_LENS = [16, 32]
TINY_DECODE_BATCHES = [1, 2]
TINY_DECODE_LENS = [16, 32]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir", help="folder for kernels_<tag>.csv")
    p.add_argument("--device", default=None, help="cuda or cpu [cuda when available]")
    p.add_argument("--tag", default=None, help="the gpu column and file tag [from the device]")
    p.add_argument("--tiny", action="store_true", help="tiny shapes (CI; CPU)")
    p.add_argument("--budget-s", type=float, default=480.0,
                   help="stop starting new measurements after this many seconds [480]")
    p.add_argument("--no-fp8", action="store_true", help="skip fp8 GEMMs")
    p.add_argument("--sections", default="linear,attention,decode,elementwise",
                   help="comma-separated subset of linear, attention (causal prefill), decode "
                        "(decode attention), elementwise, moe (routed experts of gpt-oss and "
                        "Mixtral), moe-frontier (routed experts of DeepSeek, Kimi, Qwen3-MoE, "
                        "GLM, Llama-4, Qwen3-Next, TP and EP shards), mla (DeepSeek/Kimi "
                        "multi-head latent attention: projections, absorbed decode, prefill); "
                        "the last three not in the default [linear,attention,decode,elementwise]")
    p.add_argument("--no-compile", action="store_true",
                   help="elementwise: eager rows only (no torch.compile)")
    p.add_argument("--models", default=None,
                   help="comma-separated subset of the models measured [all of them, in order]")
    p.add_argument("--tps", default=None,
                   help="comma-separated TP degrees measured for every chosen model, instead of "
                        "each model's own list (e.g. 1,2,4 for a deployment's shards)")
    p.add_argument("--skip-measured", nargs="+", default=[], metavar="CSV",
                   help="kernel tables whose GEMM shapes (dtype, tokens, N, K) and prefill-"
                        "attention head configurations are not measured again (to extend a "
                        "table with the shapes it lacks)")
    a = p.parse_args(argv)
    a.sections = set(x for x in a.sections.split(",") if x)
    if a.tps is not None:
        try:
            a.tps = [int(x) for x in a.tps.split(",") if x]
        except ValueError:
            p.error(f"--tps: '{a.tps}' is not a comma-separated list of whole numbers")
        if not a.tps or any(t < 1 for t in a.tps):
            p.error(f"--tps: {a.tps}; expected TP degrees >= 1")
    bad = a.sections - {"linear", "attention", "decode", "elementwise", "moe", "moe-frontier",
                        "mla"}
    if bad:
        p.error(f"--sections: unknown {sorted(bad)}; expected linear, attention, decode, "
                "elementwise, moe, moe-frontier, mla")
    return a


def device_tag(torch, device):
    if device.type != "cuda":
        return device.type
    name = torch.cuda.get_device_name(0)
    if "H200" in name:
        return "h200"
    if "H100" in name:
        return "h100"
    return name.replace(" ", "_")


def make_timer(torch, device):
    def timed_cuda(fn, inner=10, reps=7):
        fn()
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(inner):
                fn()
        g.replay()
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) * 1e3 / inner)
        del g
        return statistics.median(ts)

    def timed_cpu(fn, inner=10, reps=7):
        fn()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            ts.append((time.perf_counter() - t0) * 1e6 / inner)
        return statistics.median(ts)

    return timed_cuda if device.type == "cuda" else timed_cpu


def linear_shapes(dims, tp, moe=False):
    """(op, N, K) of a layer's dense GEMMs on one TP rank; an MoE model's experts are left out."""
    h, inter, qh, kvh, hd, vocab = dims
    kv_rank = max(1, kvh // tp)
    attn = [("qkv_proj", (qh // tp + 2 * kv_rank) * hd, h), ("o_proj", h, qh * hd // tp)]
    mlp = [] if moe else [("gate_up_proj", 2 * inter // tp, h), ("down_proj", h, inter // tp)]
    return attn + mlp + [("lm_head", vocab // tp, h)]


def measured_keys(paths):
    """What the kernel tables at `paths` already hold: GEMM keys (dtype, m_tokens, n, k),
    attention head configurations (q_heads, kv_heads, head_dim) with prefill rows, and compiled
    elementwise-chain shapes (dtype, hidden, width, q_heads, kv_heads, head_dim)."""
    linear, heads, elem = set(), set(), set()
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r.get("kind") == "linear":
                    linear.add((r["dtype"], int(r["m_tokens"]), int(r["n"]), int(r["k"])))
                elif r.get("kind") == "attn_prefill":
                    heads.add((int(r["q_heads"]), int(r["kv_heads"]), int(r["head_dim"])))
                elif r.get("kind") == "elementwise" and r.get("op") == "layer_compiled":
                    elem.add((r["dtype"], int(r["n"]), int(r["k"]), int(r["q_heads"]),
                              int(r["kv_heads"]), int(r["head_dim"])))
    return linear, heads, elem


def elementwise_bytes(hidden, width, q_heads, kv_heads, head_dim, fp8):
    """Bytes one token moves through a layer's elementwise chain (the ideal traffic; the gbps
    column): two fused residual-add + RMSNorms (read x and residual, write residual and the
    normed output, fp8 when the GEMMs are), RoPE on q and k (read + write), the KV-cache write
    (read k, v; write them), SiLU·mul (read gate and up, write the product) and, under fp8, the
    quantisation of the attention output before o_proj. Same formula as servesim's
    elementwise_bytes_per_token (hardware/kernel_profile.h)."""
    a, o = 2, (1 if fp8 else 2)
    b = 2 * hidden * (3 * a + o) + 2 * (q_heads + kv_heads) * head_dim * a
    b += 4 * kv_heads * head_dim * a + width * (2 * a + o)
    if fp8:
        b += q_heads * head_dim * (a + 1)
    return b


def measure_elementwise(torch, F, device, timed, w, tag, configs, tokens, fp8_ok, compile_ok,
                        deadline, skip=frozenset()):
    """The elementwise kernels between a layer's GEMMs, as vLLM V1 runs them: its ops' native
    PyTorch forms (RMSNorm.forward_native with the residual add, RotaryEmbedding.forward_native
    neox style, SiluAndMul.forward_native, static per-tensor fp8 quantisation), compiled by
    torch.compile/Inductor with the token dimension dynamic (vLLM V1 compiles the model so, with
    custom ops off by default), plus the KV-cache write (reshape_and_cache_flash: a scatter into
    the cache by slot, eager here). One row per (model, TP, dtype, tokens): op layer_compiled (what
    servesim reads) and layer_eager (the same chain unfused, for reference); a shape in `skip`
    (measured_keys) is not measured again. Returns rows."""
    rows = 0
    bf16 = torch.bfloat16
    for model, (dims, tps, dtypes) in configs.items():
        hidden, inter, qh_all, kvh_all, hd, topk = dims
        for tp in tps:
            qh, kvh = qh_all // tp, max(1, kvh_all // tp)
            inter_rank = inter // tp
            for dt in dtypes:
                fp8 = dt == "fp8"
                if fp8 and not fp8_ok:
                    continue
                if (dt, hidden, topk * inter_rank, qh, kvh, hd) in skip:
                    continue
                eps = 1e-5

                def add_rms(x, res, weight, scale):
                    xf = x.to(torch.float32) + res.to(torch.float32)
                    new_res = xf.to(bf16)
                    var = xf.pow(2).mean(-1, keepdim=True)
                    y = (xf * torch.rsqrt(var + eps)).to(bf16) * weight
                    if fp8:
                        y = (y.to(torch.float32) / scale).clamp(-448.0, 448.0).to(
                            torch.float8_e4m3fn)
                    return y, new_res

                def rope(cos_sin, x, heads):
                    x = x.reshape(x.shape[0], heads, hd)
                    cos, sin = cos_sin.chunk(2, dim=-1)
                    cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)
                    x1, x2 = x.chunk(2, dim=-1)
                    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

                def chain(mlp_out, o_out, res, qkv, positions, cache, gate_up, attn_out, w1, w2,
                          scale):
                    x, res = add_rms(mlp_out, res, w1, scale)  # input_layernorm
                    q, k, v = qkv.split([qh * hd, kvh * hd, kvh * hd], dim=-1)
                    cos_sin = cache.index_select(0, positions)
                    q, k = rope(cos_sin, q, qh), rope(cos_sin, k, kvh)
                    y, res = add_rms(o_out, res, w2, scale)  # post_attention_layernorm
                    d = gate_up.shape[-1] // 2
                    act = F.silu(gate_up[..., :d]) * gate_up[..., d:]
                    if fp8:
                        act = (act.to(torch.float32) / scale).clamp(-448.0, 448.0).to(
                            torch.float8_e4m3fn)
                        attn_q = (attn_out.to(torch.float32) / scale).clamp(-448.0, 448.0).to(
                            torch.float8_e4m3fn)
                        return x, q, k, v.reshape(v.shape[0], kvh, hd), y, res, act, attn_q
                    return x, q, k, v.reshape(v.shape[0], kvh, hd), y, res, act, attn_out

                variants = [("layer_eager", chain)]
                if compile_ok:
                    # A fresh compile per configuration (dynamo would count each one as a
                    # recompile of `chain` and fall back to eager past its limit); static shapes
                    # but the token dimension, as vLLM marks it.
                    torch._dynamo.reset()
                    variants.insert(0, ("layer_compiled", torch.compile(chain, dynamic=False)))
                for op, fn_chain in variants:
                    for m in tokens:
                        if time.time() > deadline:
                            return rows
                        try:
                            mk = lambda *shape: torch.randn(*shape, device=device, dtype=bf16)  # noqa: E731
                            t = dict(mlp=mk(m, hidden), o=mk(m, hidden), res=mk(m, hidden),
                                     qkv=mk(m, (qh + 2 * kvh) * hd),
                                     pos=torch.randint(0, 4096, (m,), device=device),
                                     cache=mk(4096, hd), gate_up=mk(m * topk, 2 * inter_rank),
                                     attn=mk(m, qh * hd), w1=mk(hidden), w2=mk(hidden),
                                     scale=torch.ones((), device=device))
                            if op == "layer_compiled" and m > 1:
                                for key in ("mlp", "o", "res", "qkv", "pos", "gate_up", "attn"):
                                    torch._dynamo.mark_dynamic(t[key], 0)
                            kc = torch.zeros(m, kvh, hd, device=device, dtype=bf16)
                            vc = torch.zeros(m, kvh, hd, device=device, dtype=bf16)
                            slots = torch.randperm(m, device=device)

                            def step():
                                out = fn_chain(t["mlp"], t["o"], t["res"], t["qkv"], t["pos"],
                                               t["cache"], t["gate_up"], t["attn"], t["w1"],
                                               t["w2"], t["scale"])
                                kc.index_copy_(0, slots, out[2].reshape(m, kvh, hd))
                                vc.index_copy_(0, slots, out[3])

                            us = timed(step)
                            width = topk * inter_rank
                            per_tok = elementwise_bytes(hidden, width, qh, kvh, hd, fp8)
                            w.writerow([tag, "elementwise", dt, model, tp, op, m, hidden, width,
                                        "", "", "", qh, kvh, hd, f"{us:.2f}", "",
                                        f"{per_tok * m / us / 1e3:.1f}"])
                            rows += 1
                        except Exception as e:  # report, go on
                            print("elementwise fail", model, tp, dt, op, m, repr(e)[:200],
                                  file=sys.stderr, flush=True)
                            if op == "layer_compiled":
                                break
    return rows


def route(torch, gen, tokens, experts, topk):
    """Rows each expert gets when `tokens` tokens each pick top-k distinct experts uniformly at
    random (the routing servesim's expected_experts_touched assumes)."""
    choice = torch.rand(tokens, experts, generator=gen).topk(topk, dim=1).indices
    return torch.bincount(choice.flatten(), minlength=experts)


def measure_moe(torch, device, timed, w, tag, configs, tokens, deadline, fp8_ok=False):
    """An MoE layer's routed-expert GEMMs, bf16, as one grouped GEMM per projection
    (torch._grouped_mm where PyTorch has it, else a loop of per-expert matmuls), per shard:
    - TP (vLLM's default): every expert sliced by TP; each of `m` tokens picks top-k distinct
      experts uniformly at random (fixed seed), rows are grouped by expert, then gate_up
      [rows, hidden] x [E, hidden, 2·I/tp] and down [rows, I/tp] x [E, I/tp, hidden];
    - EP (--enable-expert-parallel with data-parallel attention, EP = DP ranks): each rank holds
      E/ep whole experts and receives, after the all-to-all dispatch, the rows that the ep ranks'
      m tokens each (m·ep tokens routed as above) sent to its experts (about m·top-k).
    Rows: kind moe, op experts_gate_up | experts_down (+ "_ep" for EP shards, + "_loop" without
    _grouped_mm), tp = the TP or EP degree, m_tokens = tokens per rank, n and k the per-rank
    GEMM, batch = experts on the rank, q_len = top-k, kv_len = routed rows on the rank, q_heads =
    experts that got at least one row. With fp8_ok and torch._scaled_grouped_mm, each grouped GEMM
    is timed again in fp8 (e4m3 inputs and weights, row-wise scales, bf16 out): dtype fp8 rows.
    Returns rows."""
    rows = 0
    bf16 = torch.bfloat16
    grouped = hasattr(torch, "_grouped_mm") and device.type == "cuda"
    grouped_fp8 = grouped and fp8_ok and hasattr(torch, "_scaled_grouped_mm")
    gen = torch.Generator(device="cpu").manual_seed(0)
    for model, ((hidden, inter, experts, topk), tps, eps) in configs.items():
        shards = [("", t, experts, inter // t) for t in tps]
        shards += [("_ep", e, experts // e, inter) for e in eps if experts % e == 0]
        for suffix, degree, local, i_rank in shards:
            if time.time() > deadline:
                return rows
            w1 = torch.randn(local, hidden, 2 * i_rank, device=device, dtype=bf16) * 0.02
            w2 = torch.randn(local, i_rank, hidden, device=device, dtype=bf16) * 0.02
            if grouped:  # _grouped_mm wants the last dimension of the weights contiguous
                w1 = w1.transpose(-2, -1).contiguous().transpose(-2, -1)
                w2 = w2.transpose(-2, -1).contiguous().transpose(-2, -1)
            weights = {"experts_gate_up": w1, "experts_down": w2}
            w8 = {}
            if grouped_fp8:  # converted once per shard (keeps the K-contiguous layout)
                w8 = {op: wt.to(torch.float8_e4m3fn) for op, wt in weights.items()}
            for m in tokens:
                if time.time() > deadline:
                    return rows
                if suffix:  # EP: the m·ep tokens of all ranks, this rank's first E/ep experts
                    counts = route(torch, gen, m * degree, experts, topk)[:local]
                else:
                    counts = route(torch, gen, m, experts, topk)
                routed = int(counts.sum())
                if routed == 0:
                    continue
                offs = torch.cumsum(counts, 0).to(torch.int32).to(device)
                inputs = {"experts_gate_up": torch.randn(routed, hidden, device=device, dtype=bf16),
                          "experts_down": torch.randn(routed, i_rank, device=device, dtype=bf16)}
                bounds = [0] + torch.cumsum(counts, 0).tolist()
                hit = int((counts > 0).sum())
                for op, wt in weights.items():
                    x = inputs[op]
                    n, k = wt.shape[2], wt.shape[1]

                    def write(dtype, name, us, moved):  # moved: bytes of weights hit + rows
                        w.writerow([tag, "moe", dtype, model, degree, name, m, n, k, local, topk,
                                    routed, hit, "", "", f"{us:.2f}",
                                    f"{2 * routed * n * k / us / 1e6:.1f}",
                                    f"{moved / us / 1e3:.1f}"])

                    def loop(x=x, wt=wt):
                        for e in range(local):
                            if bounds[e + 1] > bounds[e]:
                                torch.matmul(x[bounds[e]:bounds[e + 1]], wt[e])
                    try:
                        us, name = None, op + suffix + "_loop"
                        if grouped:
                            try:
                                us = timed(lambda: torch._grouped_mm(x, wt, offs=offs))
                                name = op + suffix
                            except Exception as e:  # this shape or build: the loop instead
                                print("moe grouped_mm fail, loop instead", model, degree, op, m,
                                      repr(e)[:200], file=sys.stderr, flush=True)
                        if us is None:
                            us = timed(loop)
                        write("bf16", name, us, hit * n * k * 2 + routed * (n + k) * 2)
                        rows += 1
                    except Exception as e:  # report, go on
                        print("moe fail", model, degree, op, m, repr(e)[:200], file=sys.stderr,
                              flush=True)
                    if op not in w8:
                        continue
                    try:
                        x8 = x.to(torch.float8_e4m3fn)
                        sa = torch.ones(x.shape[0], device=device, dtype=torch.float32)
                        sb = torch.ones(local, wt.shape[2], device=device, dtype=torch.float32)
                        us = timed(lambda: torch._scaled_grouped_mm(
                            x8, w8[op], sa, sb, offs=offs, out_dtype=bf16))
                        write("fp8", op + suffix, us, hit * n * k + routed * (k + 2 * n))
                        rows += 1
                    except Exception as e:  # report, go on
                        print("moe fp8 fail", model, degree, op, m, repr(e)[:200],
                              file=sys.stderr, flush=True)
            del w1, w2, weights, w8
    return rows


def main(argv):
    args = parse_args(argv)
    import torch  # imported here so that --help works without PyTorch
    import torch.nn.functional as F

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("profile_gpu.py: --device cuda but torch.cuda.is_available() is False")
    tag = args.tag or device_tag(torch, device)
    timed = make_timer(torch, device)
    models, tps = (TINY_MODELS, TINY_TPS) if args.tiny else (MODELS, TPS)
    elementwise = TINY_ELEMENTWISE if args.tiny else ELEMENTWISE
    moe = TINY_MOE_EXPERTS if args.tiny else MOE_EXPERTS
    frontier = {} if args.tiny else MOE_FRONTIER
    mla = TINY_MLA_MODELS if args.tiny else MLA_MODELS
    if args.models is not None:
        chosen = [x for x in args.models.split(",") if x]
        known = list(dict.fromkeys(list(models) + list(moe) + list(frontier) + list(mla)))
        unknown = [x for x in chosen if x not in known]
        if unknown:
            sys.exit(f"profile_gpu.py: --models: unknown {unknown}; expected some of "
                     f"{', '.join(known)}")
        models = {x: models[x] for x in chosen if x in models}
        elementwise = {x: c for x, c in elementwise.items() if x in models}
        moe = {x: c for x, c in moe.items() if x in chosen}
        frontier = {x: c for x, c in frontier.items() if x in chosen}
        mla = {x: c for x, c in mla.items() if x in chosen}
    if args.tps is not None:  # the same TP degrees for every model measured
        tps = {x: args.tps for x in models}
        elementwise = {x: (d, args.tps, dts) for x, (d, _, dts) in elementwise.items()}
    skip_linear, skip_heads, skip_elem = measured_keys(args.skip_measured)
    tokens = TINY_TOKENS if args.tiny else TOKENS
    prefill_lens = TINY_PREFILL_LENS if args.tiny else PREFILL_LENS
    decode_batches = TINY_DECODE_BATCHES if args.tiny else DECODE_BATCHES
    decode_lens = TINY_DECODE_LENS if args.tiny else DECODE_LENS
    # fp8: torch._scaled_mm on a GPU with fp8 tensor cores (Hopper, Ada, Blackwell).
    fp8 = (not args.no_fp8 and device.type == "cuda" and hasattr(torch, "float8_e4m3fn")
           and hasattr(torch, "_scaled_mm") and torch.cuda.get_device_capability(0) >= (8, 9))
    has_sdpa = hasattr(F, "scaled_dot_product_attention")  # PyTorch >= 2.0
    has_gqa = False
    if has_sdpa:
        try:
            F.scaled_dot_product_attention(*(torch.zeros(1, 2, 1, 8, device=device),) * 3,
                                           enable_gqa=True)
            has_gqa = True
        except TypeError:  # PyTorch < 2.5
            pass

    def sdpa(q, k, v, causal):
        if has_gqa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        rep = q.shape[1] // k.shape[1]  # expand K/V heads to the query heads
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        if has_sdpa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        # PyTorch 1.x (Debian bookworm's python3-torch): the same math unfused. Only for testing
        # the script; its times are not a flash-attention kernel's.
        s = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
        if causal:
            L = q.shape[-2]
            s = s.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1),
                              float("-inf"))
        return torch.softmax(s.float(), -1).to(q.dtype) @ v

    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, f"kernels_{tag}.csv")
    t_start = time.time()
    rows = 0
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        done = set(skip_linear)
        for model, dims in (models.items() if "linear" in args.sections else ()):
            for tp in tps[model]:
                for op, n, k in linear_shapes(dims, tp, model in MOE):
                    for m in tokens:
                        if time.time() - t_start > args.budget_s:
                            break
                        for dt in (["bf16", "fp8"] if fp8 else ["bf16"]):
                            key = (dt, m, n, k)
                            if key in done:
                                continue  # a shape shared by two models appears once
                            done.add(key)
                            try:
                                if dt == "bf16":
                                    a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
                                    b = torch.randn(n, k, device=device, dtype=torch.bfloat16)
                                    o = torch.empty(m, n, device=device, dtype=torch.bfloat16)
                                    fn = lambda: torch.matmul(a, b.t(), out=o)  # noqa: E731
                                    mm = m
                                else:
                                    mm = max(16, (m + 15) // 16 * 16)
                                    a = torch.randn(mm, k, device=device).to(torch.float8_e4m3fn)
                                    b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn)
                                    sa = torch.ones((), device=device)
                                    sb = torch.ones((), device=device)
                                    fn = lambda: torch._scaled_mm(  # noqa: E731
                                        a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
                                us = timed(fn)
                                bytes_ = (mm * k + n * k) * (2 if dt == "bf16" else 1) + mm * n * 2
                                w.writerow([tag, "linear", dt, model, tp, op, m, n, k, "", "", "",
                                            "", "", "", f"{us:.2f}",
                                            f"{2 * mm * n * k / us / 1e6:.1f}",
                                            f"{bytes_ / us / 1e3:.1f}"])
                                rows += 1
                            except Exception as e:  # an unsupported shape: report, go on
                                print("linear fail", model, tp, op, m, dt, repr(e)[:120],
                                      file=sys.stderr, flush=True)
                f.flush()

        # Attention: (q heads, kv heads) per GPU for the models and TP degrees above.
        heads = sorted({(d[2] // t, d[3] // t if d[3] >= t else 1, d[4])
                        for mo, d in models.items() for t in tps[mo]} - skip_heads
                       if args.sections & {"attention", "decode"} else ())
        for qh, kvh, hd in heads:
            for L in (prefill_lens if "attention" in args.sections else ()):  # prefill: one sequence, causal, q = kv = L
                if time.time() - t_start > args.budget_s:
                    break
                q = torch.randn(1, qh, L, hd, device=device, dtype=torch.bfloat16)
                kk = torch.randn(1, kvh, L, hd, device=device, dtype=torch.bfloat16)
                v = torch.randn(1, kvh, L, hd, device=device, dtype=torch.bfloat16)
                us = timed(lambda: sdpa(q, kk, v, True), inner=5)
                fl = 4 * qh * L * L * hd / 2
                w.writerow([tag, "attn_prefill", "bf16", "", "", "sdpa_causal", L, "", "", 1, L, L,
                            qh, kvh, hd, f"{us:.2f}", f"{fl / us / 1e6:.1f}", ""])
                rows += 1
            for B in (decode_batches if "decode" in args.sections else ()):
                # decode: q = 1 per sequence over kv = L cached tokens
                for L in decode_lens:
                    if time.time() - t_start > args.budget_s:
                        break
                    if B * L * kvh * hd * 2 * 2 > 24e9:
                        continue
                    q = torch.randn(B, qh, 1, hd, device=device, dtype=torch.bfloat16)
                    kk = torch.randn(B, kvh, L, hd, device=device, dtype=torch.bfloat16)
                    v = torch.randn(B, kvh, L, hd, device=device, dtype=torch.bfloat16)
                    us = timed(lambda: sdpa(q, kk, v, False), inner=5)
                    kvbytes = B * L * kvh * hd * 2 * 2
                    w.writerow([tag, "attn_decode", "bf16", "", "", "sdpa", B, "", "", B, 1, L, qh,
                                kvh, hd, f"{us:.2f}", "", f"{kvbytes / us / 1e3:.1f}"])
                    rows += 1
            f.flush()
        if "elementwise" in args.sections:
            compile_ok = (not args.no_compile and device.type == "cuda"
                          and hasattr(torch, "compile"))
            rows += measure_elementwise(torch, F, device, timed, w, tag,
                                        elementwise, tokens,
                                        fp8, compile_ok, t_start + args.budget_s, skip_elem)
        moe_sets = ([moe] if "moe" in args.sections else []) + (
            [frontier] if "moe-frontier" in args.sections else [])
        for chosen_moe in moe_sets:
            if args.tps is not None:  # --tps replaces the TP degrees; EP degrees stay
                chosen_moe = {x: (d, args.tps, e) for x, (d, _, e) in chosen_moe.items()}
            rows += measure_moe(torch, device, timed, w, tag, chosen_moe, tokens,
                                t_start + args.budget_s, fp8)
        if "mla" in args.sections:
            if args.tps is not None:
                mla = {x: (d, args.tps) for x, (d, _) in mla.items()}
            rows += measure_mla(torch, F, device, timed, w, tag, mla, tokens, decode_batches,
                                decode_lens, prefill_lens, fp8, t_start + args.budget_s, done)
    print(f"wrote {path} rows {rows} in {time.time() - t_start:.0f} s on {device} "
          f"(torch {torch.__version__}{'' if has_sdpa else ', attention unfused: no SDPA'})")


if __name__ == "__main__":
    main(sys.argv[1:])
