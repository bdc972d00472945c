#!/usr/bin/env bash
# shellcheck disable=SC2153  # REPO, HEAD_SHA, ... are the job state pg_state_load sources
# Pull request, step 3: the trusted perfgate runs the gate (`perfgate compare --base merge-base`)
# on the job's gate database (only the trusted perfgate wrote it), appends its Markdown to the job
# summary and leaves the JSON report and the CSV for upload. Fails only when the gate itself could
# not run (exit 2/4); the verdict's consequence is pr_decide.sh's, a later step, so that the
# artifacts are uploaded in between whatever the verdict.
# Outputs: verdict, exit-code, report-json, report-markdown, runs-csv.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
bin=$(pg_trusted_bin)

db=$GATE_DB

art=$PERFGATE_ARTIFACTS
mkdir -p "$art"
md="$art/perfgate-report.md"
json="$art/perfgate-report.json"
csv="$art/perfgate-runs.csv"
rm -f "$md" "$json" "$csv"

notes=()
if [ -n "$BASE_NOTE" ]; then notes+=(--note "$BASE_NOTE"); fi
if [ -n "${PREPARE_NOTES:-}" ]; then notes+=(--note "${PREPARE_NOTES% }"); fi
# How base and head were measured (ab_design.sh, pr_bench.sh) and why: in the summary and JSON.
if [ -n "${DESIGN_REASON:-}" ]; then notes+=(--note "Design: ${DESIGN_REASON#design: } (input design: $PERFGATE_DESIGN; docs/OPERATORS.md, \"Design\").")
fi
if [ -n "${ROUNDS_DONE:-}" ] && [ "${DESIGN:-rounds}" = ab ]; then
  # What the gate cost, and why it stopped measuring (pr_more_rounds.sh).
  more_runs=$((ROUNDS_DONE - PERFGATE_AB_RUNS))
  cells=$("$bin" export --db "$db" --format csv | awk -F, -v sha="$HEAD_SHA" 'NR > 1 && index($0, sha) { n++ } END { print n + 0 }')
  cells=$((ROUNDS_DONE > 0 ? cells / ROUNDS_DONE : 0))
  notes+=(--note "A/B: $ROUNDS_DONE A/B runs of base and head side by side ($PERFGATE_AB_RUNS first, the first profiled, $more_runs more while the gate was too wide to decide; at most $PERFGATE_MAX_AB_RUNS), ${AB_PAIRS:-?} timed pairs a cell in all, $cells cells, so $((${AB_PAIRS:-0} * cells)) pairs; ${BENCH_SECONDS:-?} s of benchmarking in all (wall time of perfgate ab: on a GPU runner, the GPU-seconds this gate held)${SEQ_STOP:+; stopped: $SEQ_STOP}.")
elif [ -n "${ROUNDS_DONE:-}" ]; then
  # What the gate cost, and why it stopped measuring (pr_more_rounds.sh): in the summary and JSON.
  first=${ROUNDS_FIRST:-$PERFGATE_ROUNDS}
  [ "$PERFGATE_MAX_ROUNDS" != auto ] || PERFGATE_MAX_ROUNDS=$first
  more_rounds=$((ROUNDS_DONE - first))
  notes+=(--note "Rounds: $ROUNDS_DONE alternating rounds per side ($first first${ROUNDS_REASON:+ (${ROUNDS_REASON})}, $more_rounds more while the gate was too wide to decide; at most $PERFGATE_MAX_ROUNDS), ${BENCH_SECONDS:-?} s of benchmarking in all (wall time of the base and head runs: on a GPU runner, the GPU-seconds this gate held)${SEQ_STOP:+; stopped: $SEQ_STOP}.")
fi
if [ "$REUSED" = true ]; then
  notes+=(--note "Baseline reused: the merge-base ${BASE_SHA:0:12} was not benchmarked in this job; its runs come from the runner's persistent store ($PERFGATE_DB), PERFGATE_REUSE_BASE=true.")
fi

mapfile -t settings < <(pg_gate_setting_flags)
if pg_bool "$PERFGATE_FAIL_ON_COUNTER_CHANGE"; then settings+=(--fail-on-counter-change); fi
# The summary links to the dashboard's compare page of the pair, where pr_submit.sh stores this
# gate, and to each regressed cell's trend there.
if [ -n "$PERFGATE_DASHBOARD_URL" ]; then settings+=(--dashboard-url "$PERFGATE_DASHBOARD_URL"); fi
set +e
"$bin" compare --db "$db" --repo "$REPO" --main "$MAIN_REF" \
  --base merge-base --head "$HEAD_SHA" "${settings[@]}" \
  --look "${GATE_LOOK:-1}" --max-looks "${GATE_MAX_LOOKS:-1}" \
  --format markdown --github --output "$md" --json "$json" "${notes[@]}"
rc=$?
set -e

# A head that broke its own benchmark (every cell it ran failed) must not pass, whatever
# fail-on-inconclusive says: pr_decide.sh fails the job, and the summary leads with the reason.
head_broken=""
if [ -f "$json" ] &&
  ! grep -qE '^ {6}"verdict": "(regression|improvement|unchanged|no-baseline)"' "$json"; then
  head_broken=$(sed -n 's/^ *"note": "head has no ok samples: \(.*\)",\{0,1\}$/\1/p' "$json" |
    head -1 | cut -c1-500)
fi
if [ -n "$head_broken" ]; then
  # shellcheck disable=SC2016  # backquotes are Markdown
  printf '### 💥 perfgate: every cell of the head failed\n\nThe first failure: `%s`\n\n' \
    "${head_broken//\`/\'}" | pg_summary
fi
pg_state_set HEAD_BROKEN "$head_broken"
if [ -f "$md" ]; then
  pg_summary <"$md"
  # The report quotes names and reasons from measured code: no workflow command in it is honoured.
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  echo "::stop-commands::$token" >&2
  cat "$md" >&2
  echo "::$token::" >&2
else
  printf '### 💥 perfgate: the gate could not run (exit %s)\n\nSee the job log.\n' "$rc" | pg_summary
fi
if [ -f "$db" ]; then
  "$bin" export --db "$db" --format csv >"$csv" || pg_log "CSV export failed; no CSV artifact"
fi

case $rc in
  0) verdict=pass ;;
  1) verdict=regression ;;
  3) verdict=inconclusive ;;
  *) verdict=error ;;
esac
pg_output verdict "$verdict"
pg_output exit-code "$rc"
pg_output report-json "$json"
pg_output report-markdown "$md"
pg_output runs-csv "$csv"
pg_output design "${DESIGN:-rounds}"
pg_log "gate verdict: $verdict (perfgate compare exit $rc)"

pg_state_set GATE_RC "$rc"
case $rc in
  0 | 1 | 3) exit 0 ;;
  *) exit "$rc" ;;
esac
