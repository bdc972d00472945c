#!/usr/bin/env bash
# `perfgate ab` gates of the shipped GPU sweep beside unpaired rounds of `perfgate run`, in one
# call on the GPU machine (bench/device_env.sh says what the tree must carry), for
# docs/STATISTICS.md "Paired A/B runs" and docs/AB.md "Measured":
#   CALL=N DEADLINE=540 [ABRUNS=5 PAIRS=4 WARMUP=1 HISTORY=0] bench/gpu_ab_gates.sh OUT ITEM...
# One calibration build (-DPERFGATE_CALIBRATION_SLOWDOWN=ON), so every side runs one binary:
# commits A and B as shipped, S<N> (S1000, S4500, S11000, ...) with
# PERFGATE_CALIBRATION_SLEEP_CYCLES=N, one GPU kernel spinning N cycles per forward step (genuine
# extra time; about +0.25%, +0.5% and +1% of a decode step for 1000, 4500 and 11000: the
# evaluation measures what they came out as). Until DEADLINE seconds, the ITEMs in turn:
#   aa, s<N>    one gate: `perfgate ab --ab-runs ABRUNS --reps PAIRS --warmup WARMUP
#               --share-workers --profile off` of A against B (aa) or S<N> (its head worker runs
#               with the knob), judged by `perfgate compare --min-effect 0.002 --metrics tpot_ms`;
#               with the suffix -fixed, `--placement fixed` (the allocator's own placement)
#   round       one unpaired round: a `perfgate run --reps 3 --profile off` of A, B and every S<N>
#               named by the items (order rotated), into r-CALL-K.db, for the gates of the
#               unpaired design (bench/ab_gates_eval.py)
# SWEEP: another sweep file (a CPU one checks the script anywhere).
# HISTORY=K (call 1 only): first K other commits, 2 runs each, into history.db, as the action's
# pushes to main store them (the trusted history of the unpaired design).
# The commits have fixed dates, so every call (also on a fresh machine) has the same SHAs.
# OUT/ab-gates-CALL.tar.gz: log.txt, gates.tsv (item, seconds, compare's exit code, regressions),
# runs.log, shas.txt, every database and compare JSON.
set -uo pipefail
out=${1:?usage: bench/gpu_ab_gates.sh OUT ITEM...}
shift
sweep=${SWEEP:-ci/sweeps/gpu-default.toml}
call=${CALL:-1} abruns=${ABRUNS:-5} pairs=${PAIRS:-4} warmup=${WARMUP:-1} hist=${HISTORY:-0}
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=SCRIPTDIR/device_call.sh
source bench/device_call.sh "$out" "ab-gates-$call"
bin=$PWD/build-calib/perfgate
if [ ! -x "$bin" ] || [ ! -x build-calib/perfgate-runner ]; then
  if ! cmake -S . -B build-calib -DCMAKE_BUILD_TYPE=Release -DPERFGATE_CALIBRATION_SLOWDOWN=ON \
    -DPERFGATE_BUILD_TESTS=OFF "${PLOTLY_ARGS[@]}" >"$W/configure.log" 2>&1 ||
    ! cmake --build build-calib -j"$(nproc)" --target perfgate perfgate-runner >"$W/build.log" 2>&1; then
    cp "$W"/*.log "$R/"
    tail -n 40 "$W"/*.log | tee -a "$R/log.txt"
    exit 1
  fi
  log "built the calibration build"
fi
"$bin" --version >"$R/perfgate-version.txt"
echo "abruns $abruns pairs $pairs warmup $warmup history $hist items $*" >"$R/knobs.txt"

slowed=$(printf '%s\n' "$@" | sed -n 's/^s\([0-9][0-9]*\).*/\1/p' | sort -un)
repo=/tmp/pg-ab-repo
if [ ! -d $repo ]; then
  git init -q -b main $repo
  n=0
  for m in $(seq -f 'H%g' 1 6) A B S1000 S2200 S4500 S11000; do
    n=$((n + 1))
    GIT_AUTHOR_DATE="2026-12-01T00:01:$((10 + n))Z" GIT_COMMITTER_DATE="2026-12-01T00:01:$((10 + n))Z" \
      git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"
    git -C $repo worktree add -q --detach "/tmp/pg-ab-wt-$m" HEAD
  done
fi
sha() { git -C "/tmp/pg-ab-wt-$1" rev-parse HEAD; }
for m in A B S1000 S2200 S4500 S11000; do echo "$m $(sha $m)"; done >"$R/shas.txt"

run_side() { # run_side SIDE DB: one unpaired run of the shipped GPU sweep at commit SIDE
  local side=$1 db=$2 t cycles=0
  case $side in S*) cycles=${side#S} ;; esac
  t=$(date +%s.%N)
  PERFGATE_CALIBRATION_SLEEP_CYCLES=$cycles "$bin" run --config "$sweep" \
    --repo "/tmp/pg-ab-wt-$side" --db "$db" --quiet --reps 3 --profile off >/dev/null ||
    log "run failed: $side $db"
  echo "$(basename "$db") $side $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" >>"$R/runs.log"
}

if [ "$call" = 1 ] && [ "$hist" -gt 0 ]; then
  for _ in 1 2; do
    for i in $(seq 1 "$hist"); do run_side "H$i" "$R/history.db"; done
  done
  log "history: $hist commits x 2 runs"
fi

gate() { # gate ITEM K: one perfgate ab gate
  local item=$1 k=$2 head=B start secs rc reg db
  local -a args=(--ab-runs "$abruns" --reps "$pairs" --warmup "$warmup" --share-workers
    --profile off --order-seed $((call * 1000 + k)) --quiet)
  case $item in s*)
    local n=${item#s}
    n=${n%%-*} head=S$n
    args+=(--head-worker "env PERFGATE_CALIBRATION_SLEEP_CYCLES=$n $PWD/build-calib/perfgate-runner worker")
    ;;
  esac
  case $item in *-fixed) args+=(--placement fixed) ;; esac
  db=$R/g-$call-$k-$item.db
  start=$(date +%s.%N)
  "$bin" ab --config "$sweep" --base /tmp/pg-ab-wt-A --head "/tmp/pg-ab-wt-$head" \
    --db "$db" "${args[@]}" >"$R/g-$call-$k-$item.ab.txt" 2>&1 || log "ab failed: $item $k"
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  "$bin" compare --base "$(sha A)" --head "$(sha "$head")" --db "$db" --min-effect 0.002 \
    --metrics tpot_ms --format json >"$R/g-$call-$k-$item.json" 2>"$R/g-$call-$k-$item.err"
  rc=$?
  reg=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(c.get("verdict")=="regression" for c in r.get("cells",[])))' \
    "$R/g-$call-$k-$item.json" 2>/dev/null || echo "?")
  printf '%s\t%s\t%s\t%s\t%s\n' "$item" "$k" "$secs" "$rc" "$reg" >>"$R/gates.tsv"
  log "gate $k $item: $secs s, compare rc $rc, $reg regressions"
}

round() { # round K: one unpaired run of A, B and each slowed commit
  local k=$1 sides
  sides=$(printf 'A\nB\n'; for n in $slowed; do echo "S$n"; done)
  # Rotated by the round's number, so that no side always runs first.
  sides=$(echo "$sides" | awk -v k="$k" '{a[NR]=$0} END{for(i=0;i<NR;i++) print a[(i+k)%NR+1]}')
  for side in $sides; do run_side "$side" "$R/r-$call-$k.db"; done
  log "round $k: $(echo "$sides" | paste -sd' ')"
}

printf 'item\tk\tseconds\trc\tregressions\n' >"$R/gates.tsv"
k=0
while ! late; do
  for item in "$@"; do
    late && break
    k=$((k + 1))
    case $item in
      round) round "$k" ;;
      *) gate "$item" "$k" ;;
    esac
  done
done
log "done: $k items"
