#!/usr/bin/env bash
# What the cache of prepared packages (ci/scripts/prepare_cache.sh) saves a pull-request job on a
# GPU runner: the example's AOTInductor gate (tests/runner/own_model_example_test.sh aoti, its
# two jobs: pr-noop, a README change, and pr-slow, four times the layers) exported and measured
# on CUDA, once with the cache off (every side exports its own package) and once with it on (the
# merge-base exports and keeps its package; an unchanged head, and the next job's merge-base,
# reuse it). Writes each job's wall time and its exports to OUT/prepare_cache_gpu.md.
#   bench/prepare_cache_gpu.sh PERFGATE PYTHON OUT
# CACHES (default "off on") names the passes, in order: one pass of both jobs takes about 4 minutes
# with the cache off and 2-3 with it on, so a device call with its 10-minute limit may run one.
set -euo pipefail
pg=$(realpath "${1:?usage: prepare_cache_gpu.sh PERFGATE PYTHON OUT}")
py=${2:?usage: prepare_cache_gpu.sh PERFGATE PYTHON OUT}
out=$(mkdir -p "${3:?usage: prepare_cache_gpu.sh PERFGATE PYTHON OUT}" && cd "$3" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
report="$out/prepare_cache_gpu.md"
{
  echo "# The cache of prepared packages on a GPU runner ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  echo "- command: CACHES=\"${CACHES:-off on}\" bench/prepare_cache_gpu.sh PERFGATE PYTHON OUT"
  echo "- jobs: tests/runner/own_model_example_test.sh aoti with PERFGATE_EXAMPLE_DEVICE=cuda"
  echo
  echo "| cache | job | exit | wall time (s) | packages exported |"
  echo "|---|---|--:|--:|--:|"
} >"$report"
for cache in ${CACHES:-off on}; do
  log="$out/jobs-cache-$cache.log"
  PERFGATE_EXAMPLE_DEVICE=cuda PERFGATE_EXAMPLE_CACHE=$cache \
    "$root/tests/runner/own_model_example_test.sh" "$pg" "$py" aoti >"$log" 2>&1 || true
  # "--- pr-noop: job exit 0 in 95 s, 1 prepare runs"
  sed -n 's/^--- \(.*\): job exit \([0-9]*\) in \([0-9]*\) s, \([0-9]*\) prepare runs$/| '"$cache"' | \1 | \2 | \3 | \4 |/p' \
    "$log" >>"$report"
  tail -3 "$log" >>"$out/summary-lines.txt"
done
echo >>"$report"
echo "Checks of each pass (the test's own): $(paste -sd' ' "$out/summary-lines.txt")" >>"$report"
cat "$report"
