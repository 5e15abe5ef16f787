"""The shapes scripts/profile_gpu.py measures: the kernel tables' columns, the models (dense
dimensions, TP degrees, elementwise chains, MoE experts) with their --tiny stand-ins for CI, the
token counts and attention lengths, each model's dense GEMMs on one TP rank, and what a table
already holds (--skip-measured)."""
import csv

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
