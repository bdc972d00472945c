#!/usr/bin/env bash
# Third GPU step: CUDA-graph decode after the additive-mask change, with the CUDA test suite.
# Usage (GPU machine, repo root, after `source .device-debs/env.sh`): bench/gpu_graphs.sh OUTDIR
set -uo pipefail
out=${1:?usage: gpu_graphs.sh OUTDIR}
mkdir -p "$out" /tmp/pgbench
cd "$(dirname "$0")/.."
plotly=()
[ -f .device-plotly/plotly.min.js ] && plotly=(-DPERFGATE_PLOTLY_JS="$PWD/.device-plotly/plotly.min.js")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${plotly[@]}" >/dev/null 2>&1
cmake --build build-gpu -j16 --target perfgate lm_tests 2>&1 | grep -E "error" || true
build-gpu/tests/runner/lm_tests --gtest_filter='LmCuda.*' > "$out/lm_cuda_tests2.txt" 2>&1
echo "LmCuda rc=$?"; grep -E "agree|tpot|PASSED|FAILED" "$out/lm_cuda_tests2.txt"
db=/tmp/pgbench/graphs2.db
build-gpu/perfgate run --db $db --quiet --model gpt2,gpt2-xl --dtype bf16 --batch-sizes 1,16 --seq-lens 512 --cuda-graphs on --repo /tmp
build-gpu/perfgate export --db $db --format json > "$out/graphs2.json"
python3 - "$out/graphs2.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["runs"][0]["cells"]:
    k, m = c["key"], c["metrics"]
    print(k["model"], "B", k["batch_size"], "tpot_ms %.4f cv %.4f mbu %.3f prefill_mfu %.3f" % (m["tpot_ms"], m["cv"], m["mbu"], m["prefill_mfu"]))
PY
