#!/usr/bin/env bash
# `perfgate ab` gates on the GPU machine, for docs/STATISTICS.md "Paired A/B runs":
#   bench/ab_gpu_study.sh OUT DEADLINE_S AB_RUNS PAIRS CONDITION...
# Builds perfgate as shipped and a perfgate-runner per slowdown named in the conditions (one
# extra copy kernel in every EVERY-th layer: runner/CMakeLists.txt PERFGATE_EXTRA_COPY_EVERY, a
# genuine decode slowdown), then measures gates of the shipped GPU sweep
# (ci/sweeps/gpu-default.toml), cycling through the conditions until the next gate would end past
# DEADLINE_S seconds from the start. A condition is aa or ab-EVERY (the head's worker is the
# slowed runner), with -shared for --share-workers (one worker per side for all AB_RUNS A/B runs)
# or -separate (a worker per side and A/B run). Each gate: `perfgate ab --ab-runs AB_RUNS --reps
# PAIRS --warmup 2 --profile off`, judged by `perfgate compare --min-effect 0.002 --metrics tpot_ms`. OUT gets
# log.txt, gates.tsv (condition, wall seconds of the A/B runs, compare's exit code, regressions,
# improvements, the gate's MDE line) and gates.tar.gz (every database and compare output).
set -uo pipefail
out=${1:?usage: ab_gpu_study.sh OUT DEADLINE_S AB_RUNS PAIRS CONDITION...}
deadline=$2 ab_runs=$3 pairs=$4
shift 4
cd "$(dirname "$0")/.." || exit 1
source .device-debs/env.sh
export PATH=/opt/devroot/usr/bin:$PATH
echo /opt/devroot/usr/lib/x86_64-linux-gnu > /etc/ld.so.conf.d/zz-devroot.conf && ldconfig
mkdir -p "$out" /opt/gates
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$out/log.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$out/log.txt"
build() {  # build EVERY DEST
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPERFGATE_BUILD_TESTS=OFF \
    -DPERFGATE_EXTRA_COPY_EVERY="$1" -DPERFGATE_PLOTLY_JS="$PWD/.device-debs/plotly.min.js" \
    > /opt/gates/cmake-$1.log 2>&1 &&
    cmake --build build-gpu -j16 --target perfgate perfgate-runner >> /opt/gates/cmake-$1.log 2>&1 ||
    { tail -30 /opt/gates/cmake-$1.log; exit 1; }
  mkdir -p "$2" && cp build-gpu/perfgate build-gpu/perfgate-runner "$2/"
  log "built copy-every $1 into $2"
}
build 0 /opt/pg-shipped
for every in $(printf '%s\n' "$@" | sed -n 's/^ab-\([0-9]*\)-.*/\1/p' | sort -un); do
  build "$every" "/opt/pg-every-$every"
done
pg=/opt/pg-shipped/perfgate
repo=/opt/abcal/repo
rm -rf /opt/abcal && mkdir -p $repo && git init -q -b main $repo
for m in A B; do git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"; done
A=$(git -C $repo rev-parse main~1) B=$(git -C $repo rev-parse main)
git -C $repo worktree add -q --detach /opt/abcal/A "$A"
git -C $repo worktree add -q --detach /opt/abcal/B "$B"
printf 'condition\tseconds\trc\tregressions\timprovements\tpower\n' > "$out/gates.tsv"
g=0 longest=60
while [ $(($(date +%s) - t0 + longest)) -le "$deadline" ]; do
  for cond in "$@"; do
    [ $(($(date +%s) - t0 + longest)) -le "$deadline" ] || break
    g=$((g + 1))
    db=/opt/gates/g-$g-$cond.db
    args=(--ab-runs "$ab_runs")
    case $cond in *-shared) args+=(--share-workers) ;; esac
    case $cond in ab-*) every=${cond#ab-} every=${every%%-*}
      args+=(--head-worker "/opt/pg-every-$every/perfgate-runner worker") ;; esac
    start=$(date +%s.%N)
    $pg ab --config ci/sweeps/gpu-default.toml --base /opt/abcal/A --head /opt/abcal/B --db "$db" \
      --reps "$pairs" --warmup 2 --profile off --order-seed "$g" --quiet "${args[@]}" \
      > "/opt/gates/g-$g-$cond.ab.txt" 2>&1
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    $pg compare --base "$A" --head "$B" --db "$db" --min-effect 0.002 --metrics tpot_ms > "/opt/gates/g-$g-$cond.txt" 2>&1
    rc=$?
    reg=$(grep -c '^regression ' "/opt/gates/g-$g-$cond.txt")
    imp=$(grep -c '^improvement ' "/opt/gates/g-$g-$cond.txt")
    power=$(grep -m1 '^power:' "/opt/gates/g-$g-$cond.txt" | cut -c1-110)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$cond" "$secs" "$rc" "$reg" "$imp" "$power" >> "$out/gates.tsv"
    s=${secs%.*}
    [ "$s" -gt "$longest" ] && longest=$s
    log "g-$g $cond: $secs s, compare rc $rc, $reg regressions, $imp improvements"
  done
done
rm -f /opt/gates/cmake-*.log
tar -czf "$out/gates.tar.gz" -C /opt/gates .
log "total: $g gates"
