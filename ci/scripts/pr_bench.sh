#!/usr/bin/env bash
# shellcheck disable=SC2153  # HEAD_SHA, BASE_SRC, ... are the job state pg_state_load sources
# Pull request, step 2: benchmark base and head on this runner with the same sweep file, in
# alternating rounds, into the job's own database in the sandbox, as the sandbox user. `compare`
# pools the runs of one commit, so slow drift of the machine falls on both sides alike. The order
# within a round alternates too (base then head, head then base, ...), so that a position effect
# and linear drift do not always land on the same side.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
[[ $PERFGATE_ROUNDS =~ ^[1-9][0-9]*$ ]] || pg_die "PERFGATE_ROUNDS must be a positive integer, got '$PERFGATE_ROUNDS'"

db="$PG_SANDBOX/gate.db"
if [ "$REUSED" = true ]; then
  # SQLite's online backup (consistent while another job writes the store), made by the trusted
  # side, then handed to the sandbox through a pipe: the sandbox user cannot read the store.
  sqlite3 "$PERFGATE_DB" ".backup '$PERFGATE_WORK/reuse.db'"
  # shellcheck disable=SC2016  # $1 expands in the sandbox's shell
  pg_untrusted "$PG_SANDBOX" bash -c 'cat >"$1"' _ "$db" <"$PERFGATE_WORK/reuse.db"
  rm -f "$PERFGATE_WORK/reuse.db"
  pg_log "copied $PERFGATE_DB (with the stored base runs) to $db"
fi
pg_state_set GATE_DB_SANDBOX "$db"
[ -n "$BASE_BIN" ] || [ "$REUSED" = true ] || pg_log "no base build: benchmarking the head only"

bench_base() {
  if [ "$REUSED" != true ] && [ -n "$BASE_BIN" ]; then
    pg_log "round $round/$PERFGATE_ROUNDS: base ${BASE_SHA:0:12}"
    pg_bench "$BASE_BIN" "$BASE_SRC" "$db"
  fi
}
bench_head() {
  pg_log "round $round/$PERFGATE_ROUNDS: head ${HEAD_SHA:0:12}"
  pg_bench "$HEAD_BIN" "$HEAD_SRC" "$db"
}
for ((round = 1; round <= PERFGATE_ROUNDS; round++)); do
  if ((round % 2)); then
    bench_base
    bench_head
  else
    bench_head
    bench_base
  fi
done
pg_output gate-db "$db"
