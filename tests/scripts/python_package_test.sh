#!/usr/bin/env bash
# `pip install .` of the servesim package into fresh venvs of PYTHON (README, "Python"), offline:
# once as README shows it (--no-build-isolation) and once with pip's default build isolation (the
# backend needs nothing from the index). Each venv then imports servesim from outside the checkout,
# reads the catalogs the package carries, and must reproduce the CLI's result for the same run.
#   usage: python_package_test.sh REPO_ROOT BUILD_DIR SERVESIM_BINARY [PYTHON]
set -euo pipefail
root=$1 build=$2 servesim=$3 python=${4:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset SERVESIM_DATA_DIR PYTHONPATH
export PIP_NO_CACHE_DIR=1 PIP_NO_INDEX=1 SERVESIM_BUILD_DIR=$build

run=(simulate --model llama-3.1-8b --gpu h100-sxm --request-rate 5 --num-prompts 200 --seed 7)
"$servesim" "${run[@]}" --save-result --result-filename "$work/cli.json" >/dev/null

for isolation in --no-build-isolation ""; do
  rm -rf "$work/v"
  "$python" -m venv --system-site-packages "$work/v"
  # shellcheck disable=SC2086  # an empty $isolation is no argument
  "$work/v/bin/pip" install -q $isolation "$root"
  (cd "$work" && v/bin/python - "$work/cli.json" <<'PY'
import json, os, sys
import servesim
here = os.path.abspath(os.path.dirname(servesim.__file__))
assert here.startswith(os.path.abspath("v")), ("servesim imported from outside the venv", here)
assert servesim.DATA_DIR == os.path.join(here, "data"), servesim.DATA_DIR
r = servesim.simulate(model="llama-3.1-8b", gpu="h100-sxm", request_rate=5, num_prompts=200, seed=7)
cli = json.load(open(sys.argv[1]))
for key in ("completed", "total_output_tokens", "p99_ttft_ms", "mean_tpot_ms", "duration"):
    assert r[key] == cli[key], (key, r[key], cli[key])
print("servesim from %s: %d requests, p99 TTFT %.3f ms, as the CLI" % (here, r["completed"],
                                                                      r["p99_ttft_ms"]))
PY
  )
done
