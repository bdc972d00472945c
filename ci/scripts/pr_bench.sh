#!/usr/bin/env bash
# shellcheck disable=SC2153  # REPO, HEAD_SHA, ... are the job state pg_state_load sources
# Pull request, step 2: benchmark base and head on this runner with the same sweep file, in
# alternating rounds (base, head, base, head, ...), into the job's own database. `compare` pools
# the runs of one commit, so slow drift of the machine falls on both sides alike.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
[ -n "${PERFGATE_SWEEP:-}" ] || pg_die "PERFGATE_SWEEP (the sweep file) is not set"
[ -f "$PERFGATE_SWEEP" ] || pg_die "sweep file $PERFGATE_SWEEP does not exist"
[[ $PERFGATE_ROUNDS =~ ^[1-9][0-9]*$ ]] || pg_die "PERFGATE_ROUNDS must be a positive integer, got '$PERFGATE_ROUNDS'"

db="$PERFGATE_WORK/gate.db"
rm -f "$db" "$db-wal" "$db-shm"
if [ "$REUSED" = true ]; then
  # SQLite's online backup: consistent even while another job writes the persistent store.
  sqlite3 "$PERFGATE_DB" ".backup '$db'"
  pg_log "copied $PERFGATE_DB (with the stored base runs) to $db"
fi
pg_state_set GATE_DB "$db"
[ -n "$BASE_BIN" ] || [ "$REUSED" = true ] || pg_log "no base build: benchmarking the head only"

for ((round = 1; round <= PERFGATE_ROUNDS; round++)); do
  if [ "$REUSED" != true ] && [ -n "$BASE_BIN" ]; then
    pg_log "round $round/$PERFGATE_ROUNDS: base ${BASE_SHA:0:12}"
    pg_bench "$BASE_BIN" "$BASE_SRC" "$db"
  fi
  pg_log "round $round/$PERFGATE_ROUNDS: head ${HEAD_SHA:0:12}"
  pg_bench "$HEAD_BIN" "$REPO" "$db"
done
pg_output gate-db "$db"
