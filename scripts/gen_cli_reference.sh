#!/usr/bin/env bash
# Writes docs/cli-reference.md from the CLI's own --help texts, so the reference cannot drift from
# the flags the binary accepts. Run it after adding or changing a flag (ctest's
# docs.cli_reference_up_to_date fails until you do):
#   scripts/gen_cli_reference.sh                       # regenerate with build/servesim
#   scripts/gen_cli_reference.sh --check [BINARY]      # exit 1 if the checked-in file is stale
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
bin=${1:-build/servesim}
[ -x "$bin" ] || { echo "gen_cli_reference: $bin: not an executable (build first: scripts/setup.sh)" >&2; exit 2; }
target=docs/cli-reference.md

generate() {
  echo "# CLI reference (generated)"
  echo
  echo "Generated from \`servesim --help\` and \`servesim COMMAND --help\` by"
  echo "\`scripts/gen_cli_reference.sh\`; do not edit by hand (a test compares this file with the"
  echo "binary's help). Defaults, units and examples of the run options: [cli.md](cli.md)."
  echo
  echo '```'
  "$bin" --help
  echo '```'
  # The subcommands in the order the top-level help lists them.
  for cmd in $("$bin" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}'); do
    echo
    echo "## servesim $cmd"
    echo
    echo '```'
    "$bin" "$cmd" --help
    echo '```'
  done
}

if [ $check -eq 1 ]; then
  if ! diff -u "$target" <(generate) >&2; then
    echo "gen_cli_reference: $target is stale: run scripts/gen_cli_reference.sh and commit it" >&2
    exit 1
  fi
  echo "$target is up to date"
else
  generate > "$target.tmp"
  mv "$target.tmp" "$target"
  echo "wrote $target"
fi
