#!/usr/bin/env bash
# Real H200 gates of one round a side, for the run variance from trusted history
# (docs/STATISTICS.md "Run variance from trusted history"), on the GPU machine
# (bench/device_env.sh says what the tree must carry):
#   CALL=1 DEADLINE=540 bench/gpu_history_gates.sh OUT [EVERY] [HISTORY_COMMITS]
# Builds perfgate as shipped and with one extra copy kernel in every EVERY-th layer (default 6:
# 2 of gpt2's 12 layers, half the extra work of bench/gpu_gate_calib.sh's default 3). Stores
# HISTORY_COMMITS (default 4) other commits of the shipped build, 2 runs each, in history.db, as
# pushes to main would. Then, until DEADLINE seconds, one round of commit A (base, shipped), B
# (no change, shipped) and C (slowed) per gate into g-N.db, the order alternating A B C, C B A.
# Results in OUT/history-gates-CALL.tar.gz (with shas.txt: A B C). A later call (CALL=2) on the
# still-warm machine reuses the binaries, the commits and the first call's history.db.
# Judge with bench/history_gates_eval.sh.
set -uo pipefail
out=${1:?usage: bench/gpu_history_gates.sh OUT [EVERY] [HISTORY_COMMITS]}
every=${2:-6}
hist=${3:-4}
call=${CALL:-1}
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=SCRIPTDIR/device_call.sh
source bench/device_call.sh "$out" "history-gates-$call"
ship=/tmp/pg-hist-shipped slow=/tmp/pg-hist-slowed
build() {  # build EVERY DIR: perfgate with an extra copy every EVERY layers (0: none) into DIR
  if ! cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPERFGATE_EXTRA_COPY_EVERY="$1" \
    "${PLOTLY_ARGS[@]}" >"$W/configure-$1.log" 2>&1 ||
    ! cmake --build build-gpu -j"$(nproc)" --target perfgate >"$W/build-$1.log" 2>&1; then
    tail -30 "$W/configure-$1.log" "$W/build-$1.log" | tee -a "$R/log.txt"
    exit 1
  fi
  mkdir -p "$2" && cp build-gpu/perfgate build-gpu/perfgate-runner "$2/"
  log "built copy-every $1"
}
[ -x $ship/perfgate ] || build 0 $ship
[ -x $slow/perfgate ] || build "$every" $slow
"$ship/perfgate" --version >"$R/perfgate-version.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$R/nvidia-smi.txt"

repo=/tmp/pg-hist-repo
if [ ! -d $repo ]; then
  git init -q -b main $repo
  for m in $(seq -f 'H%g' 1 "$hist") A B C; do
    git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"
  done
  for m in $(seq -f 'H%g' 1 "$hist") A B C; do
    sha=$(git -C $repo log --format=%H --grep="^$m\$" -1)
    git -C $repo worktree add -q --detach "/tmp/pg-hist-wt-$m" "$sha"
  done
fi
for m in A B C; do git -C "/tmp/pg-hist-wt-$m" rev-parse HEAD; done | paste -sd' ' >"$R/shas.txt"
one() {  # one SIDE DB: one run of the shipped GPU sweep at commit SIDE (C: the slowed build)
  local t bin=$ship/perfgate
  [ "$1" = C ] && bin=$slow/perfgate
  t=$(date +%s.%N)
  "$bin" run --config ci/sweeps/gpu-default.toml --repo "/tmp/pg-hist-wt-$1" --db "$2" --quiet \
    >/dev/null || log "run failed: $*"
  echo "$(basename "$2") $1 $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" >>"$R/runs.log"
}
if [ "$call" != 1 ] && [ -f /tmp/history-gates-1/res/history.db ]; then
  log "history.db of call 1 (in its results)"
else
  for _ in 1 2; do
    for i in $(seq 1 "$hist"); do one "H$i" "$R/history.db"; done
  done
  log "history: $hist commits x 2 runs"
fi
g=0
while [ $(($(date +%s) - T0)) -lt $((${DEADLINE:-500} - 45)) ]; do
  g=$((g + 1))
  order="A B C"
  [ $((g % 2)) -eq 0 ] && order="C B A"
  for side in $order; do one "$side" "$R/g-$call-$g.db"; done
  log "gate $g ($order)"
done
log "done: $g gates"
