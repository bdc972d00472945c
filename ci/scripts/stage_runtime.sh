#!/usr/bin/env bash
# Stages perfgate's runtime tree under DEST, as the Docker runtime image holds it:
#   DEST/usr/local/bin/perfgate
#   DEST<site-packages>/torch/lib, DEST<site-packages>/nvidia   (the paths perfgate's RUNPATH
#       names; shared libraries only: headers, static archives and Python files are left out)
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
[ -x "$bin" ] || {
  echo "stage_runtime: $bin is not an executable" >&2
  exit 2
}
torch_lib=$(readelf -d "$bin" | sed -n 's/.*runpath: \[\(.*\)\]/\1/p' | tr ':' '\n' | grep '/torch/lib$' | head -1)
[ -n "$torch_lib" ] || {
  echo "stage_runtime: $bin names no .../torch/lib in its RUNPATH" >&2
  exit 2
}
site=${torch_lib%/torch/lib}
mkdir -p "$dest$site/torch" "$dest$site/nvidia" "$dest/usr/local/bin"
cp "$cp_mode" "$site/torch/lib" "$dest$site/torch/lib"
if [ -d "$site/nvidia" ]; then cp "$cp_mode" "$site/nvidia/." "$dest$site/nvidia/"; fi
find "$dest$site" -type f \( -name '*.a' -o -name '*.h' -o -name '*.hpp' -o -name '*.cuh' \
  -o -name '*.py' -o -name '*.pyc' \) -delete
find "$dest$site" -depth -type d -empty -delete
mkdir -p "$dest$site/nvidia"
cp "$bin" "$dest/usr/local/bin/perfgate"
# Libraries outside the venv, by owning Debian package (the runtime image installs these).
ldd "$bin" | awk '$3 ~ /^\// && $3 !~ /site-packages/ && $3 !~ /^\/usr\/local\/cuda/ {
    n = split($3, p, "/"); print p[n - 1] "/" p[n] }' |
  xargs -rI{} dpkg -S '*/{}' | cut -d: -f1 | sort -u >"$dest/runtime-packages.txt"
[ -s "$dest/runtime-packages.txt" ] || {
  echo "stage_runtime: no Debian package owns perfgate's libraries?" >&2
  exit 4
}
echo "$dest"
