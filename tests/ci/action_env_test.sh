#!/usr/bin/env bash
# The action's inputs as ci/scripts/action_env.sh checks and exports them (no benchmark, no
# perfgate): dashboard-url (default: server-url), metrics, the boolean inputs (each refused by
# name when neither true nor false) and min-effect's per-metric form; and the gate's flags every
# look passes (lib.sh's pg_gate_setting_flags).
# The scripts that take them end to end: ci.gate_scripts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scripts=$(cd "$here/../../ci/scripts" && pwd)
# shellcheck source=tests/common/check.sh
source "$here/../common/check.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-action-env-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# settings VAR=VALUE...: action_env.sh with these inputs; its exports in $tmp/env, its stderr in
# $tmp/err, its exit status in $rc.
settings() {
  : >"$tmp/env"
  rc=0
  env -i PATH="$PATH" HOME="$tmp" GITHUB_ENV="$tmp/env" PERFGATE_SWEEP=perf/sweep.toml \
    PERFGATE_WORK="$tmp/work" "$@" "$scripts/action_env.sh" 2>"$tmp/err" || rc=$?
}
exported() { grep -qxF -- "$1" "$tmp/env"; }
refused() { # refused INPUT: exit 2 and a message naming the input
  [ "$rc" -eq 2 ] && grep -qF "input '$1'" "$tmp/err"
}

settings
check "defaults: accepted" [ "$rc" -eq 0 ]
check "defaults: no dashboard, no metrics, counters do not fail" bash -c \
  "grep -qx 'PERFGATE_DASHBOARD_URL=' '$tmp/env' && grep -qx 'PERFGATE_METRICS=' '$tmp/env' &&
   grep -qx 'PERFGATE_FAIL_ON_COUNTER_CHANGE=false' '$tmp/env'"

settings PERFGATE_SERVER_URL=https://perf.example.org/pg
check "dashboard-url: server-url by default" exported "PERFGATE_DASHBOARD_URL=https://perf.example.org/pg"
settings PERFGATE_SERVER_URL=https://perf.example.org PERFGATE_DASHBOARD_URL=http://127.0.0.1:8080/
check "dashboard-url: given, it wins over server-url" exported "PERFGATE_DASHBOARD_URL=http://127.0.0.1:8080/"
for bad in 'ftp://perf.example.org' 'https://perf.example.org/?x=1' 'https://perf.example.org/#top' \
  'https://perf example.org' "https://perf.example.org/\"x" 'perf.example.org'; do
  settings PERFGATE_DASHBOARD_URL="$bad"
  check "dashboard-url: '$bad' refused, naming the input" refused dashboard-url
done
settings PERFGATE_SERVER_URL='https://perf.example.org/?q'
check "dashboard-url: a server-url it cannot take as the default is refused too" refused dashboard-url

settings PERFGATE_METRICS=tpot_ms,prefill_ms
check "metrics: a list of names is exported" exported "PERFGATE_METRICS=tpot_ms,prefill_ms"
for bad in 'tpot_ms,' 'tpot ms' 'tpot_ms;rm' ',prefill_ms'; do
  settings PERFGATE_METRICS="$bad"
  check "metrics: '$bad' refused, naming the input" refused metrics
done

settings PERFGATE_FAIL_ON_COUNTER_CHANGE=true
check "fail-on-counter-change: true is exported" exported "PERFGATE_FAIL_ON_COUNTER_CHANGE=true"

for good in 0.05 0 auto 0.05,prefill_ms=0.1 auto,prefill_ms=0.2,peak_alloc_bytes=0 prefill_ms=0.1; do
  settings PERFGATE_MIN_EFFECT="$good"
  check "min-effect: '$good' accepted and exported as it is" exported "PERFGATE_MIN_EFFECT=$good"
done
settings PERFGATE_MIN_EFFECT=
check "min-effect: empty is the default, 0.05" exported "PERFGATE_MIN_EFFECT=0.05"
for bad in -0.1 x 0.05,prefill_ms= 0.05,=0.1 0.05,prefill_ms=x 0.05,Prefill=0.1 0.05,,0.1; do
  settings PERFGATE_MIN_EFFECT="$bad"
  check "min-effect: '$bad' refused, naming the input" refused min-effect
done

settings
check "design: auto by default, 5 A/B runs, no more" bash -c \
  "grep -qx 'PERFGATE_DESIGN=auto' '$tmp/env' && grep -qx 'PERFGATE_AB_RUNS=5' '$tmp/env' &&
   grep -qx 'PERFGATE_MAX_AB_RUNS=5' '$tmp/env'"
for good in ab rounds auto; do
  settings PERFGATE_DESIGN="$good"
  check "design: '$good' accepted" exported "PERFGATE_DESIGN=$good"
done
settings PERFGATE_DESIGN=AB
check "design: 'AB' refused, naming the input" refused design
settings PERFGATE_AB_RUNS=3 PERFGATE_MAX_AB_RUNS=
check "max-ab-runs: empty is ab-runs" exported "PERFGATE_MAX_AB_RUNS=3"
settings PERFGATE_AB_RUNS=0
check "ab-runs: 0 refused, naming the input" refused ab-runs
settings PERFGATE_AB_RUNS=5 PERFGATE_MAX_AB_RUNS=4
check "max-ab-runs: below ab-runs refused, naming the input" refused max-ab-runs

# Boolean inputs: true or false, and a message naming the input otherwise.
for input in fail-on-inconclusive:PERFGATE_FAIL_ON_INCONCLUSIVE reuse-base:PERFGATE_REUSE_BASE \
  export-aa-check:PERFGATE_EXPORT_AA fail-on-counter-change:PERFGATE_FAIL_ON_COUNTER_CHANGE; do
  settings "${input#*:}=maybe"
  check "${input%%:*}: 'maybe' refused, naming the input" refused "${input%%:*}"
  settings "${input#*:}=true"
  check "${input%%:*}: true accepted" exported "${input#*:}=true"
done
settings
check "export-aa-check: off by default" exported "PERFGATE_EXPORT_AA=false"

# The flags of every look: pr_more_rounds.sh's and pr_gate.sh's are these, so they agree.
flags() { (
  export PERFGATE_METRICS=$1 PERFGATE_SERVER_URL=${2:-} GITHUB_REF=${3:-}
  # shellcheck source=ci/scripts/lib.sh
  source "$scripts/lib.sh"
  pg_gate_setting_flags | paste -sd ' '
); }
check "gate flags: no --metrics when metrics is empty" \
  [ "$(flags '')" = "--alpha 0.01 --min-effect 0.05 --correction holm" ]
check "gate flags: --metrics when given" \
  [ "$(flags tpot_ms,prefill_ms)" = "--alpha 0.01 --min-effect 0.05 --correction holm --metrics tpot_ms,prefill_ms" ]
# An accepted slowdown changes what the gate asks of a cell: every look must ask it, or the looks
# stop at the regression the acceptance forgives and the last look is judged too early.
check "gate flags: every look reads the ref's acceptances from the server" \
  [ "$(flags '' http://127.0.0.1:9 refs/pull/7/merge)" = "--alpha 0.01 --min-effect 0.05 --correction holm --acceptances http://127.0.0.1:9 --ref refs/pull/7/merge" ]
check "gate flags: ... not without a ref" \
  [ "$(flags '' http://127.0.0.1:9 '')" = "--alpha 0.01 --min-effect 0.05 --correction holm" ]
check "gate flags: ... nor for a ref with characters a flag must not carry" \
  [ "$(flags '' http://127.0.0.1:9 'refs/pull/7;id')" = "--alpha 0.01 --min-effect 0.05 --correction holm" ]

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
