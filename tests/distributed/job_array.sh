#!/usr/bin/env bash
# The job-array recipe of docs/distributed.md, as written there: N shards (what `sbatch --array`
# or a Kubernetes Indexed Job runs, one per task index), then `servesim merge`; the merged files
# equal one process's byte for byte, and a missing part is reported by name.
# Usage: job_array.sh SERVESIM REPO_ROOT
set -euo pipefail
servesim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
study=(sweep --model llama-3.1-8b --request-rate 2:40:2 --num-prompts 200
       --vary max-num-seqs=64,256 --output curve.json)

mkdir one && (cd one && "$servesim" "${study[@]}" >/dev/null 2>&1)

# One task per index, as SLURM_ARRAY_TASK_ID / JOB_COMPLETION_INDEX would give it.
N=4
for I in $(seq 0 $((N - 1))); do
  "$servesim" "${study[@]}" --shard "$I/$N" --part-file "curve.part-$I" >/dev/null
done
[ ! -e curve.json ] || { echo "FAIL: a shard wrote the study output"; exit 1; }

# A missing part is an error naming it, and nothing is written.
if "$servesim" merge curve.part-0 curve.part-1 curve.part-3 2>err.txt; then
  echo "FAIL: merge without part 2 succeeded"; exit 1
fi
grep -q "part 2/4 missing" err.txt || { echo "FAIL: missing part not named:"; cat err.txt; exit 1; }
[ ! -e curve.json ] || { echo "FAIL: merge wrote output despite a missing part"; exit 1; }

"$servesim" merge curve.part-* >/dev/null
cmp one/curve.json curve.json
cmp one/curve.csv curve.csv
echo "ok   $N shards merged equal one process (curve.json, curve.csv); missing part named"
