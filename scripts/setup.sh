#!/usr/bin/env bash
# Installs what servesim needs (Debian bookworm packages), then configures and builds it.
# Safe to run again: it installs only what is missing and rebuilds only what changed.
#   BUILD_DIR   build folder (default: build)
#   BUILD_TYPE  CMake build type (default: Release)
#   SERVESIM_WITH_TORCH=1  also install python3-torch, which only scripts/profile_gpu.py and its
#               test (profile_gpu_script, on the CPU) need: 237 packages, ~77 MB, ~5 minutes the
#               first time. Opt-in (.ci/run sets it); without it that test is reported as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/install_missing.sh
source scripts/install_missing.sh

packages=(cmake g++ ninja-build pkg-config libeigen3-dev libboost-graph-dev nlohmann-json3-dev
          libcli11-dev libyaml-cpp-dev catch2 libopenmpi-dev openmpi-bin
          # `servesim serve`: its HTTP server (header-only), and its tests' clients and
          # Prometheus text-format parser
          libcpp-httplib-dev curl wrk python3-prometheus-client
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
install_missing setup "${packages[@]}"

BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-Release}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${launcher[@]}" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" >&2
# The OpenAI Node SDK for serve's client test (tests/scripts/serve_test.py), from the npm registry
# when npm is present; without it that part of the test says it is skipped.
if command -v npm >/dev/null 2>&1 && [ ! -d "$BUILD_DIR/node/node_modules/openai" ]; then
  npm install --silent --no-audit --no-fund --prefix "$BUILD_DIR/node" openai@4 >&2 ||
    echo "servesim setup: npm could not install the OpenAI Node SDK (serve_test.py skips that part)" >&2
fi
