#!/usr/bin/env bash
# Measures, on this machine's H100 or H200, the TP shards (TP 1, 2, 4) of the 7-8B dense models that the
# Argonne static-batch runs use (data/realdata/argonne_llm_inference_bench, docs/validation.md §6)
# and the shipped tables lack: each shape already measured is skipped (--skip-measured).
# Run from the repository root on the GPU machine:  hardware/measurements/tp_shards/measure.sh OUTDIR
# Writes OUTDIR/{linear,attention,elementwise}/kernels_<gpu>.csv, OUTDIR/env.txt and logs.
set -euo pipefail
source "$(dirname "$0")/../measure_setup.sh" "$1"  # sets $out and $tag, writes $out/env.txt
known="data/realdata/gpu_kernels_h100_h200/kernels_$tag.csv hardware/measurements/elementwise/elementwise_$tag.csv hardware/measurements/catalog/kernels_catalog_$tag.csv"
models=llama-3.1-8b,llama-2-7b,mistral-7b,qwen2.5-7b
run() {  # section budget
  python3 scripts/profile_gpu.py "$out/$1" --tag "$tag" --sections "$1" --models "$models" \
    --tps 1,2,4 --no-fp8 --skip-measured $known --budget-s "$2" 2>&1 | tee "$out/log_$1.txt"
}
run linear "${LINEAR_BUDGET_S:-120}"
run attention "${ATTENTION_BUDGET_S:-30}"
run elementwise "${ELEMENTWISE_BUDGET_S:-90}"
