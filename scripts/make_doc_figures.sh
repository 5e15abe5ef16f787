#!/usr/bin/env bash
# Regenerates the figures in docs/img/ that servesim.plot draws, from real runs of the build's
# servesim (deterministic: the same commit gives the same numbers), titled by servesim.plot from the
# files (model × GPU × TP × workload). Takes about a minute on 2 cores.
#   scripts/make_doc_figures.sh
# docs/img/validation_*.png come from scripts/plot_validation.py (docs/validation.md says how);
# docs/img/report.png from tests/scripts/report_browser_test.sh (SERVESIM_UPDATE_DOCS=1).
set -euo pipefail
cd "$(dirname "$0")/.."
S=build/servesim
PY="/usr/bin/python3 -m servesim.plot"
export PYTHONPATH=build/python SOURCE_DATE_EPOCH=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Llama-3.1-70B TP4 on H100: the QPS-latency curve the capacity answer is read from.
$S sweep --model llama-3.1-70b --gpu h100-sxm -tp 4 --max-model-len 8192 \
  --random-input-len 1024 --random-output-len 256 --request-rate 1:12:1 \
  --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,99 --output "$tmp/sweep70.json" >/dev/null
$PY "$tmp/sweep70.json" --slo 'p99_ttft_ms<=500' --slo 'p99_tpot_ms<=100' \
  -o docs/img/latency_vs_rate_70b_h100_tp4.png

# 2. Llama-3.1-8B on one H100, one curve per max-num-seqs: throughput per GPU vs interactivity.
$S sweep --model llama-3.1-8b --gpu h100-sxm --random-input-len 1024 --random-output-len 256 \
  --request-rate 2:40:2 --vary max-num-seqs=16,64,256 --num-prompts 1000 \
  --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,99 --output "$tmp/sweep8.json" >/dev/null
$PY "$tmp/sweep8.json" --kind pareto -o docs/img/pareto_8b_h100_max_num_seqs.png

# 3. GPUs for Llama-3.1-8B at P99 TTFT <= 500 ms against the target load, per GPU type (every
# candidate verified: --no-prune, so each GPU type has its line).
plans=()
for q in 25 50 100 200; do
  $S plan --model llama-3.1-8b --gpu h100-sxm,h200,a100-80gb --tensor-parallel-size 1,2 \
    --random-input-len 1024 --random-output-len 256 --target-qps $q --slo 'p99_ttft_ms<=500' \
    --seeds 2 --no-prune --output "$tmp/plan$q.json" >/dev/null
  plans+=("$tmp/plan$q.json")
done
$PY "${plans[@]}" -o docs/img/gpus_vs_qps_8b.png
# 4. The candidates of one of those plans (100 req/s): the GPUs each needs, the answer marked.
$PY "$tmp/plan100.json" -o docs/img/candidates_8b_100qps.png
echo "docs/img/ figures regenerated"
