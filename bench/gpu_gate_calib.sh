#!/usr/bin/env bash
# Real GPU gates for docs/STATISTICS.md, on the GPU machine (bench/device_env.sh says what
# the tree must carry):
#   bench/gpu_gate_calib.sh OUT [EVERY] [BUDGET_S]
# Builds perfgate twice: as shipped, and with one extra copy kernel in every EVERY-th layer
# (runner/CMakeLists.txt PERFGATE_EXTRA_COPY_EVERY, default 3), a genuine ~1% decode slowdown.
# Then measures gates of the shipped GPU sweep (ci/sweeps/gpu-default.toml) in the shipped
# protocol, 3 alternating rounds per side, until starting another would end after BUDGET_S
# seconds from the script's start. Each database OUT/g-N.db holds one A/A gate and one A/B gate
# that share their base runs: commit A (base, shipped binary), B (no change, shipped binary) and
# C (the slowed binary), run A B C, C B A, A B C, so that A/B and A/C each alternate
# base-head, head-base, base-head. bench/gpu_gates_split.py splits them into aa-N.db and ab-N.db
# (one gate each), judged later with `perfgate compare` and bench/real_gates_eval.py.
set -uo pipefail
out=${1:?usage: gpu_gate_calib.sh OUT [EVERY] [BUDGET_S]}
every=${2:-3}
budget=${3:-240}
t0=$(date +%s)
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=SCRIPTDIR/device_env.sh
source bench/device_env.sh
mkdir -p "$out"
echo "$device_info" >"$out/device.txt"
build() {
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPERFGATE_EXTRA_COPY_EVERY="$1" "${PLOTLY_ARGS[@]}" \
    >"$out/configure-$1.log" 2>&1 || { tail -30 "$out/configure-$1.log"; exit 1; }
  cmake --build build-gpu -j"$(nproc)" --target perfgate >"$out/build-$1.log" 2>&1 ||
    { grep -E "error" -A3 "$out/build-$1.log" | head -40; exit 1; }
}
build 0 && mkdir -p /tmp/pg-shipped && cp build-gpu/perfgate build-gpu/perfgate-runner /tmp/pg-shipped/
echo "build shipped: $(($(date +%s) - t0)) s"
build "$every" && mkdir -p /tmp/pg-slowed && cp build-gpu/perfgate build-gpu/perfgate-runner /tmp/pg-slowed/
echo "build slowed (copy every $every layers): $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/nvidia-smi.txt"
/tmp/pg-shipped/perfgate --version | tee "$out/perfgate-version.txt"

repo=/tmp/gpucal/repo
rm -rf /tmp/gpucal && mkdir -p $repo
git init -q -b main $repo
for m in A B C; do git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"; done
A=$(git -C $repo rev-parse main~2) B=$(git -C $repo rev-parse main~1) C=$(git -C $repo rev-parse main)
for s in A B C; do git -C $repo worktree add -q --detach /tmp/gpucal/wt-$s "${!s}"; done
echo "$A $B $C" >"$out/shas.txt"
sweep=ci/sweeps/gpu-default.toml
one() {  # one SIDE DB: one run of the sweep at commit SIDE (A, B: shipped; C: slowed)
  local t bin=/tmp/pg-shipped/perfgate
  [ "$1" = C ] && bin=/tmp/pg-slowed/perfgate
  t=$(date +%s.%N)
  "$bin" run --config $sweep --repo "/tmp/gpucal/wt-$1" --db "$2" --quiet >/dev/null || echo "run failed: $*"
  echo "$(basename "$2") $1 $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" >>"$out/runs.log"
}
g=0 longest=60
while [ $(($(date +%s) - t0 + longest)) -le "$budget" ]; do
  g=$((g + 1))
  start=$(date +%s)
  for order in "A B C" "C B A" "A B C"; do
    for side in $order; do one "$side" "$out/g-$g.db"; done
  done
  took=$(($(date +%s) - start))
  [ "$took" -gt "$longest" ] && longest=$took
  echo "g-$g (A/A + A/B, 9 runs) done in $took s, at $(($(date +%s) - t0)) s"
done
echo "total: $(($(date +%s) - t0)) s, $g pairs of gates"
