#!/usr/bin/env bash
# Rounds of real H200 runs for the sequential gate with trusted history (docs/STATISTICS.md,
# "Measured on the H200: rounds, GPU-seconds and power"), on the GPU machine (bench/device_env.sh
# says what the tree must carry):
#   CALL=1 DEADLINE=540 bench/gpu_seq_gates.sh OUT [SLEEP_SMALL] [SLEEP_LARGE] [HISTORY_COMMITS]
# One calibration build (-DPERFGATE_CALIBRATION_SLOWDOWN=ON), so base and heads are one binary:
# commits A and B run it as shipped (the knob unset), C5 and C10 with
# PERFGATE_CALIBRATION_SLEEP_CYCLES=SLEEP_SMALL (default 4500) and SLEEP_LARGE (default 11000):
# one GPU kernel spinning that many cycles per forward step, about +0.5% and +1% of a decode step
# (the eval measures what they came out as). Call 1 first stores HISTORY_COMMITS (default 6) other
# commits, 2 runs each, in history.db, as the action's pushes to main do, and times one run of the
# sweep at 3 and at 10 repetitions with the profile on and off (timing.db, runs.log). Then, until
# DEADLINE seconds, rounds of A, B, C5, C10 (order rotated each round) into r-CALL-N.db, all with
# --profile off (the action profiles a side's first round only; timing.db prices that).
# ROUND_REPS (default 3) is the timed repetitions of the history's and the rounds' runs
# (`perfgate run --reps`; the sweep's own is 10): on the H200 the run-to-run spread dominates
# (within a run the standard error of a cell's mean is about 0.04%, between runs the sd is
# 0.12-0.29%), so 3 repetitions lose little and a run's fixed cost (model load, graph capture,
# warm-up: about 6 s of 9) is paid less often per round. The history uses the same count, since
# `compare --history` borrows only runs with as many usable repetitions as the gate's.
# The commits are made with fixed dates, so every call (even on a fresh machine) has the same
# SHAs. Results: OUT/seq-gates-CALL.tar.gz. Judge with bench/seq_gates_eval.py.
set -uo pipefail
out=${1:?usage: bench/gpu_seq_gates.sh OUT [SLEEP_SMALL] [SLEEP_LARGE] [HISTORY_COMMITS]}
small=${2:-4500}
large=${3:-11000}
hist=${4:-6}
call=${CALL:-1}
reps=${ROUND_REPS:-3}
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=SCRIPTDIR/device_call.sh
source bench/device_call.sh "$out" "seq-gates-$call"
bin=build-calib/perfgate
if [ ! -x "$bin" ] || [ ! -x build-calib/perfgate-runner ]; then
  if ! cmake -S . -B build-calib -DCMAKE_BUILD_TYPE=Release -DPERFGATE_CALIBRATION_SLOWDOWN=ON \
    -DPERFGATE_BUILD_TESTS=OFF "${PLOTLY_ARGS[@]}" >"$W/configure.log" 2>&1 ||
    ! cmake --build build-calib -j"$(nproc)" --target perfgate >"$W/build.log" 2>&1; then
    cp "$W"/*.log "$R/"
    tail -n 40 "$W"/*.log | tee -a "$R/log.txt"
    exit 1
  fi
  log "built the calibration build"
fi
"$bin" --version >"$R/perfgate-version.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$R/nvidia-smi.txt"
echo "small $small large $large history $hist round_reps $reps" >"$R/knobs.txt"

repo=/tmp/pg-seq-repo
if [ ! -d $repo ]; then
  git init -q -b main $repo
  n=0
  for m in $(seq -f 'H%g' 1 "$hist") A B C5 C10; do
    n=$((n + 1))
    GIT_AUTHOR_DATE="2026-12-01T00:00:$((10 + n))Z" GIT_COMMITTER_DATE="2026-12-01T00:00:$((10 + n))Z" \
      git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"
  done
  for m in $(seq -f 'H%g' 1 "$hist") A B C5 C10; do
    sha=$(git -C $repo log --format=%H --grep="^$m\$" -1)
    git -C $repo worktree add -q --detach "/tmp/pg-seq-wt-$m" "$sha"
  done
fi
for m in A B C5 C10; do git -C "/tmp/pg-seq-wt-$m" rev-parse HEAD; done | paste -sd' ' >"$R/shas.txt"

one() { # one SIDE DB [ARGS...]: one run of the shipped GPU sweep at commit SIDE
  local side=$1 db=$2 t cycles=0
  shift 2
  [ "$side" = C5 ] && cycles=$small
  [ "$side" = C10 ] && cycles=$large
  t=$(date +%s.%N)
  PERFGATE_CALIBRATION_SLEEP_CYCLES=$cycles "$bin" run --config ci/sweeps/gpu-default.toml \
    --repo "/tmp/pg-seq-wt-$side" --db "$db" --quiet "$@" >/dev/null || log "run failed: $side $db $*"
  echo "$(basename "$db") $side $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{print b-a}') $*" >>"$R/runs.log"
}
if [ "$call" = 1 ]; then
  for _ in 1 2; do
    for i in $(seq 1 "$hist"); do one "H$i" "$R/history.db" --reps "$reps" --profile off; done
  done
  log "history: $hist commits x 2 runs"
  for n in 3 10; do
    for p in on off; do one A "$R/timing.db" --reps "$n" --profile "$p"; done
  done
  log "timing runs"
fi
orders=("A B C5 C10" "C10 C5 B A" "B A C10 C5" "C5 C10 A B")
g=0
while [ $(($(date +%s) - T0)) -lt $((${DEADLINE:-500} - 40)) ]; do
  g=$((g + 1))
  order=${orders[$(((g - 1) % 4))]}
  for side in $order; do one "$side" "$R/r-$call-$g.db" --reps "$reps" --profile off; done
  log "round $g ($order)"
done
log "done: $g rounds"
