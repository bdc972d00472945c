#!/usr/bin/env bash
# Where a GPU decode step's time goes (issue 6): builds perfgate and lm_decode_profile, runs the
# CUDA test suite, the host-side operator profile of an eager step, Nsight Compute's kernel list
# of one eager step and one graph replay, and the graph/eager cells with the length-aware and the
# masked decode attention side by side (PROFILE_CELLS=0 skips those).
# Usage (GPU machine, repo root, after `source .device-debs/env.sh`): bench/gpu_profile.sh OUTDIR
# Then, here: python3 bench/ncu_summary.py OUTDIR/ncu_*.csv
set -uo pipefail
out=${1:?usage: gpu_profile.sh OUTDIR}
mkdir -p "$out" /tmp/pgbench
cd "$(dirname "$0")/.."
plotly=()
[ -f .device-plotly/plotly.min.js ] && plotly=(-DPERFGATE_PLOTLY_JS="$PWD/.device-plotly/plotly.min.js")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${plotly[@]}" >/dev/null 2>&1
cmake --build build-gpu -j16 --target perfgate lm_tests lm_decode_profile 2>&1 | grep -E "error" || true
build-gpu/tests/runner/lm_tests --gtest_filter='LmCuda.*' > "$out/lm_cuda_tests.txt" 2>&1
echo "LmCuda rc=$?"; grep -E "agree|tpot|OK|FAILED|Failure" "$out/lm_cuda_tests.txt" | head -30
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
for m in gpt2 gpt2-xl; do
  build-gpu/runner/lm_decode_profile $m 1 512 > "$out/host_profile_$m.md" 2>&1
  head -3 "$out/host_profile_$m.md"; grep -E "graph step|attention call" "$out/host_profile_$m.md"
done
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for m in gpt2 gpt2-xl; do
  for what in graph eager; do
    timeout 200 "$ncu" --profile-from-start off --clock-control none --cache-control none \
      --metrics gpu__time_duration.sum --csv --page raw \
      build-gpu/runner/lm_decode_profile $m 1 512 $what > "$out/ncu_${m}_$what.csv" 2>/dev/null
    echo "ncu $m $what rc=$? lines=$(wc -l < "$out/ncu_${m}_$what.csv")"
  done
done
cells="--model gpt2,gpt2-xl --dtype bf16 --batch-sizes 1,16 --seq-lens 512 --repo /tmp"
[ "${PROFILE_CELLS:-1}" = 1 ] || exit 0
build-gpu/perfgate run --db /tmp/pgbench/masked.db --quiet $cells --cuda-graphs on,off
PERFGATE_DECODE_ATTENTION=flash build-gpu/perfgate run --db /tmp/pgbench/flash.db --quiet $cells --cuda-graphs on
build-gpu/perfgate export --db /tmp/pgbench/masked.db --format json > "$out/cells_masked.json"
build-gpu/perfgate export --db /tmp/pgbench/flash.db --format json > "$out/cells_flash.json"
python3 - "$out"/cells_*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
  for r in json.load(open(f))["runs"]:
    for c in r["cells"]:
        k, m = c["key"], c.get("metrics", {})
        print(f.split("_")[-1][:-5], k["model"], "B", k["batch_size"], "graphs", k["cuda_graphs"], c["status"],
              "tpot_ms %.4f cv %.4f mbu %.3f prefill_mfu %.3f" % (m.get("tpot_ms", 0), m.get("cv", 0), m.get("mbu", 0), m.get("prefill_mfu", 0)))
PY
