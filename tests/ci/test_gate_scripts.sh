#!/usr/bin/env bash
# Drives ci/scripts/* exactly as ci/action/action.yml does (action_env.sh -> $GITHUB_ENV, then
# pr_prepare, pr_bench, pr_gate, pr_decide in the PR head checkout), on CPU, in a temporary git
# repository with a main branch and pull-request branches. Temporary files stand in for
# GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and GITHUB_ENV.
#
# The project in the temporary repository "builds" a launcher for the real perfgate binary; its
# perf.env file is part of the build, the way compiler flags are. Scenarios:
#   pr-noop   a README change                       -> gate passes, job exits 0
#   pr-slow   perf.env pins MKL to SSE4.2 (a real,  -> regression: job exits 1, ::error printed,
#             ~2-5x slower matmul path on the head)    summary written
#   pr-adopt  branched before the project could be  -> no baseline: job exits 3 and says so
#             built (it adopts the gate)
# Usage: test_gate_scripts.sh /path/to/perfgate
# shellcheck disable=SC2030,SC2031  # each job's GITHUB_* live in its own subshell on purpose
set -euo pipefail
PERFGATE_REAL=$(realpath "${1:?usage: test_gate_scripts.sh /path/to/perfgate}")
export PERFGATE_REAL
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scripts="$root/ci/scripts"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-scripts-XXXXXX")
trap 'git -C "$tmp/project" worktree prune 2>/dev/null || true; rm -rf "$tmp"' EXIT

passes=0 failures=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then
    echo "ok   - $what"
    passes=$((passes + 1))
  else
    echo "FAIL - $what"
    failures=$((failures + 1))
  fi
}

# --- the project under test -------------------------------------------------------------------
proj="$tmp/project"
mkdir -p "$proj/perf"
git -C "$proj" init -q -b main
git -C "$proj" config user.email ci@perfgate.test
git -C "$proj" config user.name "perfgate ci"
git -C "$proj" config commit.gpgsign false
echo "# demo" >"$proj/README.md"
git -C "$proj" add -A && git -C "$proj" commit -qm "initial: nothing to build yet"
adopt_base=$(git -C "$proj" rev-parse HEAD)

cat >"$proj/build.sh" <<'BUILD'
#!/usr/bin/env bash
# This project's build: a launcher for perfgate that applies perf.env (part of the build).
set -euo pipefail
{
  echo '#!/usr/bin/env bash'
  grep -E '^[A-Z_]+=' perf.env | sed 's/^/export /' || true
  echo "exec \"$PERFGATE_REAL\" \"\$@\""
} >"$PERFGATE_BUILD_DIR/perfgate"
chmod +x "$PERFGATE_BUILD_DIR/perfgate"
BUILD
chmod +x "$proj/build.sh"
: >"$proj/perf.env"
cp "$here/gate_sweep.toml" "$proj/perf/sweep.toml"
git -C "$proj" add -A && git -C "$proj" commit -qm "build and benchmark sweep"

git -C "$proj" checkout -q -b pr-noop main
echo "docs only" >>"$proj/README.md"
git -C "$proj" commit -qam "docs: no code change"

git -C "$proj" checkout -q -b pr-slow main
echo "MKL_ENABLE_INSTRUCTIONS=SSE4_2" >"$proj/perf.env"
git -C "$proj" commit -qam "build: restrict MKL to SSE4.2 (slower matmuls)"

git -C "$proj" checkout -q -b pr-adopt "$adopt_base"
git -C "$proj" checkout -q main -- build.sh perf.env perf/sweep.toml
git -C "$proj" commit -qm "adopt perfgate"
git -C "$proj" checkout -q main

# --- one pull-request job, step by step as the composite action runs it -----------------------
# run_pr BRANCH: sets $job (its folder) and $rc (the job's exit status, i.e. the check).
run_pr() {
  local branch=$1
  job="$tmp/job-$branch"
  mkdir -p "$job"
  git -C "$proj" checkout -q "$branch"
  (
    cd "$proj"
    export GITHUB_OUTPUT="$job/output" GITHUB_STEP_SUMMARY="$job/summary.md" GITHUB_ENV="$job/env"
    : >"$GITHUB_OUTPUT" && : >"$GITHUB_STEP_SUMMARY" && : >"$GITHUB_ENV"
    # Step "perfgate settings": inputs as the action maps them (PERFGATE_WORK stands in for
    # RUNNER_TEMP's default, PERFGATE_DB for the runner's persistent store).
    PERFGATE_SWEEP=perf/sweep.toml PERFGATE_DB="$tmp/store.db" PERFGATE_WORK="$job/work" \
      PERFGATE_MAIN_BRANCH=main PERFGATE_ALPHA=0.01 PERFGATE_MIN_EFFECT=0.05 \
      PERFGATE_CORRECTION=holm PERFGATE_ROUNDS=2 PERFGATE_MAIN_ROUNDS=1 \
      PERFGATE_FAIL_ON_INCONCLUSIVE=true PERFGATE_REUSE_BASE=false \
      PERFGATE_BUILD_COMMAND=./build.sh PERFGATE_RUN_ARGS=--quiet PERFGATE_SERVER_URL='' \
      "$scripts/action_env.sh"
    # Later steps see $GITHUB_ENV's variables, as in Actions.
    while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    "$scripts/pr_prepare.sh"
    "$scripts/pr_bench.sh"
    "$scripts/pr_gate.sh" >"$job/gate.stdout"
    "$scripts/pr_decide.sh"
  ) >"$job/log" 2>&1 && rc=0 || rc=$?
  git -C "$proj" checkout -q main
  echo "--- $branch: job exit $rc"
  sed -n '1,3p' "$job/summary.md" 2>/dev/null || true
}

has() { grep -qF -- "$2" "$1"; }

run_pr pr-noop
check "pr-noop: job passes (exit 0)" [ "$rc" -eq 0 ]
check "pr-noop: verdict=pass in GITHUB_OUTPUT" has "$job/output" "verdict=pass"
check "pr-noop: summary opens with the pass line" has "$job/summary.md" "### ✅ perfgate: no regression"
check "pr-noop: JSON report uploaded" has "$job/work/artifacts/perfgate-report.json" '"verdict": "pass"'
check "pr-noop: CSV of the runs uploaded" test -s "$job/work/artifacts/perfgate-runs.csv"
check "pr-noop: base and head alternated (2 runs each)" has "$job/summary.md" "pooled: base 2 runs, head 2 runs"
[ "$rc" -eq 0 ] || cat "$job/log" "$job/summary.md"

run_pr pr-slow
check "pr-slow: job fails with exit 1" [ "$rc" -eq 1 ]
check "pr-slow: ::error printed" has "$job/gate.stdout" "::error title=perfgate regression"
check "pr-slow: summary written with the regression line" has "$job/summary.md" "### ❌ perfgate: 1 regression in decode latency"
check "pr-slow: verdict=regression in GITHUB_OUTPUT" has "$job/output" "verdict=regression"
check "pr-slow: exit-code=1 in GITHUB_OUTPUT" has "$job/output" "exit-code=1"
[ "$rc" -eq 1 ] || cat "$job/log" "$job/summary.md"

run_pr pr-adopt
check "pr-adopt: job is inconclusive (exit 3)" [ "$rc" -eq 3 ]
check "pr-adopt: summary says inconclusive" has "$job/summary.md" "### ⚠️ perfgate: inconclusive"
check "pr-adopt: summary says there is no baseline" has "$job/summary.md" "no stored run of the base"
check "pr-adopt: summary says the base could not be built" has "$job/summary.md" "could not be built"
check "pr-adopt: verdict=inconclusive in GITHUB_OUTPUT" has "$job/output" "verdict=inconclusive"
tolerated=$(cd "$proj" && PERFGATE_WORK="$job/work" PERFGATE_FAIL_ON_INCONCLUSIVE=false \
  "$scripts/pr_decide.sh" 2>/dev/null) && trc=0 || trc=$?
check "pr-adopt: fail-on-inconclusive=false lets it pass" [ "$trc" -eq 0 ]
check "pr-adopt: ... with a warning" grep -q "::warning" <<<"$tolerated"
[ "$rc" -eq 3 ] || cat "$job/log" "$job/summary.md"

# --- a push to main stores the run in the persistent store -------------------------------------
push_job="$tmp/job-push"
mkdir -p "$push_job"
(
  cd "$proj"
  export GITHUB_OUTPUT="$push_job/output" GITHUB_STEP_SUMMARY="$push_job/summary.md"
  PERFGATE_SWEEP=perf/sweep.toml PERFGATE_DB="$tmp/store.db" PERFGATE_WORK="$push_job/work" \
    PERFGATE_BUILD_COMMAND=./build.sh PERFGATE_RUN_ARGS=--quiet "$scripts/main_bench.sh"
) >"$push_job/log" 2>&1 && prc=0 || prc=$?
check "push: main_bench.sh succeeds" [ "$prc" -eq 0 ]
check "push: the run is in the persistent store" \
  bash -c "'$PERFGATE_REAL' export --db '$tmp/store.db' --format csv | grep -q '$(git -C "$proj" rev-parse main)'"
check "push: summary written" has "$push_job/summary.md" "stored 1 run(s)"
[ "$prc" -eq 0 ] || cat "$push_job/log"

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
