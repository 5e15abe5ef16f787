#!/usr/bin/env bash
# Rebuilds the shipped kernel tables hardware/kernels/<gpu>.json from the measured files in
# data/realdata and hardware/measurements (hardware/kernels/README.md says what each holds).
# Needs build/servesim.
#   scripts/derive_kernel_tables.sh [SERVESIM_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
servesim=${1:-build/servesim}
R=data/realdata
K=$R/gpu_kernels_h100_h200
E=hardware/measurements/elementwise
C=hardware/measurements/catalog
M=hardware/measurements/moe
T=hardware/measurements/tp_shards
T8=hardware/measurements/tp8_shards
F=hardware/measurements/frontier
# The frontier files were measured with --skip-measured against the first two tables only, so
# 168 of their GEMM rows (a few shapes the TP-shard files had) repeat a measured point: they are
# left out here (rows whose dtype, m_tokens, n, k an earlier file of the GPU holds), so that each
# curve still comes from one program.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
new_shapes() {  # new_shapes GPU_TAG FILE...: the frontier files without repeated GEMM points
  local tag=$1; shift
  for f in "$@"; do
    awk -F, 'FNR == NR { if ($2 == "linear") seen[$3 FS $7 FS $8 FS $9] = 1; next }
             FNR == 1 || $2 != "linear" || !(($3 FS $7 FS $8 FS $9) in seen)' \
      <(cat $K/kernels_$tag.csv $C/kernels_catalog_$tag.csv $T/kernels_tp_shards_$tag.csv \
            $T8/kernels_tp8_shards_$tag.csv) "$f" > "$tmp/$(basename "$f")"
  done
}
new_shapes h100 $F/mla_h100.csv $F/linear_frontier_h100.csv
new_shapes h200 $F/mla_h200.csv $F/linear_frontier_h200.csv
"$servesim" calibrate --gpu h100-sxm --kernels $K/kernels_h100.csv $E/elementwise_h100.csv $C/kernels_catalog_h100.csv $M/moe_h100.csv $T/kernels_tp_shards_h100.csv $T8/kernels_tp8_shards_h100.csv "$tmp/mla_h100.csv" $F/moe_frontier_h100.csv "$tmp/linear_frontier_h100.csv" \
  --out hardware/kernels/h100-sxm.json \
  --description "Measured kernel tables: $K/kernels_h100.csv (one H100 SXM, PyTorch 2.11 / CUDA 13, CUDA-graph replays; bf16 and fp8 GEMMs of 5 models at each TP shard, SDPA causal prefill) and $E/elementwise_h100.csv (one H100 SXM, 2026-11-25, scripts/profile_gpu.py --sections elementwise: each layer's elementwise chain compiled by torch.compile, 7 models' shapes at 1-4 TP shards) and $C/kernels_catalog_h100.csv (one H100 SXM, 2026-11-26, scripts/profile_gpu.py --skip-measured: the GEMMs, prefill attention and elementwise chains of the other 10 catalog models that the first two files lack; MoE experts excluded) and $M/moe_h100.csv (one H100 SXM, 2026-11-26, scripts/profile_gpu.py --sections moe: the routed experts of gpt-oss-120b and the two Mixtrals as bf16 grouped GEMMs, torch._grouped_mm) and $T/kernels_tp_shards_h100.csv (one H100 SXM, 2026-11-26, scripts/profile_gpu.py --tps 1,2,4 --skip-measured: the TP 2 and 4 shards of Llama-2-7B, Llama-3.1-8B, Mistral-7B and Qwen2.5-7B that the other files lack) and $T8/kernels_tp8_shards_h100.csv (one H100 SXM, 2026-11-26, scripts/profile_gpu.py --tps 1,2,4,8 --skip-measured: the TP 4 and 8 shards of CodeLlama-34B, Qwen3-32B, Qwen3-14B and Llama-2-13B and the TP 8 shards of the 7-8B models, bf16 and fp8, that the other files lack) and $F/mla_h100.csv, $F/moe_frontier_h100.csv, $F/linear_frontier_h100.csv (one H100 SXM, 2026-11-27, scripts/measure_frontier.sh: the dense GEMMs of DeepSeek-V3/Kimi-K2/DeepSeek-V2-Lite MLA layers, shared experts, dense layers and LM heads; the routed experts of nine frontier MoE models as grouped GEMMs per TP and EP shard (the MLA attention rows are read but make no curve); the attention projections and LM heads of Qwen3-235B-A22B, Qwen3-30B-A3B, GLM-4.5, GLM-4.5-Air and Llama-4-Scout). Per-shape isotonic fit of log time. Made by scripts/derive_kernel_tables.sh."
"$servesim" calibrate --gpu h200 --kernels $K/kernels_h200.csv $E/elementwise_h200.csv $C/kernels_catalog_h200.csv $M/moe_h200.csv $T/kernels_tp_shards_h200.csv $T8/kernels_tp8_shards_h200.csv "$tmp/mla_h200.csv" $F/moe_frontier_h200.csv "$tmp/linear_frontier_h200.csv" \
  --out hardware/kernels/h200.json \
  --description "Measured kernel tables: $K/kernels_h200.csv (one H200, PyTorch 2.11 / CUDA 13, CUDA-graph replays; bf16 and fp8 GEMMs of 5 models at each TP shard, SDPA causal prefill) and $E/elementwise_h200.csv (one H200, 2026-11-25, scripts/profile_gpu.py --sections elementwise, as for the H100) and $C/kernels_catalog_h200.csv (one H200, 2026-11-26, as for the H100) and $M/moe_h200.csv (one H200, 2026-11-26, as for the H100) and $T/kernels_tp_shards_h200.csv (one H200, 2026-11-26, as for the H100) and $T8/kernels_tp8_shards_h200.csv (one H200, 2026-11-26, as for the H100) and $F/mla_h200.csv, $F/moe_frontier_h200.csv, $F/linear_frontier_h200.csv (one H200, 2026-11-27, as for the H100). Per-shape isotonic fit of log time. Made by scripts/derive_kernel_tables.sh."
# Vidur's a100 SKU is the 80 GB part (data/realdata/README.md); bf16 GEMMs only, no attention.
"$servesim" calibrate --gpu a100-80gb --kernels $R/vidur_profiling/profiling/compute/a100/*/*/mlp.csv \
  --out hardware/kernels/a100-80gb.json \
  --description "Measured kernel tables: the QKV, O, gate+up and down GEMMs of every row of Vidur's A100 mlp.csv profiles ($R/vidur_profiling/profiling/compute/a100/*/*/mlp.csv: 8 models, TP 1-8, bf16; median times). Per-shape isotonic fit of log time. Made by scripts/derive_kernel_tables.sh."
