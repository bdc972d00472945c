#!/usr/bin/env bash
# Default PERFGATE_BUILD_COMMAND: configures and builds perfgate from the current source tree into
# $PERFGATE_BUILD_DIR. CMake finds LibTorch through python3's torch (scripts/setup.sh installs it).
set -euo pipefail
: "${PERFGATE_BUILD_DIR:?set by ci/scripts/lib.sh pg_build}"
args=(-S . -B "$PERFGATE_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release)
if [ -n "${PERFGATE_PYTHON:-}" ]; then args+=("-DPERFGATE_PYTHON=$PERFGATE_PYTHON"); fi
# ccache makes the second build of a PR (base after head) cheap on a persistent runner.
if command -v ccache >/dev/null; then args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake "${args[@]}" >/dev/null
cmake --build "$PERFGATE_BUILD_DIR" --target perfgate -j"${PERFGATE_BUILD_JOBS:-$(nproc)}"
