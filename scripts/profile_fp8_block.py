#!/usr/bin/env python3
"""Measures DeepSeek-style block-scaled FP8 GEMMs on this machine's GPU beside per-tensor FP8 and
bf16 GEMMs of the same shapes, in the kernel-table columns of scripts/profile_gpu.py
(profile_shapes.COLUMNS): kind `linear` rows (dtype bf16, and fp8 with per-tensor scales, as
scripts/profile_gemm.py times them) and kind `linear_fp8_block` rows (dtype fp8: e4m3 weights
with one float32 scale per 128 x 128 block, activations with one scale per token per 128-wide
group of K, bf16 out: the scheme of DeepSeek-V3's checkpoint, quantization_config
weight_block_size [128, 128], which vLLM runs with per-token-group activation quantization).

The block-scaled GEMM is torch._scaled_mm with block scale tensors, where the PyTorch build and
GPU support it (Hopper or newer, a recent PyTorch). Which memory layout of the scales the build
expects is determined, not assumed: before timing, each candidate layout (activation scales
[M, K/128] row- or column-major; weight scales [K/128, N/128] or [N/128, K/128], row- or
column-major) is run on the first shape with block-varying scales and compared against a float32
product of the dequantized operands; the first layout within 2 % (relative Frobenius error) is
used, and the script refuses, naming every layout's error, when none matches. Without that
support the script refuses too (exit 1, nothing written) unless --no-block asks for the bf16 and
per-tensor rows alone.

Shapes (one TP rank, from models/catalog): DeepSeek-V3 at TP 8 and 4 (fused q_a + kv_a down
projection, q_b, kv_b and o projections, the dense MLP of the first first_k_dense_replace
layers, the shared expert) and Llama-3.1-70B at TP 4 (qkv, o, gate_up, down). fp8 rows run at
M padded to a multiple of 16 (what _scaled_mm needs; m_tokens keeps the requested count). On CUDA
each time is the median of 7 replays of a CUDA graph of 10 calls (profile_device.make_timer).

Usage:
  python3 scripts/profile_fp8_block.py OUTDIR                 # on the GPU, ~1.5 minutes
  python3 scripts/profile_fp8_block.py OUTDIR --device cpu --tiny --no-block   # CI: bf16 rows
  python3 scripts/profile_fp8_block.py --shapes               # print the shapes, measure nothing
Writes OUTDIR/fp8_block_<tag>.csv.
"""
import argparse
import csv
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from profile_device import device_tag, make_timer  # noqa: E402
from profile_gemm import make_gemm  # noqa: E402
from profile_shapes import COLUMNS, TOKENS  # noqa: E402

CATALOG = os.path.join(HERE, "..", "models", "catalog")
BLOCK = 128
TINY_SHAPES = [("tiny", 1, "up_proj", 256, 128), ("tiny", 1, "down_proj", 128, 256)]
TINY_TOKENS = [1, 16, 32]


def load_config(name):
    with open(os.path.join(CATALOG, name + ".json")) as f:
        return json.load(f)


def deepseek_shapes(cfg, tp):
    """(op, N, K) of DeepSeek-V3's block-quantized GEMMs on one of tp ranks, as vLLM shards them:
    the q_a and kv_a down projections fused and replicated (q_lora_rank + kv_lora_rank +
    qk_rope_head_dim outputs), q_b / kv_b column-parallel over heads, o row-parallel, the dense
    MLP and the shared expert(s) column/row-parallel."""
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"] // tp
    nope, rope, v = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    q_lora, kv_lora = cfg["q_lora_rank"], cfg["kv_lora_rank"]
    dense = cfg["intermediate_size"] // tp
    shared = cfg["moe_intermediate_size"] * cfg["n_shared_experts"] // tp
    return [("q_b_proj", heads * (nope + rope), q_lora),
            ("fused_qkv_a_proj", q_lora + kv_lora + rope, h),
            ("kv_b_proj", heads * (nope + v), kv_lora),
            ("o_proj", h, heads * v),
            ("dense_gate_up_proj", 2 * dense, h), ("dense_down_proj", h, dense),
            ("shared_gate_up_proj", 2 * shared, h), ("shared_down_proj", h, shared)]


def llama_shapes(cfg, tp):
    h, qh, kvh = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", h // qh)
    inter = cfg["intermediate_size"] // tp
    return [("qkv_proj", (qh // tp + 2 * max(1, kvh // tp)) * hd, h), ("o_proj", h, qh * hd // tp),
            ("gate_up_proj", 2 * inter, h), ("down_proj", h, inter)]


def shapes():
    """[(model, tp, op, N, K)], a (N, K) already listed for the same model once."""
    ds, llama = load_config("deepseek-v3"), load_config("llama-3.1-70b")
    out, seen = [], set()
    for model, tp, ops in [("deepseek-v3", 8, deepseek_shapes(ds, 8)),
                           ("deepseek-v3", 4, deepseek_shapes(ds, 4)),
                           ("llama-3.1-70b", 4, llama_shapes(llama, 4))]:
        for op, n, k in ops:
            if (model, n, k) not in seen:
                seen.add((model, n, k))
                out.append((model, tp, op, n, k))
    return out


def cdiv(a, b):
    return (a + b - 1) // b


def block_support(torch, device):
    """'' when this build can run a block-scaled fp8 _scaled_mm here, else why not."""
    if device.type != "cuda":
        return f"device {device.type}: fp8 GEMMs need a CUDA GPU"
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        return f"PyTorch {torch.__version__} has no float8_e4m3fn / torch._scaled_mm"
    if torch.cuda.get_device_capability(0) < (9, 0):
        return "block-scaled fp8 needs compute capability 9.0 (Hopper) or newer"
    return ""


def scale_layouts(torch, sx, sw):
    """Candidate (name, scale_a, scale_b) for activation scales sx [M, Kb] and weight scales
    sw [Nb, Kb] (the b operand is the weight transposed, [K, N])."""
    a = {"a[M,Kb] row-major": sx, "a[M,Kb] col-major": sx.t().contiguous().t()}
    b = {"b[Kb,Nb] col-major": sw.t(), "b[Kb,Nb] row-major": sw.t().contiguous(),
         "b[Nb,Kb] row-major": sw, "b[Nb,Kb] col-major": sw.t().contiguous().t()}
    return [(f"{na}, {nb}", va, vb) for na, va in a.items() for nb, vb in b.items()]


def find_layout(torch, device, n, k, m=128):
    """The scale layout whose block-scaled product matches the float32 product of the
    dequantized operands within 2 %, on an [m, k] x [k, n] GEMM whose scales vary by 2^-4..2^4
    from block to block (a wrong layout applies the wrong scales: errors of order 1). Returns
    the layout's index in scale_layouts or exits naming each layout's error."""
    g = torch.Generator(device="cpu").manual_seed(0)
    nb, kb = cdiv(n, BLOCK), cdiv(k, BLOCK)
    sw = torch.pow(2.0, torch.randint(-4, 5, (nb, kb), generator=g).float()) / 64
    sx = torch.pow(2.0, torch.randint(-4, 5, (m, kb), generator=g).float()) / 64
    wq = torch.randn(n, k, generator=g).clamp(-4, 4).to(device).to(torch.float8_e4m3fn)
    xq = torch.randn(m, k, generator=g).clamp(-4, 4).to(device).to(torch.float8_e4m3fn)
    sw, sx = sw.to(device), sx.to(device)
    w = wq.float() * sw.repeat_interleave(BLOCK, 0)[:n].repeat_interleave(BLOCK, 1)[:, :k]
    x = xq.float() * sx.repeat_interleave(BLOCK, 1)[:, :k]
    ref = x @ w.t()
    errors = []
    for i, (name, sa, sb) in enumerate(scale_layouts(torch, sx, sw)):
        try:
            out = torch._scaled_mm(xq, wq.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
            err = ((out.float() - ref).norm() / ref.norm()).item()
        except Exception as e:  # this layout (or block scales at all) refused by the build
            errors.append(f"{name}: {repr(e)[:160]}")
            continue
        if err < 0.02:
            print(f"block scales: {name} (relative error {err:.4f} against float32)")
            return i
        errors.append(f"{name}: relative error {err:.3f}")
    sys.exit("profile_fp8_block.py: this PyTorch build's torch._scaled_mm does not compute a "
             f"128x128 / 1x128 block-scaled fp8 GEMM ({n}x{k}, M {m}) under any scale layout:\n  "
             + "\n  ".join(errors) + "\n(--no-block measures the bf16 and per-tensor fp8 rows)")


def make_block_gemm(torch, device, layout, m, n, k):
    mm = max(16, cdiv(m, 16) * 16)
    a = torch.randn(mm, k, device=device).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn)
    sx = torch.rand(mm, cdiv(k, BLOCK), device=device) + 0.5
    sw = torch.rand(cdiv(n, BLOCK), cdiv(k, BLOCK), device=device) + 0.5
    _, sa, sb = scale_layouts(torch, sx, sw)[layout]
    return (lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb,
                                     out_dtype=torch.bfloat16)), mm


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir", nargs="?", help="folder for fp8_block_<tag>.csv")
    p.add_argument("--device", default=None, help="cuda or cpu [cuda when available]")
    p.add_argument("--tag", default=None, help="the gpu column and file tag [from the device]")
    p.add_argument("--tiny", action="store_true", help="tiny shapes (CI; CPU)")
    p.add_argument("--no-block", action="store_true",
                   help="measure only the bf16 and per-tensor fp8 rows (no block-scaled GEMM)")
    p.add_argument("--shapes", action="store_true", help="print the shapes and exit")
    p.add_argument("--budget-s", type=float, default=120.0,
                   help="stop starting new measurements after this many seconds [120]")
    args = p.parse_args(argv)
    if not args.shapes and not args.outdir:
        p.error("OUTDIR is required (unless --shapes)")
    return args


def main(argv):
    args = parse_args(argv)
    todo = TINY_SHAPES if args.tiny else shapes()
    if args.shapes:
        for row in todo:
            print(",".join(map(str, row)))
        return
    import torch
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    tag = args.tag or device_tag(torch, device)
    why_not = block_support(torch, device)
    if why_not and not args.no_block:
        sys.exit(f"profile_fp8_block.py: block-scaled fp8 GEMMs cannot run here: {why_not} "
                 "(--no-block measures the bf16 and per-tensor fp8 rows alone)")
    fp8 = (device.type == "cuda" and hasattr(torch, "float8_e4m3fn")
           and hasattr(torch, "_scaled_mm") and torch.cuda.get_device_capability(0) >= (8, 9))
    layout = None if args.no_block else find_layout(torch, device, todo[0][3], todo[0][4])
    timed = make_timer(torch, device)
    tokens = TINY_TOKENS if args.tiny else TOKENS
    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, f"fp8_block_{tag}.csv")
    t_start, rows = time.time(), 0
    variants = [("linear", "bf16")] + ([("linear", "fp8")] if fp8 else []) + (
        [("linear_fp8_block", "fp8")] if layout is not None else [])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for model, tp, op, n, k in todo:
            for m in tokens:
                if time.time() - t_start > args.budget_s:
                    break
                for kind, dt in variants:
                    try:
                        if kind == "linear":
                            fn, mm = make_gemm(torch, device, dt, m, n, k)
                        else:
                            fn, mm = make_block_gemm(torch, device, layout, m, n, k)
                        us = timed(fn)
                    except Exception as e:  # an unsupported shape: report, go on
                        print("fail", model, tp, op, m, kind, dt, repr(e)[:160], file=sys.stderr,
                              flush=True)
                        continue
                    # operands, bf16 output, and the float32 scales of the block variant
                    bytes_ = (mm * k + n * k) * (2 if dt == "bf16" else 1) + mm * n * 2
                    if kind == "linear_fp8_block":
                        bytes_ += 4 * (mm * cdiv(k, BLOCK) + cdiv(n, BLOCK) * cdiv(k, BLOCK))
                    w.writerow([tag, kind, dt, model, tp, op, m, n, k, "", "", "", "", "", "",
                                f"{us:.2f}", f"{2 * mm * n * k / us / 1e6:.1f}",
                                f"{bytes_ / us / 1e3:.1f}"])
                    rows += 1
            f.flush()
    print(f"wrote {path} rows {rows} in {time.time() - t_start:.0f} s on {device} "
          f"(torch {torch.__version__}; variants {', '.join(k + '/' + d for k, d in variants)})")


if __name__ == "__main__":
    main(sys.argv[1:])
