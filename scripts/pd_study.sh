#!/usr/bin/env bash
# The disaggregated prefill/decode study of docs/deployment-modes.md: aggregated replicas against
# 1P:1D, 1P:2D and 2P:3D pools at the same GPU count and load, for one model and workload, over
# InfiniBand NDR and (where both pools fit in one 8-GPU node) NVLink. Prints one row per run.
#
# Usage: scripts/pd_study.sh MODEL TP INPUT_LEN OUTPUT_LEN RATE_PER_INSTANCE [NUM_PROMPTS
#                           [more simulate flags...]]
#   Every pool and every aggregated replica is TP GPUs; an N-instance deployment gets
#   N x RATE_PER_INSTANCE req/s, on H100 SXM or the GPU named by $PD_STUDY_GPU (h200, ...).
#   Needs build/servesim (or $SERVESIM_BIN) and python3.
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
model=$1 tp=$2 in=$3 out=$4 rate=$5 n=${6:-2000}
shift $(($# < 6 ? $# : 6))
extra=("$@")
bin=${SERVESIM_BIN:-build/servesim}
gpu=${PD_STUDY_GPU:-h100-sxm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--model "$model" --gpu "$gpu" -tp "$tp" --num-prompts "$n" --random-input-len "$in"
        --random-output-len "$out" --random-range-ratio 0.5 --save-result --overwrite
        ${extra[@]+"${extra[@]}"})
printf '%-10s %-15s %5s %6s %9s %9s %9s %9s %9s %8s %8s %6s\n' deployment link GPUs req/s \
  "TTFT p50" "TTFT p99" "TPOT mean" "TPOT p99" "xfer p50" "P busy" "D busy" "link"
run() {  # name link instances [flags...]
  local name=$1 link=$2 inst=$3
  shift 3
  local r
  r=$(python3 -c "print('%g' % ($rate * $inst))")
  if ! "$bin" simulate "${common[@]}" --request-rate "$r" --result-filename "$tmp/r.json" "$@" \
      >/dev/null 2>"$tmp/err"; then
    printf '%-10s %-15s %5s %6s  refused: %s\n' "$name" "$link" $((inst * tp)) "$r" \
      "$(tail -1 "$tmp/err" | cut -c 18-110)"
    return
  fi
  python3 - "$tmp/r.json" "$name" "$link" $((inst * tp)) "$r" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["servesim"].get("disaggregation")
def f(v): return "-" if v is None else "%.1f" % v
cells = [f(d["median_ttft_ms"]), f(d["p99_ttft_ms"]), f(d["mean_tpot_ms"]), f(d["p99_tpot_ms"])]
if s:
    cells += [f(s["phases_ms"]["transfer"]["p50"]), "%.2f" % s["prefill"]["busy_fraction"],
              "%.2f" % s["decode"]["busy_fraction"],
              "%.3f" % s["kv_transfer"]["link_utilization_max"]]
else:
    cells += ["-", "-", "%.2f" % d["servesim"]["busy_fraction"], "-"]
print("%-10s %-15s %5s %6s %9s %9s %9s %9s %9s %8s %8s %6s" % tuple(sys.argv[2:6] + cells))
PY
}
for split in "1 1" "1 2" "2 3"; do
  set -- $split
  p=$1 d=$2
  run "agg x$((p + d))" - $((p + d)) --num-replicas $((p + d))
  for link in infiniband-ndr nvlink; do
    run "${p}P:${d}D" "$link" $((p + d)) --prefill-replicas "$p" --decode-replicas "$d" \
      --kv-transfer-link "$link"
  done
done
