#!/usr/bin/env python3
"""Derives the default efficiencies, overheads and non-torch memory of hardware/catalog/*.json
from the measured data in data/realdata. Standard library only; deterministic.

Usage: python3 scripts/derive_gpu_efficiencies.py [REALDATA_DIR]
       (default REALDATA_DIR: <repo>/data/realdata)

Each section prints the figures quoted in the catalog's "sources" notes:
  1. compute_efficiency   Vidur mlp.csv GEMMs at 4096 tokens, TP1: 2*T*in*out / time vs peak.
  2. memory_efficiency    Vidur mlp.csv GEMMs at 1 token, TP1: weight bytes / time vs peak.
  3. step_overhead_s      CodeLlama-34B on H100, vLLM 0.11, synchronous ITL minus roofline.
  4. per_seq_overhead_s   Qwen3-32B TP2 on RTX PRO 6000, vLLM 0.19: decode-step slope in batch.
  5. non_torch_memory     vLLM KV-capacity facts minus weights and an activation model.
  6. cross-checks         RTX 4090 decode bandwidth; CodeLlama prefill; Splitwise (older engine).
"""
import csv
import json
import os
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REALDATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "data", "realdata")
GIB = 2**30

# Datasheet dense peaks used as denominators (the catalog's values).
PEAK = {
    "a100": {"flops": 312e12, "bw": 2.039e12},  # A100-SXM4-80GB (Vidur's a100 SKU is 80 GB)
    "h100": {"flops": 989e12, "bw": 3.35e12},   # H100 SXM 80GB
}
# torch-visible device memory (bytes), see the catalog notes.
H100_VISIBLE = 81090 * 2**20          # torch total_memory=81090MB (public prints)
RTX4090_VISIBLE = 25250627584         # realdata RTX4090 meta.json device_total_memory_bytes


def path(*p):
    return os.path.join(REALDATA, *p)


# ---------------------------------------------------------------- model arithmetic (REFERENCE §4)
def load_model(name):
    with open(os.path.join(REPO, "models", "catalog", name + ".json")) as f:
        return json.load(f)


def dims(c):
    h, heads = c["hidden_size"], c["num_attention_heads"]
    d = c.get("head_dim") or h // heads
    return h, c["intermediate_size"], c["num_hidden_layers"], heads, c.get("num_key_value_heads", heads), d


def params(c):
    """Dense Llama-style parameter count (no MoE needed here)."""
    h, inter, layers, heads, kv, d = dims(c)
    per_layer = h * heads * d + 2 * h * kv * d + heads * d * h + 3 * h * inter + 2 * h
    emb = c["vocab_size"] * h * (1 if c.get("tie_word_embeddings") else 2)
    return layers * per_layer + emb + h


def kv_bytes_per_token(c, tp=1):
    h, inter, layers, heads, kv, d = dims(c)
    return 2 * layers * max(1, -(-kv // tp)) * d * 2


# Qwen3-32B is not in the catalog; HF config as copied in github.com/citsjtu2020/LLM-Prof
# sglang/Model_Config.md.
QWEN3_32B = {"hidden_size": 5120, "intermediate_size": 25600, "num_hidden_layers": 64,
             "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
             "vocab_size": 151936, "tie_word_embeddings": False}


# ---------------------------------------------------------------- 1 + 2: Vidur GEMM tables
def gemm_shapes(r):
    """(op, in, out) of the four linear layers Vidur times (vidur/profiling/mlp/mlp_impl.py)."""
    h, heads, kv = int(r["n_embd"]), int(r["n_head"]), int(r["n_kv_head"])
    inter, tp = int(r["n_expanded_embd"]), int(r["num_tensor_parallel_workers"])
    d = h // heads
    up = (2 if r["use_gated_mlp"] == "True" else 1) * inter
    return [("attn_pre_proj", h, (heads + 2 * kv) * d // tp), ("attn_post_proj", heads * d // tp, h),
            ("mlp_up_proj", h, up // tp), ("mlp_down_proj", inter // tp, h)]


def vidur_rows(gpu):
    base = path("vidur_profiling", "profiling", "compute", gpu)
    for org in sorted(os.listdir(base)):
        for model in sorted(os.listdir(os.path.join(base, org))):
            with open(os.path.join(base, org, model, "mlp.csv")) as f:
                for r in csv.DictReader(f):
                    yield model, r


def vidur_efficiencies(gpu):
    comp, mem, examples = [], [], {}
    for model, r in vidur_rows(gpu):
        if r["num_tensor_parallel_workers"] != "1":
            continue
        tokens = int(r["num_tokens"])
        if tokens not in (1, 4096):
            continue
        for op, n_in, n_out in gemm_shapes(r):
            t = float(r[f"time_stats.{op}.median"]) * 1e-3
            if tokens == 4096:
                frac = 2 * tokens * n_in * n_out / t / PEAK[gpu]["flops"]
                comp.append(frac)
            else:
                frac = 2 * n_in * n_out / t / PEAK[gpu]["bw"]  # bf16 weight bytes
                mem.append(frac)
            if model == "Llama-2-7b-hf" and op == "attn_pre_proj":
                examples[tokens] = (t * 1e3, frac)
    return comp, mem, examples


def summarize(xs):
    return "median %.3f (min %.3f, max %.3f, n=%d)" % (
        statistics.median(xs), min(xs), max(xs), len(xs))


# ---------------------------------------------------------------- 3: step overhead
def codellama_sync_itl():
    rows = []
    for run in ("jan20-prefill-llama7b-tp1-1", "jan20-codellama-prefill-1"):
        with open(path("inferencesim_eval_vllm0110", run, "guidellm_per_request_DERIVED.csv")) as f:
            rows += [r for r in csv.DictReader(f) if r["strategy"] == "synchronous" and r["itl_ms"]]
    itl = statistics.median(float(r["itl_ms"]) for r in rows) * 1e-3
    prompt = statistics.median(int(r["prompt_tokens"]) for r in rows)
    out = statistics.median(int(r["output_tokens"]) for r in rows)
    return itl, prompt, out, len(rows)


# ---------------------------------------------------------------- 4: per-sequence overhead
def qwen3_decode_ticks():
    """Decode-only 1-s ticks of the RTX PRO 6000 Qwen3-32B TP2 run: (running, KV tokens, step s)."""
    base = path("llmservingsim", "bench_examples", "RTXPRO6000", "Qwen3-32B", "vllm")
    with open(os.path.join(base, "requests.jsonl")) as f:
        reqs = [json.loads(line) for line in f]
    with open(os.path.join(base, "timeseries.csv")) as f:
        ticks = list(csv.DictReader(f))
    t0 = min(r["queued_ts"] for r in reqs)  # the tick clock starts with the first request
    out, prev = [], None
    for r in ticks:
        n, gen = int(r["running"]), float(r["gen_throughput"])
        if (prev and float(r["prompt_throughput"]) == 0 and float(prev["prompt_throughput"]) == 0
                and gen > 0 and int(prev["running"]) == n):
            tm = t0 + float(r["t"]) - 0.5
            kv = sum(q["input_toks"] + (tm - q["first_token_ts"]) /
                     (q["last_token_ts"] - q["first_token_ts"]) * q["output_toks"]
                     for q in reqs if q["first_token_ts"] <= tm <= q["last_token_ts"])
            out.append((n, kv, n / gen))
        prev = r
    return out


def main():
    print("== 1/2. Vidur mlp.csv (TP1; QKV, O, up(gate+up), down GEMMs; median times) ==")
    eff = {}
    for gpu in ("h100", "a100"):
        comp, mem, ex = vidur_efficiencies(gpu)
        eff[gpu] = (statistics.median(comp), statistics.median(mem))
        print(f"{gpu}: compute @4096 tok vs {PEAK[gpu]['flops']/1e12:.0f} TFLOPS: {summarize(comp)}")
        print(f"{gpu}: memory  @1 tok    vs {PEAK[gpu]['bw']/1e12:.3f} TB/s:   {summarize(mem)}")
        print(f"{gpu}: e.g. Llama-2-7B QKV 4096->12288: 4096 tok {ex[4096][0]:.3f} ms = "
              f"{ex[4096][1]:.3f} of peak; 1 tok {ex[1][0]:.3f} ms = {ex[1][1]:.3f} of peak BW")

    print("\n== 3. step_overhead_s: CodeLlama-34B, H100, vLLM 0.11.0, synchronous guidellm ==")
    cl = load_model("codellama-34b")
    itl, prompt, out, n = codellama_sync_itl()
    h = cl["hidden_size"]
    weights_read = (params(cl) - cl["vocab_size"] * h) * 2  # the embedding table is gathered, not streamed
    ctx = prompt + out / 2
    kv_read = ctx * kv_bytes_per_token(cl)
    t_roof = (weights_read + kv_read) / (PEAK["h100"]["bw"] * eff["h100"][1])
    print(f"median ITL {itl*1e3:.2f} ms over {n} requests (prompt {prompt}, output {out} tokens)")
    print(f"bytes per decode step: weights {weights_read/1e9:.2f} GB + KV {kv_read/1e9:.3f} GB "
          f"(context {ctx:.0f} tok x {kv_bytes_per_token(cl)} B)")
    print(f"roofline at eta_mem {eff['h100'][1]:.3f}: {t_roof*1e3:.2f} ms  =>  "
          f"step overhead {(itl - t_roof)*1e6:.0f} us")
    print(f"(at eta_mem 1.0 the same step would take {(weights_read+kv_read)/PEAK['h100']['bw']*1e3:.2f} ms;"
          f" the measured ITL implies {(weights_read+kv_read)/itl/PEAK['h100']['bw']:.3f} of peak"
          " with all overheads folded in)")

    print("\n== 4. per_seq_overhead_s: Qwen3-32B TP2, RTX PRO 6000, vLLM 0.19.0 decode-only ticks ==")
    ticks = qwen3_decode_ticks()
    w_rank = (params(QWEN3_32B) - QWEN3_32B["vocab_size"] * QWEN3_32B["hidden_size"]) * 2 / 2
    kv_rank = kv_bytes_per_token(QWEN3_32B, tp=2)
    lo = [t for t in ticks if t[0] == 1]
    hi = [t for t in ticks if t[0] == 128]
    for label, eta in (("eta_mem 1.0", 1.0), ("eta_mem = H100-derived", eff["h100"][1])):
        bw = 1792e9 * eta
        res = lambda t: t[2] - (w_rank + t[1] * kv_rank) / bw  # noqa: E731
        slope = (statistics.median(res(t) for t in hi) - statistics.median(res(t) for t in lo)) / 127
        print(f"{label}: step(1 seq) {statistics.median(t[2] for t in lo)*1e3:.1f} ms, "
              f"step(128 seqs, ~{statistics.median(t[1] for t in hi):.0f} KV tok) "
              f"{statistics.median(t[2] for t in hi)*1e3:.1f} ms; residual slope {slope*1e6:.0f} us/seq")
    print(f"({len(lo)} ticks at 1 running, {len(hi)} at 128; the slope still contains the TP2 all-reduce "
          "growth over PCIe and the sampler, so it is an upper bound)")

    print("\n== 5. non_torch_memory_bytes (vLLM: budget = util * visible; KV = budget - weights - act - non_torch) ==")
    # Activation model (profile_run peak): T tokens * (2h + 3I) bf16 elements (residual, normed
    # input, gate_up, act output) + S sequences * V logits * beta bytes (sampler), S = min(T, max_num_seqs).
    def layer_act(c, tokens):
        return tokens * (2 * c["hidden_size"] + 3 * c["intermediate_size"]) * 2
    kvb = kv_bytes_per_token(cl)
    page = 16 * kvb
    # CodeLlama-34B, H100, util 0.9: (mbt, max_num_seqs, blocks, logged 'Available KV cache memory' GiB)
    runs = [(4096, 256, 2537, 7.43), (64, 32, 2790, 8.18)]
    kv_avail = []
    for mbt, seqs, blocks, logged in runs:
        lo_b = max(blocks * page, (logged - 0.005) * GIB)
        hi_b = min((blocks + 1) * page, (logged + 0.005) * GIB)
        kv_avail.append(((lo_b + hi_b) / 2, (hi_b - lo_b) / 2))
        print(f"CodeLlama mbt {mbt}, seqs {seqs}: {blocks} blocks x 16 x {kvb} B, log {logged} GiB "
              f"=> available KV {kv_avail[-1][0]/GIB:.4f} +- {kv_avail[-1][1]/GIB:.4f} GiB")
    d_act = kv_avail[1][0] - kv_avail[0][0]
    d_layer = layer_act(cl, 4096) - layer_act(cl, 64)
    beta = (d_act - d_layer) / ((256 - 32) * cl["vocab_size"])
    print(f"activation difference {d_act/GIB:.4f} GiB; layer term {d_layer/GIB:.4f} GiB "
          f"=> sampler beta {beta:.1f} B per (sequence x vocab) element")
    act = lambda c, t, s: layer_act(c, t) + min(t, s) * c["vocab_size"] * beta  # noqa: E731
    budget = 0.9 * H100_VISIBLE
    w_cl = params(cl) * 2
    nt_h100 = budget - w_cl - kv_avail[1][0] - act(cl, 64, 32)
    print(f"H100 (vLLM 0.11, TP1): 0.9 x {H100_VISIBLE} = {budget/GIB:.3f} GiB; weights {w_cl/GIB:.3f} GiB; "
          f"act(64,32) {act(cl, 64, 32)/GIB:.3f} GiB => non_torch {nt_h100/GIB:.3f} GiB ({nt_h100:.3e} B)")
    l8 = load_model("llama-3.1-8b")
    budget = 0.9 * RTX4090_VISIBLE
    w_l8 = params(l8) * 2
    kv_4090 = (2588 + 0.5) * 16 * kv_bytes_per_token(l8)
    a = act(l8, 2048, 256)
    nt_4090 = budget - w_l8 - kv_4090 - a
    print(f"RTX 4090 (vLLM 0.19, TP1): 0.9 x {RTX4090_VISIBLE} = {budget/GIB:.3f} GiB; weights {w_l8/GIB:.3f} GiB; "
          f"KV 2588.5 blocks = {kv_4090/GIB:.3f} GiB; act(2048,256) {a/GIB:.3f} GiB "
          f"=> non_torch {nt_4090/GIB:.3f} GiB ({nt_4090:.3e} B)")
    print(f"(with no activation term at all the RTX 4090 residue would be {(budget-w_l8-kv_4090)/GIB:.3f} GiB)")

    print("\n== 6. cross-checks ==")
    base = path("llmservingsim", "bench_examples", "RTX4090", "Llama-3.1-8B", "vllm")
    with open(os.path.join(base, "timeseries.csv")) as f:
        ticks = list(csv.DictReader(f))
    w8 = (params(l8) - l8["vocab_size"] * l8["hidden_size"]) * 2
    for r in ticks:
        if float(r["prompt_throughput"]) == 0 and int(r["running"]) in (15, 16) and float(r["gen_throughput"]) > 0:
            step = int(r["running"]) / float(r["gen_throughput"])
            kv_b = float(r["kv_cache_pct"]) / 100 * 2588 * 16 * kv_bytes_per_token(l8)
            print(f"RTX 4090 decode tick t={r['t']}: {r['running']} seqs, KV {r['kv_cache_pct']}% -> "
                  f"{(w8+kv_b)/1e9:.2f} GB per {step*1e3:.1f} ms step = {(w8+kv_b)/step/1008e9:.3f} of 1008 GB/s")
    with open(path("inferencesim_eval_vllm0110", "jan20-prefill-llama7b-tp1-1", "guidellm_per_request_DERIVED.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["strategy"] == "synchronous" and r["ttft_ms"]]
    ttft = statistics.median(float(r["ttft_ms"]) for r in rows) * 1e-3
    new = statistics.median(int(r["prompt_tokens"]) for r in rows) - 1024  # 1024-token shared prefix cached
    fl = 2 * params(cl) * new
    print(f"CodeLlama-34B H100 prefill (mbt 4096): median TTFT {ttft*1e3:.0f} ms for ~{new} new tokens "
          f"(1024 cached) -> linear-layer FLOPs alone at {fl/ttft/PEAK['h100']['flops']:.3f} of 989 TFLOPS")
    with open(path("splitwise_perf_model", "perf_model.csv")) as f:
        sw = [r for r in csv.DictReader(f) if r["model"] == "llama2-70b" and r["batch_size"] == "1"
              and r["prompt_size"] == "512" and r["token_size"] == "128"]
    l70 = load_model("llama-2-70b")
    for hw, bw in (("h100-80gb", 3.35e12), ("a100-80gb", 2.039e12)):
        for tp in ("2", "4", "8"):
            tt = statistics.median(float(r["token_time"]) for r in sw
                                   if r["hardware"] == hw and r["tensor_parallel"] == tp) * 1e-3
            roof = params(l70) * 2 / int(tp) / bw
            print(f"Splitwise llama2-70b {hw} TP{tp} decode@batch1 {tt*1e3:.1f} ms vs weight roofline "
                  f"{roof*1e3:.1f} ms (older engine; the gap includes all-reduces and eager launches)")


if __name__ == "__main__":
    main()
