#!/usr/bin/env bash
# shellcheck disable=SC2153  # REUSED, BASE_BIN, SWEEP are the job state pg_state_load sources
# How a pull request's gate measures base and head (input `design`, PERFGATE_DESIGN): prints
# two lines, the design (ab or rounds) and why. pr_bench.sh runs it after pr_prepare.sh.
#   ab      one `perfgate ab` job: base and head side by side, alternating repetitions in each
#           cell, judged by the paired test (docs/AB.md); each side's worker in its own sandbox
#           (ab_worker.sh)
#   rounds  alternating rounds of `perfgate run`, base then head, head then base (pr_bench.sh)
# auto (the default) is ab when every cell of the sweep can be measured by `perfgate ab`, else
# rounds, and the reason says what could not: no base to measure in this job (reuse-base, a
# merge-base that could not be prepared or built), a build-command (each side measured by its
# own perfgate build: pairs need one trusted perfgate driving both sides), an `aoti:` or `file:`
# model (perfgate ab does not measure packages yet), or run-args that perfgate ab refuses.
# design: ab where one of those holds is an error (exit 2), not a silent fallback. An --exec
# benchmark must speak worker mode (python/perfgate_bench.py does); under auto, one that does not
# is found by the A/B run itself, and pr_bench.sh falls back to rounds (docs/OPERATORS.md).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load

why_not_ab() {
  if [ "$REUSED" = true ]; then
    echo "reuse-base: the merge-base's stored runs are reused, so only the head is measured in this job"
  elif [ -z "$BASE_BIN" ]; then
    echo "the merge-base could not be prepared or built, so only the head is measured"
  elif [ -n "$PERFGATE_BUILD_COMMAND" ]; then
    echo "build-command: each side is measured by its own perfgate build, and pairs need one trusted perfgate driving both sides"
  elif grep -qE '"(aoti|file):' "$SWEEP" || [[ $PERFGATE_RUN_ARGS =~ (aoti|file): ]]; then
    echo "the sweep has an aoti: or file: model, which perfgate ab does not measure yet (docs/AB.md, Limits)"
  elif [[ " $PERFGATE_RUN_ARGS " =~ \ --(repo|csv|json|submit|token-file)[=\ ] ]]; then
    echo "run-args has a flag perfgate ab refuses (--repo, --csv, --json, --submit, --token-file)"
  fi
}

reason=$(why_not_ab)
case $PERFGATE_DESIGN in
  rounds) printf 'rounds\ndesign: rounds (the input)\n' ;;
  ab)
    [ -z "$reason" ] || pg_die "input 'design' is ab, but perfgate ab cannot measure this gate: $reason"
    printf 'ab\ndesign: ab (the input)\n'
    ;;
  auto)
    if [ -n "$reason" ]; then
      printf 'rounds\ndesign: auto chose rounds, because %s\n' "$reason"
    else
      printf 'ab\ndesign: auto chose ab: every cell of the sweep can be measured side by side\n'
    fi
    ;;
  *) pg_die "input 'design' must be auto, ab or rounds, got '$PERFGATE_DESIGN'" ;;
esac
