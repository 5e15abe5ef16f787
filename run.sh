#!/usr/bin/env bash
# Quick start, step 1: set everything up and run servesim.
#   ./run.sh                 → a simulation of the default deployment and workload
#   ./run.sh simulate ...    → any servesim command (see ./run.sh --help)
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
if [ $# -eq 0 ]; then
  # Default: Llama-3.1-8B on one H100-SXM, vLLM defaults, a chat-like load of 1000 requests.
  set -- simulate --model llama-3.1-8b --gpu h100-sxm --request-rate 20 --num-prompts 1000 \
    --random-input-len 1024 --random-output-len 256
fi
exec build/servesim "$@"
