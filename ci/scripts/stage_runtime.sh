#!/usr/bin/env bash
# Stages perfgate's runtime tree under DEST, as the Docker runtime image holds it:
#   DEST/usr/local/bin/perfgate, DEST/usr/local/bin/perfgate-runner (the LibTorch part, which
#       `perfgate run` starts from beside perfgate: cli/CMakeLists.txt)
#   DEST<site-packages>/torch/lib, DEST<site-packages>/nvidia/*/lib   (the paths the runner's
#       RUNPATH names; shared libraries only: no headers, static archives, compiler or Python
#       files, and none of the libraries below that nothing perfgate loads refers to)
#   DEST/runtime-packages.txt   the Debian packages owning the other libraries perfgate links
# The Dockerfile's build stage runs it; tests/ci/runtime_libs_test.sh runs it (with --link: hard
# links instead of copies) and then runs perfgate on the staged tree with the CUDA toolkit hidden.
# Usage: stage_runtime.sh [--link] PERFGATE DEST
set -euo pipefail
cp_mode=-a
if [ "${1:-}" = --link ]; then
  cp_mode=-al
  shift
fi
bin=${1:?usage: stage_runtime.sh [--link] PERFGATE DEST}
dest=${2:?usage: stage_runtime.sh [--link] PERFGATE DEST}
runner=$(dirname "$bin")/perfgate-runner
for b in "$bin" "$runner"; do
  [ -x "$b" ] || {
    echo "stage_runtime: $b is not an executable" >&2
    exit 2
  }
done
torch_lib=$(readelf -d "$runner" | sed -n 's/.*runpath: \[\(.*\)\]/\1/p' | tr ':' '\n' | grep '/torch/lib$' | head -1)
[ -n "$torch_lib" ] || {
  echo "stage_runtime: $runner names no .../torch/lib in its RUNPATH" >&2
  exit 2
}
site=${torch_lib%/torch/lib}
mkdir -p "$dest$site/torch" "$dest$site/nvidia" "$dest/usr/local/bin"
cp "$cp_mode" "$site/torch/lib" "$dest$site/torch/lib"
for lib in "$site"/nvidia/*/lib; do
  [ -d "$lib" ] || continue
  pkg=$(basename "$(dirname "$lib")")
  mkdir -p "$dest$site/nvidia/$pkg"
  cp "$cp_mode" "$lib" "$dest$site/nvidia/$pkg/lib"
done
# Left out: what is not a shared library, and libraries that no library of torch/lib or nvidia/
# names (checked with grep over them): the Python extension's library, cuSOLVER's multi-GPU and
# NVRTC's ".alt" variants, the BLAS and FFTW interposers, CUPTI's PC sampling and checkpoint
# utilities, NVSHMEM's device bitcode.
find "$dest$site" \( -type f -o -type l \) \( -name '*.a' -o -name '*.h' -o -name '*.hpp' \
  -o -name '*.cuh' -o -name '*.py' -o -name '*.pyc' -o -name '*.bc' -o -name 'libtorch_python.so' \
  -o -name 'libcusolverMg.so*' -o -name 'libnvrtc*.alt.so*' -o -name 'libnvblas.so*' \
  -o -name 'libcufftw.so*' -o -name 'libpcsamplingutil.so' -o -name 'libcheckpoint.so' \) -delete
find "$dest$site" -depth -type d -empty -delete
mkdir -p "$dest$site/nvidia"
cp "$bin" "$dest/usr/local/bin/perfgate"
cp "$runner" "$dest/usr/local/bin/perfgate-runner"
# Libraries outside the venv, by owning Debian package (the runtime image installs these).
{ ldd "$bin"; ldd "$runner"; } | awk '$3 ~ /^\// && $3 !~ /site-packages/ && $3 !~ /^\/usr\/local\/cuda/ {
    n = split($3, p, "/"); print p[n - 1] "/" p[n] }' |
  xargs -rI{} dpkg -S '*/{}' | cut -d: -f1 | sort -u >"$dest/runtime-packages.txt"
[ -s "$dest/runtime-packages.txt" ] || {
  echo "stage_runtime: no Debian package owns perfgate's libraries?" >&2
  exit 4
}
echo "$dest"
