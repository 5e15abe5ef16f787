#!/usr/bin/env bash
# Checks that the servesim binary's sources compile as a unity build, which is how
# `scripts/setup.sh --minimal` (and so the first ./run.sh) builds them: CMake joins up to 8 .cpp
# files of a library into one translation unit, so two files that each define, say, a `kMaxTokens`
# in an anonymous namespace no longer compile together. The check configures a unity build folder
# and runs the compiler's front end (-fsyntax-only) on every joined unit: name clashes are
# front-end errors, and parsing costs about a third of compiling (ctest build.unity_sources).
#   scripts/check_unity_build.sh [FOLDER]   (default build/unity-check)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/unity-check}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSERVESIM_BUILD_TESTS=OFF \
  -DSERVESIM_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
exec /usr/bin/python3 - "$dir/compile_commands.json" <<'PY'
import concurrent.futures, json, os, shlex, subprocess, sys

units = [e for e in json.load(open(sys.argv[1])) if "/Unity/unity_" in e["file"]]
if not units:
    sys.exit(f"check_unity_build: {sys.argv[1]} lists no unity unit (was CMAKE_UNITY_BUILD ignored?)")

def front_end(entry):
    args = shlex.split(entry["command"])
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT"):
            skip = True
        elif a not in ("-c", "-MD"):
            kept.append(a)
    run = subprocess.run(kept + ["-fsyntax-only"], cwd=entry["directory"],
                         capture_output=True, text=True)
    return entry["file"], run.returncode, run.stderr

failed = 0
with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
    for name, rc, err in pool.map(front_end, units):
        if rc != 0:
            failed += 1
            print(f"check_unity_build: {name} does not compile as one unit:\n{err}", file=sys.stderr)
print(f"check_unity_build: {len(units) - failed} of {len(units)} unity units compile")
sys.exit(1 if failed else 0)
PY
