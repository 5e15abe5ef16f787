#!/usr/bin/env bash
# Quick start, step 1: set everything up and run servesim.
#   ./run.sh                 → a simulation of the default deployment and workload
#   ./run.sh simulate ...    → any servesim command (see ./run.sh --help)
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh --minimal
if [ $# -eq 0 ]; then
  # Default: the capacity question. First one run's latency table (Llama-3.1-8B on one H100-SXM,
  # vLLM defaults, a chat-like load), then "how many H100s for 100 QPS at P99 TTFT <= 500 ms?"
  # for Llama-3.1-70B.
  build/servesim simulate --model llama-3.1-8b --gpu h100-sxm --request-rate 15 \
    --num-prompts 1000 --random-input-len 1024 --random-output-len 256
  echo
  exec build/servesim plan --model llama-3.1-70b --gpu h100-sxm --tensor-parallel-size 4,8 \
    --max-model-len 8192 --random-input-len 1024 --random-output-len 256 \
    --target-qps 100 --slo 'p99_ttft_ms<=500'
fi
exec build/servesim "$@"
