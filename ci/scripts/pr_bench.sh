#!/usr/bin/env bash
# shellcheck disable=SC2153  # HEAD_SHA, BASE_SRC, ... are the job state pg_state_load sources
# Pull request, step 2: benchmark base and head on this runner with the same sweep file, in
# alternating rounds (pg_gate_round: base head, head base, ...), as the sandbox user, so that slow
# drift of the machine falls on both sides alike. Each run's result is imported by the trusted
# perfgate into the job's gate database in the trusted work directory (pg_bench).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
[[ $PERFGATE_ROUNDS =~ ^[1-9][0-9]*$ ]] || pg_die "PERFGATE_ROUNDS must be a positive integer, got '$PERFGATE_ROUNDS'"

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

start=$(date +%s)
for ((round = 1; round <= PERFGATE_ROUNDS; round++)); do pg_gate_round "$round" "$db"; done
# What the benchmarks cost so far, for the budget of pr_more_rounds.sh and the report.
pg_state_set ROUNDS_DONE "$PERFGATE_ROUNDS"
pg_state_set BENCH_SECONDS "$(($(date +%s) - start))"
pg_output gate-db "$db"
