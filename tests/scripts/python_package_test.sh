#!/usr/bin/env bash
# `pip install .` of the servesim package into fresh venvs of PYTHON (README, "Python"), offline:
# once as README shows it (--no-build-isolation) and once with pip's default build isolation (the
# backend needs nothing from the index). Each venv then imports servesim from outside the checkout,
# reads the catalogs the package carries, and must reproduce the CLI's result for the same run,
# from Python and from the venv's `servesim` command (the console script, which runs the binary
# the package carries). A third venv without the system's site packages (so without numpy)
# installs the package too: the functions work there, and `.requests` names numpy.
#   usage: python_package_test.sh REPO_ROOT BUILD_DIR SERVESIM_BINARY [PYTHON]
set -euo pipefail
root=$1 build=$2 servesim=$3 python=${4:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset SERVESIM_DATA_DIR PYTHONPATH
export PIP_NO_CACHE_DIR=1 PIP_NO_INDEX=1 SERVESIM_BUILD_DIR=$build

run=(simulate --model llama-3.1-8b --gpu h100-sxm --request-rate 5 --num-prompts 200 --seed 7)
"$servesim" "${run[@]}" --save-result --result-filename "$work/cli.json" >/dev/null

# The venv's bin/servesim: pip's wrapper of servesim._cli:main, which executes the package's copy
# of the binary with the package's data; its result file must equal the build's binary's.
check_console_script() {
  local venv=$1
  [ -x "$venv/bin/servesim" ] || { echo "FAIL: $venv/bin/servesim is not installed"; exit 1; }
  rm -f "$work/console.json" "$work/cli0.json"
  (cd "$work" && SOURCE_DATE_EPOCH=0 "$venv/bin/servesim" "${run[@]}" --save-result \
     --result-filename "$work/console.json" >/dev/null)
  SOURCE_DATE_EPOCH=0 "$servesim" "${run[@]}" --save-result --result-filename "$work/cli0.json" \
    >/dev/null
  cmp "$work/cli0.json" "$work/console.json" ||
    { echo "FAIL: $venv/bin/servesim wrote another result than $servesim"; exit 1; }
  # It is the package's binary that ran, with the package's catalogs (not the checkout's).
  "$venv/bin/python" - "$venv" <<'PY'
import os, sys
import servesim._cli as c
assert os.path.realpath(c.BINARY).startswith(os.path.realpath(sys.argv[1])), c.BINARY
assert os.access(c.BINARY, os.X_OK), c.BINARY
PY
  # A model only the package's catalog has (a copy under another name) is found.
  local catalog
  catalog=$("$venv/bin/python" -c 'import servesim; print(servesim.DATA_DIR)')/models/catalog
  cp "$catalog/llama-3.1-8b.json" "$catalog/packaged-only-model.json"
  (cd "$work" && "$venv/bin/servesim" simulate --model packaged-only-model --num-prompts 10 \
     >/dev/null)
  # The binary's exit code is the command's (2: bad input).
  local rc=0
  (cd "$work" && "$venv/bin/servesim" simulate --model no-such-model 2>/dev/null) || rc=$?
  [ "$rc" = 2 ] || { echo "FAIL: a bad model exited $rc, expected 2"; exit 1; }
  echo "console script $venv/bin/servesim: same result file as $servesim; the package's" \
       "catalog; exit code 2 passed on"
}

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
  check_console_script "$work/v"
done

# A venv without the system's site packages: no numpy (Debian's is in the system's site packages).
rm -rf "$work/bare"
"$python" -m venv "$work/bare"
"$work/bare/bin/pip" install -q --no-build-isolation "$root"
(cd "$work" && bare/bin/python - "$work/cli.json" <<'PY'
import json, sys
try:
    import numpy  # noqa: F401
    sys.exit("FAIL: this venv should not see numpy")
except ImportError:
    pass
import servesim
r = servesim.simulate(model="llama-3.1-8b", gpu="h100-sxm", request_rate=5, num_prompts=200, seed=7)
cli = json.load(open(sys.argv[1]))
assert r["p99_ttft_ms"] == cli["p99_ttft_ms"], (r["p99_ttft_ms"], cli["p99_ttft_ms"])
assert "numpy" not in sys.modules
try:
    r.requests
    sys.exit("FAIL: .requests without numpy should raise")
except ModuleNotFoundError as e:
    assert e.name == "numpy" and "pip install numpy" in str(e), e
    print("without numpy: simulate() as the CLI; .requests says:", str(e)[:60], "...")
PY
)
check_console_script "$work/bare"
