#!/usr/bin/env bash
# Shared by the ci/scripts/*.sh steps; sourced, never run. Every setting is an environment
# variable so the composite action (ci/action/action.yml), the dogfood workflow and
# tests/ci/test_gate_scripts.sh drive the steps identically:
#
#   PERFGATE_SWEEP                 sweep TOML file (required for benchmarking)
#   PERFGATE_DB                    the runner's persistent store (default: $HOME/perfgate/perfgate.db)
#   PERFGATE_WORK                  scratch directory of this job (default: $RUNNER_TEMP/perfgate)
#   PERFGATE_MAIN_BRANCH           main branch (default: main; origin/<main> preferred when fetched)
#   PERFGATE_ALPHA, PERFGATE_MIN_EFFECT, PERFGATE_CORRECTION   gate settings (0.01, 0.05, holm)
#   PERFGATE_ROUNDS                alternating base/head rounds on a pull request (default 3)
#   PERFGATE_MAIN_ROUNDS           rounds on a push to main (default 1)
#   PERFGATE_FAIL_ON_INCONCLUSIVE  true|false: does exit 3 fail the job (default true)
#   PERFGATE_REUSE_BASE            true|false: reuse stored merge-base runs (default false)
#   PERFGATE_BUILD_COMMAND         builds one source tree; run in it with PERFGATE_BUILD_DIR set,
#                                  must leave an executable $PERFGATE_BUILD_DIR/perfgate
#                                  (default: ci/scripts/build.sh)
#   PERFGATE_RUN_ARGS              extra arguments for `perfgate run` (word-split)
#   PERFGATE_SERVER_URL            push only: submit runs to this `perfgate serve`
#   PERFGATE_TOKEN                 push only: its ingest token (from secrets; never on PRs)
#   PERFGATE_ARTIFACTS             where reports and CSV go (default: $PERFGATE_WORK/artifacts)
#   GITHUB_OUTPUT, GITHUB_STEP_SUMMARY   set by Actions; temp files in the tests
set -euo pipefail

PG_CI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_SCRIPTS="$PG_CI_DIR/scripts"

: "${PERFGATE_DB:=${HOME}/perfgate/perfgate.db}"
: "${PERFGATE_WORK:=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/perfgate}"
: "${PERFGATE_MAIN_BRANCH:=main}"
: "${PERFGATE_ALPHA:=0.01}"
: "${PERFGATE_MIN_EFFECT:=0.05}"
: "${PERFGATE_CORRECTION:=holm}"
: "${PERFGATE_ROUNDS:=3}"
: "${PERFGATE_MAIN_ROUNDS:=1}"
: "${PERFGATE_FAIL_ON_INCONCLUSIVE:=true}"
: "${PERFGATE_REUSE_BASE:=false}"
: "${PERFGATE_BUILD_COMMAND:=$PG_SCRIPTS/build.sh}"
: "${PERFGATE_RUN_ARGS:=}"
: "${PERFGATE_SERVER_URL:=}"
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

# The base worktree has no .venv of its own: let both builds find LibTorch through the head
# checkout's (scripts/setup.sh makes it), unless PERFGATE_PYTHON is set already.
pg_default_python() {
  if [ -z "${PERFGATE_PYTHON:-}" ] && [ -x "$1/.venv/bin/python3" ]; then
    export PERFGATE_PYTHON="$1/.venv/bin/python3"
  fi
}

# Builds the source tree $1 into $2 with PERFGATE_BUILD_COMMAND; prints the perfgate binary.
pg_build() {
  local src=$1 out=$2
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  pg_log "building $(git -C "$src" rev-parse --short HEAD) in $out"
  (cd "$src" && PERFGATE_BUILD_DIR="$out" bash -c "$PERFGATE_BUILD_COMMAND") >&2
  [ -x "$out/perfgate" ] || pg_die "build command '$PERFGATE_BUILD_COMMAND' left no executable $out/perfgate"
  echo "$out/perfgate"
}

# One benchmark run of the sweep: binary, git checkout that tags the run, database.
pg_bench() {
  local bin=$1 repo=$2 db=$3
  local -a extra=()
  # shellcheck disable=SC2206  # word splitting of the extra arguments is the point
  [ -n "$PERFGATE_RUN_ARGS" ] && extra=($PERFGATE_RUN_ARGS)
  shift 3
  "$bin" run --config "$PERFGATE_SWEEP" --repo "$repo" --db "$db" "${extra[@]}" "$@"
}

# Does the store hold a run of this commit? (Through the public CSV export: one row per cell.)
pg_has_runs() {
  local bin=$1 db=$2 sha=$3
  [ -f "$db" ] || return 1
  # grep reads to the end: with -q it could close the pipe early and pipefail would see SIGPIPE.
  "$bin" export --db "$db" --format csv | grep "$sha" >/dev/null
}
