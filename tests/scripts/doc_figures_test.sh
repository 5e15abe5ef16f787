#!/usr/bin/env bash
# The scripts behind docs/validation.md's transfer table and its figures:
#   doc_figures_test.sh SERVESIM_BINARY REPO_ROOT
# - scripts/logo_table.py, run on docs/data/logo_transfer.json, prints the table that
#   docs/validation.md §6 shows, line for line: the page cannot drift from the data it cites;
# - scripts/plot_logo.py (on that file) and scripts/plot_validation.py (on a `validate --output`
#   of this build) write PNG images.
# Skipped (exit 77) with a message when python3-matplotlib is missing (scripts/setup.sh installs it).
set -euo pipefail
bin=$1
root=$2
py=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$py" "$root/scripts/logo_table.py" "$root/docs/data/logo_transfer.json" > "$out/table.md"
"$py" - "$out/table.md" "$root/docs/validation.md" <<'PY'
import sys
table = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
doc = open(sys.argv[2], encoding="utf-8").read().split("\n")
starts = [i for i, line in enumerate(doc) if line == table[0]]
if not starts:
    sys.exit("docs/validation.md has no line equal to the LOGO table's header: " + table[0])
shown = doc[starts[0]:starts[0] + len(table)]
for n, (want, have) in enumerate(zip(table, shown + [""] * len(table))):
    if want != have:
        sys.exit(f"docs/validation.md line {starts[0] + n + 1} differs from scripts/logo_table.py "
                 f"docs/data/logo_transfer.json (re-run it and paste its output):\n"
                 f"  page:   {have}\n  script: {want}")
print(f"docs/validation.md lines {starts[0] + 1}-{starts[0] + len(table)}: the LOGO table, as the "
      "script prints it")
PY

if ! "$py" -c "import matplotlib" 2>/dev/null; then
  echo "SKIPPED the plots: python3-matplotlib is not installed (scripts/setup.sh installs it)"
  exit 77
fi
is_png() {  # a PNG signature and more than a few kilobytes of image
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && [ "$(stat -c %s "$1")" -gt 20000 ]
}
"$py" "$root/scripts/plot_logo.py" "$root/docs/data/logo_transfer.json" "$out/logo.png"
is_png "$out/logo.png" || { echo "plot_logo.py wrote no PNG image"; exit 1; }
"$bin" validate --sidecars "$root/tests/data/realdata_sidecars" --output "$out/validate.json" \
  --measured "$root"/data/realdata/llmk8s_llama33_70b_a100x8/01_tp8_pp1/serving_*.json > /dev/null
"$py" "$root/scripts/plot_validation.py" "$out/validation.png" "llm-k8s run 01" "$out/validate.json"
is_png "$out/validation.png" || { echo "plot_validation.py wrote no PNG image"; exit 1; }
echo "plot_logo.py and plot_validation.py wrote their images"
