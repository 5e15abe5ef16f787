#!/usr/bin/env bash
# Regenerates the golden result files that tests/golden/golden_test.cpp compares against.
# Run after an intentional change of the cost model or scheduler, and review the diff.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/golden/data
while IFS='|' read -r name args; do
  [ -z "$name" ] && continue
  # shellcheck disable=SC2086
  build/servesim simulate $args --save-result --result-dir "$out" --result-filename "$name.json" \
    --overwrite >/dev/null
  echo "$args" > "$out/$name.args"
done < tests/golden/cases.txt
echo "golden files updated in $out"
