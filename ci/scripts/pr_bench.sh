#!/usr/bin/env bash
# shellcheck disable=SC2153  # HEAD_SHA, BASE_SRC, ... are the job state pg_state_load sources
# Pull request, step 2: benchmark base and head on this runner with the same sweep file, in the
# design ab_design.sh chose (input `design`):
#   ab      `perfgate ab` by the trusted perfgate: base and head side by side, their repetitions
#           alternating in each cell, PERFGATE_AB_RUNS A/B runs (the first profiled), each side's
#           worker in its own sandbox (ab_worker.sh); the trusted perfgate writes the job's gate
#           database itself, from the workers' protocol lines it validates (pg_gate_ab).
#   rounds  alternating rounds of `perfgate run` (pg_gate_round: base head, head base, ...), as
#           the sandbox user, so that slow drift of the machine falls on both sides alike; each
#           run's result is imported by the trusted perfgate into the gate database (pg_bench).
# Under design auto, an --exec benchmark without worker mode (the A/B run says so) falls back to
# rounds, and the reason says so.
# Design rounds measures `rounds` rounds first; rounds auto measures one, then asks the trusted
# history whether one is enough (pg_auto_rounds), and measures the rest of 3 if not.
# Job state out: DESIGN, DESIGN_REASON, ROUNDS_DONE (rounds, or A/B runs), AB_PAIRS, BENCH_SECONDS,
# ROUNDS_FIRST and ROUNDS_REASON (design rounds: the first rounds, and why that many).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
[[ $PERFGATE_ROUNDS =~ ^([1-9][0-9]*|auto)$ ]] || pg_die "PERFGATE_ROUNDS must be auto or a positive integer, got '$PERFGATE_ROUNDS'"

db="$PERFGATE_WORK/gate.db"
rm -f "$db" "$db-wal" "$db-shm"
if [ "$REUSED" = true ]; then
  # SQLite's online backup (consistent while another job writes the store), by the trusted side,
  # into the trusted work directory: measured code never sees the store.
  sqlite3 "$PERFGATE_DB" ".backup '$db'"
  pg_log "copied $PERFGATE_DB (with the stored base runs) to $db"
fi
pg_state_set GATE_DB "$db"
[ -n "$BASE_BIN" ] || [ "$REUSED" = true ] || pg_log "no base build: benchmarking the head only"

choice=$("$PG_SCRIPTS/ab_design.sh")
design=$(sed -n 1p <<<"$choice")
reason=$(sed -n 2p <<<"$choice")
pg_log "$reason"

start=$(date +%s)
done_n=0
if [ "$design" = ab ]; then
  [[ $PERFGATE_AB_RUNS =~ ^[1-9][0-9]*$ ]] || pg_die "PERFGATE_AB_RUNS must be a positive integer, got '$PERFGATE_AB_RUNS'"
  pg_ab_copies
  AB_PAIRS=0
  rc=0
  # One profile a side explains a regression (its counts are exact): only the first A/B run is
  # profiled, the others skip the profiler's extra sequence per cell.
  pg_gate_ab 1 "$db" on || rc=$?
  fallback=""
  if [ "$PERFGATE_DESIGN" = auto ]; then
    if ((rc == 2)); then
      fallback="perfgate ab refused this sweep (exit 2; its message is in the job log)"
    elif "$(pg_trusted_bin)" export --db "$db" --format json | grep -q 'which has no worker mode'; then
      fallback="the --exec benchmark has no worker mode (protocol 3, which python/perfgate_bench.py speaks), as the first A/B run found"
    fi
  fi
  if [ -n "$fallback" ]; then
    # What the A/B run stored is discarded: the gate judges the rounds alone.
    design=rounds
    reason="design: auto chose rounds, because $fallback"
    pg_log "$reason"
    rm -f "$db" "$db-wal" "$db-shm"
    AB_PAIRS=0
    start=$(date +%s)
  elif ((rc != 0)); then
    pg_die "perfgate ab failed (exit $rc); its output is above"
  else
    if ((PERFGATE_AB_RUNS > 1)); then
      pg_gate_ab $((PERFGATE_AB_RUNS - 1)) "$db" off || pg_die "perfgate ab failed; its output is above"
    fi
    done_n=$PERFGATE_AB_RUNS
  fi
  pg_state_set AB_PAIRS "$AB_PAIRS"
fi
if [ "$design" = rounds ]; then
  first=$PERFGATE_ROUNDS
  rounds_reason=""
  if [ "$first" = auto ]; then
    pg_gate_round 1 "$db"
    auto=$(pg_auto_rounds "$db")
    first=$(sed -n 1p <<<"$auto")
    rounds_reason="rounds: auto chose $first, because $(sed -n 2p <<<"$auto")"
    pg_log "$rounds_reason"
    for ((round = 2; round <= first; round++)); do pg_gate_round "$round" "$db"; done
  else
    for ((round = 1; round <= first; round++)); do pg_gate_round "$round" "$db"; done
  fi
  done_n=$first
  pg_state_set ROUNDS_FIRST "$first"
  pg_state_set ROUNDS_REASON "$rounds_reason"
fi
echo "::notice title=perfgate::$reason"
pg_state_set DESIGN "$design"
pg_state_set DESIGN_REASON "$reason"
# What the benchmarks cost so far, for the budget of pr_more_rounds.sh and the report.
pg_state_set ROUNDS_DONE "$done_n"
pg_state_set BENCH_SECONDS "$(($(date +%s) - start))"
pg_output gate-db "$db"
pg_output design "$design"
