#!/usr/bin/env bash
# The action's A/B design end to end (ci/scripts/ab_design.sh, pr_bench.sh's `perfgate ab`,
# ab_worker.sh, pg_untrusted_worker): the steps run exactly as ci/action/action.yml runs them, on
# CPU, in a temporary git repository with a main branch and pull-request branches, with design
# auto (the action's default) and a real bubblewrap container per side's worker. The project's
# benchmark is an --exec benchmark in worker mode (the trusted python/perfgate_bench.py harness)
# whose decode step is WORK iterations of integer arithmetic: real work on any x86-64 CPU.
#   pr-aa    a README change                -> design ab chosen, the gate passes; the summary says
#                                              the design, the A/B runs, the pairs and the seconds
#   pr-slow  WORK x4 (real extra work), up  -> regression: exit 1 (more A/B runs while too wide,
#            to 6 A/B runs                     as a noisy runner would set max-ab-runs)
#   pr-evil  the head's benchmark tries to   -> every write is denied (its own clone is the only
#            write the base's clone, its       place it can write: the attack demonstrably ran),
#            state, the trusted copies, the    and nothing of the trusted side changed
#            job's state and gate database,
#            and the runner's store
#   rounds   design: rounds on pr-aa         -> the old protocol, said so
#   aoti     a sweep with an aoti: model     -> auto falls back to rounds and says why (ab_design.sh
#                                              alone: no package is built)
# Usage: ab_gate_test.sh /path/to/perfgate
# shellcheck disable=SC2030,SC2031  # each job's GITHUB_* live in its own subshell on purpose
set -euo pipefail
PERFGATE_REAL=$(realpath "${1:?usage: ab_gate_test.sh /path/to/perfgate}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v bwrap >/dev/null || {
  echo "SKIP: bubblewrap is not installed"
  exit 77
}

# Outside /tmp on purpose (ctest runs it in the build tree): the container hides /tmp, so there an
# attack would fail for want of its target's path; here every target exists, read-only. The
# job's sandbox goes here too (PERFGATE_SANDBOX_PARENT), so the base's clone is in plain sight.
tmp=$(mktemp -d "${PG_TEST_TMP:-$PWD}/perfgate-ab-gate-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
# shellcheck source=tests/common/check.sh
source "$here/../common/check.sh"
commit() { git -C "$proj" add -A && git -C "$proj" commit -qm "$1"; }

proj="$tmp/project"
init_repo "$proj"
mkdir -p "$proj/perf"
echo "# demo" >"$proj/README.md"
cat >"$proj/bench.py" <<'BENCH'
# A worker-mode benchmark through the trusted harness (install.sh puts it on PYTHONPATH).
import perfgate_bench as pb

WORK = 8000


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


cell = pb.cell()
pb.run(cell, lambda: spin(WORK * 2), lambda i: spin(WORK), engine="spin", versions={"spin": "1"})
BENCH
cat >"$proj/perf/sweep.toml" <<'SWEEP'
exec = "python3 bench.py"
model = ["spin"]
dtype = ["fp32"]
batch-sizes = [1, 2]
seq-lens = [8]
gen-tokens = 6
warmup = 1
reps = 12
device = "cpu"
seed = 0
SWEEP
commit "a benchmark and its sweep"

git -C "$proj" checkout -q -b pr-aa main
echo "docs only" >>"$proj/README.md"
commit "docs: no code change"

git -C "$proj" checkout -q -b pr-slow main
sed -i 's/^WORK = 8000$/WORK = 32000/' "$proj/bench.py"
commit "four times the work per decode step"

store_dir="$tmp/runner-home/perfgate"
mkdir -p "$store_dir"
store="$store_dir/perfgate.db"
"$PERFGATE_REAL" init --db "$store" >/dev/null
store_sum=$(sha256sum <"$store")

git -C "$proj" checkout -q -b pr-evil main
evil_work="$tmp/job-pr-evil/work"
cat >"$proj/evil.py" <<EVIL
# Runs in the head's worker, in its sandbox: tries to write everything that is not its own.
import os
home = os.environ["HOME"]  # \$PG_SANDBOX/side-head/home
sandbox = os.path.dirname(os.path.dirname(home))
targets = {
    "BASE_CLONE": os.path.join(sandbox, "base", "bench.py"),
    "BASE_STATE": os.path.join(sandbox, "side-base", "home", "planted.py"),
    "STORE": "$store",
    "JOB_STATE": "$evil_work/state.env",
    "GATE_DB": "$evil_work/gate.db",
    "TRUSTED_BASE": "$evil_work/ab/base/bench.py",
    "TRUSTED_HEAD_OUTSIDE": "$evil_work/ab/evil-was-here",
}
with open("evil.log", "a") as log:  # its own clone (bound at the trusted copy's path)
    for name, path in targets.items():
        try:
            with open(path, "a") as f:
                f.write("\nevil = 1\n")
            log.write(name + ": written\n")
        except OSError:
            log.write(name + ": denied\n")
EVIL
sed -i 's/^import perfgate_bench as pb$/import perfgate_bench as pb\nimport evil  # noqa: F401/' "$proj/bench.py"
commit "the benchmark tries to poison the base and the runner"
git -C "$proj" checkout -q main
mkdir -p "$tmp/trusted"
cp -r "$root/ci" "$root/python" "$tmp/trusted/"

# run_pr BRANCH [DESIGN]: one pull-request job, step by step as the composite action runs it; the
# sandbox is inspected before cleanup (inspect_sandbox). Sets $job and $rc.
run_pr() {
  local branch=$1 design=${2:-auto} scripts="$tmp/trusted/ci/scripts"
  job="$tmp/job-$branch${2:+-$2}"
  mkdir -p "$job"
  git -C "$proj" checkout -q "$branch"
  (
    export GITHUB_OUTPUT="$job/output" GITHUB_STEP_SUMMARY="$job/summary.md" GITHUB_ENV="$job/env"
    : >"$GITHUB_OUTPUT" && : >"$GITHUB_STEP_SUMMARY" && : >"$GITHUB_ENV"
    PERFGATE_SWEEP=perf/sweep.toml PERFGATE_CHECKOUT="$proj" PERFGATE_DB="$store" \
      PERFGATE_WORK="$job/work" PERFGATE_DESIGN="$design" PERFGATE_AB_RUNS=3 \
      PERFGATE_MAX_AB_RUNS="${MAX_AB_RUNS:-3}" \
      PERFGATE_ROUNDS=2 PERFGATE_MAIN_BRANCH=main PERFGATE_ALPHA=0.01 PERFGATE_MIN_EFFECT=0.25 \
      PERFGATE_METRICS=tpot_ms PERFGATE_RUN_ARGS=--quiet "$scripts/action_env.sh"
    export PERFGATE_SANDBOX_PARENT="$tmp"
    while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    PERFGATE_BIN="$PERFGATE_REAL" "$scripts/install.sh" >/dev/null
    while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    cd "$tmp"
    status=0
    { "$scripts/pr_prepare.sh" && "$scripts/pr_bench.sh" && "$scripts/pr_more_rounds.sh" &&
      "$scripts/pr_gate.sh" >"$job/gate.stdout" && "$scripts/pr_decide.sh"; } || status=$?
    # shellcheck disable=SC1091
    (source "$job/work/state.env" && if [ -f "$PG_SANDBOX/head/evil.log" ]; then
      cp "$PG_SANDBOX/head/evil.log" "$job/evil.log"
    fi && cmp -s "$PG_SANDBOX/base/bench.py" "$tmp/bench.py.main" && echo intact >"$job/base-clone") || true
    "$scripts/cleanup.sh"
    exit "$status"
  ) >"$job/log" 2>&1 && rc=0 || rc=$?
  git -C "$proj" checkout -q main
  echo "--- $branch (design $design): job exit $rc"
}
git -C "$proj" show main:bench.py >"$tmp/bench.py.main"

start=$SECONDS
run_pr pr-aa
check "pr-aa: job passes (exit 0)" [ "$rc" -eq 0 ]
check "pr-aa: verdict=pass" has "$job/output" "verdict=pass"
check "pr-aa: design ab, in the outputs" has "$job/output" "design=ab"
check "pr-aa: the log says auto chose ab" has "$job/log" "design: auto chose ab"
check "pr-aa: the summary says the design" has "$job/summary.md" "Design: auto chose ab"
check "pr-aa: ... the A/B runs, pairs and seconds" \
  grep -qE "A/B: 3 A/B runs of base and head side by side .* 36 timed pairs a cell in all, 2 cells, so 72 pairs; [0-9]+ s of benchmarking" "$job/summary.md"
check "pr-aa: judged by the paired test" has "$job/work/artifacts/perfgate-report.json" '"test": "paired-t"'
runs=$("$PERFGATE_REAL" export --db "$job/work/gate.db" --format json | python3 -c '
import json, sys
runs = json.load(sys.stdin)["runs"]
print(len(runs), sum(1 for r in runs if "ab" in r), sum(1 for r in runs if any("profile" in c for c in r["cells"])))')
check "pr-aa: 6 runs, all A/B sides, only the first A/B run profiled (runs, A/B, profiled: $runs)" \
  [ "$runs" = "6 6 2" ]
[ "$rc" -eq 0 ] || cat "$job/log" "$job/summary.md"

# A shared 2-core VM's speed can swing by 2x within seconds (a doubled work then measured x1.15
# to x3.2 in one job's three A/B runs): four times the work, and more A/B runs while too wide.
MAX_AB_RUNS=6 run_pr pr-slow
check "pr-slow: job fails with exit 1" [ "$rc" -eq 1 ]
check "pr-slow: verdict=regression" has "$job/output" "verdict=regression"
check "pr-slow: measured side by side" has "$job/output" "design=ab"
[ "$rc" -eq 1 ] || cat "$job/log" "$job/summary.md"

run_pr pr-evil
check "pr-evil: measured side by side" has "$job/output" "design=ab"
check "pr-evil: its code ran (it wrote its own clone)" test -s "$job/evil.log"
for target in BASE_CLONE BASE_STATE STORE JOB_STATE GATE_DB TRUSTED_BASE TRUSTED_HEAD_OUTSIDE; do
  check "pr-evil: $target denied" has "$job/evil.log" "$target: denied"
done
check "pr-evil: nothing written anywhere" bash -c "! grep -q written '$job/evil.log'"
check "pr-evil: the base's clone is intact" test -f "$job/base-clone"
check "pr-evil: the runner's store is unchanged" [ "$(sha256sum <"$store")" = "$store_sum" ]
check "pr-evil: the job's state is not the head's" bash -c "! grep -q 'evil = 1' '$job/work/state.env'"
check "pr-evil: the trusted copies are untouched" \
  bash -c "[ ! -e '$job/work/ab/evil-was-here' ] && [ ! -e '$job/work/ab/head/evil.log' ]"
check "pr-evil: the gate still judged it" grep -qE "verdict=(pass|regression)" "$job/output"

run_pr pr-aa rounds
check "rounds: job passes (exit 0)" [ "$rc" -eq 0 ]
check "rounds: design rounds, in the outputs" has "$job/output" "design=rounds"
check "rounds: the summary says the input chose it" has "$job/summary.md" "Design: rounds (the input)"
check "rounds: 2 alternating rounds" has "$job/summary.md" "Rounds: 2 alternating rounds per side"

# ab_design.sh alone, on a job state whose sweep has a package model: auto says rounds, and why.
fake="$tmp/fake-work"
mkdir -p "$fake"
printf 'model = ["aoti:out/model.pt2"]\n' >"$fake/sweep.toml"
printf 'REUSED=false\nBASE_BIN=%q\nSWEEP=%q\n' "$PERFGATE_REAL" "$fake/sweep.toml" >"$fake/state.env"
design=$(PERFGATE_WORK="$fake" PERFGATE_DESIGN=auto "$tmp/trusted/ci/scripts/ab_design.sh")
check "aoti: auto chooses rounds" [ "$(head -1 <<<"$design")" = rounds ]
check "aoti: ... and says why" has <(echo "$design") "aoti: or file: model, which perfgate ab does not measure yet"
check "aoti: design ab is refused (exit 2)" bash -c "! PERFGATE_WORK='$fake' PERFGATE_DESIGN=ab '$tmp/trusted/ci/scripts/ab_design.sh' 2>/dev/null"
design=$(PERFGATE_WORK="$fake" PERFGATE_DESIGN=auto PERFGATE_BUILD_COMMAND=./build.sh "$tmp/trusted/ci/scripts/ab_design.sh")
check "build-command: auto chooses rounds, and says why" has <(echo "$design") "build-command: each side is measured by its own perfgate build"

echo "$passes passed, $failures failed, $((SECONDS - start)) s"
[ "$failures" -eq 0 ]
