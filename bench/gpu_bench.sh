#!/usr/bin/env bash
# The GPU benchmark: perfgate's sweeps and the PyTorch / transformers peers, in one session on one
# GPU machine, so every ratio compares numbers measured side by side.
# Usage (on the GPU machine, repo root): bench/gpu_bench.sh OUTDIR [perfgate|peers|all]
#   perfgate: build + perfgate sweeps into OUTDIR/gpu.db (+ JSON/CSV exports)
#   peers:    the Python peers into OUTDIR/peers.jsonl
# Then: python3 bench/render_gpu.py OUTDIR > docs/PERFORMANCE_GPU.md (done by the same script).
set -euo pipefail
out=${1:?usage: gpu_bench.sh OUTDIR [perfgate|peers|all]}
what=${2:-all}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pg=./build-gpu/perfgate
db=/tmp/pgbench/gpu.db; mkdir -p /tmp/pgbench

# Two throwaway commits so that the two identical sweeps for the sensitivity check are two
# revisions to `perfgate compare` (the tree itself travels without .git).
aa_repo=/tmp/pg-aa
if [ ! -d $aa_repo/.git ]; then
  git init -q -b main $aa_repo
  for m in "GPU sweeps" "A/A run 1" "A/A run 2"; do
    git -C $aa_repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"
  done
fi
at() { git -C $aa_repo checkout -q "$1"; }

run() { echo "+ perfgate run $*" >&2; "$pg" run --db "$db" --quiet "$@"; }

if [ "$what" = perfgate ] || [ "$what" = all ]; then
  if [ ! -x "$pg" ]; then
    plotly=()
    [ -f .device-plotly/plotly.min.js ] && plotly=(-DPERFGATE_PLOTLY_JS="$PWD/.device-plotly/plotly.min.js")
    cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${plotly[@]}" >/dev/null
    cmake --build build-gpu -j16 --target perfgate lm_tests 2>&1 | grep -E "error|warning" || true
    # The CUDA half of the lm suite (graph decode = eager decode, timed replays), skipped on CPU.
    build-gpu/tests/runner/lm_tests --gtest_filter='LmCuda.*' 2>&1 | tee "$out/lm_cuda_tests.txt" || true
  fi
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/nvidia-smi.txt"
  seed="--batch-sizes 1,4,8,16 --seq-lens 64,256,512 --gen-tokens 32 --warmup 3 --reps 10"
  at main~2
  # Issue 2: the seeds' matrix, gpt2 in bf16 and fp32.
  run --model gpt2 --dtype bf16,fp32 $seed --repo $aa_repo
  # Issue 6: CUDA graphs vs eager at batch 1 and 16, gpt2 and gpt2-xl, prompt 512.
  run --model gpt2,gpt2-xl --dtype bf16 --batch-sizes 1,16 --seq-lens 512 --cuda-graphs on,off --repo $aa_repo || echo "cuda-graphs sweep failed: $?"
  # cs336 presets at batch 1 and 16.
  run --model cs336-small,cs336-medium,cs336-large,cs336-xl --dtype bf16 --batch-sizes 1,16 --seq-lens 512 --repo $aa_repo
  # The seeds' KV-cache contrast.
  run --model gpt2 --dtype bf16 --batch-sizes 1,16 --seq-lens 64,512 --kv-cache on,off --repo $aa_repo
  # Harness overhead (issue 6 item 4): per-step events vs one pair around the decode loop.
  PERFGATE_TIMING=loop "$pg" run --db /tmp/pgbench/timing_loop.db --quiet --model gpt2,gpt2-xl --dtype bf16 --batch-sizes 1 --seq-lens 512 --cuda-graphs on,off --repo $aa_repo || true
  "$pg" export --db /tmp/pgbench/timing_loop.db --format json > "$out/timing_loop.json" || true
  # Sensitivity: the same gpt2 bf16 seed sweep again at a second (empty) commit, then the gate.
  at main~1
  run --model gpt2 --dtype bf16 $seed --repo $aa_repo
  at main
  run --model gpt2 --dtype bf16 $seed --repo $aa_repo
  set +e
  "$pg" compare --db "$db" --repo $aa_repo --base main~1 --head main --min-effect 0.01 --format markdown > "$out/aa_compare.md"
  echo "A/A compare (min-effect 0.01) exit code: $?" | tee -a "$out/aa_compare.md"
  set -e
  "$pg" export --db "$db" --format json > "$out/gpu_runs.json"
  "$pg" export --db "$db" --format csv > "$out/gpu_runs.csv"
fi

if [ "$what" = peers ] || [ "$what" = all ]; then
  {
    python3 bench/peers/hf_peer.py --models gpt2 --dtypes bf16,fp32
    python3 bench/peers/hf_peer.py --models gpt2-xl --dtypes bf16 --batch-sizes 1,16 --seq-lens 512
    python3 bench/peers/torch_peer.py --models gpt2,gpt2-xl --batch-sizes 1 --modes eager,cudagraph,compile
    python3 bench/peers/hf_peer.py --models gpt2,gpt2-xl --dtypes bf16 --batch-sizes 1 --seq-lens 512 --mode compiled-generate
  } 2>"$out/peers.err" | tee "$out/peers.jsonl"
fi
