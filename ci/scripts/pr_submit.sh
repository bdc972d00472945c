#!/usr/bin/env bash
# Pull request, after the gate and the cleanup: submit its result (the JSON report pr_gate.sh wrote) to the central
# `perfgate serve` (PERFGATE_SERVER_URL, POST /api/v1/gates), where a regression stays an open
# alert on the regressions page until someone triages it, and the compare page of the pair shows
# the verdict with the settings it was decided under. Like main_submit.sh, this is the only step of
# a pull-request job that receives PERFGATE_TOKEN, and it runs nothing of the measured code: only
# curl, after cleanup.sh ended whatever the measured code left running, and only when run-as kept
# that code under another user. No token (GitHub gives pull requests from forks no secrets), no
# run-as, or a failed submission is a warning, never a failed check: the verdict does not depend
# on the server.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# The summary's dashboard links (pr_gate.sh) point at the gate this step stores; when it is not
# stored, the summary says so.
not_stored() {
  if [ -n "$PERFGATE_DASHBOARD_URL" ] && [ "${PERFGATE_DASHBOARD_URL%/}" = "${PERFGATE_SERVER_URL%/}" ]; then
    echo "The gate result was not submitted, so the dashboard's compare page of this pair shows no stored gate." | pg_summary
  fi
}
[ -n "$PERFGATE_SERVER_URL" ] || {
  pg_log "no server-url: the gate result is not submitted"
  exit 0
}
pg_check_server_url
if [ -z "${PERFGATE_TOKEN:-}" ]; then
  echo "::warning title=perfgate::server-url is set but token is empty (pull requests from forks get no secrets): the gate result was not submitted"
  not_stored
  exit 0
fi
if [ -z "${PERFGATE_RUN_AS:-}" ]; then
  # Without run-as the measured code ran as the runner user, who may read this step's token.
  echo "::warning title=perfgate::the gate result was not submitted: a pull request's token is only used when run-as keeps the measured code away from it"
  not_stored
  exit 0
fi
json="$PERFGATE_ARTIFACTS/perfgate-report.json"
[ -s "$json" ] || {
  pg_log "no JSON report (the gate did not run): nothing to submit"
  exit 0
}
[ "$(head -c 1 "$json")" = "{" ] || pg_die "$json is not the gate's JSON report"

# Who submits and the pull request's ref, added at the top of the report. Only plain names are
# spliced in (no quote, backslash or control character can reach the JSON); anything else is left
# out (the ref) or replaced (the actor).
plain='^[][A-Za-z0-9._/@+:-]{1,200}$'
actor=${GITHUB_ACTOR:-github-actions}
[[ $actor =~ $plain ]] || actor=github-actions
fields="\"submitted_by\": \"$actor\", "
ref=${GITHUB_REF:-}
if [[ $ref =~ $plain ]]; then fields+="\"ref\": \"$ref\", "; fi
body="$PERFGATE_WORK/gate-submit.json"
{
  printf '{%s' "$fields"
  tail -c +2 "$json"
} >"$body"

pg_auth_headers
url="${PERFGATE_SERVER_URL%/}/api/v1/gates"
pg_log "submitting the gate result to $url"
if curl --silent --show-error --fail-with-body --max-time 60 -H @"$PG_HEADERS" \
  --data-binary @"$body" "$url" >&2; then
  echo >&2
  echo "Submitted the gate result to $PERFGATE_SERVER_URL." | pg_summary
else
  echo "::warning title=perfgate::submitting the gate result to $url failed; the verdict stands"
  not_stored
fi
