#!/usr/bin/env bash
# The benchmark programs' command lines (bench/bench_cli.h): --help prints every option and exits
# 0; an unknown option, a missing value, a value that is not a number or is below its bound, and
# an unknown scenario each exit 2 with one line "PROGRAM: error: ..." naming the option and the
# value; a short valid run still prints its table with a 16-digit check hash.
#   bench_cli_test.sh BUILD_DIR
set -euo pipefail
build=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failures=0

# expect STATUS PATTERN -- COMMAND...: COMMAND exits STATUS and its output (stdout + stderr)
# contains PATTERN (grep -E).
expect() {
  local want=$1 pattern=$2
  shift 3
  local got=0
  "$@" > "$out/o.txt" 2>&1 || got=$?
  if [ "$got" != "$want" ] || ! grep -Eq -- "$pattern" "$out/o.txt"; then
    echo "FAIL: $* exited $got (expected $want) with:"
    sed 's/^/  /' "$out/o.txt"
    echo "  (expected to contain: $pattern)"
    failures=$((failures + 1))
  fi
}

b=$build/servesim_bench
t=$build/servesim_trace_bench

# --help: the options, exit 0, nothing run.
expect 0 '--scenarios.*--requests.*--repeats' -- bash -c "$b --help | tr '\n' ' '"
expect 0 '--trace.*--format.*--rates.*--repeats.*--model.*--gpu.*--tensor-parallel-size' -- \
  bash -c "$t --help | tr '\n' ' '"

# Errors: exit 2, one line naming the program, the option and the value.
expect 2 "^servesim_bench: error: the following arguments were not expected: --request 10$" -- \
  "$b" --request 10
expect 2 "^servesim_bench: error: the following arguments were not expected: --foo 1 extra$" -- \
  "$b" --foo 1 extra
expect 2 "^servesim_bench: error: --requests: '0'; expected a whole number >= 1$" -- \
  "$b" --requests 0
expect 2 "^servesim_bench: error: --requests: '1e5'; expected a whole number >= 1$" -- \
  "$b" --requests 1e5
expect 2 "^servesim_bench: error: --repeats: 'x'; expected a whole number >= 1$" -- \
  "$b" --repeats x
expect 2 "^servesim_bench: error: --requests: 1 required" -- "$b" --requests
expect 2 "^servesim_bench: error: --scenarios: unknown scenario '5rp' \(expected 5rps, 20rps, 100rps, 70b-tp4, gsp or capacity\)$" -- \
  "$b" --scenarios 20rps,5rp
expect 2 "^Run servesim_bench --help for the options.$" -- "$b" --scenarios nope

expect 2 "^servesim_trace_bench: error: the following arguments were not expected: --rate 15$" -- \
  "$t" --rate 15
expect 2 "^servesim_trace_bench: error: --rates: 'x'; expected a number >= 0$" -- \
  "$t" --rates 0,x
expect 2 "^servesim_trace_bench: error: --rates: '-1'; expected a number >= 0$" -- \
  "$t" --rates -1
expect 2 "^servesim_trace_bench: error: --repeats: '0'; expected a whole number >= 1$" -- \
  "$t" --repeats 0
expect 2 "^servesim_trace_bench: error: --tensor-parallel-size: 'two'; expected a whole number >= 1$" -- \
  "$t" -tp two

# Valid command lines still run: one row per scenario or rate, ending in a 16-digit check hash.
expect 0 '^5rps +200 .* [0-9a-f]{16}$' -- "$b" --scenarios 5rps --requests 200 --repeats 1
expect 0 '^ +15\.000 .* [0-9a-f]{16}$' -- "$t" --rates 15 --repeats 1 -tp 1

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "bench command lines: all checks passed"
