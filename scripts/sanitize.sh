#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, and the libFuzzer targets
# (tests/fuzz) run for a bounded time each on their checked-in seed corpus. One clang build in
# build-asan serves both (the libraries carry fuzzer-no-link coverage; the tests simply ignore it).
# MPI and the Python module are left out of this build: Open MPI's own allocations trip
# LeakSanitizer, and an ASan-built module cannot be loaded by an unsanitized python3; both are
# tested by the normal build (./test.sh).
# Installs clang-14 and its compiler-rt (libFuzzer, sanitizer runtimes) if missing.
#   FUZZ_SECONDS   seconds per fuzz target (default 20; 0 skips fuzzing)
#   SKIP_TESTS=1   build and fuzz only
#   SERVESIM_UNITY_BUILD=1  a new build-asan compiles the libraries as unity units (.ci/run sets it)
# Each fuzzer's last status line ("#N DONE cov: ... exec/s: ...") is printed: N executions.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/install_missing.sh
source scripts/install_missing.sh

packages=(clang-14 libclang-rt-14-dev cmake ninja-build pkg-config libeigen3-dev libboost-graph-dev
          nlohmann-json3-dev libcli11-dev catch2 libcpp-httplib-dev libyaml-cpp-dev)
install_missing sanitize "${packages[@]}"

BUILD_DIR=build-asan
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DSERVESIM_SANITIZE="address,undefined,fuzzer-no-link" \
    -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined" \
    -DSERVESIM_FUZZ=ON -DSERVESIM_BUILD_BENCH=OFF -DSERVESIM_MPI=OFF -DSERVESIM_BUILD_PYTHON=OFF \
    -DCMAKE_UNITY_BUILD="$([ "${SERVESIM_UNITY_BUILD:-0}" = 1 ] && echo ON || echo OFF)" \
    "${launcher[@]}" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" >&2

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  echo "== ASan+UBSan test suite"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$BUILD_DIR" -j "$(nproc)" --output-on-failure
fi

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  status=0
  for src in tests/fuzz/fuzz_*.cpp; do
    target=$(basename "$src" .cpp)
    target=${target#fuzz_}
    [ "$target" = common ] && continue
    work=$(mktemp -d)
    cp tests/fuzz/corpus/"$target"/* "$work"/  # grow a copy; the checked-in seeds stay as they are
    echo "== fuzz_$target for ${FUZZ_SECONDS}s"
    if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$BUILD_DIR"/tests/fuzz/fuzz_"$target" "$work" \
        -max_total_time="$FUZZ_SECONDS" -max_len=16384 -timeout=20 -rss_limit_mb=4096 \
        -artifact_prefix="$BUILD_DIR/fuzz_${target}_" -print_final_stats=1 \
        > "$BUILD_DIR/fuzz_$target.log" 2>&1; then
      status=1
      tail -60 "$BUILD_DIR/fuzz_$target.log"
      grep -m1 "INFO: Seed:" "$BUILD_DIR/fuzz_$target.log" || true
      echo "fuzz_$target FOUND A CRASH: reproducer in $BUILD_DIR/fuzz_${target}_*; make it a regression test"
      # The reproducer itself, so that a crash seen only in a CI log can be replayed elsewhere:
      #   echo '<base64>' | base64 -d > crash && build-asan/tests/fuzz/fuzz_<target> crash
      for crash in "$BUILD_DIR"/fuzz_"${target}"_*; do
        [ -f "$crash" ] || continue
        if [ "$(stat -c %s "$crash")" -le 6144 ]; then
          echo "reproducer $(basename "$crash") (base64): $(base64 -w0 "$crash")"
        else
          echo "reproducer $(basename "$crash"): $(stat -c %s "$crash") bytes, too long to print"
        fi
      done
    fi
    grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units" "$BUILD_DIR/fuzz_$target.log" || true
    rm -rf "$work"
  done
  exit $status
fi
