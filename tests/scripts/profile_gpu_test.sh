#!/usr/bin/env bash
# CI test of scripts/profile_gpu.py on the CPU (--tiny shapes), and of what reads its output:
# servesim calibrate --kernels (a profile with monotone per-shape curves) and servesim
# kernel-check (exact at every measured point of a series that was already monotone).
# Skips (exit 77) when no python3 on the PATH or /usr/bin has PyTorch (Debian: python3-torch;
# SERVESIM_WITH_TORCH=1 scripts/setup.sh installs it; .ci/run does).
# Usage: profile_gpu_test.sh SERVESIM_BINARY REPO_ROOT
set -euo pipefail
servesim=$1
root=$2
. "$(dirname "$0")/torch_python.sh"
find_torch_python profile_gpu.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$py" "$root/scripts/profile_gpu.py" "$tmp" --device cpu --tiny
csv=$tmp/kernels_cpu.csv

# Same columns, in the same order, as the shipped H100 table.
expected_header=$(head -1 "$root/data/realdata/gpu_kernels_h100_h200/kernels_h100.csv")
[ "$(head -1 "$csv")" = "$expected_header" ] || { echo "header differs: $(head -1 "$csv")"; exit 1; }
# --tiny: 5 distinct GEMM shapes (TP 1 and 2, shared shapes once) × 4 token counts; 2 head
# configurations × (2 prefill lengths + 2 batches × 2 lengths).
[ "$(grep -c ',linear,' "$csv")" = 20 ] || { echo "expected 20 linear rows"; exit 1; }
[ "$(grep -c ',attn_prefill,' "$csv")" = 4 ] || { echo "expected 4 prefill rows"; exit 1; }
[ "$(grep -c ',attn_decode,' "$csv")" = 8 ] || { echo "expected 8 decode rows"; exit 1; }
# The elementwise chain: 2 TP shards × 4 token counts, eager only (no torch.compile on the CPU).
[ "$(grep -c ',elementwise,bf16,tiny,[12],layer_eager,' "$csv")" = 8 ] ||
  { echo "expected 8 elementwise rows"; exit 1; }

# --skip-measured: a second run given the first one's table measures none of its GEMM points or
# head configurations again (decode rows go with their head configuration); the eager
# elementwise rows stay, since only compiled shapes count as measured.
"$py" "$root/scripts/profile_gpu.py" "$tmp/again" --device cpu --tiny --skip-measured "$csv"
again=$tmp/again/kernels_cpu.csv
for kind in linear attn_prefill attn_decode; do
  [ "$(grep -c ",$kind," "$again" || true)" = 0 ] || { echo "--skip-measured remeasured $kind"; exit 1; }
done
[ "$(grep -c ',elementwise,' "$again")" = 8 ] || { echo "expected 8 eager rows again"; exit 1; }
# --sections attention is prefill only, --sections decode decode only.
"$py" "$root/scripts/profile_gpu.py" "$tmp/pre" --device cpu --tiny --sections attention
[ "$(wc -l < "$tmp/pre/kernels_cpu.csv")" = 5 ] && ! grep -q attn_decode "$tmp/pre/kernels_cpu.csv" ||
  { echo "--sections attention: expected the 4 prefill rows only"; exit 1; }
# --sections moe (not in the default): 2 TP shards × 4 token counts × 2 projections, on the CPU
# as a loop of per-expert matmuls; routed rows = tokens × top-k, experts hit ≤ min(8, rows).
"$py" "$root/scripts/profile_gpu.py" "$tmp/moe" --device cpu --tiny --sections moe
[ "$(grep -c ',moe,bf16,tiny,[12],experts_\(gate_up\|down\)_loop,' "$tmp/moe/kernels_cpu.csv")" = 16 ] ||
  { echo "expected 16 moe rows"; exit 1; }
awk -F, 'NR > 1 && $6 !~ /_ep_/ && ($12 != $7 * 2 || $13 > 8 || $13 > $12) { exit 1 }' "$tmp/moe/kernels_cpu.csv" ||
  { echo "moe rows: routed rows or experts hit wrong"; exit 1; }
# EP 2 shards: 4 of the 8 experts whole on the rank (expert width 64, not 32), the rows the
# 2 ranks' tokens sent there: at most tokens × top-k × EP, at least one expert hit.
[ "$(grep -c ',moe,bf16,tiny,2,experts_\(gate_up\|down\)_ep_loop,' "$tmp/moe/kernels_cpu.csv")" = 8 ] ||
  { echo "expected 8 EP moe rows"; exit 1; }
awk -F, 'NR > 1 && $6 ~ /_ep_/ && ($10 != 4 || $12 > $7 * 4 || $13 < 1 || $13 > 4 ||
         ($6 ~ /gate_up/ && $8 != 128) || ($6 ~ /down/ && $9 != 64)) { exit 1 }' "$tmp/moe/kernels_cpu.csv" ||
  { echo "EP moe rows: experts per rank, rows or widths wrong"; exit 1; }
# --sections mla (scripts/profile_mla.py), tiny MLA model (4 heads, latent 32 + rope 16) at TP 1
# and 2: on the CPU the decode is the unfused reference; 2 batches × 2 lengths per shard, 2
# prefill lengths, 2 batches × 2 absorb GEMMs; the key width is latent + rope (48).
"$py" "$root/scripts/profile_gpu.py" "$tmp/mla" --device cpu --tiny --sections mla
mla=$tmp/mla/kernels_cpu.csv
[ "$(grep -c ',mla_decode,bf16,tiny-mla,[12],bmm_softmax,' "$mla")" = 8 ] &&
  [ "$(grep -c ',mla_prefill,bf16,tiny-mla,[12],sdpa_causal_padv,' "$mla")" = 4 ] &&
  [ "$(grep -c ',mla_absorb,bf16,tiny-mla,[12],w_u[kv]_bmm,' "$mla")" = 8 ] ||
  { echo "expected 8 mla decode, 4 prefill and 8 absorb rows"; exit 1; }
awk -F, '$2 == "mla_decode" && ($15 != 48 || $8 != 32 || $14 != 1 || $13 != 4 / $5) { exit 1 }' "$mla" ||
  { echo "mla decode rows: key width, value width or heads per rank wrong"; exit 1; }
grep -q ',linear,bf16,tiny-mla,1,fused_qkv_a_proj,1,80,64,' "$mla" ||
  { echo "mla: expected the fused q/kv down projection (N = 32 + 32 + 16, K = 64)"; exit 1; }
# --tps replaces every model's TP degrees (linear rows at TP 1, 2 and 4, elementwise chains at
# each of them); a bad list is refused.
"$py" "$root/scripts/profile_gpu.py" "$tmp/tps" --device cpu --tiny --tps 1,2,4 --sections linear,elementwise
[ "$(awk -F, 'NR > 1 && $2 == "linear" { print $5 }' "$tmp/tps/kernels_cpu.csv" | sort -u | tr '\n' ' ')" = "1 2 4 " ] ||
  { echo "--tps 1,2,4: expected linear rows at TP 1, 2 and 4"; exit 1; }
[ "$(grep -c ',elementwise,bf16,tiny,4,layer_eager,' "$tmp/tps/kernels_cpu.csv")" = 4 ] ||
  { echo "--tps 1,2,4: expected 4 elementwise rows at TP 4"; exit 1; }
if "$py" "$root/scripts/profile_gpu.py" "$tmp/bad" --device cpu --tiny --tps 0,x 2> "$tmp/bad.txt"; then
  echo "--tps 0,x was accepted"; exit 1
fi
grep -q "not a comma-separated list of whole numbers" "$tmp/bad.txt"
# An unknown model is refused, naming the choices.
if "$py" "$root/scripts/profile_gpu.py" "$tmp/bad" --device cpu --models nope 2> "$tmp/bad.txt"; then
  echo "--models nope was accepted"; exit 1
fi
grep -q "unknown \['nope'\]; expected some of llama-3.1-8b" "$tmp/bad.txt"

# The CPU's rows stand in for an H100's: servesim refuses rows whose gpu column names another GPU
# than --gpu (docs/cost_model.md §2.2), so they are relabelled as the family tag the script writes
# on an H100 ("h100"); a "cpu" table is refused, naming the row.
if "$servesim" calibrate --gpu h100-sxm --kernels "$csv" --out "$tmp/refused.json" 2> "$tmp/refused.txt"; then
  echo "a table of gpu 'cpu' was accepted for h100-sxm"; exit 1
fi
grep -q "data row 1 has gpu 'cpu', another GPU than h100-sxm" "$tmp/refused.txt"
sed 's/^cpu,/h100,/' "$csv" > "$tmp/kernels_h100.csv"
csv=$tmp/kernels_h100.csv
"$servesim" calibrate --gpu h100-sxm --kernels "$csv" --out "$tmp/profile.json" | tee "$tmp/cal.txt"
# (layer_eager rows are read but make no curve: vLLM V1 runs the chain compiled)
grep -q "Kernel tables: 40 rows from 1 files: 5 bf16 and 0 fp8 GEMM shapes, 2 prefill-attention shapes;" \
  "$tmp/cal.txt"

"$servesim" kernel-check --measured "$csv" --gpu h100-sxm --kernel-table "$tmp/profile.json" \
  --output "$tmp/rows.csv"
# 32 rows: the 8 layer_eager rows are not checked (models/kernel_check.h)
[ "$(wc -l < "$tmp/rows.csv")" = 33 ] || { echo "expected 32 predicted rows"; exit 1; }
# Exact (to the CSV's 0.01 %) at every point of a GEMM series that was measured monotone; the
# isotonic fit only moves points of a series that was not.
"$py" - "$tmp/rows.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "linear"]
series = collections.defaultdict(list)
for r in rows:
    series[(r["dtype"], r["n"], r["k"])].append((int(r["m_tokens"]), float(r["measured_us"]),
                                                 float(r["error_pct"])))
checked = 0
for key, pts in series.items():
    pts.sort()
    times = [t for _, t, _ in pts]
    if all(a <= b for a, b in zip(times, times[1:])):
        for m, t, e in pts:
            assert abs(e) < 0.01, (key, m, t, e)
            checked += 1
    else:  # not monotone: predictions are monotone instead
        pred = [t * (1 + e / 100) for _, t, e in pts]
        assert all(a <= b * (1 + 1e-4) for a, b in zip(pred, pred[1:])), (key, pred)
print(f"kernel-check exact at {checked} points of monotone series; "
      f"{len(series)} series, all predictions monotone")
PY
