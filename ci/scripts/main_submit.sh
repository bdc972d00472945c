#!/usr/bin/env bash
# Push to the main branch, the last step: submit the runs main_bench.sh stored to a central
# `perfgate serve` (PERFGATE_SERVER_URL). This is the only step that receives PERFGATE_TOKEN; it
# builds and runs nothing of the measured code, only the trusted perfgate export and curl. The
# token reaches curl in a header file (mode 600), never on a command line.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
bin=$(pg_trusted_bin)
pg_state_load
[ -n "$PERFGATE_SERVER_URL" ] || {
  pg_log "no server-url: nothing to submit"
  exit 0
}
[ -n "${PERFGATE_TOKEN:-}" ] || pg_die "input 'server-url' is set but 'token' is empty"
pg_check_server_url
[ -n "${NEW_RUN_IDS:-}" ] || pg_die "no new runs to submit (did main_bench.sh store any?)"

pg_auth_headers
url="${PERFGATE_SERVER_URL%/}/api/v1/runs"
for id in $NEW_RUN_IDS; do
  doc="$PERFGATE_WORK/run-$id.json"
  "$bin" export --db "$PERFGATE_DB" --run "$id" --format json >"$doc"
  pg_log "submitting run $id to $url"
  curl --silent --show-error --fail-with-body --max-time 60 -H @"$PG_HEADERS" \
    --data-binary @"$doc" "$url" >&2 || pg_die "submitting run $id to $url failed"
  echo >&2
done
echo "Submitted runs $NEW_RUN_IDS to $PERFGATE_SERVER_URL." | pg_summary
