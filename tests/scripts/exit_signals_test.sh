#!/usr/bin/env bash
# SIGTERM (what Slurm and Kubernetes send at a time limit) and SIGINT stop a study without losing
# what finished (sim/base/exit_signals.h):
#   exit_signals_test.sh SERVESIM_BINARY
# For sweep, plan and compare: start a long study, wait until it has used 1.5 s of CPU (past
# start-up, inside the study, on a loaded machine too), send the signal, then check
#  - the exit status is 128 + the signal (143 for SIGTERM, 130 for SIGINT);
#  - the output exists, is marked "interrupted": true, and keeps the finished work;
#  - no temporary file (*.tmp.<pid>) is left in the output folder.
set -euo pipefail
bin=$1
py=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cpu_seconds() {  # utime + stime of a process, in seconds
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo 0
}

# run_and_signal NAME SIGNAL EXPECTED_STATUS -- COMMAND...
run_and_signal() {
  local name=$1 sig=$2 want=$3
  shift 4
  "$@" > "$out/$name.stdout" 2> "$out/$name.stderr" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null &&
        [ "$(awk -v c="$(cpu_seconds "$pid")" 'BEGIN {print (c < 1.5)}')" = 1 ]; do
    sleep 0.1
  done
  kill -s "$sig" "$pid" 2>/dev/null || { echo "FAIL $name: finished before the signal"; exit 1; }
  local status=0
  wait "$pid" || status=$?
  if [ "$status" != "$want" ]; then
    echo "FAIL $name: exit status $status, expected $want"; cat "$out/$name.stderr"; exit 1
  fi
  grep -q "servesim: SIG$sig: stopped" "$out/$name.stderr" ||
    { echo "FAIL $name: no 'stopped' line on stderr"; cat "$out/$name.stderr"; exit 1; }
  if ls "$out" | grep -q '\.tmp\.'; then
    echo "FAIL $name: temporary files left:"; ls "$out"; exit 1
  fi
  echo "ok $name: SIG$sig -> exit $status"
}

run_and_signal sweep TERM 143 -- "$bin" sweep --model llama-3.1-8b --request-rate 1:30:0.1 \
  --num-prompts 20000 --jobs 1 --output "$out/sweep.json"
"$py" - "$out/sweep.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["interrupted"] is True, "sweep output not marked interrupted"
points = [p for c in s["curves"] for p in c["points"]]
print(f"sweep.json: {len(points)} points kept of 291, interrupted: true")
assert 0 < len(points) < 291, "expected some finished points and some not run"
PY

run_and_signal plan TERM 143 -- "$bin" plan --model llama-3.1-70b --gpu h100-sxm,h200,a100-80gb \
  --target-qps 20 --slo 'p99_ttft_ms<=2000' --num-prompts 20000 --jobs 1 --output "$out/plan.json"
"$py" - "$out/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["interrupted"] is True, "plan output not marked interrupted"
print(f"plan.json: {len(p['candidates'])} candidates, interrupted: true")
PY

run_and_signal compare INT 130 -- "$bin" compare --model llama-3.1-8b --request-rate 20 \
  --num-prompts 20000 --vary max-num-seqs=128,256 --seeds 200 --jobs 1 \
  --output "$out/compare.json"
"$py" - "$out/compare.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["interrupted"] is True, "compare output not marked interrupted"
print("compare.json: interrupted: true")
PY
