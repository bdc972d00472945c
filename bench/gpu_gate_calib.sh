#!/usr/bin/env bash
# Real GPU gates for docs/CALIBRATION_REAL.md, on the GPU machine after
# `source .device-debs/env.sh` (../shared/device/README.md):
#   bench/gpu_gate_calib.sh OUT [EVERY] [BUDGET_S]
# Builds perfgate twice: as shipped, and with one extra copy kernel in every EVERY-th layer
# (runner/CMakeLists.txt PERFGATE_EXTRA_COPY_EVERY, default 3), a genuine ~1% decode slowdown.
# Then measures gates of the shipped GPU sweep (ci/sweeps/gpu-default.toml) in the shipped
# protocol, 3 alternating rounds per side, each gate in its own database: A/A (head = the same
# binary at a commit with no change) and A/B (head = the slowed binary), alternately, until
# BUDGET_S seconds of measuring are spent. OUT gets the databases and a log; they are judged
# later with `perfgate compare` and bench/real_gates_eval.py.
set -uo pipefail
out=${1:?usage: gpu_gate_calib.sh OUT [EVERY] [BUDGET_S]}
every=${2:-3}
budget=${3:-240}
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$out"
t0=$(date +%s)
build() {
  plotly=(); [ -f .device-plotly/plotly.min.js ] && plotly=(-DPERFGATE_PLOTLY_JS="$PWD/.device-plotly/plotly.min.js")
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPERFGATE_EXTRA_COPY_EVERY="$1" "${plotly[@]}" \
    >"$out/configure-$1.log" 2>&1 || { tail -30 "$out/configure-$1.log"; exit 1; }
  cmake --build build-gpu -j"$(nproc)" --target perfgate >"$out/build-$1.log" 2>&1 ||
    { grep -E "error" -A3 "$out/build-$1.log" | head -40; exit 1; }
}
build 0 && cp build-gpu/perfgate /tmp/pg-shipped
echo "build shipped: $(($(date +%s) - t0)) s"
build "$every" && cp build-gpu/perfgate /tmp/pg-slowed
echo "build slowed (copy every $every layers): $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/nvidia-smi.txt"

repo=/tmp/gpucal/repo
rm -rf /tmp/gpucal && mkdir -p $repo
git init -q -b main $repo
for m in A B C; do git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"; done
A=$(git -C $repo rev-parse main~2) B=$(git -C $repo rev-parse main~1) C=$(git -C $repo rev-parse main)
for s in A B C; do git -C $repo worktree add -q --detach /tmp/gpucal/wt-$s "${!s}"; done
echo "$A $B $C" >"$out/shas.txt"
sweep=ci/sweeps/gpu-default.toml
one() {  # one BIN WT DB: one run of the sweep, its wall time logged
  local t; t=$(date +%s.%N)
  "$1" run --config $sweep --repo "$2" --db "$3" --quiet >/dev/null || echo "run failed: $*"
  echo "$(basename "$3") $(basename "$2") $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" >>"$out/runs.log"
}
measure_start=$(date +%s)
g=0
while [ $(($(date +%s) - measure_start)) -lt "$budget" ]; do
  g=$((g + 1))
  for kind in aa ab; do
    db="$out/$kind-$g.db" head_bin=/tmp/pg-shipped head_wt=/tmp/gpucal/wt-B
    [ $kind = ab ] && head_bin=/tmp/pg-slowed head_wt=/tmp/gpucal/wt-C
    for r in 1 2 3; do
      if ((r % 2)); then
        one /tmp/pg-shipped /tmp/gpucal/wt-A "$db"; one $head_bin $head_wt "$db"
      else
        one $head_bin $head_wt "$db"; one /tmp/pg-shipped /tmp/gpucal/wt-A "$db"
      fi
    done
    echo "$kind-$g done at $(($(date +%s) - t0)) s"
  done
done
echo "total: $(($(date +%s) - t0)) s"
