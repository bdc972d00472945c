#!/usr/bin/env bash
# Pull request, step 4 (after the artifact upload): the job's fate, which is the required check.
# Exit 1 on a regression; on inconclusive exit 3 unless PERFGATE_FAIL_ON_INCONCLUSIVE=false.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
: "${GATE_RC:?no gate result: run ci/scripts/pr_gate.sh first}"
if [ -n "${HEAD_BROKEN:-}" ]; then
  # Whatever fail-on-inconclusive says: a head that cannot run its own benchmark never passes.
  echo "::error title=perfgate::every cell of the head failed; see the job summary for the first failure"
  exit 3
fi
case $GATE_RC in
  0)
    pg_log "pass: no significant regression"
    exit 0
    ;;
  1)
    pg_log "regression: failing the check"
    exit 1
    ;;
  3)
    if pg_bool "$PERFGATE_FAIL_ON_INCONCLUSIVE"; then
      pg_log "inconclusive: failing the check (set fail-on-inconclusive: false to tolerate)"
      exit 3
    fi
    echo "::warning title=perfgate::inconclusive gate tolerated (fail-on-inconclusive: false)"
    exit 0
    ;;
  *) exit "$GATE_RC" ;;
esac
