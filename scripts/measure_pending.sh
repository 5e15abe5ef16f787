#!/usr/bin/env bash
# Every kernel profiler the project has prepared but not yet measured, in one command on a lent
# H100/H200 (docs/calibration.md, "Profilers not yet measured"), within about 7 minutes:
#   scripts/profile_sampler.py      vLLM V1's native sampler step         (~80 s)
#   scripts/profile_fp8_block.py    block-scaled fp8 vs per-tensor fp8 and bf16 GEMMs (~100 s;
#                                   rerun with --no-block when this PyTorch cannot block-scale)
#   scripts/profile_deltanet.py     Gated DeltaNet kernels, when present in the tree (~80 s)
#   scripts/profile_lora_verify.py  LoRA kernels, when present in the tree (~80 s)
# Each gets its budget through --budget-s where its --help offers it, and a hard limit of 25 s
# more (timeout); a profiler absent from the tree is skipped with a line saying so. Each writes
# into OUT/<name>/ with its log OUT/log_<name>.txt; OUT/env.txt records the GPU and versions.
# The budgets can be changed: SAMPLER_S, FP8_BLOCK_S, DELTANET_S, LORA_S (seconds).
# Usage: scripts/measure_pending.sh OUT
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/measure_pending.sh OUT" >&2; exit 2; }
cd "$(dirname "$0")/.."
source hardware/measurements/measure_setup.sh "$1"
status=0

# run NAME SCRIPT BUDGET_S [ARGS...]: the profiler into $out/NAME, budget and hard limit.
run() {
  local name=$1 script=$2 budget=$3
  shift 3
  if [ ! -f "$script" ]; then
    echo "measure_pending: $script is not in this tree; skipped" | tee -a "$out/skipped.txt"
    return 0
  fi
  local opts=()
  python3 "$script" --help 2>/dev/null | grep -q -- "--budget-s" && opts+=(--budget-s "$budget")
  python3 "$script" --help 2>/dev/null | grep -q -- "--tag" && opts+=(--tag "$tag")
  echo "measure_pending: $script, budget ${budget} s" | tee "$out/log_$name.txt"
  timeout $((budget + 25)) python3 "$script" "$out/$name" "${opts[@]}" "$@" 2>&1 |
    tee -a "$out/log_$name.txt"
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || { echo "measure_pending: $script exited $rc" | tee -a "$out/log_$name.txt"; status=1; }
  return "$rc"
}

run sampler scripts/profile_sampler.py "${SAMPLER_S:-80}"
if ! run fp8_block scripts/profile_fp8_block.py "${FP8_BLOCK_S:-100}" &&
   grep -q "cannot run here\|does not compute a 128x128" "$out/log_fp8_block.txt"; then
  # this PyTorch build cannot block-scale: the per-tensor fp8 and bf16 rows alone (the refusal
  # stays in the log and the exit status)
  run fp8_block_no_block scripts/profile_fp8_block.py "${FP8_BLOCK_S:-100}" --no-block
fi
run deltanet scripts/profile_deltanet.py "${DELTANET_S:-80}"
run lora_verify scripts/profile_lora_verify.py "${LORA_S:-80}"
ls -l "$out"/*/ 2>/dev/null
exit $status
