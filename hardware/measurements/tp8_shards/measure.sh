#!/usr/bin/env bash
# Measures, on this machine's H100 or H200, the tensor-parallel shards (TP 1, 2, 4, 8) of the
# catalog's dense 7-34B models that the shipped tables lack — CodeLlama-34B and Qwen3-32B at
# TP 4/8, Llama-2-13B and Qwen3-14B at TP 4/8, the 7-8B models at TP 8 — in bf16 and fp8
# (--quantization fp8 serves any model in fp8). Each shape already measured is skipped
# (--skip-measured). Run from the repository root on the GPU machine:
#   hardware/measurements/tp8_shards/measure.sh OUTDIR
# Writes OUTDIR/{linear,attention,elementwise}/kernels_<gpu>.csv, OUTDIR/env.txt and logs.
set -euo pipefail
source "$(dirname "$0")/../measure_setup.sh" "$1"  # sets $out and $tag, writes $out/env.txt
known="data/realdata/gpu_kernels_h100_h200/kernels_$tag.csv hardware/measurements/elementwise/elementwise_$tag.csv hardware/measurements/catalog/kernels_catalog_$tag.csv hardware/measurements/tp_shards/kernels_tp_shards_$tag.csv"
models=codellama-34b,qwen3-32b,qwen3-14b,llama-2-13b,llama-3.1-8b,llama-2-7b,mistral-7b,qwen2.5-7b
run() {  # section budget
  python3 scripts/profile_gpu.py "$out/$1" --tag "$tag" --sections "$1" --models "$models" \
    --tps 1,2,4,8 --skip-measured $known --budget-s "$2" 2>&1 | tee "$out/log_$1.txt"
}
run linear "${LINEAR_BUDGET_S:-150}"
run attention "${ATTENTION_BUDGET_S:-30}"
run elementwise "${ELEMENTWISE_BUDGET_S:-120}"
