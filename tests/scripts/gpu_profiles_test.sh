#!/usr/bin/env bash
# The shipped GPU-level calibration profiles are what scripts/make_gpu_profiles.sh makes with
# this build: a change to the simulator that moves a fit shows here, so the profiles are re-made
# (and the golden runs re-blessed) with it instead of drifting from the model they are applied to.
#   gpu_profiles_test.sh SERVESIM_BINARY REPO_ROOT
# Numbers are compared to 1e-6 relative (as the golden runs: another compiler may round the
# last digits differently); everything else exactly.
set -euo pipefail
bin=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
SERVESIM=$bin "$root/scripts/make_gpu_profiles.sh" "$out" > "$out/log" 2>&1 || {
  cat "$out/log"
  exit 1
}
/usr/bin/python3 - "$root/hardware/calibration" "$out" <<'PY'
import json, math, pathlib, sys
shipped, made = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
bad = []
def same(a, b, where):
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) or \
           not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12):
            bad.append(f"{where}: shipped {a!r}, made {b!r}")
    elif isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                bad.append(f"{where}.{k}: only in {'the shipped file' if k in a else 'the made file'}")
            else:
                same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif a != b:
        bad.append(f"{where}: shipped {str(a)[:80]!r}, made {str(b)[:80]!r}")
files = sorted(p.relative_to(made) for p in made.rglob("*.json"))
if len(files) != 4:
    bad.append(f"the script made {len(files)} profiles, expected 4")
for rel in files:
    same(json.loads((shipped / rel).read_text()), json.loads((made / rel).read_text()), str(rel))
if bad:
    print("hardware/calibration differs from what scripts/make_gpu_profiles.sh makes with this "
          "build (re-make: scripts/make_gpu_profiles.sh, then scripts/update_golden.sh):")
    print("\n".join(bad[:40]))
    sys.exit(1)
print(f"{len(files)} shipped profiles match scripts/make_gpu_profiles.sh")
PY
