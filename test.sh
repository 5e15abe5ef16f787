#!/usr/bin/env bash
# Quick start, step 2: set everything up and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
