#!/usr/bin/env bash
# README command 2: install every dependency (the developer tools too), build everything, and run
# every test (GoogleTest suites, end-to-end CLI tests, scipy/transformers oracles, the gate
# scripts, the wheel, browser tests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
# Timing-sensitive suites (real A/A and A/B gates) are marked RUN_SERIAL in their CMakeLists.
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
