#!/usr/bin/env bash
# CI test of scripts/profile_lora_verify.py and scripts/lora_sgmv.py on the CPU (--tiny shapes):
#  - the SGMV shrink and expand kernels, run through tests/scripts/triton_shim (a NumPy stand-in
#    for Triton), equal the per-segment PyTorch loop on uneven segments, several slices, a rank
#    below the 16 tl.dot needs, and a K long enough to be split over programs;
#  - the script's rows with the kernels (the shim) and without Triton (the loop): counts, the
#    columns' meaning, and no kernel result refused;
#  - bad options are refused.
# Skips (exit 77) when no python3 on the PATH or /usr/bin has PyTorch (Debian: python3-torch;
# SERVESIM_WITH_TORCH=1 scripts/setup.sh installs it).
# Usage: profile_lora_verify_test.sh REPO_ROOT
set -euo pipefail
root=$1
. "$(dirname "$0")/torch_python.sh"
find_torch_python profile_lora_verify.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shim=$root/tests/scripts/triton_shim

# The kernels against the loop. Expected: z = x @ A[a(t)]^T (scale 0.5) per token, out += z_s @
# B[a(t), slice s]^T per slice; bf16 inputs, so agreement to 2 % of the largest value.
PYTHONPATH=$shim "$py" - "$root/scripts" <<'PY'
import sys
import torch
sys.path.insert(0, sys.argv[1])
import lora_sgmv as L
assert getattr(L.triton, "runs_on_cpu", False), "the shim is not the Triton imported"
torch.manual_seed(0)
# (tokens, adapters, K, rank, slice widths): 7 tokens over 3 adapters are segments of 3, 2, 2;
# K = 600 splits the shrink's K over programs (make_shrink); rank 8 is masked to 16.
for T, D, K, R, widths in [(7, 3, 40, 8, [24, 8, 8]), (33, 4, 600, 16, [40]),
                           (1, 1, 64, 32, [70, 70])]:
    x = torch.randn(T, K, dtype=torch.bfloat16)
    a = torch.randn(2 * D, len(widths) * R, K, dtype=torch.bfloat16) * 0.1
    offs = [0]
    for n in widths:
        offs.append(offs[-1] + n)
    b = torch.randn(2 * D, offs[-1], R, dtype=torch.bfloat16) * 0.1
    st, lo, longest = L.segments(torch, T, D, "cpu")
    assert st.tolist()[:2] == [0, -(-T // D)] and st.tolist()[-1] == T, st
    zr = L.shrink_reference(torch, x, a, st, lo, 0.5)
    z = torch.full((T, len(widths) * R), 7.0)  # garbage: the kernel must overwrite or zero it
    L.make_shrink(torch, x, a, z, st, lo, longest, 0.5)()
    ez = float((z - zr).abs().max() / zr.abs().max())
    out0 = torch.randn(T, offs[-1], dtype=torch.bfloat16)
    o_ref = L.expand_reference(torch, zr, b, st, lo, offs, R, out0.clone())
    o = out0.clone()
    L.make_expand(torch, zr, b, o, st, lo, offs, longest, R)()
    eo = float((o.float() - o_ref.float()).abs().max() / o_ref.float().abs().max())
    assert ez < 0.02 and eo < 0.02, (T, D, K, R, widths, ez, eo)
    print(f"sgmv T={T} D={D} K={K} R={R} slices={len(widths)}: shrink {ez:.1e}, expand {eo:.1e}")
PY

# The script with the kernels (the shim). --tiny: one model (hidden 64, intermediate 128, 4 query
# and 2 KV heads of 16) at TP 1 and 2; 4 LoRA layers × ranks 8, 16 × (1 adapter over 1 and 5
# tokens, 2 adapters over 5 tokens) = 24 shapes per TP, each a shrink and an expand row: 96 rows;
# verify: 2 head configurations × q_len 1, 2, 4, 6 × batches 1, 2 × lengths 16, 32 = 32 rows.
PYTHONPATH=$shim "$py" "$root/scripts/profile_lora_verify.py" "$tmp/k" --device cpu --tiny \
  2> "$tmp/k.err"
csv=$tmp/k/lora_verify_cpu.csv
expected_header=$(head -1 "$root/data/realdata/gpu_kernels_h100_h200/kernels_h100.csv")
[ "$(head -1 "$csv")" = "$expected_header" ] || { echo "header differs: $(head -1 "$csv")"; exit 1; }
[ "$(grep -c ',lora_shrink,' "$csv")" = 48 ] && [ "$(grep -c ',lora_expand,' "$csv")" = 48 ] ||
  { echo "expected 48 shrink and 48 expand rows"; exit 1; }
[ "$(grep -c ',attn_verify,' "$csv")" = 32 ] || { echo "expected 32 verify rows"; exit 1; }
if grep -q '_loop,' "$csv" || grep -q 'triton' "$tmp/k.err"; then
  echo "a kernel result was refused (the loop was timed):"; cat "$tmp/k.err"; exit 1
fi
# Shrink: n = slices × rank, k = the input width; expand: k = rank, n = Σ slice widths: qkv at
# TP t is 64/t + 2 × 16 (one KV head of 16 per rank at TP 2: 2 heads / 2), gate_up 2 × 128/t.
awk -F, '
  $2 == "lora_shrink" && $8 != $11 * $12 { bad = bad "shrink n " NR " " }
  $2 == "lora_expand" && $9 != $12 { bad = bad "expand k " NR " " }
  $2 == "lora_expand" && $6 == "qkv_proj" && $8 != 64 / $5 + 32 / $5 + 32 / $5 { bad = bad "qkv " NR " " }
  $2 == "lora_expand" && $6 == "gate_up_proj" && ($8 != 256 / $5 || $11 != 2) { bad = bad "gate_up " NR " " }
  $2 ~ /^lora_/ && ($10 > $7 || $3 != "bf16") { bad = bad "adapters " NR " " }
  $2 == "attn_verify" && ($7 != $10 * $11 || ($11 > 1 && $6 !~ /mask|lower_right/)) { bad = bad "verify " NR " " }
  END { if (bad != "") { print bad; exit 1 } }' "$csv" || { echo "rows with wrong columns"; exit 1; }

# Without Triton (Debian's python3 has none): the same LoRA rows, timed with the loop.
if "$py" -c "import triton" 2>/dev/null; then
  echo "(this python has Triton: the no-Triton run is not checked)"
else
  "$py" "$root/scripts/profile_lora_verify.py" "$tmp/l" --device cpu --tiny --sections lora
  [ "$(grep -c '_loop,' "$tmp/l/lora_verify_cpu.csv")" = 96 ] ||
    { echo "expected 96 loop rows without Triton"; exit 1; }
fi

# Bad options are refused, naming the choices.
if "$py" "$root/scripts/profile_lora_verify.py" "$tmp/bad" --sections lora,nope 2> "$tmp/bad.txt"; then
  echo "--sections lora,nope was accepted"; exit 1
fi
grep -q "unknown \['nope'\]; expected lora, verify or both" "$tmp/bad.txt"
if "$py" "$root/scripts/profile_lora_verify.py" "$tmp/bad" --device cpu --models nope 2> "$tmp/bad.txt"; then
  echo "--models nope was accepted"; exit 1
fi
grep -q "unknown \['nope'\]; expected some of llama-3.1-8b" "$tmp/bad.txt"
echo "profile_lora_verify: kernels equal the loop; rows checked"
