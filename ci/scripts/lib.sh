#!/usr/bin/env bash
# Shared by the ci/scripts/*.sh steps; sourced, never run. Every setting is an environment
# variable so the composite action (ci/action/action.yml), the workflows and
# tests/ci/gate_scripts_test.sh drive the steps identically.
#
# Trust model (docs/OPERATORS.md): these scripts, the perfgate binary that computes the verdict
# (PERFGATE_BIN) and the sweep come from a trusted ref: the action's pinned commit, or the base
# branch. The code of the pull request is only ever *measured*: it is cloned into a sandbox
# directory, and its prepare/build commands and the benchmark run there in a disposable
# container (sandbox.sh) as PERFGATE_RUN_AS, a user that owns nothing persistent and never sees
# a token. What it produces reaches the trusted side as documents the trusted perfgate validates.
#
#   PERFGATE_SWEEP                 sweep TOML, a path in the measured checkout; on a pull request
#                                  it is read from the merge-base, not from the head
#   PERFGATE_CHECKOUT              the checkout of the commit to measure (default: the current
#                                  git work tree); on a pull request, the PR head
#   PERFGATE_BIN                   trusted perfgate (statistics, gate, reports; the benchmark
#                                  harness unless PERFGATE_BUILD_COMMAND builds one per side)
#   PERFGATE_DB                    the runner's persistent store (default: $HOME/perfgate/perfgate.db)
#   PERFGATE_WORK                  this job's trusted scratch directory ($RUNNER_TEMP/perfgate)
#   PERFGATE_RUN_AS                user that runs the measured code (empty: the current user)
#   PERFGATE_SANDBOX               bwrap (default: a bubblewrap container per command) or none
#   PERFGATE_PASS_ENV              names of variables passed to the measured code (space-separated)
#   PERFGATE_PREPARE               command run in each measured checkout before benchmarking
#                                  (exports the model artifact); empty: none
#   PERFGATE_PREPARE_OUTPUTS, PERFGATE_PREPARE_INPUTS, PERFGATE_PREPARE_CACHE
#                                  the cache of prepared artifacts (prepare_cache.sh)
#   PERFGATE_BUILD_COMMAND         builds the benchmarked perfgate in each measured checkout with
#                                  PERFGATE_BUILD_DIR set (leaves $PERFGATE_BUILD_DIR/perfgate);
#                                  empty: PERFGATE_BIN measures both sides
#   PERFGATE_MAIN_BRANCH           main branch (default: main; origin/<main> preferred when fetched)
#   PERFGATE_ALPHA, PERFGATE_MIN_EFFECT, PERFGATE_CORRECTION   gate settings (0.01, 0.05, holm);
#                                  min effect also per metric: 0.05,prefill_ms=0.1
#   PERFGATE_METRICS               metrics to gate, comma-separated (empty: perfgate's default)
#   PERFGATE_FAIL_ON_COUNTER_CHANGE  true|false: changed exact profile counters fail the gate
#                                  (default false)
#   PERFGATE_ROUNDS                alternating base/head rounds on a pull request first: a number,
#                                  or auto (default): 1 where trusted history covers every tested
#                                  cell, else 3 (pg_auto_rounds)
#   PERFGATE_MAX_ROUNDS            most rounds per side while the gate is too wide to decide
#                                  (sequential looks, pr_more_rounds.sh; default: the first
#                                  rounds, off)
#   PERFGATE_MAX_SECONDS           benchmarking budget of a pull request in seconds, the first
#                                  ROUNDS included: no further round starts that would not fit
#                                  (default 0: the rounds alone bound it)
#   PERFGATE_DESIGN                auto (default), ab or rounds: how a pull request measures base
#                                  and head (ab_design.sh; docs/OPERATORS.md, "Design")
#   PERFGATE_AB_RUNS               A/B runs of design ab (default 5; only the first is profiled)
#   PERFGATE_MAX_AB_RUNS           most A/B runs while the gate is too wide to decide (sequential
#                                  looks, pr_more_rounds.sh; default: AB_RUNS, off)
#   PERFGATE_MAIN_ROUNDS           rounds on a push to main (default 2: replicated runs are the
#                                  run variance of later gates, `compare --history`)
#   PERFGATE_FAIL_ON_INCONCLUSIVE  true|false: does exit 3 fail the job (default true)
#   PERFGATE_REUSE_BASE            true|false: reuse stored merge-base runs (default false)
#   PERFGATE_RUN_ARGS              extra arguments for `perfgate run` (word-split)
#   PERFGATE_SERVER_URL            submit runs (push) and gate results (pull request) to this serve;
#                                  the gate reads the pull request's accepted slowdowns from it
#   PERFGATE_DASHBOARD_URL         the serve the pull request's reports link to (default:
#                                  PERFGATE_SERVER_URL; empty: no links)
#   PERFGATE_TOKEN                 push only, submit step only: its ingest token
#   PERFGATE_ARTIFACTS             where reports and CSV go (default: $PERFGATE_WORK/artifacts)
#   GITHUB_OUTPUT, GITHUB_STEP_SUMMARY   set by Actions; temp files in the tests
set -euo pipefail
# A failure inside $(...) fails the assignment's script too.
shopt -s inherit_errexit

PG_CI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_SCRIPTS="$PG_CI_DIR/scripts"

: "${PERFGATE_DB:=${HOME}/perfgate/perfgate.db}"
: "${PERFGATE_WORK:=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/perfgate}"
: "${PERFGATE_CHECKOUT:=}"
: "${PERFGATE_RUN_AS:=}"
: "${PERFGATE_SANDBOX:=bwrap}"
: "${PERFGATE_PASS_ENV:=}"
: "${PERFGATE_PREPARE:=}"
: "${PERFGATE_PREPARE_OUTPUTS:=}"
: "${PERFGATE_PREPARE_INPUTS:=}"
: "${PERFGATE_PREPARE_CACHE:=}"
: "${PERFGATE_BUILD_COMMAND:=}"
: "${PERFGATE_MAIN_BRANCH:=main}"
: "${PERFGATE_ALPHA:=0.01}"
: "${PERFGATE_MIN_EFFECT:=0.05}"
: "${PERFGATE_CORRECTION:=holm}"
: "${PERFGATE_ROUNDS:=auto}"
: "${PERFGATE_MAX_ROUNDS:=$PERFGATE_ROUNDS}"
: "${PERFGATE_MAX_SECONDS:=0}"
: "${PERFGATE_MAIN_ROUNDS:=2}"
: "${PERFGATE_DESIGN:=auto}"
: "${PERFGATE_AB_RUNS:=5}"
: "${PERFGATE_MAX_AB_RUNS:=$PERFGATE_AB_RUNS}"
: "${PERFGATE_FAIL_ON_INCONCLUSIVE:=true}"
: "${PERFGATE_REUSE_BASE:=false}"
: "${PERFGATE_RUN_ARGS:=}"
: "${PERFGATE_SERVER_URL:=}"
: "${PERFGATE_DASHBOARD_URL:=$PERFGATE_SERVER_URL}"
: "${PERFGATE_METRICS:=}"
: "${PERFGATE_FAIL_ON_COUNTER_CHANGE:=false}"
: "${PERFGATE_ARTIFACTS:=$PERFGATE_WORK/artifacts}"

pg_log() { echo "perfgate-ci: $*" >&2; }
pg_die() {
  echo "perfgate-ci: error: $*" >&2
  exit 2
}

# Appends key=value to the step's outputs (GitHub's file protocol; single-line values only).
pg_output() {
  local key=$1 value=$2
  case $value in *$'\n'*) pg_die "output $key must be one line" ;; esac
  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$key=$value" >>"$GITHUB_OUTPUT"; fi
}

pg_summary() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat >>"$GITHUB_STEP_SUMMARY"; else cat >/dev/null; fi
}

pg_bool() {
  case ${1,,} in
    true | 1 | yes | on) return 0 ;;
    false | 0 | no | off | '') return 1 ;;
    *) pg_die "expected true or false, got '$1'" ;;
  esac
}

# The central server's URL (PERFGATE_SERVER_URL) must be http(s)://HOST[:PORT][/PREFIX].
pg_check_server_url() {
  [[ $PERFGATE_SERVER_URL =~ ^https?://[^[:space:]]+$ ]] ||
    pg_die "input 'server-url' must be http(s)://HOST[:PORT][/PREFIX]"
}

# The dashboard's URL (PERFGATE_DASHBOARD_URL), as `perfgate compare --dashboard-url` takes it:
# http(s)://HOST[:PORT][/PREFIX], no query, fragment, space or quote.
pg_check_dashboard_url() {
  local re='^https?://([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?(/[A-Za-z0-9._~%!$&*+,;=:@/-]*)?$'
  [[ $PERFGATE_DASHBOARD_URL =~ $re ]] ||
    pg_die "input 'dashboard-url' (default: server-url) must be http(s)://HOST[:PORT][/PREFIX] without a query, fragment, space or quote, got '$PERFGATE_DASHBOARD_URL'"
}

# rounds: auto (docs/STATISTICS.md, "How many rounds: auto"): one round a side where the trusted
# history lends every tested cell a run variance of at least PG_AUTO_HISTORY_DF degrees of
# freedom (6: the history of the one-round gates measured on an H100 and the H200), else
# PG_ROUNDS_WITHOUT_HISTORY (3, the fixed design without history).
PG_AUTO_HISTORY_DF=6
PG_ROUNDS_WITHOUT_HISTORY=3

# pg_auto_rounds DB: after the first round, how many rounds the gate measures first; prints the
# number, then why. It reads only which cells the store's history covers, and with how many df,
# never this gate's verdict or estimates, so choosing on it spends no alpha: the rounds are as
# fixed as a number given by hand. (Job state: REPO, MAIN_REF, HEAD_SHA.)
# shellcheck disable=SC2153  # REPO, MAIN_REF, HEAD_SHA: the job state
pg_auto_rounds() {
  local db=$1 json
  local -a settings
  mapfile -t settings < <(pg_gate_setting_flags)
  json=$("$(pg_trusted_bin)" compare --db "$db" --repo "$REPO" --main "$MAIN_REF" \
    --base merge-base --head "$HEAD_SHA" "${settings[@]}" --format json 2>/dev/null) || true
  python3 -c '
import json, sys
need, without = int(sys.argv[1]), sys.argv[2]
try:
    cells = [c for c in json.loads(sys.stdin.read()).get("cells", [])
             if c.get("test") not in (None, "", "exact")]
except ValueError:
    cells = []
dfs = [c.get("history_df") for c in cells]
dfs = [None if d is None else int(d) for d in dfs]
if not cells:
    print(without, "the first round has no tested cell to look up in the trusted history", sep="\n")
elif any(d is None for d in dfs):
    n = sum(d is None for d in dfs)
    print(without, f"the trusted history covers {len(cells) - n} of {len(cells)} tested cells", sep="\n")
elif min(dfs) < need:
    print(without, f"the trusted history lends only {min(dfs)} df to a tested cell (1 round needs {need})", sep="\n")
else:
    print(1, f"the trusted history covers all {len(cells)} tested cells, with {min(dfs)} df or more", sep="\n")
' "$PG_AUTO_HISTORY_DF" "$PG_ROUNDS_WITHOUT_HISTORY" <<<"$json"
}

# The gate's settings as `perfgate compare` flags, the same for every look (pr_more_rounds.sh)
# and the last (pr_gate.sh): prints one flag or value per line, for mapfile.
pg_gate_setting_flags() {
  printf '%s\n' --alpha "$PERFGATE_ALPHA" --min-effect "$PERFGATE_MIN_EFFECT" \
    --correction "$PERFGATE_CORRECTION"
  if [ -n "$PERFGATE_METRICS" ]; then printf '%s\n' --metrics "$PERFGATE_METRICS"; fi
  # Trusted history: the persistent store, which only pushes to main write (never a pull
  # request's code), lends its replicated runs of other commits to the run variance.
  if [ -s "$PERFGATE_DB" ]; then printf '%s\n' --history "$PERFGATE_DB"; fi
  # Slowdowns a triage user accepted for this pull request's ref (the compare page's Accept, or
  # `perfgate accept`), read from the server without a token: an accepted cell passes unless the
  # head got slower still. A server that cannot answer is a note, and the gate judges without
  # them. Every look asks the same question as the last: a look that judged without them would
  # stop at "regression" while the accepted gate still needs rounds to decide.
  if [ -n "${PERFGATE_SERVER_URL:-}" ] && [[ ${GITHUB_REF:-} =~ ^[][A-Za-z0-9._/@+:-]{1,200}$ ]]; then
    printf '%s\n' --acceptances "$PERFGATE_SERVER_URL" --ref "$GITHUB_REF"
  fi
}

# The ingest token (PERFGATE_TOKEN) into a mode-600 header file for `curl -H @FILE`, so it never
# appears on a command line: sets PG_HEADERS (removed on exit) and unsets PERFGATE_TOKEN.
pg_auth_headers() {
  PG_HEADERS=$(umask 077 && mktemp "$PERFGATE_WORK/headers.XXXXXX")
  trap 'rm -f "$PG_HEADERS"' EXIT
  printf 'Authorization: Bearer %s\nContent-Type: application/json\n' "$PERFGATE_TOKEN" >"$PG_HEADERS"
  unset PERFGATE_TOKEN
}

# The trusted perfgate: statistics, the verdict and every report come from it.
pg_trusted_bin() {
  [ -n "${PERFGATE_BIN:-}" ] || pg_die "PERFGATE_BIN is not set: run ci/scripts/install.sh first"
  [ -x "$PERFGATE_BIN" ] || pg_die "PERFGATE_BIN=$PERFGATE_BIN is not an executable"
  echo "$PERFGATE_BIN"
}

# The checkout to measure (the PR head on a pull request), as an absolute path.
pg_checkout() {
  local dir=${PERFGATE_CHECKOUT:-.}
  git -C "$dir" rev-parse --show-toplevel 2>/dev/null ||
    pg_die "PERFGATE_CHECKOUT ($dir) is not a git checkout (actions/checkout with fetch-depth: 0?)"
}

# State shared between the steps of one job (GITHUB_OUTPUT is per step, and the tests have none).
pg_state_file() { echo "$PERFGATE_WORK/state.env"; }
pg_state_set() {
  mkdir -p "$PERFGATE_WORK"
  printf '%s=%q\n' "$1" "$2" >>"$(pg_state_file)"
}
pg_state_load() {
  local f
  f=$(pg_state_file)
  [ -f "$f" ] || pg_die "no job state in $f: run ci/scripts/pr_prepare.sh (or main_bench.sh) first"
  # shellcheck disable=SC1090
  source "$f"
}

# The main branch as this clone knows it: a fetched origin/<main> beats a possibly stale local one.
pg_main_ref() {
  local repo=$1 main=$PERFGATE_MAIN_BRANCH
  if git -C "$repo" rev-parse -q --verify "refs/remotes/origin/$main^{commit}" >/dev/null; then
    echo "origin/$main"
  elif git -C "$repo" rev-parse -q --verify "$main^{commit}" >/dev/null; then
    echo "$main"
  else
    pg_die "main branch '$main' is neither origin/$main nor a local ref in $repo (fetch-depth: 0?)"
  fi
}

# shellcheck source=sandbox.sh
source "$PG_SCRIPTS/sandbox.sh"
# shellcheck source=prepare_cache.sh
source "$PG_SCRIPTS/prepare_cache.sh"
# shellcheck source=export_aa.sh
source "$PG_SCRIPTS/export_aa.sh"

# Does the store hold a run of this commit? (Through the public CSV export: one row per cell.)
pg_has_runs() {
  local bin=$1 db=$2 sha=$3
  [ -f "$db" ] || return 1
  # grep reads to the end: with -q it could close the pipe early and pipefail would see SIGPIPE.
  "$bin" export --db "$db" --format csv | grep "$sha" >/dev/null
}

# Run ids in a store, one per line (empty when the store does not exist yet).
pg_run_ids() {
  local bin=$1 db=$2
  [ -f "$db" ] || return 0
  "$bin" export --db "$db" --format csv | awk -F, 'NR > 1 { print $1 }' | sort -un
}

# One alternating round of a pull request's gate, number ROUND, into the trusted database DB:
# odd rounds base then head, even rounds head then base, so that a position effect and linear
# drift do not always land on the same side. No base run when the base is reused or unbuilt.
# (Job state: BASE_BIN, BASE_SRC, BASE_SHA, HEAD_BIN, HEAD_SRC, HEAD_SHA, REUSED.)
pg_gate_round() {
  local round=$1 db=$2
  local -a sides=(base head) profile=()
  ((round % 2)) || sides=(head base)
  # One profile a side explains a regression (its counts are exact, docs/CLI.md "Why a cell
  # changed"): the later rounds skip the profiler's extra sequence per cell.
  ((round == 1)) || profile=(--profile off)
  local side
  for side in "${sides[@]}"; do
    if [ "$side" = base ]; then
      if [ "$REUSED" = true ] || [ -z "$BASE_BIN" ]; then continue; fi
      pg_log "round $round: base ${BASE_SHA:0:12}"
      pg_bench "$BASE_BIN" "$BASE_SRC" "$db" "${profile[@]}"
    else
      pg_log "round $round: head ${HEAD_SHA:0:12}"
      pg_bench "$HEAD_BIN" "$HEAD_SRC" "$db" "${profile[@]}"
    fi
  done
}

# Trusted copies of the base and head commits for `perfgate ab` (pr_bench.sh), in the trusted work
# directory: perfgate ab reads each side's git commit and resolves its sweep in the checkout it
# is given, and the trusted side never opens a repository that measured code could write (the
# sandbox clones). Cloned by the runner's user from the job's own checkout, as pr_prepare.sh
# reads it, with no hooks and no LFS smudge; each side's worker sees its sandbox clone at this
# path (pg_untrusted_worker). (Job state: REPO, BASE_SHA, HEAD_SHA.)
# shellcheck disable=SC2153  # REPO, BASE_SHA, HEAD_SHA: the job state
pg_ab_copies() {
  local side sha dir
  for side in base head; do
    if [ "$side" = base ]; then sha=$BASE_SHA; else sha=$HEAD_SHA; fi
    dir="$PERFGATE_WORK/ab/$side"
    rm -rf "$dir"
    mkdir -p "$PERFGATE_WORK/ab"
    git clone -q --shared --no-checkout "$REPO" "$dir" >&2
    GIT_LFS_SKIP_SMUDGE=1 git -C "$dir" -c core.hooksPath=/dev/null -c advice.detachedHead=false \
      checkout -q --detach "$sha" >&2
    chmod 755 "$PERFGATE_WORK/ab" "$dir"
  done
}

# One `perfgate ab` of a pull request's gate (design ab, pr_bench.sh and pr_more_rounds.sh): RUNS
# A/B runs of every cell of the trusted sweep into the trusted database DB, by the trusted
# perfgate, each side's worker in its own sandbox (ab_worker.sh); PROFILE on (the sweep's
# setting) or off. Its output goes to stderr between ::stop-commands:: markers (it quotes measured
# code's names and errors); the pairs a cell it measured are added to AB_PAIRS.
pg_gate_ab() {
  local runs=$1 db=$2 profiled=$3
  local -a extra=() flags=()
  # shellcheck disable=SC2206  # word splitting of the extra arguments is the point
  [ -n "$PERFGATE_RUN_ARGS" ] && extra=($PERFGATE_RUN_ARGS)
  [ "$profiled" = on ] || flags+=(--profile off)
  local worker token out rc=0
  worker=$(printf '%q' "$PG_SCRIPTS/ab_worker.sh")
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  out="$PERFGATE_WORK/ab/last.out"
  pg_log "perfgate ab: $runs A/B run(s) of base ${BASE_SHA:0:12} and head ${HEAD_SHA:0:12}, profile $profiled"
  echo "::stop-commands::$token" >&2
  "$(pg_trusted_bin)" ab --config "$SWEEP" --base "$PERFGATE_WORK/ab/base" \
    --head "$PERFGATE_WORK/ab/head" --base-worker "$worker base" --head-worker "$worker head" \
    --ab-runs "$runs" --db "$db" "${extra[@]}" "${flags[@]}" >"$out" 2>&1 || rc=$?
  cat "$out" >&2
  echo "::$token::" >&2
  local n
  while read -r n; do AB_PAIRS=$((${AB_PAIRS:-0} + n)); done < <(
    sed -n 's/^Stored A\/B run .*, \([0-9][0-9]*\) pairs a cell$/\1/p' "$out")
  return "$rc"
}

# The next measurement of a pull request's gate, number N (pr_more_rounds.sh): an alternating
# round of `perfgate run` (design rounds), or one more A/B run, unprofiled (design ab).
pg_gate_more() {
  local n=$1 db=$2
  if [ "${DESIGN:-rounds}" = ab ]; then
    pg_gate_ab 1 "$db" off
  else
    pg_gate_round "$n" "$db"
  fi
}
