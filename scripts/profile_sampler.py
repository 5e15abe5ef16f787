#!/usr/bin/env python3
"""Measures vLLM V1's native sampler step on this machine's GPU, in the kernel-table columns of
scripts/profile_gpu.py (profile_shapes.COLUMNS), kind `sampler`, one row per (op, batch, vocab).

What each op runs, as vLLM V1 does it (vllm/v1/sample/sampler.py, Sampler.forward and .sample;
vllm/v1/sample/ops/topk_topp_sampler.py, TopKTopPSampler.forward_native, apply_top_k_top_p and
random_sample), starting from the LM head's bf16 logits [batch, vocab]:
  greedy     logits to float32, argmax over the vocabulary (all_greedy).
  random     logits to float32, divided by the per-request temperature, softmax in float32, then
             the exponential race: q ~ Exp(1) per vocabulary entry, argmax(probs / q) (no top-k,
             no top-p: vLLM skips the filter).
  topk_topp  as random, with top-k and top-p applied first by the sort-based path: sort the
             logits ascending, mask below the k-th largest (gathered at vocab - k), softmax and
             cumulative sum over the sorted row, mask the entries whose cumulative probability is
             at most 1 - p (the largest always kept), scatter back to vocabulary order.
FlashInfer's fused top-k/top-p sampler (vLLM's default on CUDA when FlashInfer is installed) and
vLLM's Triton top-k/top-p kernel are not what is timed here: this is the PyTorch-native path
vLLM falls back to (per-request generators, VLLM_USE_FLASHINFER_SAMPLER=0, no FlashInfer).
Penalties, logit processors, logprobs and the bad-words/allowed-token masks are not timed.

Columns: m_tokens = batch = sampled rows, n = vocabulary size, dtype fp32 (the sampler's
arithmetic), tp 1 (vLLM gathers the full logits before sampling), gbps = the bf16 logits read
(batch x vocab x 2 bytes) over the time; tflops empty.

On CUDA each time is the median of 7 replays of a CUDA graph holding 10 calls
(profile_device.make_timer); on the CPU it is wall clock (for testing the script, not a profile).

Usage:
  python3 scripts/profile_sampler.py OUTDIR                  # on the GPU, ~1.5 minutes
  python3 scripts/profile_sampler.py OUTDIR --device cpu --tiny   # what CI runs
Writes OUTDIR/sampler_<tag>.csv (tag from --tag, else h100/h200/the device name).
"""
import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_device import device_tag, make_timer  # noqa: E402
from profile_shapes import COLUMNS  # noqa: E402

# The vocabulary sizes of models/catalog (config.json vocab_size), one model named per size.
VOCABS = {32000: "llama-2-7b", 32768: "mixtral-8x22b", 128256: "llama-3.1-8b",
          129280: "deepseek-v3", 151552: "glm-4.5-air", 151936: "qwen3-32b",
          152064: "qwen2.5-72b", 163840: "kimi-k2", 201088: "gpt-oss-120b"}
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
OPS = ["greedy", "random", "topk_topp"]
TINY_VOCABS = {256: "tiny", 1000: "tiny-1k"}
TINY_BATCHES = [1, 4, 16]
TOP_K, TOP_P, TEMPERATURE = 50, 0.9, 0.7  # typical request settings; the cost is the same


def top_k_top_p_sorted(torch, logits, k, p):
    """The sort-based top-k/top-p mask (vLLM's apply_top_k_top_p, PyTorch path); k [batch]
    int64 in 1..vocab, p [batch] float32. Returns the masked logits in vocabulary order."""
    vocab = logits.shape[-1]
    sorted_logits, order = logits.sort(dim=-1, descending=False)
    kth = sorted_logits.gather(1, (vocab - k).unsqueeze(1))
    sorted_logits.masked_fill_(sorted_logits < kth, float("-inf"))
    cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    drop = cum <= (1 - p).unsqueeze(1)
    drop[:, -1] = False
    sorted_logits.masked_fill_(drop, float("-inf"))
    return torch.empty_like(sorted_logits).scatter_(-1, order, sorted_logits)


def exponential_race(torch, probs):
    """vLLM's random_sample without per-request generators: argmax(probs / Exp(1) noise)."""
    q = torch.empty_like(probs).exponential_()
    return probs.div_(q).argmax(dim=-1)


def make_ops(torch, logits, temperature, k, p):
    """The three sampler steps over bf16 `logits`; each starts from a float32 copy (vLLM's
    logits.to(torch.float32)), so repeated calls (CUDA-graph replays) see the same input."""
    def greedy():
        return logits.to(torch.float32).argmax(dim=-1)

    def random():
        x = logits.to(torch.float32).div_(temperature.unsqueeze(1))
        return exponential_race(torch, x.softmax(dim=-1))

    def topk_topp():
        x = logits.to(torch.float32).div_(temperature.unsqueeze(1))
        x = top_k_top_p_sorted(torch, x, k, p)
        return exponential_race(torch, x.softmax(dim=-1))

    return {"greedy": greedy, "random": random, "topk_topp": topk_topp}


def check_ops(torch, device):
    """Numeric checks on a small case before timing: greedy is the row maximum; top-k 1 always
    samples the argmax; top-k 3 with top-p 1 samples only among the 3 largest; top-p keeps the
    smallest set whose mass reaches p."""
    g = torch.Generator(device="cpu").manual_seed(0)
    # distinct values, exact in bf16 (no ties for argmax and the k-th largest to split)
    logits = torch.stack([torch.randperm(50, generator=g) for _ in range(64)]) / 8.0
    logits = logits.to(device=device, dtype=torch.bfloat16)
    ones = torch.ones(64, device=device)
    ops = make_ops(torch, logits, ones, torch.ones(64, dtype=torch.long, device=device), ones)
    best = logits.float().argmax(-1)
    assert torch.equal(ops["greedy"](), best), "greedy is not the argmax"
    assert torch.equal(ops["topk_topp"](), best), "top-k 1 sampled another token than the argmax"
    k3 = torch.full((64,), 3, dtype=torch.long, device=device)
    top3 = logits.float().topk(3, dim=-1).indices
    for _ in range(5):
        s = make_ops(torch, logits, ones, k3, ones)["topk_topp"]()
        assert (top3 == s.unsqueeze(1)).any(1).all(), "top-k 3 sampled outside the 3 largest"
    row = torch.tensor([[0.0, 1.0, 2.0, 3.0]], device=device).log()  # probs 0, 1/6, 2/6, 3/6
    kept = top_k_top_p_sorted(torch, row.clone(), torch.tensor([4], device=device),
                              torch.tensor([0.6], device=device))
    assert torch.isinf(kept[0, :2]).all() and torch.isfinite(kept[0, 2:]).all(), kept


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir", help="folder for sampler_<tag>.csv")
    p.add_argument("--device", default=None, help="cuda or cpu [cuda when available]")
    p.add_argument("--tag", default=None, help="the gpu column and file tag [from the device]")
    p.add_argument("--tiny", action="store_true", help="tiny shapes (CI; CPU)")
    p.add_argument("--budget-s", type=float, default=120.0,
                   help="stop starting new measurements after this many seconds [120]")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    import torch
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    tag = args.tag or device_tag(torch, device)
    timed = make_timer(torch, device)
    check_ops(torch, device)
    vocabs = TINY_VOCABS if args.tiny else VOCABS
    batches = TINY_BATCHES if args.tiny else BATCHES
    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, f"sampler_{tag}.csv")
    t_start = time.time()
    rows = 0
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for vocab, model in vocabs.items():
            for batch in batches:
                if time.time() - t_start > args.budget_s:
                    break
                logits = torch.randn(batch, vocab, device=device, dtype=torch.bfloat16)
                temperature = torch.full((batch,), TEMPERATURE, device=device)
                k = torch.full((batch,), min(TOP_K, vocab), dtype=torch.long, device=device)
                p = torch.full((batch,), TOP_P, device=device)
                for op, fn in make_ops(torch, logits, temperature, k, p).items():
                    us = timed(fn)
                    gbps = batch * vocab * 2 / (us * 1e-6) / 1e9
                    w.writerow([tag, "sampler", "fp32", model, 1, op, batch, vocab, "", batch,
                                "", "", "", "", "", f"{us:.2f}", "", f"{gbps:.1f}"])
                    rows += 1
                f.flush()
                del logits
    print(f"wrote {path} rows {rows} in {time.time() - t_start:.0f} s on {device} "
          f"(torch {torch.__version__})")


if __name__ == "__main__":
    main(sys.argv[1:])
