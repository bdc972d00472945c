#!/usr/bin/env bash
# Push to the main branch: benchmark the pushed commit into the runner's persistent store for the
# trend, and optionally submit the runs to a central `perfgate serve` (PERFGATE_SERVER_URL, with
# the ingest token PERFGATE_TOKEN from secrets: push jobs only, never pull requests).
# Outputs: head-sha, runs-csv.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
[ -n "${PERFGATE_SWEEP:-}" ] || pg_die "PERFGATE_SWEEP (the sweep file) is not set"
[ -f "$PERFGATE_SWEEP" ] || pg_die "sweep file $PERFGATE_SWEEP does not exist"
[[ $PERFGATE_MAIN_ROUNDS =~ ^[1-9][0-9]*$ ]] || pg_die "PERFGATE_MAIN_ROUNDS must be a positive integer"

repo=$(git rev-parse --show-toplevel)
head_sha=$(git -C "$repo" rev-parse HEAD)
mkdir -p "$PERFGATE_WORK" "$(dirname "$PERFGATE_DB")" "$PERFGATE_ARTIFACTS"
pg_default_python "$repo"
bin=$(pg_build "$repo" "$PERFGATE_WORK/build-main")

submit=()
if [ -n "$PERFGATE_SERVER_URL" ]; then
  [ -n "${PERFGATE_TOKEN:-}" ] || pg_die "PERFGATE_SERVER_URL is set but PERFGATE_TOKEN is empty"
  token_file=$(umask 077 && mktemp "$PERFGATE_WORK/token.XXXXXX")
  trap 'rm -f "$token_file"' EXIT
  printf '%s' "$PERFGATE_TOKEN" >"$token_file"
  submit=(--submit "$PERFGATE_SERVER_URL" --token-file "$token_file")
fi

for ((round = 1; round <= PERFGATE_MAIN_ROUNDS; round++)); do
  pg_log "round $round/$PERFGATE_MAIN_ROUNDS: ${head_sha:0:12} -> $PERFGATE_DB${PERFGATE_SERVER_URL:+ and $PERFGATE_SERVER_URL}"
  pg_bench "$bin" "$repo" "$PERFGATE_DB" "${submit[@]}"
done

csv="$PERFGATE_ARTIFACTS/perfgate-runs.csv"
"$bin" export --db "$PERFGATE_DB" --format csv >"$csv"
{
  echo "### 📈 perfgate: stored $PERFGATE_MAIN_ROUNDS run(s) of \`${head_sha:0:7}\` for the trend"
  echo
  echo "Store: \`$PERFGATE_DB\`${PERFGATE_SERVER_URL:+; submitted to $PERFGATE_SERVER_URL}."
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
