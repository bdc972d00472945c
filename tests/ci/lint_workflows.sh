#!/usr/bin/env bash
# Lints what GitHub Actions runs: yamllint on the workflows and the composite action, every
# script they call exists and is executable, every local action exists, the scripts parse
# (bash -n) and pass shellcheck, and the Dockerfile's build-context sources exist. Run from anywhere; exits non-zero on the first class of problem.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
status=0
fail() {
  echo "lint: $*" >&2
  status=1
}

yaml_files=(.github/workflows/*.yml ci/action/action.yml)
yamllint -s -c ci/yamllint.yml "${yaml_files[@]}" || fail "yamllint found problems"

for f in "${yaml_files[@]}"; do
  dir=$(dirname "$f")
  # Scripts named by repository path (ci/scripts/x.sh, scripts/setup.sh, tests/ci/y.sh).
  while read -r script; do
    [ -n "$script" ] || continue
    if [ ! -f "$script" ]; then
      fail "$f calls $script, which does not exist"
    elif [ ! -x "$script" ]; then
      fail "$f calls $script, which is not executable"
    fi
  done < <(grep -v '^\s*#' "$f" | grep -oE '(^|[ "])(ci|scripts|tests|bench)/[A-Za-z0-9_./-]+\.sh' |
    sed -E 's#^[ "]##' | sort -u || true)
  # Scripts named relative to the action: "$GITHUB_ACTION_PATH/../scripts/x.sh".
  # shellcheck disable=SC2016  # the literal text $GITHUB_ACTION_PATH is what is searched for
  while read -r rel; do
    [ -n "$rel" ] || continue
    script="$dir/$rel"
    [ -x "$script" ] || fail "$f calls \$GITHUB_ACTION_PATH/$rel: $script is missing or not executable"
  done < <(grep -oE '\$GITHUB_ACTION_PATH/[A-Za-z0-9_./-]+' "$f" | sed 's#^\$GITHUB_ACTION_PATH/##' |
    sort -u || true)
  # Local actions: uses: ./path
  while read -r action; do
    [ -n "$action" ] || continue
    [ -f "$action/action.yml" ] || [ -f "$action/action.yaml" ] ||
      fail "$f uses $action, which has no action.yml"
  done < <(grep -oE 'uses:\s*\./[A-Za-z0-9_./-]+' "$f" | sed -E 's#uses:\s*##' | sort -u || true)
done

# The Dockerfile cannot be built here (no Docker engine): at least every file it copies from the
# build context must exist, and it must install through scripts/setup.sh like the README.
while read -r src; do
  [ -e "$src" ] || fail "Dockerfile copies $src, which does not exist"
done < <(grep -E '^COPY ' Dockerfile | grep -v -- '--from=' | awk '{for (i = 2; i < NF; i++) print $i}')
grep -q 'scripts/setup.sh' Dockerfile || fail "Dockerfile does not install through scripts/setup.sh"
grep -q '^ENTRYPOINT \["perfgate"\]' Dockerfile || fail "Dockerfile's entrypoint is not perfgate"
grep -q '^USER ' Dockerfile || fail "Dockerfile runs as root"

for s in ci/scripts/*.sh; do
  bash -n "$s" || fail "$s does not parse"
  if [ "$(basename "$s")" != lib.sh ] && [ ! -x "$s" ]; then fail "$s is not executable"; fi
done
shopt -s nullglob
if command -v shellcheck >/dev/null; then
  shellcheck -x -P SCRIPTDIR ci/scripts/*.sh tests/ci/*.sh bench/*.sh || fail "shellcheck found problems"
else
  fail "shellcheck is not installed (scripts/setup.sh installs it)"
fi
[ "$status" -eq 0 ] && echo "lint: workflows, action and scripts OK"
exit "$status"
