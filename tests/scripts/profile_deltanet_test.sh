#!/usr/bin/env bash
# CI test of scripts/profile_deltanet.py on the CPU (--tiny shapes, the PyTorch forms checked
# against the token-by-token reference by the script itself), and that servesim reads its rows
# beside scripts/profile_gpu.py's. Skips (exit 77) when no python3 on the PATH or /usr/bin has
# PyTorch (Debian: python3-torch; SERVESIM_WITH_TORCH=1 scripts/setup.sh installs it).
# Usage: profile_deltanet_test.sh SERVESIM_BINARY REPO_ROOT
set -euo pipefail
servesim=$1
root=$2
. "$(dirname "$0")/torch_python.sh"
find_torch_python profile_deltanet.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$py" "$root/scripts/profile_deltanet.py" "$tmp" --device cpu --tiny | tee "$tmp/out.txt"
grep -q "(pytorch kernels," "$tmp/out.txt"
csv=$tmp/deltanet_cpu.csv
# Same columns, in the same order, as the shipped H100 kernel table.
expected_header=$(head -1 "$root/data/realdata/gpu_kernels_h100_h200/kernels_h100.csv")
[ "$(head -1 "$csv")" = "$expected_header" ] || { echo "header differs: $(head -1 "$csv")"; exit 1; }
# --tiny: 2 TP shards × (4 chunked shapes + 2 decode batches).
[ "$(grep -c ',deltanet_chunked,bf16,tiny-deltanet,[12],torch_chunk64,' "$csv")" = 8 ] ||
  { echo "expected 8 chunked rows"; exit 1; }
[ "$(grep -c ',deltanet_recurrent,bf16,tiny-deltanet,[12],torch_recurrent,' "$csv")" = 4 ] ||
  { echo "expected 4 recurrent rows"; exit 1; }
# Heads per rank (2 key, 4 value heads at TP 1; half at TP 2), dk = dv = 16, and the FLOP column:
# chunked ⌈q_len / 64⌉ · batch · 64 rows × value heads × (6·dk·dv + 2·64·(3·dk + 2·dv) + 64²/3);
# recurrent batch × value heads × 7·dk·dv; tflops = FLOPs / time_us / 1e6 (3 decimals).
"$py" - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    tp, nk, nv = int(r["tp"]), int(r["q_heads"]), int(r["kv_heads"])
    assert (nk, nv) == (2 // tp, 4 // tp), r
    dk, dv, b, L = int(r["head_dim"]), int(r["n"]), int(r["batch"]), int(r["q_len"])
    assert dk == dv == 16 and int(r["m_tokens"]) == b * L, r
    if r["kind"] == "deltanet_chunked":
        assert int(r["k"]) == 64, r
        flops = b * -(-L // 64) * 64 * nv * (6 * dk * dv + 2 * 64 * (3 * dk + 2 * dv) + 64 ** 2 / 3)
    else:
        assert L == 1 and int(r["k"]) == 1, r
        flops = b * nv * 7 * dk * dv
    assert abs(float(r["tflops"]) - flops / float(r["time_us"]) / 1e6) < 6e-4, (r, flops)
print(f"{len(rows)} rows: heads, shapes and FLOP columns as servesim counts them")
PY

# servesim reads the rows beside profile_gpu.py's (calibrate --kernels: read and checked, no
# curve of their own), relabelled as the h100 rows the script writes on an H100.
"$py" "$root/scripts/profile_gpu.py" "$tmp/lin" --device cpu --tiny --sections linear
{ cat "$tmp/lin/kernels_cpu.csv"; tail -n +2 "$csv"; } | sed 's/^cpu,/h100,/' > "$tmp/both.csv"
"$servesim" calibrate --gpu h100-sxm --kernels "$tmp/both.csv" --out "$tmp/profile.json" |
  tee "$tmp/cal.txt"
grep -q "Kernel tables: 32 rows from 1 files" "$tmp/cal.txt" ||
  { echo "expected calibrate to read 20 linear + 12 DeltaNet rows"; exit 1; }
# A row without its sequences is refused, naming it.
{ head -1 "$tmp/both.csv"; grep ',deltanet_chunked,' "$tmp/both.csv" | head -1 |
    awk -F, 'BEGIN { OFS = "," } { $10 = 0; print }'; } > "$tmp/bad.csv"
if "$servesim" calibrate --gpu h100-sxm --kernels "$tmp/bad.csv" --out "$tmp/bad.json" \
    2> "$tmp/bad.txt"; then
  echo "a deltanet row with batch 0 was accepted"; exit 1
fi
grep -q "a deltanet_chunked row needs m_tokens, batch, q_len" "$tmp/bad.txt"
