#!/usr/bin/env bash
# `mpirun -n 2` and `mpirun -n 4 --oversubscribe` give byte-identical output files (and the same
# table on stdout) as one process, for sweep, plan, compare, validate and calibrate.
# Usage: mpi_identical.sh SERVESIM MPIEXEC REPO_ROOT
set -euo pipefail
servesim=$1
mpiexec=$2
root=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Root in a container needs both variables; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers often forbid the cross-process memory copy of the shared-memory transport.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
m=$root/tests/data/measured
failed=0

# case NAME OUTPUT_FILES -- ARGS...: runs ARGS in $tmp/NAME/{1,2,4} (outputs relative to there).
check() {
  local name=$1 outputs=$2
  shift 3
  for n in 1 2 4; do
    mkdir -p "$tmp/$name/$n"
    local launch=()
    [ "$n" -gt 1 ] && launch=("$mpiexec" -n "$n" --oversubscribe --bind-to none)
    local code=0
    (cd "$tmp/$name/$n" && "${launch[@]}" "$servesim" "$@" >stdout 2>stderr) || code=$?
    if [ "$code" -ne 0 ]; then
      echo "FAIL $name -n $n: exit code $code"; cat "$tmp/$name/$n/stderr"; failed=1; return
    fi
  done
  for n in 2 4; do
    for f in $outputs stdout; do
      if ! cmp -s "$tmp/$name/1/$f" "$tmp/$name/$n/$f"; then
        echo "FAIL $name: $f differs between 1 process and mpirun -n $n"
        diff "$tmp/$name/1/$f" "$tmp/$name/$n/$f" | head -20
        failed=1
      fi
    done
  done
  echo "ok   $name: $outputs stdout identical for 1 process, -n 2, -n 4"
}

check sweep "sweep.json sweep.csv" -- sweep --model llama-3.1-8b --request-rate 5,10,20,40,80 \
  --num-prompts 150 --random-input-len 256 --random-output-len 32 --vary max-num-seqs=8,256 \
  --output sweep.json
check plan "plan.json plan.csv" -- plan --model llama-3.1-8b --target-qps 30 \
  --slo 'p99_ttft_ms<=400' --slo 'p99_tpot_ms<=40' --gpu h100-sxm,l40s \
  --tensor-parallel-size 1,2 --num-prompts 200 --random-input-len 256 --random-output-len 32 \
  --seeds 2 --output plan.json
check compare "compare.json" -- compare --vary max-num-seqs=32,256 --request-rate 20 \
  --num-prompts 150 --random-input-len 256 --random-output-len 32 --seeds 3 --output compare.json
check validate "validate.json" -- validate --calibration none \
  --measured "$m/sglang_bench_serving.jsonl" "$m/profile_export_genai_perf.json" \
  --model llama-3.1-8b --gpu h100-sxm -tp 1 --output validate.json
check calibrate "cal.json" -- calibrate --gpu h100-sxm \
  --measured "$root"/data/realdata/inferencesim_eval_vllm0110/*/guidellm_per_request_DERIVED.csv \
  --sidecars "$root/tests/data/realdata_sidecars" --fit step_overhead_s --seeds 1 --out cal.json

# An error inside the jobs (every simulation rejects the warm-up count): whichever rank meets it,
# rank 0 broadcasts it, every rank exits 2, one message (from rank 0), no file.
mkdir -p "$tmp/bad"
set +e
(cd "$tmp/bad" && "$mpiexec" -n 2 --oversubscribe --bind-to none "$servesim" sweep --request-rate 5,10,20 \
  --num-prompts 10 --warmup-requests 20 --output bad.json >stdout 2>stderr)
code=$?
set -e
if [ "$code" -eq 0 ] || [ -e "$tmp/bad/bad.json" ] || \
   [ "$(grep -c 'servesim: error:' "$tmp/bad/stderr")" -ne 1 ]; then
  echo "FAIL bad input under mpirun: exit $code, stderr:"; cat "$tmp/bad/stderr"; failed=1
else
  echo "ok   bad input under mpirun: exit $code, one error line, no file"
fi
exit $failed
