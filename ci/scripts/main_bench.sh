#!/usr/bin/env bash
# Push to the main branch: benchmark the pushed commit into the runner's persistent store for the
# trend. Main's code is merged, reviewed code: it is cloned, prepared, built and run as the
# runner's own user, in a fresh directory of this job, inside the sandbox's container all the
# same (sandbox.sh); the trusted perfgate imports each run's result into the store, created
# private (0700 directory, 0600 file). No token exists in this step; main_submit.sh, a later
# step, submits the new runs.
# Outputs: head-sha, runs-csv, run-ids.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
bin=$(pg_trusted_bin)
[[ $PERFGATE_MAIN_ROUNDS =~ ^[1-9][0-9]*$ ]] || pg_die "PERFGATE_MAIN_ROUNDS must be a positive integer"
[ -n "${PERFGATE_SWEEP:-}" ] || pg_die "PERFGATE_SWEEP (input 'sweep') is not set"

repo=$(pg_checkout)
head_sha=$(git -C "$repo" rev-parse HEAD)
[ -f "$repo/$PERFGATE_SWEEP" ] || pg_die "input 'sweep': $repo/$PERFGATE_SWEEP does not exist"
rm -f "$(pg_state_file)"
mkdir -p "$PERFGATE_WORK" "$PERFGATE_ARTIFACTS"
# The store holds every run of the trend: only the runner's user may read or write it.
[ -d "$(dirname "$PERFGATE_DB")" ] || (umask 077 && mkdir -p "$(dirname "$PERFGATE_DB")")
SWEEP="$PERFGATE_WORK/sweep.toml"
cp "$repo/$PERFGATE_SWEEP" "$SWEEP"

PERFGATE_RUN_AS=""
pg_sandbox_create
pg_state_set PG_SANDBOX "$PG_SANDBOX"
src=$(pg_sandbox_clone "$repo" "$head_sha" main)
# Main's merged code: what it prepares may fill the cache of prepared artifacts.
pg_prepare_cached "$src" "$head_sha" write >/dev/null
bench_bin=$bin
if [ -n "$PERFGATE_BUILD_COMMAND" ]; then bench_bin=$(pg_build "$src" "$PG_SANDBOX/build-main"); fi

before=$(pg_run_ids "$bin" "$PERFGATE_DB")
for ((round = 1; round <= PERFGATE_MAIN_ROUNDS; round++)); do
  pg_log "round $round/$PERFGATE_MAIN_ROUNDS: ${head_sha:0:12} -> $PERFGATE_DB"
  pg_bench "$bench_bin" "$src" "$PERFGATE_DB"
done
new_ids=$(comm -13 <(echo "$before") <(pg_run_ids "$bin" "$PERFGATE_DB") | sort -n | paste -sd' ')
pg_state_set NEW_RUN_IDS "$new_ids"

csv="$PERFGATE_ARTIFACTS/perfgate-runs.csv"
"$bin" export --db "$PERFGATE_DB" --format csv >"$csv"
{
  echo "### 📈 perfgate: stored $PERFGATE_MAIN_ROUNDS run(s) of \`${head_sha:0:7}\` for the trend"
  echo
  echo "Store: \`$PERFGATE_DB\` (runs $new_ids)."
  echo
  echo "<details><summary>Change points over history (perfgate changes)</summary>"
  echo
  echo '```'
  "$bin" changes --db "$PERFGATE_DB" || echo "(perfgate changes failed)"
  echo '```'
  echo
  echo "</details>"
} | pg_summary
pg_output head-sha "$head_sha"
pg_output runs-csv "$csv"
pg_output run-ids "$new_ids"

# A push whose benchmark is broken (no run stored, or every cell of every run failed) stores
# nothing the trend can use: the job fails, and the summary says why.
broken="no run was stored"
for id in $new_ids; do
  doc=$("$bin" export --db "$PERFGATE_DB" --run "$id" --format json)
  if grep -q '"status":"ok"' <<<"$doc"; then
    broken=""
    break
  fi
  reason=$(grep -o '"reason":"[^"]*' <<<"$doc" | head -1 | cut -c11-510 || true)
  broken="every cell failed; the first: ${reason:-(no reason given)}"
done
if [ -n "$broken" ]; then
  # shellcheck disable=SC2016  # backquotes are Markdown
  printf '### 💥 perfgate: the benchmark of `%s` is broken\n\n%s\n' "${head_sha:0:7}" \
    "${broken//\`/\'}" | pg_summary
  echo "::error title=perfgate::the benchmark of ${head_sha:0:7} is broken; see the job summary"
  exit 1
fi
