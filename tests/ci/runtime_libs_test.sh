#!/usr/bin/env bash
# The Docker runtime image's libraries, checked without a Docker engine: ci/scripts/stage_runtime.sh
# stages the runtime tree as the Dockerfile's build stage does (hard links), then, in a private
# mount namespace, the CUDA toolkit (/usr/local/cuda*) is hidden and the venv's site-packages is
# replaced by the staged torch/lib and nvidia/ (what the runtime stage copies, nothing else).
# There, `ldd` of perfgate and of perfgate-runner (beside it) must resolve every library,
# `perfgate --version` must run, and a one-cell CPU sweep through `perfgate run` (which starts
# perfgate-runner) must store a run (LibTorch really loads). This is the check that perfgate does not
# depend on the toolkit at run time (libcudart.so.13 comes from the wheel's nvidia/cu13/lib).
# Usage: runtime_libs_test.sh /path/to/perfgate
set -euo pipefail
pg=$(realpath "${1:?usage: runtime_libs_test.sh /path/to/perfgate}")

if [ -z "${PG_RUNTIME_NS:-}" ]; then
  ns=(unshare -m)
  [ "$(id -u)" -eq 0 ] || ns=(unshare -rm)
  stash=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-runtime-XXXXXX")
  rc=0
  here=$(cd "$(dirname "$0")" && pwd)
  "$here/../../ci/scripts/stage_runtime.sh" --link "$pg" "$stash/stage" >/dev/null || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL - staging the runtime tree (stage_runtime.sh --link needs the venv on this filesystem)"
    find "$stash" -xdev -delete
    exit "$rc"
  fi
  # The runtime stage's apt-get line resolves on this Debian (simulated: nothing is installed).
  mapfile -t packages <"$stash/stage/runtime-packages.txt"
  if apt-get -s install --no-install-recommends "${packages[@]}" ca-certificates git sqlite3 >/dev/null; then
    echo "ok   - the runtime packages resolve: $(paste -sd' ' "$stash/stage/runtime-packages.txt")"
  else
    echo "FAIL - apt-get cannot install the runtime packages"
    rc=1
  fi
  PG_RUNTIME_NS=1 "${ns[@]}" -- "$0" "$pg" "$stash" || rc=1
  # The namespace (and its bind mounts of the real venv) is gone: -xdev stays on this filesystem.
  find "$stash" -xdev -delete
  exit "$rc"
fi
stash=$2
runner=$(dirname "$pg")/perfgate-runner

torch_lib=$(readelf -d "$runner" | sed -n 's/.*runpath: \[\(.*\)\]/\1/p' | tr ':' '\n' | grep '/torch/lib$' | head -1)
staged_site="$stash/stage${torch_lib%/torch/lib}"
site=$(realpath "$torch_lib/../..")
mkdir -p "$stash/work"
mount -t tmpfs -o mode=755 tmpfs "$site"
mkdir -p "$site/torch/lib" "$site/nvidia"
mount --bind "$staged_site/torch/lib" "$site/torch/lib"
mount --bind "$staged_site/nvidia" "$site/nvidia"
for d in /usr/local/cuda*; do
  [ -d "$d" ] && mount -t tmpfs -o mode=755 tmpfs "$(realpath "$d")"
done

# shellcheck source=tests/common/check.sh
source "$(dirname "$0")/../common/check.sh"
check "the toolkit is hidden (no libcudart under /usr/local/cuda)" bash -c '! ls /usr/local/cuda*/lib*/libcudart.so* >/dev/null 2>&1'
check "the venv holds only torch/lib and nvidia" bash -c "[ \"\$(ls '$site')\" = \"\$(printf 'nvidia\ntorch')\" ] && [ \"\$(ls '$site/torch')\" = lib ]"
{ ldd "$pg"; ldd "$runner"; } >"$stash/work/ldd" 2>&1 || true
check "ldd resolves every library of perfgate and perfgate-runner" bash -c "! grep 'not found' '$stash/work/ldd'"
check "perfgate itself loads no LibTorch" bash -c "! ldd '$pg' | grep -q 'libtorch\|libc10'"
grep 'not found' "$stash/work/ldd" || true
check "perfgate --version runs" "$pg" --version
cd "$stash/work"
check "a one-cell CPU sweep stores a run" "$pg" run --model tiny --device cpu --batch-sizes 1 \
  --seq-lens 4 --gen-tokens 2 --warmup 0 --reps 2 --repo "$stash/work" --db "$stash/work/r.db" --quiet
echo "$failures failed"
[ "$failures" -eq 0 ]
