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

This file is the entry point (options, the table); the work is in the modules beside it:
profile_shapes.py (what is measured), profile_device.py (timer, SDPA), profile_dense.py (linear
layers, attention), profile_elementwise.py, profile_moe.py, profile_mla.py, profile_gemm.py.
"""
import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_dense import measure_attention, measure_linear  # noqa: E402
from profile_device import device_tag, make_sdpa, make_timer  # noqa: E402
from profile_elementwise import measure_elementwise  # noqa: E402
from profile_mla import MLA_MODELS, TINY_MLA_MODELS, measure_mla  # noqa: E402
from profile_moe import measure_moe  # noqa: E402
from profile_shapes import (COLUMNS, DECODE_BATCHES, DECODE_LENS, ELEMENTWISE,  # noqa: E402
                            MODELS, MOE, MOE_EXPERTS, MOE_FRONTIER, PREFILL_LENS,
                            TINY_DECODE_BATCHES, TINY_DECODE_LENS, TINY_ELEMENTWISE, TINY_MODELS,
                            TINY_MOE_EXPERTS, TINY_PREFILL_LENS, TINY_TOKENS, TINY_TPS, TOKENS,
                            TPS, measured_keys)
# Other scripts read these through this module (hardware/measurements/tp_shards/fp16_check.py).
from profile_shapes import linear_shapes  # noqa: E402,F401


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
    sdpa, has_sdpa = make_sdpa(torch, F, device)

    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, f"kernels_{tag}.csv")
    t_start = time.time()
    rows = 0
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)

        def over_budget():
            return time.time() - t_start > args.budget_s
        done = set(skip_linear)
        if "linear" in args.sections:
            rows += measure_linear(torch, device, timed, f, w, tag, models, tps, MOE, tokens,
                                   ["bf16", "fp8"] if fp8 else ["bf16"], done, over_budget)

        # Attention: (q heads, kv heads) per GPU for the models and TP degrees above.
        heads = sorted({(d[2] // t, d[3] // t if d[3] >= t else 1, d[4])
                        for mo, d in models.items() for t in tps[mo]} - skip_heads
                       if args.sections & {"attention", "decode"} else ())
        rows += measure_attention(torch, device, timed, sdpa, f, w, tag, heads,
                                  prefill_lens if "attention" in args.sections else [],
                                  decode_batches if "decode" in args.sections else [],
                                  decode_lens, over_budget)
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
