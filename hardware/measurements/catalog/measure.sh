#!/usr/bin/env bash
# Measures, on this machine's H100 or H200, the kernels of servesim's catalog models that the
# shipped tables (data/realdata/gpu_kernels_h100_h200, hardware/measurements/elementwise) lack:
# each shape already there is skipped (profile_gpu.py --skip-measured). Run from the repository
# root on the GPU machine:  hardware/measurements/catalog/measure.sh OUTDIR
# Writes OUTDIR/{linear,attention,elementwise}/kernels_<gpu>.csv, OUTDIR/env.txt and logs.
set -euo pipefail
source "$(dirname "$0")/../measure_setup.sh" "$1"  # sets $out and $tag, writes $out/env.txt
known="data/realdata/gpu_kernels_h100_h200/kernels_$tag.csv hardware/measurements/elementwise/elementwise_$tag.csv"
# Ordered by what servesim's measured runs use first (gpt-oss-120b: the InferenceX H100 rows).
models=gpt-oss-120b,qwen3-32b,qwen2.5-72b,mixtral-8x7b,mixtral-8x22b,qwen3-14b,qwen2.5-7b,llama-2-13b,llama-2-70b,mistral-7b,codellama-34b
run() {  # section budget
  python3 scripts/profile_gpu.py "$out/$1" --tag "$tag" --sections "$1" --models "$models" \
    --skip-measured $known --budget-s "$2" 2>&1 | tee "$out/log_$1.txt"
}
run linear "${LINEAR_BUDGET_S:-230}"
run attention "${ATTENTION_BUDGET_S:-40}"
run elementwise "${ELEMENTWISE_BUDGET_S:-90}"
