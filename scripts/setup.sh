#!/usr/bin/env bash
# Installs what servesim needs (Debian bookworm packages), then configures and builds it.
# Safe to run again: it installs only what is missing and rebuilds only what changed.
#   scripts/setup.sh            everything: the binary, the Python module, tests, benchmarks, and
#                               the packages they need (./test.sh runs this)
#   scripts/setup.sh --minimal  only what the `servesim` binary needs, and only that target
#                               (./run.sh runs this: no Catch2, MPI, Python, chromium, tests)
#   BUILD_DIR   build folder (default: build)
#   BUILD_TYPE  CMake build type (default: Release)
#   SERVESIM_WITH_TORCH=1  also install python3-torch, which only scripts/profile_gpu.py and its
#               test (profile_gpu_script, on the CPU) need: 237 packages, ~77 MB, ~5 minutes the
#               first time. Opt-in (.ci/run sets it); without it that test is reported as skipped.
#   SERVESIM_UNITY_BUILD=1  a new build folder compiles the libraries as unity units (.ci/run
#               sets it): less CPU from scratch, more after an edit
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/install_missing.sh
source scripts/install_missing.sh
minimal=0
case "${1:-}" in
  "") ;;
  --minimal) minimal=1 ;;
  *) echo "servesim setup: unknown argument '$1' (expected nothing or --minimal)" >&2; exit 2 ;;
esac

# What the servesim binary's CMake build requires (CMakeLists.txt's REQUIRED packages; the HTTP
# server of `servesim serve` is libcpp-httplib).
binary_packages=(cmake g++ ninja-build pkg-config libeigen3-dev libboost-graph-dev
                 nlohmann-json3-dev libcli11-dev libyaml-cpp-dev libcpp-httplib-dev)
packages=("${binary_packages[@]}" catch2 libopenmpi-dev openmpi-bin
          # `servesim serve`'s tests: clients and a Prometheus text-format parser
          curl wrk python3-prometheus-client
          # The C++ formatting check (ctest format.clang_format, scripts/check_format.sh)
          clang-format
          # A compiler cache: rebuilds in another checkout (CI's fresh copy, worktrees) reuse
          # objects, since no object but sim/base/data_dir.cpp's and sim/app/cmd_report.cpp's
          # depends on the checkout's path
          ccache
          # The Python module, its tests, plots and notebooks (for /usr/bin/python3)
          pybind11-dev python3-dev python3-numpy python3-pandas python3-pytest python3-matplotlib
          python3-nbconvert python3-ipykernel
          # `servesim report`'s test opens the page in a headless browser and screenshots it
          chromium)
if [ "${SERVESIM_WITH_TORCH:-0}" = 1 ]; then packages+=(python3-torch); fi
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-Release}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

if [ "$minimal" = 1 ]; then
  install_missing setup "${binary_packages[@]}"
  # Tests and benchmarks off: their packages (Catch2) may be missing. A folder that the full
  # setup configured keeps its settings; only the binary is built either way.
  # A unity build (CMake joins up to 8 .cpp files of a library into one unit) parses the large
  # headers (CLI11, nlohmann/json) once per unit instead of once per file: the first ./run.sh
  # compiles in less CPU time (README). ctest build.unity_sources checks that the units compile.
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${launcher[@]}" \
      -DSERVESIM_BUILD_TESTS=OFF -DSERVESIM_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target servesim >&2
  exit 0
fi

install_missing setup "${packages[@]}"
# Tests and benchmarks on, also in a folder that --minimal configured (its cache says OFF, and
# its failed searches for MPI and pybind11 are retried now that their packages are installed); the
# unity build --minimal chose is turned off: one file per unit rebuilds less after an edit.
# SERVESIM_UNITY_BUILD=1 keeps the libraries' unity units (test files still compile one by one):
# a build from scratch costs less CPU, which CI (.ci/run) wants and an edit-build loop does not.
unity=OFF
if [ "${SERVESIM_UNITY_BUILD:-0}" = 1 ]; then unity=ON; fi
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] ||
   grep -q '^SERVESIM_BUILD_TESTS:BOOL=OFF' "$BUILD_DIR/CMakeCache.txt"; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${launcher[@]}" \
    -DSERVESIM_BUILD_TESTS=ON -DSERVESIM_BUILD_BENCH=ON -DCMAKE_UNITY_BUILD="$unity" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" >&2
# The OpenAI Node SDK for serve's client test (tests/scripts/serve_test.py), from the npm registry
# when npm is present; without it that part of the test says it is skipped.
if command -v npm >/dev/null 2>&1 && [ ! -d "$BUILD_DIR/node/node_modules/openai" ]; then
  npm install --silent --no-audit --no-fund --prefix "$BUILD_DIR/node" openai@4 >&2 ||
    echo "servesim setup: npm could not install the OpenAI Node SDK (serve_test.py skips that part)" >&2
fi
