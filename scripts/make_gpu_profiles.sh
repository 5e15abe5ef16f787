#!/usr/bin/env bash
# Re-makes the GPU-level calibration profiles shipped in hardware/calibration/ — h100-sxm.json,
# a100-40gb.json, a100-80gb.json and the opt-in vllm-v0/a100-40gb.json — from the measurements
# in data/realdata, with the commands of docs/validation.md §3a. The per-host-line profiles
# (hardware/calibration/vllm-*/) are written by the leave-one-group-out run instead (§6).
#
#   scripts/make_gpu_profiles.sh [OUT_DIR]     (default: hardware/calibration)
#
# Deterministic: run twice, the files are byte-identical. Needs build/servesim (or $SERVESIM).
# tests/scripts/gpu_profiles_test.sh checks that the shipped files are what it makes.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-hardware/calibration}
B=${SERVESIM:-build/servesim}   # the binary (tests pass their build's)
R=data/realdata
S=tests/data/realdata_sidecars
V=$R/vidur_profiling/profiling/compute
N=$R/vidur_profiling/profiling/network
L=$R/llmk8s_llama33_70b_a100x8
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT/vllm-v0"
SELF="Made by: scripts/make_gpu_profiles.sh (docs/validation.md section 3a)."

# H100: GEMM efficiencies and NVLink bandwidth from the Vidur profiles, then the step overhead
# on the CodeLlama-34B runs that validate --holdout 0.5 does not score.
$B calibrate --gpu h100-sxm --vidur-mlp $V/h100/*/*/mlp.csv \
  --vidur-allreduce $N/h100_dgx/all_reduce.csv --out "$TMP/h100-base.json" > /dev/null
$B calibrate --gpu h100-sxm --base "$TMP/h100-base.json" --sidecars $S --holdout 0.5 \
  --measured $R/inferencesim_eval_vllm0110/*/guidellm_per_request_DERIVED.csv \
  --fit step_overhead_s --out "$OUT/h100-sxm.json" --description "GEMM profiles: Vidur H100 \
mlp.csv (6 models); NVLink bandwidth: Vidur h100_dgx all_reduce.csv (8 GPUs). Serving: vLLM \
0.11.0 CodeLlama-34B TP1 guidellm runs (inferencesim_eval_vllm0110), fitted on the runs NOT \
scored by validate --holdout 0.5: step_overhead_s only (with the measured elementwise kernels a \
client TTFT constant ends at 0, its bound). Serving fit made with the measured kernel tables on \
(hardware/kernels/h100-sxm.json times the GEMMs, the elementwise chain between them and prefill \
attention; the GEMM parameters above then time only decode attention). $SELF"

# A100-40GB: the A100-80GB's Vidur fits (same GA100 silicon and NVLink3) as fractions of the
# 40GB card's peaks, then the host terms on the llm-k8s TP8 runs not held out.
$B calibrate --gpu a100-80gb --vidur-mlp $V/a100/*/*/mlp.csv \
  --vidur-allreduce $N/a100_dgx/all_reduce.csv --out "$TMP/a100-80-base.json" > /dev/null
sed 's/"gpu": "a100-80gb"/"gpu": "a100-40gb"/' "$TMP/a100-80-base.json" > "$TMP/a100-40-base.json"
A100_KERNELS="GEMM efficiencies and NVLink bandwidth: fitted on Vidur a100 (A100-SXM 80GB, same \
GA100 silicon and NVLink3) mlp.csv (8 models) and a100_dgx all_reduce.csv against the 80GB \
card's peaks, applied as fractions of the 40GB card's own peaks."
A100_TABLES="Serving fit made with the measured kernel tables on (hardware/kernels/a100-80gb.json \
transferred to the A100-40GB)."
$B calibrate --gpu a100-40gb --base "$TMP/a100-40-base.json" --sidecars $S --holdout 0.5 \
  --measured $L/01_tp8_pp1/serving_*.json \
  --fit step_overhead_s,per_seq_overhead_s,client_ttft_overhead_s --out "$OUT/a100-40gb.json" \
  --description "$A100_KERNELS Serving: llm-k8s vLLM 0.8.3 Llama-3.3-70B TP8 runs, fitted on \
the runs NOT scored by validate --holdout 0.5. $A100_TABLES $SELF"

# A100-80GB: its own GEMM and all-reduce fits; the host terms (and their domain, which names
# the 40GB card's runs) from the A100-40GB profile.
$B calibrate --gpu a100-80gb --base "$OUT/a100-40gb.json" \
  --vidur-mlp $V/a100/*/*/mlp.csv --vidur-allreduce $N/a100_dgx/all_reduce.csv \
  --out "$OUT/a100-80gb.json" --description "GEMM profiles: Vidur a100 (A100-SXM 80GB) mlp.csv \
(8 models); NVLink bandwidth: a100_dgx all_reduce.csv. Step, per-sequence and client overheads \
TRANSFERRED from the A100-40GB serving fit (hardware/calibration/a100-40gb.json: same silicon \
and engine; no measured serving run on an 80GB card exists in realdata); its domain names the \
40GB runs, so 80GB predictions are labelled transferred. $SELF"

# Opt-in: the V0 engine with pipeline parallelism (llm-k8s TP4xPP2, vLLM 0.8.3 fell back to V0).
# --force: its fit ends at ~25 % rms, just above calibrate's degenerate-fit threshold (25 %):
# two overhead terms cannot follow both V0's TTFT and its decode under load (§3a says so).
$B calibrate --force --gpu a100-40gb --base "$TMP/a100-40-base.json" --sidecars $S --holdout 0.5 \
  --measured $L/0[234]*/serving_*.json \
  --fit step_overhead_s,per_seq_overhead_s,client_ttft_overhead_s \
  --out "$OUT/vllm-v0/a100-40gb.json" --description "Opt-in (--calibration \
hardware/calibration/vllm-v0/a100-40gb.json): vLLM V0 engine with pipeline parallelism. $A100_KERNELS \
Serving: overheads fitted on the llm-k8s TP4xPP2 runs (vLLM 0.8.3 fell back to V0) NOT scored by \
validate --holdout 0.5; the fit ends at ~25 % rms (written with --force). $A100_TABLES $SELF"
echo "written: $OUT/{h100-sxm,a100-40gb,a100-80gb}.json $OUT/vllm-v0/a100-40gb.json"
