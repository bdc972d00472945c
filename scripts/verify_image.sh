#!/usr/bin/env bash
# Runs the images scripts/build_image.sh built, as a user would, with buildah (no Docker engine):
#   runtime   as its user 10001: ldd resolves every library, `perfgate --version`, a tiny CPU sweep
#             in a git repository mounted read-only at /repo (another uid owns it) that is tagged
#             with its commit, the same from another directory with --repo, and what takes space
#   ci        as its user 10001, on a clone of this repository mounted read-only at /repo: the venv's
#             Python packages import, Playwright drives Debian's chromium, perfgate runs a sweep
#             tagged with the clone's commit, CMake configures (LibTorch and the CUDA compiler from
#             the venv), builds the chosen targets and ctest runs the chosen tests (default: the
#             statistics suite with its scipy oracles, the linters, the image check; building
#             perfgate itself again takes 15 min on 2 cores: PERFGATE_CI_TARGETS="perfgate ..."
#             and PERFGATE_CI_TESTS choose more)
# Usage: scripts/verify_image.sh [runtime] [ci]   (default: both)
# Environment: PERFGATE_IMAGE=perfgate, BUILDAH_ISOLATION=chroot.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=${PERFGATE_IMAGE:-perfgate}
export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
ci_targets=${PERFGATE_CI_TARGETS:-pg_stats_tests}
ci_tests=${PERFGATE_CI_TESTS:-^(ci[.](lint_workflows|image_files)|stats_scipy_refs_.*|ScipyRefs[.].*)$}
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(runtime ci)

work=$(mktemp -d)
containers=()
cleanup() {
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=tests/common/check.sh
source "$root/tests/common/check.sh"
# start IMAGE: a fresh container of IMAGE for inside(); inside CMD...: runs CMD there as the image's user
# 10001, with the mounts in the array `mounts`.
start() {
  ctr=$(buildah from --pull-never "$1")
  containers+=("$ctr")
}
inside() { buildah run --user 10001:10001 "${mounts[@]}" "$ctr" -- "$@"; }
sweep=(--model tiny --device cpu --batch-sizes 1 --seq-lens 4 --gen-tokens 2 --warmup 0 --reps 2 --quiet)

# A repository owned by another uid, as a checkout mounted from the host is.
git clone -q "$root" "$work/repo"
sha=$(git -C "$work/repo" rev-parse HEAD)
chown -R 20000:20000 "$work/repo"
mkdir -p "$work/data" && chown 10001 "$work/data"

for part in "${parts[@]}"; do
  case $part in
  runtime)
    start "$name:runtime"
    mounts=(-v "$work/repo:/repo:ro" -v "$work/data:/data")
    check "runtime: ldd finds every library of perfgate and perfgate-runner" \
      inside bash -c '! ldd /usr/local/bin/perfgate /usr/local/bin/perfgate-runner | grep "not found"'
    check "runtime: perfgate --version runs as uid 10001" inside perfgate --version
    check "runtime: the working directory is /repo" test "$(inside pwd)" = /repo
    check "runtime: a tiny CPU sweep runs as uid 10001" inside perfgate run "${sweep[@]}" --db /data/runtime.db
    runs=$(inside perfgate runs --db /data/runtime.db)
    echo "$runs"
    check "runtime: the sweep in /repo is tagged with its commit ${sha:0:12}" grep -q "${sha:0:12}" <<<"$runs"
    check "runtime: the same from /tmp with --repo /repo" \
      inside bash -c "cd /tmp && perfgate run --repo /repo ${sweep[*]} --db /data/repo-flag.db"
    runs=$(inside perfgate runs --db /data/repo-flag.db)
    check "runtime: --repo /repo tags the run with its commit" grep -q "${sha:0:12}" <<<"$runs"
    echo "runtime: what takes the space"
    # shellcheck disable=SC2016  # expanded in the container
    inside bash -c 'site=$(echo /opt/perfgate/venv/lib/python3*/site-packages)
      for d in /usr /usr/local/bin/perfgate /usr/local/bin/perfgate-runner "$site/torch/lib" "$site"/nvidia/* "$site"/nvidia/*/lib/*; do
        du -sh "$d"; done | sort -rh | head -24' || true
    ;;
  ci)
    start "$name:ci"
    mounts=(-v "$work/repo:/repo:ro")
    check "ci: the venv's packages import as uid 10001" \
      inside python3 -c 'import torch, numpy, scipy, transformers, safetensors, plotly, playwright'
    # shellcheck disable=SC2016  # Python code
    check "ci: Playwright drives Debian's chromium as uid 10001" inside python3 -c '
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium")
    pg = b.new_page(); pg.set_content("<title>ok</title>"); assert pg.title() == "ok"; b.close()'
    runs=$(inside bash -c "cd /repo && perfgate run ${sweep[*]} --db \$HOME/ci.db && perfgate runs --db \$HOME/ci.db")
    check "ci: perfgate (on PATH) runs a sweep in /repo, tagged with its commit" grep -q "${sha:0:12}" <<<"$runs"
    # shellcheck disable=SC2016  # expanded in the container
    check "ci: as uid 10001, configure + build ($ci_targets) + ctest '$ci_tests'" \
      inside bash -c 'set -euo pipefail; cd "$HOME"; id -u; nvcc --version | tail -1
        cmake -S /repo -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >cmake.log \
          || { tail -40 cmake.log; exit 1; }
        grep -E "torch prefix|CUDA nvcc|Caffe2: CUDA" cmake.log || true
        cmake --build build -j"$(nproc)" --target '"$ci_targets"' >build.log \
          || { tail -40 build.log; exit 1; }
        ctest --test-dir build --output-on-failure -R "'"$ci_tests"'"'
    ;;
  *)
    echo "verify_image: unknown part $part (runtime or ci)" >&2
    exit 2
    ;;
  esac
done

echo "image sizes:"
buildah images --filter reference="$name" --format '{{.Name}}:{{.Tag}} {{.Size}}'
echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
