#!/usr/bin/env bash
# shellcheck disable=SC2153  # REPO, HEAD_SHA, ... are the job state pg_state_load sources
# Pull request, step 2b (after pr_bench.sh): enough rounds and no more. While the gate's interval
# is too wide to decide (`perfgate compare ... --look K --max-looks N` says sequential.next
# "continue"), benchmark one more alternating round of base and head, up to PERFGATE_MAX_ROUNDS
# rounds per side and PERFGATE_MAX_SECONDS seconds of benchmarking in this step. Every look tests
# at alpha / N (docs/STATISTICS.md "Enough rounds"), so the false-alarm rate over all looks stays
# at alpha; pr_gate.sh then judges the final look with the same --look/--max-looks.
#   PERFGATE_MAX_ROUNDS   most rounds per side (default: PERFGATE_ROUNDS, i.e. no extra round)
#   PERFGATE_MAX_SECONDS  budget of this step in seconds (default 0: no limit beyond the rounds)
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
max_rounds=${PERFGATE_MAX_ROUNDS:-$PERFGATE_ROUNDS}
max_seconds=${PERFGATE_MAX_SECONDS:-0}
[[ $max_rounds =~ ^[1-9][0-9]*$ ]] || pg_die "PERFGATE_MAX_ROUNDS must be a positive integer, got '$max_rounds'"
[[ $max_seconds =~ ^[0-9]+$ ]] || pg_die "PERFGATE_MAX_SECONDS must be an integer >= 0, got '$max_seconds'"
((max_rounds >= PERFGATE_ROUNDS)) || pg_die "PERFGATE_MAX_ROUNDS ($max_rounds) is below PERFGATE_ROUNDS ($PERFGATE_ROUNDS)"
max_looks=$((max_rounds - PERFGATE_ROUNDS + 1))
pg_state_set GATE_MAX_LOOKS "$max_looks"
pg_state_set GATE_LOOK 1
if ((max_looks == 1)); then
  pg_log "sequential rounds off (PERFGATE_MAX_ROUNDS = PERFGATE_ROUNDS = $PERFGATE_ROUNDS)"
  exit 0
fi
if [ "$REUSED" = true ] || [ -z "$BASE_BIN" ]; then
  pg_log "no base build in this job: no extra rounds"
  exit 0
fi
gate_bin=${PERFGATE_BIN:-$HEAD_BIN}
start=$(date +%s)
look=1
round=$PERFGATE_ROUNDS
while ((look < max_looks)); do
  json=$("$gate_bin" compare --db "$GATE_DB" --repo "$REPO" --main "$MAIN_REF" \
    --base merge-base --head "$HEAD_SHA" --alpha "$PERFGATE_ALPHA" \
    --min-effect "$PERFGATE_MIN_EFFECT" --correction "$PERFGATE_CORRECTION" \
    --look "$look" --max-looks "$max_looks" --format json) || true
  if ! grep -q '"next": "continue"' <<<"$json"; then
    pg_log "look $look of $max_looks: decided after $round rounds per side"
    break
  fi
  if ((max_seconds > 0 && $(date +%s) - start >= max_seconds)); then
    pg_log "look $look of $max_looks: still too wide, but the $max_seconds s budget is spent"
    break
  fi
  round=$((round + 1))
  look=$((look + 1))
  pg_log "look $((look - 1)) of $max_looks too wide to decide: round $round"
  # The same alternation as pr_bench.sh: odd rounds base first, even rounds head first.
  if ((round % 2)); then
    pg_bench "$BASE_BIN" "$BASE_SRC" "$GATE_DB"
    pg_bench "$HEAD_BIN" "$REPO" "$GATE_DB"
  else
    pg_bench "$HEAD_BIN" "$REPO" "$GATE_DB"
    pg_bench "$BASE_BIN" "$BASE_SRC" "$GATE_DB"
  fi
done
pg_state_set GATE_LOOK "$look"
