#!/usr/bin/env bash
# CI test of scripts/profile_fp8_block.py on the CPU: the shapes it derives from models/catalog
# (DeepSeek-V3 at TP 8 and 4, Llama-3.1-70B at TP 4), the refusal where block-scaled fp8 cannot
# run, the --no-block table (bf16 rows in the kernel-table columns), and the scale-layout check
# against an emulated torch._scaled_mm (the CPU has no fp8 GEMM).
# Skips (exit 77) when no python3 on the PATH or /usr/bin has PyTorch.
# Usage: profile_fp8_block_test.sh REPO_ROOT
set -euo pipefail
root=$1
. "$(dirname "$0")/torch_python.sh"
find_torch_python profile_fp8_block.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
script=$root/scripts/profile_fp8_block.py

# Shapes per rank from the catalog configs: DeepSeek-V3 (hidden 7168, 128 heads, q_lora 1536,
# kv_lora 512, nope 128, rope 64, v 128, intermediate 18432, one shared expert of 2048) and
# Llama-3.1-70B (hidden 8192, 64 / 8 heads of 128, intermediate 28672).
"$py" "$script" --shapes > "$tmp/shapes.txt"
for s in "deepseek-v3,8,q_b_proj,3072,1536" "deepseek-v3,8,fused_qkv_a_proj,2112,7168" \
         "deepseek-v3,8,kv_b_proj,4096,512" "deepseek-v3,8,o_proj,7168,2048" \
         "deepseek-v3,8,dense_gate_up_proj,4608,7168" "deepseek-v3,8,dense_down_proj,7168,2304" \
         "deepseek-v3,8,shared_gate_up_proj,512,7168" "deepseek-v3,8,shared_down_proj,7168,256" \
         "deepseek-v3,4,q_b_proj,6144,1536" "deepseek-v3,4,o_proj,7168,4096" \
         "deepseek-v3,4,dense_down_proj,7168,4608" "llama-3.1-70b,4,qkv_proj,2560,8192" \
         "llama-3.1-70b,4,o_proj,8192,2048" "llama-3.1-70b,4,gate_up_proj,14336,8192" \
         "llama-3.1-70b,4,down_proj,8192,7168"; do
  grep -qx "$s" "$tmp/shapes.txt" || { echo "missing shape $s"; cat "$tmp/shapes.txt"; exit 1; }
done
# 8 at TP 8, 7 at TP 4 (the replicated fused q_a/kv_a projection once), 4 of Llama.
[ "$(wc -l < "$tmp/shapes.txt")" = 19 ] || { echo "expected 19 shapes"; exit 1; }

# Refused on the CPU without --no-block, naming why and the way out; nothing written.
if "$py" "$script" "$tmp/ref" --device cpu --tiny 2> "$tmp/ref.txt"; then
  echo "block-scaled fp8 on the CPU was accepted"; exit 1
fi
grep -q "block-scaled fp8 GEMMs cannot run here: device cpu" "$tmp/ref.txt"
grep -q -- "--no-block measures the bf16 and per-tensor fp8 rows alone" "$tmp/ref.txt"
[ ! -e "$tmp/ref/fp8_block_cpu.csv" ] || { echo "a refused run wrote a table"; exit 1; }

# --no-block on the CPU: 2 tiny shapes x 3 token counts, bf16 only (no fp8 on the CPU).
"$py" "$script" "$tmp/nb" --device cpu --tiny --no-block
csv=$tmp/nb/fp8_block_cpu.csv
expected_header=$(head -1 "$root/data/realdata/gpu_kernels_h100_h200/kernels_h100.csv")
[ "$(head -1 "$csv")" = "$expected_header" ] || { echo "header differs: $(head -1 "$csv")"; exit 1; }
[ "$(grep -c ',linear,bf16,tiny,1,\(up\|down\)_proj,' "$csv")" = 6 ] && [ "$(wc -l < "$csv")" = 7 ] ||
  { echo "expected 6 bf16 rows"; exit 1; }
# tflops = 2 M N K / time (M = m_tokens for bf16), to the CSV's 0.1.
awk -F, 'NR > 1 && ($16 <= 0 || (2 * $7 * $8 * $9 / $16 / 1e6 - $17) > 0.051 ||
         ($17 - 2 * $7 * $8 * $9 / $16 / 1e6) > 0.051) { print; exit 1 }' "$csv" ||
  { echo "bf16 rows: time or tflops wrong"; exit 1; }

# The scale-layout check against emulated block-scaled products.
"$py" "$root/tests/scripts/fp8_block_layout_check.py" "$root"
echo "profile_fp8_block.py: shapes, refusal, table and layout check passed"
