#!/usr/bin/env bash
# Builds perfgate, the LibTorch test suite and lm_decode_profile into build-gpu/ on a GPU machine
# with the dependencies of scripts/setup.sh and the CUDA toolkit (docs/INSTALL.md).
set -euo pipefail
cd "$(dirname "$0")/.."
plotly=()
[ -f .device-plotly/plotly.min.js ] && plotly=(-DPERFGATE_PLOTLY_JS="$PWD/.device-plotly/plotly.min.js")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${plotly[@]}" > /tmp/pg-configure.log 2>&1 ||
  { cat /tmp/pg-configure.log; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target perfgate lm_tests lm_decode_profile > /tmp/pg-build.log 2>&1 ||
  { grep -E "error" -A3 /tmp/pg-build.log | head -40; exit 1; }
