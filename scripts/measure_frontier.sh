#!/usr/bin/env bash
# The frontier-model kernels on one lent H100/H200 (hardware/measurements/frontier/README.md):
# MLA layers of DeepSeek-V3/Kimi-K2/DeepSeek-V2-Lite, the routed experts of the frontier MoE
# models per TP and EP shard (bf16 and fp8), and the attention projections and LM heads of the
# grouped-query frontier MoE models that the shipped tables lack. Usage: measure_frontier.sh OUT
set -uo pipefail
cd "$(dirname "$0")/.."
source hardware/measurements/measure_setup.sh "$1"
shipped="data/realdata/gpu_kernels_h100_h200/kernels_$tag.csv
hardware/measurements/catalog/kernels_catalog_$tag.csv
hardware/measurements/tp_shards/kernels_tp_shards_$tag.csv
hardware/measurements/tp8_shards/kernels_tp8_shards_$tag.csv"
python3 scripts/profile_gpu.py "$out/mla" --tag "$tag" --sections mla --budget-s "${MLA_S:-110}" \
  --skip-measured $shipped 2>&1 | tee "$out/log_mla.txt"
python3 scripts/profile_gpu.py "$out/moe" --tag "$tag" --sections moe-frontier \
  --budget-s "${MOE_S:-200}" 2>&1 | tee "$out/log_moe.txt"
python3 scripts/profile_gpu.py "$out/linear" --tag "$tag" --sections linear \
  --models qwen3-235b-a22b,qwen3-30b-a3b,glm-4.5,glm-4.5-air,llama-4-scout \
  --budget-s "${LINEAR_S:-60}" --skip-measured $shipped 2>&1 | tee "$out/log_linear.txt"
