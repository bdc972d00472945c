#!/usr/bin/env bash
# shellcheck disable=SC2086  # $db and $seed are flag lists: word splitting is the point
# The GPU benchmark: perfgate's sweeps and the PyTorch / transformers peers on one GPU
# machine, back to back, so that every ratio compares numbers measured side by side.
# On a GPU machine set up as in docs/INSTALL.md, from the repository root:
#   bench/gpu_bench.sh OUT perfgate   # build, CUDA tests, sweeps, A/A gate, profile -> OUT/perfgate.tgz
#   bench/gpu_bench.sh OUT peers      # the Python peers -> OUT/peers.jsonl
# Then, with both files in DIR (perfgate.tgz unpacked): python3 bench/render_gpu.py DIR --write
# docs/PERFORMANCE.md, which replaces the generated section of that file.
set -uo pipefail
out=${1:?usage: gpu_bench.sh OUT perfgate|peers}
what=${2:?usage: gpu_bench.sh OUT perfgate|peers}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
mkdir -p "$out"

if [ "$what" = peers ]; then
  export PYTHONUNBUFFERED=1
  {
    python3 bench/peers/torch_peer.py --models gpt2,gpt2-xl --batch-sizes 1 --modes eager,cudagraph,compile
    timeout 300 python3 bench/peers/hf_peer.py --models gpt2,gpt2-xl --dtypes bf16 --batch-sizes 1 --seq-lens 512 --mode compiled-generate
    python3 bench/peers/hf_peer.py --models gpt2-xl --dtypes bf16 --batch-sizes 1,16 --seq-lens 512
    python3 bench/peers/hf_peer.py --models gpt2 --dtypes bf16
  } 2> "$out/peers.err" | tee "$out/peers.jsonl"
  exit 0
fi

raw=/tmp/pgbench/raw
rm -rf /tmp/pgbench && mkdir -p $raw
start=$(date +%s)
bench/gpu_build.sh || exit 1
echo "build: $(( $(date +%s) - start )) s"
build-gpu/tests/runner/lm_tests --gtest_filter='LmCuda.*' > $raw/lm_cuda_tests.txt 2>&1
echo "LmCuda suite rc=$?" | tee -a $raw/lm_cuda_tests.txt
grep -E "^\[  (PASSED|FAILED)|agree" $raw/lm_cuda_tests.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee $raw/nvidia-smi.txt

# Three empty commits, so that the two identical A/A sweeps are two revisions to compare.
repo=/tmp/pgbench/repo
git init -q -b main $repo
for m in "sweeps" "A/A 1" "A/A 2"; do git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"; done
pg=build-gpu/perfgate
run() { echo "+ perfgate run $*"; local t; t=$(date +%s); $pg run --quiet --repo $repo "$@"; echo "  ($(( $(date +%s) - t )) s)"; }
db="--db $raw/gpu.db"
seed="--batch-sizes 1,4,8,16 --seq-lens 64,256,512 --gen-tokens 32 --warmup 3 --reps 10"
git -C $repo checkout -q main~2
run $db --model gpt2 --dtype bf16,fp32 $seed                                    # the batch x prompt matrix (eager)
run $db --model gpt2,gpt2-xl --dtype bf16 --batch-sizes 1,16 --seq-lens 512 --cuda-graphs on,off
run $db --model cs336-small,cs336-medium,cs336-large,cs336-xl --dtype bf16 --batch-sizes 1,16 --seq-lens 512 --cuda-graphs on,off
run $db --model gpt2 --dtype bf16 --batch-sizes 1,16 --seq-lens 64,512 --kv-cache on,off
PERFGATE_DECODE_ATTENTION=flash run --db $raw/flash.db --model gpt2,gpt2-xl --dtype bf16 --batch-sizes 1,16 --seq-lens 512 --cuda-graphs on
PERFGATE_TIMING=loop run --db $raw/timing_loop.db --model gpt2,gpt2-xl --dtype bf16 --batch-sizes 1 --seq-lens 512 --cuda-graphs on,off
# Sensitivity: the shipped GPU sweep's form (CUDA graphs) twice at one commit, then the gate.
aa_start=$(date +%s)
for rev in main~1 main; do
  git -C $repo checkout -q $rev
  run --db $raw/aa.db --model gpt2 --dtype bf16 $seed --cuda-graphs on
done
echo "$(( $(date +%s) - aa_start ))" > $raw/aa_seconds.txt
$pg compare --db $raw/aa.db --repo $repo --base main~1 --head main --min-effect 0.01 --format markdown > $raw/aa_compare.md
echo "exit code: $?" | tee -a $raw/aa_compare.md
for f in gpu flash timing_loop aa; do $pg export --db $raw/$f.db --format json > $raw/$f.json; done
bench/gpu_profile.sh $raw gpt2-xl
rm -f $raw/*.db*
tar czf "$out/perfgate.tgz" -C $raw .
echo "perfgate part: $(( $(date +%s) - start )) s"
