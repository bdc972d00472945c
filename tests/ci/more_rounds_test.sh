#!/usr/bin/env bash
# Enough rounds, and no more: drives ci/scripts/* as ci/action/action.yml does (action_env.sh,
# install, pr_prepare, pr_bench, pr_more_rounds, pr_gate, pr_decide, cleanup) on real CPU runs of
# the `tiny` model, in a temporary git repository with pull-request branches:
#   underpowered  a README change gated at min-effect 0: no gate can be powered for a 0%
#                 slowdown, so every look says "continue"; rounds 2, max-rounds 4: exactly 2 more
#                 rounds, then the last look (3 of 3) decides, and the summary says what it cost
#   budget        the same with max-rounds 6 and max-seconds 1: the first 2 rounds already spent
#                 the budget, so no round starts and the gate is judged as look 1 of 1 (full alpha)
#   powered       the README change at min-effect 10 (an 11x slowdown) and alpha 0.5: powered at
#                 its first look even with this machine's drift, it stops there (3 rounds of
#                 max-rounds 4) and passes
#   slow          a head that preloads the spinning allocator (genuinely slower, shown first
#                 by slow_side_check) at min-effect 0.25, rounds 3, max-rounds 5: a regression
#                 ends the rounds at the look that found it; without one, they run to max-rounds
#   auto-thin     rounds auto after one push of 4 runs (history of 3 df): 3 rounds
#   auto          rounds auto after a second push (6 df): 1 round, judged by the history's variance
# The false-alarm bound of the looks is checked by tests/stats (SequentialLooks).
# Usage: more_rounds_test.sh /path/to/perfgate /path/to/libpg_slow_alloc.so
set -euo pipefail
usage="usage: more_rounds_test.sh /path/to/perfgate /path/to/libpg_slow_alloc.so"
PERFGATE_REAL=$(realpath "${1:?$usage}")
export PERFGATE_REAL
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/common/check.sh
source "$here/../common/check.sh"
# shellcheck source=tests/common/slow_side.sh
source "$here/../common/slow_side.sh"
slow=$(slow_env "$(realpath "${2:?$usage}")")
# shellcheck disable=SC2086  # $slow is a list of VAR=VALUE words
slow_side_check "$PERFGATE_REAL" "$here/gate_sweep.toml" 1.6 $slow
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-rounds-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# --- the project: its build is a launcher for perfgate that loads the checkout's perf.env ------
proj="$tmp/project"
init_repo "$proj"
mkdir -p "$proj/perf"
cat >"$proj/build.sh" <<'BUILD'
#!/usr/bin/env bash
set -euo pipefail
printf '#!/usr/bin/env bash\nset -a\nsource ./perf.env\nset +a\nexec "%s" "$@"\n' "$PERFGATE_REAL" \
  >"$PERFGATE_BUILD_DIR/perfgate"
chmod +x "$PERFGATE_BUILD_DIR/perfgate"
BUILD
chmod +x "$proj/build.sh"
: >"$proj/perf.env"
cp "$here/gate_sweep.toml" "$proj/perf/sweep.toml"
echo "# demo" >"$proj/README.md"
git -C "$proj" add -A && git -C "$proj" commit -qm "project with a benchmark sweep"
git -C "$proj" checkout -q -b pr-noop main
echo "docs only" >>"$proj/README.md"
git -C "$proj" commit -qam "docs: no code change"
git -C "$proj" checkout -q -b pr-slow main
tr ' ' '\n' <<<"$slow" >"$proj/perf.env"
git -C "$proj" commit -qam "build: an allocator that spins (slower tensor allocations)"
git -C "$proj" checkout -q main
scripts="$root/ci/scripts"

# run_pr NAME BRANCH VAR=VALUE...: one pull-request job with these inputs; sets $job and $rc.
run_pr() {
  local name=$1 branch=$2
  shift 2
  job="$tmp/job-$name"
  mkdir -p "$job"
  git -C "$proj" checkout -q "$branch"
  (
    # shellcheck disable=SC2030  # each job's subshell has GitHub files of its own
    export GITHUB_OUTPUT="$job/output" GITHUB_STEP_SUMMARY="$job/summary.md" GITHUB_ENV="$job/env"
    : >"$GITHUB_OUTPUT" && : >"$GITHUB_STEP_SUMMARY" && : >"$GITHUB_ENV"
    env PERFGATE_SWEEP=perf/sweep.toml PERFGATE_CHECKOUT="$proj" PERFGATE_DB="$tmp/store.db" \
      PERFGATE_WORK="$job/work" PERFGATE_PASS_ENV=PERFGATE_REAL PERFGATE_BUILD_COMMAND=./build.sh \
      PERFGATE_ALPHA=0.01 PERFGATE_RUN_ARGS=--quiet "$@" "$scripts/action_env.sh"
    while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    PERFGATE_BIN="$PERFGATE_REAL" "$scripts/install.sh" >/dev/null
    while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    cd "$tmp"
    status=0
    { "$scripts/pr_prepare.sh" && "$scripts/pr_bench.sh" && "$scripts/pr_more_rounds.sh" &&
      "$scripts/pr_gate.sh" >"$job/gate.stdout" && "$scripts/pr_decide.sh"; } || status=$?
    "$scripts/cleanup.sh"
    exit "$status"
  ) >"$job/log" 2>&1 && rc=0 || rc=$?
  git -C "$proj" checkout -q main
  echo "--- $name: job exit $rc, $(grep -c ': round [0-9]*: ' "$job/log") runs"
}
# runs SIDE: the runs of one side the job benchmarked (its log's "round N: base|head" lines).
runs() { grep -c ": round [0-9]*: $1 " "$job/log" || true; }
runs_are() { [ "$(runs base)" -eq "$1" ] && [ "$(runs head)" -eq "$1" ]; }
json_field() { # json_field EXPR: a field of the uploaded JSON report
  python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($1)" \
    "$job/work/artifacts/perfgate-report.json"
}

run_pr underpowered pr-noop PERFGATE_MIN_EFFECT=0 PERFGATE_ALPHA=0.001 PERFGATE_ROUNDS=2 \
  PERFGATE_MAX_ROUNDS=4
check "underpowered: the job passes (exit 0)" [ "$rc" -eq 0 ]
check "underpowered: 2 more rounds, up to max-rounds: 4 runs a side" runs_are 4
check "underpowered: looks 1 and 2 asked for another round" \
  bash -c "grep -q 'look 1 of 3: too wide' '$job/log' && grep -q 'look 2 of 3: too wide' '$job/log'"
check "underpowered: stopped by max-rounds" has "$job/log" "judges look 3 of 3 (max-rounds reached)"
check "underpowered: the report is look 3 of 3 at alpha / 3" \
  [ "$(json_field 'j["sequential"]["look"], j["sequential"]["max_looks"], j["sequential"]["next"]')" = "3 3 stop" ]
check "underpowered: alpha per look is alpha / 3" \
  [ "$(json_field 'round(j["sequential"]["alpha_per_look"] * 3, 12)')" = "0.001" ]
check "underpowered: the summary names the runs pooled" has "$job/summary.md" "pooled: base 4 runs, head 4 runs"
check "underpowered: the summary says what the gate cost" \
  grep -qE "Rounds: 4 alternating rounds per side \(2 first, 2 more .*at most 4\), [0-9]+ s of benchmarking" "$job/summary.md"
check "underpowered: the JSON notes it too" \
  [ "$(json_field 'sum("2 more while the gate was too wide" in n for n in j["notes"])')" = 1 ]
check "underpowered: output rounds" grep -qx "rounds=4" "$job/output"
check "underpowered: output bench-seconds" grep -qE "^bench-seconds=[0-9]+$" "$job/output"
[ "$rc" -eq 0 ] || cat "$job/log"

run_pr budget pr-noop PERFGATE_MIN_EFFECT=0 PERFGATE_ALPHA=0.001 PERFGATE_ROUNDS=2 \
  PERFGATE_MAX_ROUNDS=6 PERFGATE_MAX_SECONDS=1
check "budget: no round beyond the first 2" runs_are 2
check "budget: stopped by max-seconds" has "$job/log" "judges look 1 of 1 (max-seconds"
check "budget: the last look spends the full alpha (look 1 of 1)" \
  [ "$(json_field 'j["sequential"]["max_looks"], j["sequential"]["alpha_per_look"]')" = "1 0.001" ]
check "budget: the job still ends with a verdict (exit 0)" [ "$rc" -eq 0 ]

run_pr powered pr-noop PERFGATE_MIN_EFFECT=10 PERFGATE_ALPHA=0.5 PERFGATE_ROUNDS=3 \
  PERFGATE_MAX_ROUNDS=4
check "powered: passes (exit 0)" [ "$rc" -eq 0 ]
check "powered: decided at its first look ..." has "$job/log" "judges look 1 of 2 (decided at look 1)"
check "powered: ... with no further round" runs_are 3
check "powered: not underpowered" [ "$(json_field 'j["underpowered"]')" = False ]
[ "$rc" -eq 0 ] || cat "$job/log"

run_pr slow pr-slow PERFGATE_MIN_EFFECT=0.25 PERFGATE_ROUNDS=3 PERFGATE_MAX_ROUNDS=5
look=$(json_field 'j["sequential"]["look"]')
look=${look:-0}
# Whether the slowdown is found depends on this machine's load (ci.real_gate_aa_ab tests that);
# what must hold either way is the rule: a regression ends the rounds at the look that found it,
# and a gate that finds none runs to max-rounds.
if [ "$rc" -eq 1 ] && [ "$look" = 3 ]; then
  # Found only at the last look, which pr_gate.sh judges whatever the interval.
  check "slow: a regression at the last look ..." has "$job/log" "judges look 3 of 3 (max-rounds reached)"
  check "slow: ... 5 runs a side" runs_are 5
elif [ "$rc" -eq 1 ]; then
  check "slow: a regression, decided at look $look ..." has "$job/log" "(decided at look $look)"
  check "slow: ... with no round after it" runs_are $((2 + look))
else
  check "slow: no regression found (exit $rc): it ran to max-rounds" \
    has "$job/log" "judges look 3 of 3 (max-rounds reached)"
  check "slow: ... 5 runs a side" runs_are 5
fi
check "slow: judged at alpha / 3" [ "$(json_field 'j["sequential"]["max_looks"]')" = 3 ]

# --- rounds auto: one round where trusted history covers the sweep, else 3 ----------------------
# push NAME: a push to main of a commit on branch NAME (neither base nor head of the gates), as the
# action's push job benchmarks it: PERFGATE_MAIN_ROUNDS runs into the persistent store.
push() {
  local name=$1 pjob="$tmp/push-$1"
  mkdir -p "$pjob"
  git -C "$proj" checkout -q -b "$name" main
  echo "$name" >>"$proj/README.md"
  git -C "$proj" commit -qam "docs: $name"
  (
    # shellcheck disable=SC2031  # each job's subshell has GitHub files of its own
    export GITHUB_OUTPUT="$pjob/output" GITHUB_STEP_SUMMARY="$pjob/summary.md"
    export PERFGATE_SWEEP=perf/sweep.toml PERFGATE_CHECKOUT="$proj" PERFGATE_DB="$tmp/store.db" \
      PERFGATE_WORK="$pjob/work" PERFGATE_BUILD_COMMAND=./build.sh PERFGATE_PASS_ENV=PERFGATE_REAL \
      PERFGATE_RUN_ARGS=--quiet PERFGATE_BIN="$PERFGATE_REAL" PERFGATE_MAIN_ROUNDS=4
    cd "$tmp"
    status=0
    "$scripts/main_bench.sh" || status=$?
    "$scripts/cleanup.sh"
    exit "$status"
  ) >"$pjob/log" 2>&1 || { cat "$pjob/log"; echo "push $name failed"; }
  git -C "$proj" checkout -q main
}
push hist-1 # 4 runs of one commit: the history lends 3 df a cell, below the 6 one round needs
run_pr auto-thin pr-noop PERFGATE_MIN_EFFECT=0.5 PERFGATE_ROUNDS=auto
check "auto, thin history: 3 rounds a side" runs_are 3
check "auto, thin history: the log says why" has "$job/log" \
  "rounds: auto chose 3, because the trusted history lends only 3 df to a tested cell (1 round needs 6)"
check "auto, thin history: no further round (max-rounds follows the 3)" \
  has "$job/log" "judges look 1 of 1"
check "auto, thin history: passes (exit 0)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || cat "$job/log"
push hist-2 # 3 more df: 6
run_pr auto pr-noop PERFGATE_MIN_EFFECT=0.5 PERFGATE_ROUNDS=auto
check "auto, history of 6 df: 1 round a side" runs_are 1
check "auto, history of 6 df: the log says why" has "$job/log" \
  "rounds: auto chose 1, because the trusted history covers all 1 tested cells, with 6 df or more"
check "auto, history of 6 df: judged by the history's run variance" \
  [ "$(json_field '[c["variance_source"] for c in j["cells"] if c.get("test") not in (None, "", "exact")]')" = "['history']" ]
check "auto, history of 6 df: the summary says how many rounds and why" \
  grep -q "Rounds: 1 alternating rounds per side (1 first (rounds: auto chose 1, because the trusted history covers" "$job/summary.md"
check "auto, history of 6 df: passes (exit 0)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || cat "$job/log"
check "bad input: rounds auto with a max-rounds below 3 is refused, naming the input" bash -c \
  "GITHUB_ENV=/dev/null PERFGATE_SWEEP=s.toml PERFGATE_ROUNDS=auto PERFGATE_MAX_ROUNDS=2 '$scripts/action_env.sh' 2>&1 | grep -q \"input 'max-rounds' must be empty or an integer >= 3 with rounds auto\""
check "bad input: rounds must be auto or a number" bash -c \
  "GITHUB_ENV=/dev/null PERFGATE_SWEEP=s.toml PERFGATE_ROUNDS=many '$scripts/action_env.sh' 2>&1 | grep -q \"input 'rounds' must be auto or a positive integer\""

check "bad input: max-rounds below rounds is refused, naming the input" bash -c \
  "GITHUB_ENV=/dev/null PERFGATE_SWEEP=s.toml PERFGATE_ROUNDS=3 PERFGATE_MAX_ROUNDS=2 '$scripts/action_env.sh' 2>&1 | grep -q \"input 'max-rounds'\""
check "bad input: max-seconds must be a whole number" bash -c \
  "GITHUB_ENV=/dev/null PERFGATE_SWEEP=s.toml PERFGATE_MAX_SECONDS=1.5 '$scripts/action_env.sh' 2>&1 | grep -q \"input 'max-seconds'\""

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
