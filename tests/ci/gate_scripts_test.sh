#!/usr/bin/env bash
# Drives ci/scripts/* exactly as ci/action/action.yml does (action_env.sh -> $GITHUB_ENV, then
# install, pr_prepare, pr_bench, pr_more_rounds, pr_gate, pr_decide, cleanup), on CPU, in a
# temporary git repository with a main branch and pull-request branches. Temporary files stand in
# for GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and GITHUB_ENV; a real `perfgate serve` on loopback stands in
# for the central server.
#
# The project in the temporary repository is laid out like perfgate's own: it carries a copy of
# ci/ (action and scripts), its `prepare` step exports an artifact (artifact.env, from perf.env)
# into the checkout, and its build makes a launcher for the real perfgate that loads
# ./artifact.env from the checkout it runs in. Scenarios:
#   pr-noop   a README change, export-aa-check on    -> gate passes, job exits 0; the base
#                                                       exported twice is alike
#   pr-luck   a README change on a main whose export -> export-aa-check fails the job before
#             tunes by luck (no replay)                 any benchmark
#   pr-slow   perf.env preloads the spinning        -> regression: exit 1, ::error, summary
#             allocator (real extra work, ~2-3x,        with dashboard links (dashboard-url);
#             tests/common/slow_alloc.cpp)              base and head each load their own artifact
#   pr-cheat  pr-slow plus edits of its copy of the  -> still exit 1 with the trusted scripts (the
#             decision script, the action and the       workflow's layout); exit 0 with the PR's own
#             sweep                                     scripts: what the gate used to trust
#   pr-adopt  branched before the project could be   -> no baseline: exit 3 and says so
#             built (it adopts the gate)
#   pr-evil   (as root only: run-as needs a second   -> its prepare cannot write the persistent
#             user) prepare writes the store, the       store or the job's trusted files, and the
#             trusted work dir, leaves a daemon         daemon is ended by cleanup; still gated
#   push      main_bench stores the run, main_submit -> the run is in the store and on the server
#             posts it with the token
#   pr-submit pr_submit posts pr-slow's gate result  -> an open gate alert on the server (only
#             after the job, with the token             with run-as; without it, a warning)
#   pr-accept a triage user accepts that gate on     -> pr-slow's next gate of the ref passes
#             the server (POST /api/v1/acceptances)     (exit 0), its summary saying who and why
# min-effect is 0.25: on this 2-core machine shared with other jobs, whole runs drifted by up to
# 17% with no code change (docs/STATISTICS.md); the gate must sit above the machine's drift.
# Rounds 4, max-rounds 6: under heavy load, 4 runs a side can be too few for the two-level test
# to decide; the gate then measures up to 2 more rounds (pr_more_rounds.sh), as the action does.
# The scenarios with a genuine slowdown check power, so they run at alpha 0.05 (GATE_ALPHA), as
# ci.real_gate_aa_ab's A/B does: at 0.01 over 3 looks a real +55% (p_adj 0.008, MDE +102%) passed.
# Before any scenario, the slow head is shown to be at least 1.6x slower (slow_side_check).
# Usage: gate_scripts_test.sh /path/to/perfgate /path/to/libpg_slow_alloc.so
# shellcheck disable=SC2030,SC2031  # each job's GITHUB_* live in its own subshell on purpose
set -euo pipefail
usage="usage: gate_scripts_test.sh /path/to/perfgate /path/to/libpg_slow_alloc.so"
PERFGATE_REAL=$(realpath "${1:?$usage}")
SLOW_ALLOC=$(realpath "${2:?$usage}")
export PERFGATE_REAL
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# As root, the run-as scenario switches to `nobody`, who must be able to load LibTorch: when the
# venv lives under root's private home, re-run in a private mount namespace where /root is a
# world-readable tmpfs with only the venv bound back in (nothing else of /root is visible).
if [ "$(id -u)" -eq 0 ] && [ -z "${PG_TEST_NS:-}" ]; then
  venv=$(readlink -f "$root/.venv" 2>/dev/null || true)
  case $venv in
    /root/*)
      export PG_TEST_NS=1 PG_TEST_VENV=$venv
      PG_TEST_STASH=$(mktemp -d /tmp/perfgate-venv-XXXXXX)
      export PG_TEST_STASH
      ns_rc=0
      # shellcheck disable=SC2016  # expanded by the inner shell
      unshare -m -- bash -c '
        set -e
        mount --bind "$PG_TEST_VENV" "$PG_TEST_STASH"
        mount -t tmpfs -o mode=755 tmpfs /root
        mkdir -p "$PG_TEST_VENV"
        mount --bind "$PG_TEST_STASH" "$PG_TEST_VENV"
        exec "$0" "$@"' "$0" "$@" || ns_rc=$?
      # The namespace and its mounts are gone: only the empty mount point is left (rmdir, not rm).
      rmdir "$PG_TEST_STASH"
      exit "$ns_rc"
      ;;
  esac
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-scripts-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# shellcheck source=tests/common/check.sh
source "$here/../common/check.sh"
# shellcheck source=tests/common/slow_side.sh
source "$here/../common/slow_side.sh"
slow=$(slow_env "$SLOW_ALLOC")
# shellcheck disable=SC2086  # $slow is a list of VAR=VALUE words
slow_side_check "$PERFGATE_REAL" "$here/gate_sweep.toml" 1.6 $slow
commit() { git -C "$proj" add -A && git -C "$proj" commit -qm "$1"; }

# --- the project under test -------------------------------------------------------------------
proj="$tmp/project"
init_repo "$proj"
mkdir -p "$proj/perf"
echo "# demo" >"$proj/README.md"
commit "initial: nothing to build yet"
adopt_base=$(git -C "$proj" rev-parse HEAD)

cat >"$proj/build.sh" <<'BUILD'
#!/usr/bin/env bash
# This project's build: a launcher for perfgate that loads the artifact of the checkout it runs in.
set -euo pipefail
cat >"$PERFGATE_BUILD_DIR/perfgate" <<LAUNCHER
#!/usr/bin/env bash
set -a
source ./artifact.env
set +a
exec "$PERFGATE_REAL" "\$@"
LAUNCHER
chmod +x "$PERFGATE_BUILD_DIR/perfgate"
BUILD
cat >"$proj/prepare.sh" <<'PREPARE'
#!/usr/bin/env bash
# Exports the artifact: here, the environment the model runs with, and what an exporter leaves
# beside a package: the tuning choices it made (here, which commit's checkout made them, or the
# ones it was given to replay) and the sidecar's export facts. A package's bytes differ from
# export to export. With export-luck in the checkout, it tunes by luck and replays nothing.
cp perf.env artifact.env
mkdir -p out && git rev-parse HEAD >out/m.tuning.json
choice=$(cat out/m.tuning.json)
if [ -n "${PERFGATE_TUNING_FROM:-}" ]; then
  echo "TUNING FROM: $(ls "$PERFGATE_TUNING_FROM") of $(cat "$PERFGATE_TUNING_FROM/m.tuning.json")" >&2
  (echo planted >"$PERFGATE_TUNING_FROM/m.tuning.json") 2>/dev/null && echo "TUNING: written" >&2 ||
    echo "TUNING: denied" >&2
  choice=$(cat "$PERFGATE_TUNING_FROM/m.tuning.json")
fi
if [ -e export-luck ]; then choice=$(od -An -tx8 -N8 /dev/urandom); fi
date +%s%N >out/m.pt2
digest() { sha256sum | cut -c1-64; }
printf '{"export": {"graph_sha256": "%s", "kernels": 3, "kernels_sha256": "%s", "tuned_kernels": 1, "tuning_sha256": "%s", "retuned_kernels": 0}}\n' \
  "$(digest <perf.env)" "$(cat prepare.sh | digest)" "$(echo "$choice" | digest)" >out/m.json
PREPARE
chmod +x "$proj/build.sh" "$proj/prepare.sh"
: >"$proj/perf.env"
cp "$here/gate_sweep.toml" "$proj/perf/sweep.toml"
cp -r "$root/ci/action" "$root/ci/scripts" "$proj/"
mkdir -p "$proj/ci" && mv "$proj/action" "$proj/scripts" "$proj/ci/"
# The trusted comparison of the export A/A check, where a source checkout of the action has it.
mkdir -p "$proj/python" && cp "$root/python/perfgate_tuning.py" "$proj/python/"
commit "build, prepare, benchmark sweep and the gate's action"

git -C "$proj" checkout -q -b pr-noop main
echo "docs only" >>"$proj/README.md"
commit "docs: no code change"

git -C "$proj" checkout -q -b pr-slow main
tr ' ' '\n' <<<"$slow" >"$proj/perf.env"
commit "build: an allocator that spins (slower tensor allocations)"

git -C "$proj" checkout -q -b pr-cheat pr-slow
printf '#!/usr/bin/env bash\necho "perfgate-ci: pass (trust me)" >&2\nexit 0\n' >"$proj/ci/scripts/pr_decide.sh"
# shellcheck disable=SC2016  # the literal text is replaced
sed -i 's#"\$GITHUB_ACTION_PATH/../scripts/pr_decide.sh"#"true"#' "$proj/ci/action/action.yml"
sed -i 's/^reps = .*/reps = 3/' "$proj/perf/sweep.toml"
commit "slower, and the gate told to pass"

git -C "$proj" checkout -q -b pr-broken main
# Every tensor of 512 KiB or more fails to allocate: a head that can no longer run its own
# benchmark (every cell runs out of memory).
printf 'LD_PRELOAD=%s\nPG_FAIL_ALLOC_MIN_BYTES=524288\n' "$SLOW_ALLOC" >"$proj/perf.env"
commit "a head whose benchmark crashes"

# A main whose exporter tunes by luck, and a README change on it: the export A/A check fails.
git -C "$proj" checkout -q -b luck-main main
touch "$proj/export-luck"
commit "export: tuned, without replay"
git -C "$proj" checkout -q -b pr-luck luck-main
echo "docs only" >>"$proj/README.md"
commit "docs: no code change, on a main whose export is luck"

git -C "$proj" checkout -q -b pr-adopt "$adopt_base"
git -C "$proj" checkout -q main -- build.sh prepare.sh perf.env perf/sweep.toml ci
commit "adopt perfgate"

# --- the runner's persistent state --------------------------------------------------------------
store_dir="$tmp/runner-home/perfgate"
mkdir -p "$store_dir"
chmod 700 "$tmp/runner-home"
store="$store_dir/perfgate.db"

git -C "$proj" checkout -q -b pr-evil pr-slow
cat >"$proj/prepare.sh" <<EVIL
#!/usr/bin/env bash
cp perf.env artifact.env
echo "OWNER: \$(id -un) \$(stat -c %U .)" >&2
(echo evil >>"$store") 2>/dev/null && echo "STORE: written" >&2 || echo "STORE: denied" >&2
(echo evil >>"$tmp/job-pr-evil-as-nobody/work/state.env") 2>/dev/null && echo "STATE: written" >&2 ||
  echo "STATE: denied" >&2
nohup sleep 1000 >/dev/null 2>&1 &
echo "DAEMON: \$!" >&2
EVIL
commit "prepare: try to poison the runner"
git -C "$proj" checkout -q main

# --- one pull-request job, step by step as the composite action runs it -----------------------
# run_pr BRANCH [SCRIPTS [RUN_AS]]: the trusted tree is main's (the workflow's ./trusted checkout);
# SCRIPTS overrides where the scripts come from. Sets $job (its folder) and $rc (the check).
trusted="$tmp/trusted"
git -C "$proj" worktree add -q --detach "$trusted" main
run_pr() {
  local branch=$1 scripts=${2:-$trusted/ci/scripts} run_as=${3:-}
  job="$tmp/job-$branch${run_as:+-as-$run_as}"
  [ "$scripts" = "$trusted/ci/scripts" ] || job="$job-own-scripts"
  mkdir -p "$job"
  git -C "$proj" checkout -q "$branch"
  (
    export GITHUB_OUTPUT="$job/output" GITHUB_STEP_SUMMARY="$job/summary.md" GITHUB_ENV="$job/env"
    export GITHUB_REF="${PR_REF:-}"
    : >"$GITHUB_OUTPUT" && : >"$GITHUB_STEP_SUMMARY" && : >"$GITHUB_ENV"
    # Step "perfgate settings": inputs as the action maps them (PERFGATE_WORK stands in for
    # RUNNER_TEMP's default, PERFGATE_DB for the runner's persistent store).
    PERFGATE_SWEEP=perf/sweep.toml PERFGATE_CHECKOUT="$proj" PERFGATE_DB="$store" \
      PERFGATE_WORK="$job/work" PERFGATE_RUN_AS="$run_as" PERFGATE_PASS_ENV=PERFGATE_REAL \
      PERFGATE_PREPARE=./prepare.sh PERFGATE_BUILD_COMMAND=./build.sh \
      PERFGATE_MAIN_BRANCH="${MAIN_BRANCH:-main}" PERFGATE_EXPORT_AA="${EXPORT_AA:-false}" PERFGATE_ALPHA="${GATE_ALPHA:-0.01}" PERFGATE_MIN_EFFECT=0.25 \
      PERFGATE_CORRECTION=holm PERFGATE_ROUNDS=4 PERFGATE_MAX_ROUNDS=6 PERFGATE_MAIN_ROUNDS=1 \
      PERFGATE_FAIL_ON_INCONCLUSIVE="${FAIL_ON_INCONCLUSIVE:-true}" PERFGATE_REUSE_BASE=false \
      PERFGATE_RUN_ARGS=--quiet PERFGATE_SERVER_URL="${SERVER_URL:-}" PERFGATE_DASHBOARD_URL="${DASHBOARD_URL:-}" \
      PERFGATE_METRICS="${GATE_METRICS:-}" \
      PERFGATE_FAIL_ON_COUNTER_CHANGE="${FAIL_ON_COUNTER_CHANGE:-false}" \
      "$scripts/action_env.sh"
    # Later steps see $GITHUB_ENV's variables, as in Actions.
    while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    PERFGATE_BIN="$PERFGATE_REAL" "$scripts/install.sh" >/dev/null
    while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    cd "$tmp" # steps run in the workspace, not in the measured checkout
    status=0
    { "$scripts/pr_prepare.sh" && "$scripts/pr_bench.sh" && "$scripts/pr_more_rounds.sh" &&
      "$scripts/pr_gate.sh" >"$job/gate.stdout" &&
      "$scripts/pr_decide.sh"; } || status=$?
    grep -E '^(PG_SANDBOX|BASE_SRC|HEAD_SRC)=' "$job/work/state.env" >"$job/sandbox.env" || true
    "$scripts/cleanup.sh"
    exit "$status"
  ) >"$job/log" 2>&1 && rc=0 || rc=$?
  git -C "$proj" checkout -q main
  echo "--- $branch: job exit $rc"
  sed -n '1,3p' "$job/summary.md" 2>/dev/null || true
}

# fail-on-counter-change: a README change changes no counter, so the gate still passes.
FAIL_ON_COUNTER_CHANGE=true EXPORT_AA=true run_pr pr-noop
check "pr-noop: job passes (exit 0)" [ "$rc" -eq 0 ]
check "pr-noop: verdict=pass in GITHUB_OUTPUT" has "$job/output" "verdict=pass"
check "pr-noop: summary opens with the pass line" has "$job/summary.md" "### ✅ perfgate: no regression"
check "pr-noop: JSON report uploaded" has "$job/work/artifacts/perfgate-report.json" '"verdict": "pass"'
check "pr-noop: CSV of the runs uploaded" test -s "$job/work/artifacts/perfgate-runs.csv"
rounds=$(sed -n 's/^rounds=//p' "$job/output")
check "pr-noop: 4 to 6 rounds (max-rounds), as the output says" test "${rounds:-0}" -ge 4 -a "${rounds:-0}" -le 6
check "pr-noop: base and head alternated ($rounds runs each)" \
  has "$job/summary.md" "pooled: base $rounds runs, head $rounds runs"
# One profile a side: the first round's runs are profiled, the later rounds' are not.
profiled=$("$PERFGATE_REAL" export --db "$job/work/gate.db" --format json | python3 -c '
import json, sys
runs = json.load(sys.stdin)["runs"]
print(sum(1 for r in runs if any("profile" in c for c in r["cells"])), len(runs))')
check "pr-noop: only the first round of each side was profiled (profiled, runs: $profiled)" \
  [ "$profiled" = "2 $((2 * rounds))" ]
# shellcheck disable=SC1091
check "pr-noop: cleanup removed the sandbox" bash -c "source '$job/sandbox.env' && [ -n \"\$PG_SANDBOX\" ] && [ ! -e \"\$PG_SANDBOX\" ]"
cp "$job/work/gate.db" "$tmp/server.db"
# The head's prepare replays the tuning choices the merge-base's recorded, read-only to it; the
# base's own prepare is given none.
base_of_noop=$(git -C "$proj" merge-base main pr-noop)
check "pr-noop: the head's prepare got the merge-base's tuning choices" \
  has "$job/log" "TUNING FROM: m.tuning.json of $base_of_noop"
check "pr-noop: ... only the head's prepare and the base's second (export-aa-check)" \
  [ "$(grep -c 'TUNING FROM:' "$job/log")" -eq 2 ]
check "pr-noop: ... which it cannot rewrite" has "$job/log" "TUNING: denied"
check "pr-noop: the summary says the head replayed them" \
  has "$job/summary.md" "The head's prepare was given the merge-base's tuning choices to replay (1 file)"
check "pr-noop: the export A/A check found the base's two exports alike" \
  has "$job/summary.md" "Export A/A: the merge-base prepared twice left the same packages (alike: out/m.pt2: the same 3 kernels and 1 tuning choices)"
[ "$rc" -eq 0 ] || cat "$job/log" "$job/summary.md"

# export-aa-check on a main whose exports are luck: the job fails before any benchmark ran.
MAIN_BRANCH=luck-main EXPORT_AA=true run_pr pr-luck
check "pr-luck: the export A/A check fails the job (exit $rc)" [ "$rc" -ne 0 ]
check "pr-luck: ... its summary says the base exported twice differs, and where" \
  bash -c "grep -q 'export A/A failed' '$job/summary.md' && grep -q 'differs: out/m.pt2: tuning_sha256' '$job/summary.md'"
check "pr-luck: ... with an error annotation" has "$job/log" "::error title=perfgate::export A/A failed: two exports"
check "pr-luck: ... before any benchmark" bash -c "! grep -q 'round 1' '$job/log'"
[ "$rc" -ne 0 ] || cat "$job/log" "$job/summary.md"

GATE_ALPHA=0.05 GATE_METRICS=tpot_ms DASHBOARD_URL=http://dash.example:8080/pg run_pr pr-slow
check "pr-slow: job fails with exit 1" [ "$rc" -eq 1 ]
check "pr-slow: metrics reached the gate (peak memory, gated by default, is not among its metrics)" \
  bash -c "! grep -q '\"metric\": \"peak_alloc_bytes\"' '$job/work/artifacts/perfgate-report.json'"
check "pr-slow: the summary links to the dashboard's compare page of the pair" \
  has "$job/summary.md" "[This comparison on the dashboard](http://dash.example:8080/pg/compare?base="
check "pr-slow: ... and to the regressed cell's trend" \
  has "$job/summary.md" "([trend](http://dash.example:8080/pg/series?model="
check "pr-slow: the ::error names the trend" has "$job/gate.stdout" "trend: http://dash.example:8080/pg/series?model="
check "pr-slow: the JSON report has its links" has "$job/work/artifacts/perfgate-report.json" '"links": {'

check "pr-slow: ::error printed" has "$job/gate.stdout" "::error title=perfgate regression"
check "pr-slow: summary written with the regression line" has "$job/summary.md" "### ❌ perfgate: 1 regression in decode latency"
check "pr-slow: verdict=regression in GITHUB_OUTPUT" has "$job/output" "verdict=regression"
check "pr-slow: exit-code=1 in GITHUB_OUTPUT" has "$job/output" "exit-code=1"
[ "$rc" -eq 1 ] || cat "$job/log" "$job/summary.md"

GATE_ALPHA=0.05 run_pr pr-cheat
check "pr-cheat: trusted scripts still fail the gate (exit 1)" [ "$rc" -eq 1 ]
check "pr-cheat: verdict=regression" has "$job/output" "verdict=regression"
check "pr-cheat: measured with the merge-base's sweep, said so" has "$job/log" "measures with the merge-base's version"
[ "$rc" -eq 1 ] || cat "$job/log" "$job/summary.md"
git -C "$proj" checkout -q pr-cheat
run_pr pr-cheat "$proj/ci/scripts"
check "pr-cheat: control: the PR's own scripts would have passed it (exit 0)" [ "$rc" -eq 0 ]

FAIL_ON_INCONCLUSIVE=false run_pr pr-broken
check "pr-broken: a head whose every cell fails fails the job, fail-on-inconclusive false or not" \
  [ "$rc" -ne 0 ]
check "pr-broken: the summary leads with it" has "$job/summary.md" "every cell of the head failed"
check "pr-broken: ... and names the first failure" has "$job/summary.md" "can't allocate memory"
check "pr-broken: an ::error says so" has "$job/log" "::error title=perfgate::every cell of the head failed"
[ "$rc" -ne 0 ] || cat "$job/log" "$job/summary.md"

run_pr pr-adopt
check "pr-adopt: job is inconclusive (exit 3)" [ "$rc" -eq 3 ]
check "pr-adopt: summary says inconclusive" has "$job/summary.md" "### ⚠️ perfgate: inconclusive"
check "pr-adopt: summary says there is no baseline" has "$job/summary.md" "no stored run of the base"
check "pr-adopt: summary says the base could not be prepared" has "$job/summary.md" "could not be prepared"
check "pr-adopt: verdict=inconclusive in GITHUB_OUTPUT" has "$job/output" "verdict=inconclusive"
tolerated=$(PERFGATE_WORK="$job/work" PERFGATE_FAIL_ON_INCONCLUSIVE=false \
  "$trusted/ci/scripts/pr_decide.sh" 2>/dev/null) && trc=0 || trc=$?
check "pr-adopt: fail-on-inconclusive=false lets it pass" [ "$trc" -eq 0 ]
check "pr-adopt: ... with a warning" grep -q "::warning" <<<"$tolerated"
[ "$rc" -eq 3 ] || cat "$job/log" "$job/summary.md"

# --- a push to main stores the run, and the submit step (alone with the token) sends it ---------
token_file="$tmp/server-token"
(umask 077 && echo "s3cret-ingest-token" >"$token_file") # serve refuses a token others may read
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PERFGATE_REAL" serve --db "$tmp/server.db" --port "$port" --token-file "$token_file" --quiet \
  >"$tmp/serve.log" 2>&1 &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do # until the server listens (it binds before serving)
  if curl -fs "http://127.0.0.1:$port/" >/dev/null; then break; fi
  sleep 0.1
done
check "server: perfgate serve answers" curl -fs "http://127.0.0.1:$port/healthz" -o /dev/null
main_sha=$(git -C "$proj" rev-parse main)
server_runs() { curl -fs "http://127.0.0.1:$port/api/v1/runs" | grep -o "\"$main_sha\"" | wc -l; }
runs_before=$(server_runs || echo 0)
push_job="$tmp/job-push"
mkdir -p "$push_job"
(
  export GITHUB_OUTPUT="$push_job/output" GITHUB_STEP_SUMMARY="$push_job/summary.md"
  export PERFGATE_SWEEP=perf/sweep.toml PERFGATE_CHECKOUT="$proj" PERFGATE_DB="$store" \
    PERFGATE_WORK="$push_job/work" PERFGATE_BUILD_COMMAND=./build.sh PERFGATE_PREPARE=./prepare.sh \
    PERFGATE_PASS_ENV=PERFGATE_REAL PERFGATE_RUN_ARGS=--quiet PERFGATE_BIN="$PERFGATE_REAL" \
    PERFGATE_SERVER_URL="http://127.0.0.1:$port"
  cd "$tmp"
  # Chained: errexit is off inside a subshell run as a condition, so a failed step must not hide.
  status=0
  { "$trusted/ci/scripts/main_bench.sh" &&
    PERFGATE_TOKEN=$(cat "$token_file") "$trusted/ci/scripts/main_submit.sh"; } || status=$?
  "$trusted/ci/scripts/cleanup.sh"
  exit "$status"
) >"$push_job/log" 2>&1 && prc=0 || prc=$?
check "push: main_bench.sh and main_submit.sh succeed" [ "$prc" -eq 0 ]
check "push: the run is in the persistent store" \
  bash -c "'$PERFGATE_REAL' export --db '$store' --format csv | grep -q '$main_sha'"
runs_after=$(server_runs || echo 0)
check "push: the run reached the server ($runs_before -> $runs_after runs of main there)" \
  [ "$runs_after" -gt "$runs_before" ]
check "push: summary written (main-rounds 2 by default: replicated runs for later gates' history)" has "$push_job/summary.md" "stored 2 run(s)"
check "push: the store it created is private (mode 600)" [ "$(stat -c %a "$store")" = 600 ]
check "push: the token is in no file the job left" bash -c "! grep -rqs s3cret-ingest-token '$push_job'"
[ "$prc" -eq 0 ] || cat "$push_job/log"

# A push whose benchmark is broken (pr-broken's commit: every cell runs out of memory) stores
# nothing the trend can use: the job fails and its summary says why.
git -C "$proj" checkout -q pr-broken
broken_job="$tmp/job-push-broken"
mkdir -p "$broken_job"
(
  export GITHUB_OUTPUT="$broken_job/output" GITHUB_STEP_SUMMARY="$broken_job/summary.md"
  export PERFGATE_SWEEP=perf/sweep.toml PERFGATE_CHECKOUT="$proj" PERFGATE_DB="$tmp/broken-store.db" \
    PERFGATE_WORK="$broken_job/work" PERFGATE_BUILD_COMMAND=./build.sh PERFGATE_PREPARE=./prepare.sh \
    PERFGATE_PASS_ENV=PERFGATE_REAL PERFGATE_RUN_ARGS=--quiet PERFGATE_BIN="$PERFGATE_REAL"
  cd "$tmp"
  status=0
  "$trusted/ci/scripts/main_bench.sh" || status=$?
  "$trusted/ci/scripts/cleanup.sh"
  exit "$status"
) >"$broken_job/log" 2>&1 && brc=0 || brc=$?
git -C "$proj" checkout -q main
check "push (broken benchmark): the job fails (exit $brc)" [ "$brc" -ne 0 ]
check "push (broken benchmark): the summary says so, with the first failure" \
  bash -c "grep -q 'is broken' '$broken_job/summary.md' && grep -q \"can't allocate memory\" '$broken_job/summary.md'"
[ "$brc" -ne 0 ] || cat "$broken_job/log" "$broken_job/summary.md"

# --- pr_submit.sh sends pr-slow's gate result (after its cleanup), with the token, only under run-as
submit_pr() { # submit_pr RUN_AS: pr_submit.sh on pr-slow's finished job, as the action's last step
  (
    export GITHUB_STEP_SUMMARY="$tmp/job-pr-slow/submit-summary.md" PERFGATE_WORK="$tmp/job-pr-slow/work" \
      PERFGATE_SERVER_URL="http://127.0.0.1:$port" PERFGATE_RUN_AS="$1" GITHUB_REF=refs/pull/7/merge \
      GITHUB_ACTOR='octo-cat[bot]'
    PERFGATE_TOKEN=$(cat "$token_file") "$trusted/ci/scripts/pr_submit.sh"
  ) >"$tmp/pr-submit.log" 2>&1
}
submit_pr "" && src=0 || src=$?
listed=$(curl -sS "http://127.0.0.1:$port/api/v1/regressions" 2>&1 || true)
check "pr-submit: without run-as the token is not used (exit 0, a warning)" \
  bash -c "[ $src -eq 0 ] && grep -q '::warning' '$tmp/pr-submit.log'"
not_listed() { ! grep -q refs/pull/7/merge <<<"$listed"; }
check "pr-submit: ... and nothing reached the server" not_listed
submit_pr nobody && src=0 || src=$?
listed=$(curl -sS "http://127.0.0.1:$port/api/v1/regressions" 2>&1 || true)
check "pr-submit: with run-as it succeeds" [ "$src" -eq 0 ]
# shellcheck disable=SC2016  # a Python program
check "pr-submit: one open gate alert with its ref and who submitted it" python3 -c '
import json, sys
g = json.loads(sys.argv[1])["gate_regressions"]
sys.exit(not (len(g) == 1 and g[0]["state"] == "open" and g[0]["ref"] == "refs/pull/7/merge"
              and g[0]["submitted_by"] == "octo-cat[bot]" and g[0]["regressed_cells"] >= 1))' "$listed"
check "pr-submit: the token is in no file the job left" bash -c "! grep -rqs s3cret-ingest-token '$tmp/job-pr-slow'"
# The summary's compare link, on the server that holds the gate but not the pull request's runs.
pair=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print("base=" + j["base"] + "&head=" + j["head"])' \
  "$tmp/job-pr-slow/work/artifacts/perfgate-report.json")
check "pr-submit: the compare page of the pair shows the stored gate" \
  bash -c "curl -fsS 'http://127.0.0.1:$port/compare?$pair' | grep -q 'id=\"stored-verdict\" class=\"badge big fail\"'"
if [ "$src" -ne 0 ] || ! grep -q '"gate_regressions"' <<<"$listed"; then
  cat "$tmp/pr-submit.log" "$tmp/serve.log"
  echo "$listed"
fi

# --- pr-accept: a triage user accepts pr-slow's slowdown on the server; the ref's next gate passes
gate_id=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["gate_regressions"][0]["gate_id"])' "$listed" || echo 0)
accepted=$(curl -sS -X POST -H "Authorization: Bearer $(cat "$token_file")" \
  -H 'Content-Type: application/json' -d "{\"gate_id\": $gate_id, \"reason\": \"the spin is the feature\"}" \
  "http://127.0.0.1:$port/api/v1/acceptances" || true)
check "pr-accept: the server accepts pr-slow's regressions for its ref" grep -q 'refs/pull/7/merge' <<<"$accepted"
GATE_ALPHA=0.05 GATE_METRICS=tpot_ms SERVER_URL="http://127.0.0.1:$port" PR_REF=refs/pull/7/merge \
  run_pr pr-slow
check "pr-accept: the next gate of the ref passes (exit $rc)" [ "$rc" -eq 0 ]
check "pr-accept: its summary says who accepted what and why" has "$job/summary.md" "the spin is the feature"
check "pr-accept: ... and that the cell was accepted" has "$job/summary.md" "accepted"
[ "$rc" -eq 0 ] || cat "$job/log" "$job/summary.md"

# --- run-as: the measured code as a user that owns nothing ----------------------------------------
if [ "$(id -u)" -eq 0 ]; then
  store_sum=$(sha256sum "$store")
  run_pr pr-evil "" nobody
  check "pr-evil (as nobody): still gated, exit 1" [ "$rc" -eq 1 ]
  check "pr-evil: verdict=regression" has "$job/output" "verdict=regression"
  check "pr-evil: the persistent store is unchanged" [ "$(sha256sum "$store")" = "$store_sum" ]
  check "pr-evil: its prepare ran as nobody in a sandbox nobody owns" has "$job/log" "OWNER: nobody nobody"
  check "pr-evil: it could not write the store" has "$job/log" "STORE: denied"
  check "pr-evil: it could not write the job's trusted state" has "$job/log" "STATE: denied"
  daemon=$(sed -n 's/^DAEMON: //p' "$job/log" | head -1)
  check "pr-evil: it started a daemon ($daemon in its container's PID namespace) ..." [ -n "$daemon" ]
  # Ended with its container: no process of nobody is left (a zombie has ended; it waits for a
  # parent that is not the sandbox's to reap it).
  # shellcheck disable=SC2009  # pgrep cannot leave zombies out
  check "pr-evil: ... which ended with its command" bash -c "! ps -u nobody -o stat= | grep -qv Z"
  check "pr-evil: the sandbox is gone" \
    bash -c "source '$job/sandbox.env' && [ -n \"\$PG_SANDBOX\" ] && [ ! -e \"\$PG_SANDBOX\" ]"
  [ "$rc" -eq 1 ] || cat "$job/log" "$job/summary.md"
else
  echo "ok   - run-as scenario needs root (setpriv to nobody) or a sudoers rule; ran as $(id -un): covered where root"
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
