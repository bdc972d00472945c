#!/usr/bin/env bash
# Second GPU session step (issue 6 item 5): the seed sweep twice at one commit WITH CUDA graphs,
# gated with --min-effect 0.01; plus transformers' compiled generate peer. Usage: gpu_aa.sh OUTDIR
set -uo pipefail
out=${1:?usage: gpu_aa.sh OUTDIR}
mkdir -p "$out" /tmp/pgbench
cd "$(dirname "$0")/.."
pg=./build-gpu/perfgate
plotly=()
[ -f .device-plotly/plotly.min.js ] && plotly=(-DPERFGATE_PLOTLY_JS="$PWD/.device-plotly/plotly.min.js")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${plotly[@]}" >/dev/null 2>&1
cmake --build build-gpu -j16 --target perfgate 2>&1 | grep -E "error" || true
repo=/tmp/pg-aa2
git init -q -b main $repo
for m in "A/A run 1" "A/A run 2"; do git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"; done
db=/tmp/pgbench/aa_graphs.db
seed="--model gpt2 --dtype bf16 --batch-sizes 1,4,8,16 --seq-lens 64,256,512 --gen-tokens 32 --warmup 3 --reps 10 --cuda-graphs on"
git -C $repo checkout -q main~1
start=$(date +%s)
$pg run --db $db --quiet $seed --repo $repo
git -C $repo checkout -q main
$pg run --db $db --quiet $seed --repo $repo
echo "two graph sweeps took $(( $(date +%s) - start )) s of wall time" | tee "$out/aa_graphs_time.txt"
$pg compare --db $db --repo $repo --base main~1 --head main --min-effect 0.01 --format markdown > "$out/aa_graphs_compare.md"
echo "exit code: $?" | tee -a "$out/aa_graphs_compare.md"
$pg compare --db $db --repo $repo --base main~1 --head main --format markdown > "$out/aa_graphs_compare_default.md"
echo "exit code: $?" | tee -a "$out/aa_graphs_compare_default.md"
$pg export --db $db --format json > "$out/aa_graphs_runs.json"
$pg runs --db $db | tee "$out/aa_graphs_runs.txt"
PYTHONUNBUFFERED=1 timeout 300 python3 bench/peers/hf_peer.py --models gpt2,gpt2-xl --dtypes bf16 --batch-sizes 1 --seq-lens 512 --mode compiled-generate > "$out/hf_compiled.jsonl" 2> "$out/hf_compiled.err"
echo "hf compiled rc=$?"; cat "$out/hf_compiled.jsonl"
