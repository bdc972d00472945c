#!/usr/bin/env bash
# shellcheck disable=SC2153  # REPO, HEAD_SHA, ... are the job state pg_state_load sources
# Pull request, step 2b (after pr_bench.sh): enough rounds, and no more. The trusted perfgate
# judges the rounds so far as look K of N = PERFGATE_MAX_ROUNDS - PERFGATE_ROUNDS + 1 sequential
# looks (`compare --look K --max-looks N`, each look at alpha / N). While it says
# sequential.next "continue" (no regression, but the interval too wide for min-effect: the gate
# is underpowered), one more alternating round of base and head is measured and the gate looks
# again, until it decides, PERFGATE_MAX_ROUNDS rounds per side are done, or the next round would
# not fit in PERFGATE_MAX_SECONDS of benchmarking (the first rounds count; a round is expected to
# take as long as the mean round so far). pr_gate.sh then judges the last look.
# False alarms (docs/STATISTICS.md "Enough rounds"): every look before the last tests at
# alpha / N. The last is look K of N when the rounds ran out or the gate decided, at alpha / N;
# when the seconds ran out first it is judged as look K of K, at alpha / K, which spends what the
# looks not taken left: (K - 1) alpha / N + alpha / K <= alpha because K <= N.
# Job state out: GATE_LOOK, GATE_MAX_LOOKS (the last look's flags), ROUNDS_DONE, BENCH_SECONDS,
# SEQ_STOP (why the rounds stopped). Outputs: rounds, bench-seconds.
# Design ab (pr_bench.sh): the same looks, where a round is one more A/B run of every cell
# (unprofiled), PERFGATE_AB_RUNS and PERFGATE_MAX_AB_RUNS in place of the rounds' settings.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
bin=$(pg_trusted_bin)
unit="rounds" first_input=rounds max_input=max-rounds
if [ "${DESIGN:-rounds}" = ab ]; then
  PERFGATE_ROUNDS=$PERFGATE_AB_RUNS PERFGATE_MAX_ROUNDS=$PERFGATE_MAX_AB_RUNS
  unit="A/B runs" first_input=ab-runs max_input=max-ab-runs
else
  # rounds auto: the number pr_bench.sh chose; an unset max-rounds follows it (no further round).
  [ "$PERFGATE_MAX_ROUNDS" != auto ] || PERFGATE_MAX_ROUNDS=${ROUNDS_FIRST:-$PERFGATE_ROUNDS}
  PERFGATE_ROUNDS=${ROUNDS_FIRST:-$PERFGATE_ROUNDS}
fi
[[ $PERFGATE_MAX_ROUNDS =~ ^[1-9][0-9]*$ ]] ||
  pg_die "PERFGATE_MAX_ROUNDS must be a positive integer, got '$PERFGATE_MAX_ROUNDS'"
[[ $PERFGATE_MAX_SECONDS =~ ^[0-9]+$ ]] ||
  pg_die "PERFGATE_MAX_SECONDS must be an integer >= 0, got '$PERFGATE_MAX_SECONDS'"
((PERFGATE_MAX_ROUNDS >= PERFGATE_ROUNDS)) ||
  pg_die "PERFGATE_MAX_ROUNDS ($PERFGATE_MAX_ROUNDS) is below PERFGATE_ROUNDS ($PERFGATE_ROUNDS)"
: "${ROUNDS_DONE:?no rounds measured: run ci/scripts/pr_bench.sh first}"

finish() { # finish LOOK MAX_LOOKS REASON
  pg_state_set GATE_LOOK "$1"
  pg_state_set GATE_MAX_LOOKS "$2"
  pg_state_set SEQ_STOP "$3"
  pg_state_set ROUNDS_DONE "$round"
  pg_state_set BENCH_SECONDS "$spent"
  pg_output rounds "$round"
  pg_output bench-seconds "$spent"
  if [ "${DESIGN:-rounds}" = ab ]; then pg_state_set AB_PAIRS "${AB_PAIRS:-0}"; fi
  pg_log "$unit: $round, $spent s of benchmarking; the gate judges look $1 of $2 ($3)"
  exit 0
}

round=$ROUNDS_DONE
spent=${BENCH_SECONDS:-0}
max_looks=$((PERFGATE_MAX_ROUNDS - PERFGATE_ROUNDS + 1))
if ((max_looks == 1)); then finish 1 1 "$max_input = $first_input: sequential $unit off"; fi
if [ "$REUSED" = true ] || [ -z "$BASE_BIN" ]; then
  finish 1 1 "no base build in this job: no further rounds"
fi

db=$GATE_DB
mapfile -t settings < <(pg_gate_setting_flags)
look=1
while :; do
  # The last look is pr_gate.sh's: it decides whatever the interval.
  if ((look == max_looks)); then finish "$look" "$max_looks" "$max_input reached"; fi
  json=$("$bin" compare --db "$db" --repo "$REPO" --main "$MAIN_REF" \
    --base merge-base --head "$HEAD_SHA" "${settings[@]}" \
    --look "$look" --max-looks "$max_looks" --format json 2>"$PERFGATE_WORK/look.err") || true
  if ! grep -q '"sequential"' <<<"$json"; then
    pg_log "the gate could not judge look $look: $(head -c 500 "$PERFGATE_WORK/look.err")"
    finish "$look" "$max_looks" "the gate could not judge the rounds so far"
  fi
  if ! grep -q '"next": "continue"' <<<"$json"; then
    finish "$look" "$max_looks" "decided at look $look"
  fi
  if ((PERFGATE_MAX_SECONDS > 0 && spent + (spent + round - 1) / round > PERFGATE_MAX_SECONDS)); then
    finish "$look" "$look" "max-seconds: another ${unit%s} would pass the $PERFGATE_MAX_SECONDS s budget"
  fi
  pg_log "look $look of $max_looks: too wide to decide; one more ${unit%s}"
  t0=$(date +%s)
  round=$((round + 1))
  pg_gate_more "$round" "$GATE_DB"
  spent=$((spent + $(date +%s) - t0))
  look=$((look + 1))
done
