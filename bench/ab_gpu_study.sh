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
# shellcheck source=SCRIPTDIR/ab_gpu_lib.sh
source bench/ab_gpu_lib.sh
for every in $(printf '%s\n' "$@" | sed -n 's/^ab-\([0-9]*\)-.*/\1/p' | sort -un); do
  build "$every" "/opt/pg-every-$every"
done
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
