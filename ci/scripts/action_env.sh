#!/usr/bin/env bash
# First step of ci/action: checks the action's inputs (given as PERFGATE_* variables) and exports
# them to the job's later steps through $GITHUB_ENV. The ingest token is deliberately NOT
# exported: only the submit step receives it, in its own env.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
: "${GITHUB_ENV:?action_env.sh runs inside GitHub Actions (or a test that provides GITHUB_ENV)}"

[ -n "${PERFGATE_SWEEP:-}" ] || pg_die "input 'sweep' is empty"
case $PERFGATE_SWEEP in /* | *..*) pg_die "input 'sweep' must be a path inside the repository, got '$PERFGATE_SWEEP'" ;; esac
[ -z "${PERFGATE_CHECKOUT:-}" ] || PERFGATE_CHECKOUT=$(pg_checkout)
if [ "$PERFGATE_ROUNDS" = auto ]; then
  # auto measures 1 or PG_ROUNDS_WITHOUT_HISTORY rounds first (pg_auto_rounds): a max-rounds of
  # its own must allow either.
  if [ "$PERFGATE_MAX_ROUNDS" != auto ] && { ! [[ $PERFGATE_MAX_ROUNDS =~ ^[1-9][0-9]*$ ]] ||
    ((PERFGATE_MAX_ROUNDS < PG_ROUNDS_WITHOUT_HISTORY)); }; then
    pg_die "input 'max-rounds' must be empty or an integer >= $PG_ROUNDS_WITHOUT_HISTORY with rounds auto, got '$PERFGATE_MAX_ROUNDS'"
  fi
else
  [[ $PERFGATE_ROUNDS =~ ^[1-9][0-9]*$ ]] || pg_die "input 'rounds' must be auto or a positive integer, got '$PERFGATE_ROUNDS'"
  if ! [[ $PERFGATE_MAX_ROUNDS =~ ^[1-9][0-9]*$ ]] || ((PERFGATE_MAX_ROUNDS < PERFGATE_ROUNDS)); then
    pg_die "input 'max-rounds' must be an integer >= rounds ($PERFGATE_ROUNDS), got '$PERFGATE_MAX_ROUNDS'"
  fi
fi
[[ $PERFGATE_MAX_SECONDS =~ ^[0-9]+$ ]] || pg_die "input 'max-seconds' must be an integer >= 0, got '$PERFGATE_MAX_SECONDS'"
case $PERFGATE_DESIGN in auto | ab | rounds) ;; *) pg_die "input 'design' must be auto, ab or rounds, got '$PERFGATE_DESIGN'" ;; esac
[[ $PERFGATE_AB_RUNS =~ ^[1-9][0-9]*$ ]] || pg_die "input 'ab-runs' must be a positive integer, got '$PERFGATE_AB_RUNS'"
if ! [[ $PERFGATE_MAX_AB_RUNS =~ ^[1-9][0-9]*$ ]] || ((PERFGATE_MAX_AB_RUNS < PERFGATE_AB_RUNS)); then
  pg_die "input 'max-ab-runs' must be an integer >= ab-runs ($PERFGATE_AB_RUNS), got '$PERFGATE_MAX_AB_RUNS'"
fi
[[ $PERFGATE_MAIN_ROUNDS =~ ^[1-9][0-9]*$ ]] || pg_die "input 'main-rounds' must be a positive integer, got '$PERFGATE_MAIN_ROUNDS'"
# A boolean input: true or false (as pg_bool reads them), named when it is neither.
check_bool() { # check_bool INPUT VALUE
  case ${2,,} in true | 1 | yes | on | false | 0 | no | off | '') ;;
    *) pg_die "input '$1' must be true or false, got '$2'" ;;
  esac
}
check_bool fail-on-inconclusive "$PERFGATE_FAIL_ON_INCONCLUSIVE"
check_bool reuse-base "$PERFGATE_REUSE_BASE"
PERFGATE_EXPORT_AA=${PERFGATE_EXPORT_AA:-false}
check_bool export-aa-check "$PERFGATE_EXPORT_AA"
awk -v a="$PERFGATE_ALPHA" 'BEGIN { exit !(a + 0 == a && a > 0 && a < 1) }' ||
  pg_die "input 'alpha' must be a number in (0, 1), got '$PERFGATE_ALPHA'"
# min-effect as `perfgate compare --min-effect` takes it: a number >= 0 or auto, then
# METRIC=NUMBER items, comma-separated (perfgate checks the metric names).
IFS=, read -ra min_effect_items <<<"$PERFGATE_MIN_EFFECT,"
for item in "${min_effect_items[@]}"; do
  value=${item#*=}
  if [ "$item" != "$value" ]; then
    [[ ${item%%=*} =~ ^[a-z_][a-z0-9_]*$ ]] || value=bad
  elif [ "$item" = auto ]; then
    continue
  fi
  awk -v m="$value" 'BEGIN { exit !(m != "" && m + 0 == m && m >= 0) }' ||
    pg_die "input 'min-effect' must be a number >= 0 or 'auto', then METRIC=NUMBER items, comma-separated (0.05,prefill_ms=0.1), got '$PERFGATE_MIN_EFFECT'"
done
[ -z "$PERFGATE_METRICS" ] || [[ $PERFGATE_METRICS =~ ^[a-z_][a-z0-9_]*(,[a-z_][a-z0-9_]*)*$ ]] ||
  pg_die "input 'metrics' must be metric names separated by commas (tpot_ms,prefill_ms), got '$PERFGATE_METRICS'"
check_bool fail-on-counter-change "$PERFGATE_FAIL_ON_COUNTER_CHANGE"
[ -z "$PERFGATE_DASHBOARD_URL" ] || pg_check_dashboard_url
case $PERFGATE_CORRECTION in holm | bh) ;; *) pg_die "input 'correction' must be holm or bh" ;; esac
case $PERFGATE_SANDBOX in bwrap | none) ;; *) pg_die "input 'sandbox' must be bwrap or none, got '$PERFGATE_SANDBOX'" ;; esac
for path in $PERFGATE_PREPARE_OUTPUTS; do
  case $path in /* | *..*) pg_die "input 'prepare-outputs': '$path' must be a path inside the repository" ;; esac
done
[ -z "$PERFGATE_PREPARE_OUTPUTS" ] || [ -n "$PERFGATE_PREPARE" ] ||
  pg_die "input 'prepare-outputs' is set but 'prepare' is empty: nothing would make them"
if [ -n "$PERFGATE_RUN_AS" ]; then
  [[ $PERFGATE_RUN_AS =~ ^[a-z_][a-z0-9_-]*$ ]] || pg_die "input 'run-as' must be a user name"
fi

for var in PERFGATE_SWEEP PERFGATE_CHECKOUT PERFGATE_DB PERFGATE_WORK PERFGATE_RUN_AS PERFGATE_SANDBOX \
  PERFGATE_PASS_ENV PERFGATE_PREPARE PERFGATE_PREPARE_OUTPUTS PERFGATE_PREPARE_INPUTS \
  PERFGATE_PREPARE_CACHE PERFGATE_EXPORT_AA PERFGATE_BUILD_COMMAND PERFGATE_MAIN_BRANCH PERFGATE_ALPHA \
  PERFGATE_MIN_EFFECT PERFGATE_METRICS PERFGATE_FAIL_ON_COUNTER_CHANGE PERFGATE_CORRECTION \
  PERFGATE_DESIGN PERFGATE_AB_RUNS PERFGATE_MAX_AB_RUNS \
  PERFGATE_ROUNDS PERFGATE_MAX_ROUNDS PERFGATE_MAX_SECONDS \
  PERFGATE_MAIN_ROUNDS \
  PERFGATE_FAIL_ON_INCONCLUSIVE PERFGATE_REUSE_BASE PERFGATE_RUN_ARGS PERFGATE_SERVER_URL PERFGATE_DASHBOARD_URL \
  PERFGATE_ARTIFACTS; do
  value=${!var}
  case $value in *$'\n'*) pg_die "$var must be one line" ;; esac
  echo "$var=$value" >>"$GITHUB_ENV"
done
pg_log "settings: sweep $PERFGATE_SWEEP, store $PERFGATE_DB, alpha $PERFGATE_ALPHA, min effect $PERFGATE_MIN_EFFECT ($PERFGATE_CORRECTION), metrics ${PERFGATE_METRICS:-default}, fail on counter change $PERFGATE_FAIL_ON_COUNTER_CHANGE, design $PERFGATE_DESIGN (ab: $PERFGATE_AB_RUNS A/B runs, at most $PERFGATE_MAX_AB_RUNS; rounds: $PERFGATE_ROUNDS, at most $PERFGATE_MAX_ROUNDS; ${PERFGATE_MAX_SECONDS} s), measured code runs as ${PERFGATE_RUN_AS:-$(id -un)} (sandbox: $PERFGATE_SANDBOX)"
