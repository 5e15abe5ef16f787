#!/usr/bin/env bash
# CI test of scripts/profile_sampler.py on the CPU (--tiny shapes): the script's own numeric
# checks of the sampler ops run first (greedy = argmax, top-k 1 = argmax, top-k 3 stays in the 3
# largest, top-p keeps the smallest set reaching p), then the table: the kernel-table header, one
# row per op x batch x vocabulary, positive times and gbps = batch x vocab x 2 bytes / time.
# Skips (exit 77) when no python3 on the PATH or /usr/bin has PyTorch.
# Usage: profile_sampler_test.sh REPO_ROOT
set -euo pipefail
root=$1
. "$(dirname "$0")/torch_python.sh"
find_torch_python profile_sampler.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$py" "$root/scripts/profile_sampler.py" "$tmp" --device cpu --tiny
csv=$tmp/sampler_cpu.csv
expected_header=$(head -1 "$root/data/realdata/gpu_kernels_h100_h200/kernels_h100.csv")
[ "$(head -1 "$csv")" = "$expected_header" ] || { echo "header differs: $(head -1 "$csv")"; exit 1; }
# --tiny: 2 vocabularies (256, 1000) x 3 batches (1, 4, 16) x 3 ops.
for op in greedy random topk_topp; do
  [ "$(grep -c ",sampler,fp32,tiny\(-1k\)\?,1,$op," "$csv")" = 6 ] || { echo "expected 6 $op rows"; exit 1; }
done
[ "$(wc -l < "$csv")" = 19 ] || { echo "expected 18 rows"; exit 1; }
# m_tokens = batch, vocab in n, time > 0, gbps = batch * vocab * 2 / time(us) / 1e3 (to 0.1).
awk -F, 'NR > 1 && ($7 != $10 || ($8 != 256 && $8 != 1000) || $16 <= 0 ||
         ($18 - $7 * $8 * 2 / $16 / 1e3) > 0.051 || ($7 * $8 * 2 / $16 / 1e3 - $18) > 0.051) { print; exit 1 }' "$csv" ||
  { echo "sampler rows: batch, vocab, time or gbps wrong"; exit 1; }
# --budget-s 0: no measurement starts; the header alone.
"$py" "$root/scripts/profile_sampler.py" "$tmp/none" --device cpu --tiny --budget-s 0
[ "$(wc -l < "$tmp/none/sampler_cpu.csv")" = 1 ] || { echo "--budget-s 0 measured rows"; exit 1; }
echo "profile_sampler.py: 18 rows, checks passed"
