#!/usr/bin/env bash
# examples/own-model end to end, on CPU: a user's repository whose benchmark is bench.py (the
# python/perfgate_bench.py helper around a PyTorch model with a static KV cache), measured with
# `perfgate run --exec` by the CI scripts exactly as the composite action runs them, in a
# temporary git repository with three commits:
#   main      the model (2 layers), its bench script, the sweep, the workflow
#   pr-noop   a README change                         -> the gate passes (A/A)
#   pr-slow   N_LAYER 2 -> 8: four times the layers   -> regression: exit 1 and ::error
# Each side must run its own checkout's model: the run's engine.model fingerprint says how many
# layers the measured model had. min-effect is 0.5: this 2-core machine is shared, and a head
# with 3x the layers measured only 1.6x to 2.3x slower under load; this one has 4x the layers.
# With MODE aoti, the same through the example's AOTInductor path instead: the workflow's
# `prepare` runs export.py in each measured checkout (python/perfgate_export.py copied in) and
# perf/sweep-aoti.toml measures out/tiny-lm-b1.pt2 with `--model aoti:`; each side must load its
# own package: the runs' weight bytes (from each package's sidecar) tell the layer counts apart.
# Usage: own_model_example_test.sh /path/to/perfgate /path/to/python-with-torch [exec|aoti]
# For bench/prepare_cache_gpu.sh, in aoti mode: PERFGATE_EXAMPLE_DEVICE=cuda exports and measures
# on the GPU; PERFGATE_EXAMPLE_CACHE=off leaves the cache of prepared packages off (every side
# exports its own), to time a job before and after it.
set -euo pipefail
PERFGATE_REAL=$(realpath "${1:?usage: own_model_example_test.sh PERFGATE PYTHON [MODE]}")
# The measured code runs this Python, in a container whose /tmp is empty: its directory's links are
# resolved (a checkout in /tmp reaches the venv through ./.venv), the interpreter's own link is kept
# (resolved, it would leave the venv).
PYTHON=${2:?usage: own_model_example_test.sh PERFGATE PYTHON [MODE]}
PYTHON=$(realpath "$(dirname "$PYTHON")")/$(basename "$PYTHON")
MODE=${3:-exec}
export PERFGATE_REAL PYTHON
here=$(cd "$(dirname "$0")" && pwd)
root=${PERFGATE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
scripts=${PERFGATE_CI_SCRIPTS:-$root/ci/scripts}  # overridable to try other versions of the scripts
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-own-model-XXXXXX")
trap 'git -C "$tmp/project" worktree prune 2>/dev/null || true; rm -rf "$tmp"' EXIT

# shellcheck source=tests/common/check.sh
source "$here/../common/check.sh"

# --- the user's repository: the example as it stands -------------------------------------------
# No helper is copied in: the action puts the trusted perfgate_bench.py and perfgate_export.py
# first on the measured code's PYTHONPATH (ci/scripts/install.sh). The settings are the example
# workflow's own: its sweep, pass-env and (for the AOTInductor path) its commented alternative.
proj="$tmp/project"
mkdir -p "$proj"
cp -r "$root/examples/own-model/." "$proj/"
workflow="$root/examples/own-model/.github/workflows/perfgate.yml"
setting() { sed -n "s/^ *$1: *\([^#]*[^# ]\) *\(#.*\)\{0,1\}$/\1/p" "$workflow" | head -1; }
sweep=$(setting sweep) pass_env=$(setting pass-env) prepare='' outputs='' inputs=''
if [ "$MODE" = aoti ]; then
  sweep=$(setting '# sweep') prepare=$(setting '# prepare')
  outputs=$(setting '# prepare-outputs') inputs=$(setting '# prepare-inputs')
  if [ "${PERFGATE_EXAMPLE_CACHE:-on}" = off ]; then outputs='' inputs=''; fi
  echo "out/" >"$proj/.gitignore"
fi
echo "the example workflow's settings: sweep=$sweep pass-env=$pass_env prepare=$prepare" \
  "prepare-outputs=$outputs prepare-inputs=$inputs"
if [ -z "$sweep" ] || [ -z "$pass_env" ]; then
  echo "FAIL - cannot read the example workflow's settings from $workflow"
  exit 1
fi
if [ "${PERFGATE_EXAMPLE_DEVICE:-cpu}" = cuda ]; then
  sed -i 's/^device = "cpu"/device = "cuda"/' "$proj/perf/sweep-aoti.toml"
  sed -i -e 's/device="cpu"/device="cuda"/' -e 's/^model = TinyLM(context=CONTEXT).eval()$/&.to("cuda")/' \
    "$proj/export.py"
  grep -q 'eval().to("cuda")' "$proj/export.py" || { echo "FAIL - could not point export.py at cuda"; exit 1; }
fi
git -C "$proj" init -q -b main
git -C "$proj" config user.email ci@perfgate.test
git -C "$proj" config user.name "perfgate ci"
git -C "$proj" config commit.gpgsign false
git -C "$proj" add -A && git -C "$proj" commit -qm "TinyLM with a static KV cache, its benchmark and sweep"

git -C "$proj" checkout -q -b pr-noop main
echo "A sentence of documentation." >>"$proj/README.md"
git -C "$proj" commit -qam "docs: no code change"

git -C "$proj" checkout -q -b pr-slow main
sed -i 's/^N_LAYER = 2\b/N_LAYER = 8/' "$proj/model.py"
grep -q '^N_LAYER = 8' "$proj/model.py" || { echo "FAIL - could not make the slow commit"; exit 1; }
git -C "$proj" commit -qam "model: four times the layers"
git -C "$proj" checkout -q main

# --- the bench script alone: one cell by hand, through perfgate run --exec ---------------------
if [ "$MODE" = exec ]; then
single="$tmp/single.db"
# By hand, the helper comes from perfgate's python/ folder on PYTHONPATH (examples/own-model/README.md).
(cd "$proj" && PYTHONPATH="$root/python" "$PERFGATE_REAL" run --config perf/sweep.toml --reps 3 \
  --warmup 1 --db "$single" --quiet) >"$tmp/single.log" 2>&1 && src=0 || src=$?
check "perfgate run --exec with the example's sweep exits 0" [ "$src" -eq 0 ]
"$PERFGATE_REAL" export --db "$single" --format json >"$tmp/single.json"
check "... and stores an ok cell of model tiny-lm with 3 repetitions of 15 decode steps" \
  "$PYTHON" -c "
import json, sys
run = json.load(open('$tmp/single.json'))['runs'][0]
c = run['cells'][0]
assert c['status'] == 'ok' and c['key']['model'] == 'tiny-lm', c
assert len(c['samples']['prefill_ms']) == 3 and all(len(d) == 15 for d in c['samples']['decode_ms'])
assert run['env']['engine'] == 'pytorch-eager' and run['env']['engine.torch'], run['env']
assert c['metrics']['weight_bytes'] > 0 and c['metrics']['tpot_ms'] > 0
"
[ "$src" -eq 0 ] || cat "$tmp/single.log"
fi

# --- one pull-request job, step by step as the composite action runs it -----------------------
run_pr() {
  local branch=$1 started=$SECONDS
  job="$tmp/job-$branch"
  mkdir -p "$job"
  git -C "$proj" checkout -q "$branch"
  (
    cd "$proj"
    export GITHUB_OUTPUT="$job/output" GITHUB_STEP_SUMMARY="$job/summary.md" GITHUB_ENV="$job/env"
    : >"$GITHUB_OUTPUT" && : >"$GITHUB_STEP_SUMMARY" && : >"$GITHUB_ENV"
    settings=(PERFGATE_SWEEP="$sweep" PERFGATE_DB="$tmp/store.db" PERFGATE_WORK="$job/work"
      PERFGATE_MAIN_BRANCH=main PERFGATE_ALPHA=0.01 PERFGATE_MIN_EFFECT=0.5
      PERFGATE_CORRECTION=holm PERFGATE_ROUNDS=4 PERFGATE_MAX_ROUNDS=5 PERFGATE_MAIN_ROUNDS=1
      PERFGATE_FAIL_ON_INCONCLUSIVE=true PERFGATE_REUSE_BASE=false
      PERFGATE_RUN_ARGS=--quiet PERFGATE_SERVER_URL='')
    if [ -f "$scripts/install.sh" ]; then
      # perfgate installed once; the measured code gets only the variables named in pass-env.
      env "${settings[@]}" PERFGATE_CHECKOUT="$proj" PERFGATE_PASS_ENV="$pass_env" PERFGATE_PREPARE="$prepare" \
        PERFGATE_PREPARE_OUTPUTS="$outputs" PERFGATE_PREPARE_INPUTS="$inputs" \
        PERFGATE_BUILD_COMMAND='' "$scripts/action_env.sh"
      while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
      PERFGATE_BIN="$PERFGATE_REAL" "$scripts/install.sh" >/dev/null
      while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    else
      # perfgate "built" per side: a launcher for the binary under test (expanded by the build).
      # shellcheck disable=SC2016
      env "${settings[@]}" PERFGATE_BUILD_COMMAND='printf "#!/bin/sh\nexec %s \"\$@\"\n" "$PERFGATE_REAL" >"$PERFGATE_BUILD_DIR/perfgate" && chmod +x "$PERFGATE_BUILD_DIR/perfgate"' \
        "$scripts/action_env.sh"
      while IFS='=' read -r key value; do export "$key=$value"; done <"$GITHUB_ENV"
    fi
    status=0
    # Up to 1 more round while the gate is too wide to decide (scripts that have the step).
    more_rounds=true
    if [ -f "$scripts/pr_more_rounds.sh" ]; then more_rounds="$scripts/pr_more_rounds.sh"; fi
    { "$scripts/pr_prepare.sh" && "$scripts/pr_bench.sh" && "$more_rounds" &&
      "$scripts/pr_gate.sh" >"$job/gate.stdout" && "$scripts/pr_decide.sh"; } || status=$?
    # The action's last step, always: removes the sandbox of the measured code.
    if [ -f "$scripts/cleanup.sh" ]; then "$scripts/cleanup.sh"; fi
    exit "$status"
  ) >"$job/log" 2>&1 && rc=0 || rc=$?
  git -C "$proj" checkout -q main
  echo "--- $branch: job exit $rc in $((SECONDS - started)) s, $(grep -c 'perfgate-ci: prepare in' "$job/log") prepare runs"
  sed -n '1,3p' "$job/summary.md" 2>/dev/null || true
}

# The layer counts the runs of one job measured, by commit: "<sha> TinyLM N layers" lines.
# (--exec: the benchmark's own model name; aoti: the layers that the package's weight bytes,
# from its sidecar, amount to.)
measured_models() {
  local db
  db=$(find "$job/work" -name gate.db 2>/dev/null | head -1)
  if [ -z "$db" ]; then echo "(no run was stored: the job stopped before measuring)"; return; fi
  "$PERFGATE_REAL" export --db "$db" --format json | (cd "$proj" && "$PYTHON" -c "
import json, sys
from model import TinyLM
per_layers = {n: 4 * sum(p.numel() for p in TinyLM(n_layer=n, context=64).parameters()) for n in (2, 8)}
for r in json.load(sys.stdin)['runs']:
    if '$MODE' == 'aoti':
        w = {c['metrics'].get('weight_bytes') for c in r['cells']}
        model = ' '.join('TinyLM %d layers' % n for n, b in per_layers.items() if {b} == w) or w
    else:
        model = r['env'].get('engine.model')
    print(r['git']['commit'], model, [c['status'] for c in r['cells']])
") | sort -u
}

base_sha=$(git -C "$proj" rev-parse main)

run_pr pr-noop
check "pr-noop (A/A): the job passes (exit 0)" [ "$rc" -eq 0 ]
check "pr-noop: verdict=pass" has "$job/output" "verdict=pass"
[ "$rc" -eq 0 ] || cat "$job/log" "$job/summary.md"
measured_models >"$job/models.txt"
check "pr-noop: base and head each measured the 2-layer model, every cell ok" \
  [ "$(cut -d' ' -f2- "$job/models.txt" | sort -u)" = "TinyLM 2 layers ['ok']" ]
[ "$rc" -eq 0 ] || cat "$job/models.txt"
if [ "$MODE" = exec ]; then
  harness=$("$PERFGATE_REAL" export --db "$job/work/gate.db" --format json |
    grep -o '"engine.perfgate_bench":"[^"]*"' | sort -u)
  check "pr-noop: every run was timed by the trusted perfgate_bench.py, and says so ($harness)" \
    [ "$harness" = "\"engine.perfgate_bench\":\"$(sha256sum "$root/python/perfgate_bench.py" | cut -c1-16) $root/python/perfgate_bench.py\"" ]
fi

if [ "$MODE" = aoti ] && [ -n "$outputs" ]; then
  # The cache of prepared artifacts (ci/scripts/prepare_cache.sh): the merge-base exported its
  # package and kept it; the head's model.py and export.py are the base's, so it reuses it.
  check "pr-noop: prepare ran once, on the merge-base" [ "$(grep -c 'perfgate-ci: prepare in' "$job/log")" -eq 1 ]
  check "pr-noop: ... the head reused the base's package, and the summary says so" \
    has "$job/summary.md" "prepare of $(git -C "$proj" rev-parse --short=12 pr-noop) skipped"
fi

run_pr pr-slow
check "pr-slow: the job fails with exit 1" [ "$rc" -eq 1 ]
check "pr-slow: ::error in the --github output" has "$job/gate.stdout" "::error"
check "pr-slow: verdict=regression" has "$job/output" "verdict=regression"
[ "$rc" -eq 1 ] || cat "$job/log" "$job/summary.md"
measured_models >"$job/models.txt"
check "pr-slow: the base ran its own 2-layer model" has "$job/models.txt" "$base_sha TinyLM 2 layers"
check "pr-slow: the head ran its own 8-layer model" \
  has "$job/models.txt" "$(git -C "$proj" rev-parse pr-slow) TinyLM 8 layers"
[ "$rc" -eq 1 ] || cat "$job/models.txt"
if [ "$MODE" = aoti ] && [ -n "$outputs" ]; then
  prepared=$(grep 'perfgate-ci: prepare in' "$job/log" | grep -o '/[a-z]*: ' | paste -sd' ')
  check "pr-slow: the merge-base's package came from the cache; only the head was exported ($prepared)" \
    [ "$prepared" = "/head: " ]
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
