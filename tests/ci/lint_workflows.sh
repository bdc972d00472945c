#!/usr/bin/env bash
# Lints everything GitHub Actions and the image run, with the tools a maintainer adopting perfgate
# would run, and fails (never skips) when one is missing:
#   actionlint  every workflow (the self-hosted runner labels come from .github/actionlint.yaml),
#               and the copy-paste workflow of docs/OPERATORS.md
#   zizmor      the same plus every composite action, at its default persona: no findings; the
#               only exceptions are inline `# zizmor: ignore[...]` comments that give the reason
#   hadolint    the Dockerfile (.hadolint.yaml lists the ignored rules and why)
#   ShellCheck  every shell script of the repository
#   yamllint    workflows and actions
# and checks what none of them does: every `uses:` (workflows, actions, docs, examples) is a local
# path or pinned by a full commit SHA, every script a workflow or action calls exists and is
# executable, every file the Dockerfile copies exists; and perfgate's workflow policy
# (tests/ci/workflow_policy.py: permissions, concurrency, the fork approval environment and
# head-repository step of the gate, no secrets or self-hosted runners for pull_request, ...) on
# every workflow, the example's and the copy-paste workflows of README.md and docs/OPERATORS.md,
# which must be examples/own-model/.github/workflows/perfgate.yml byte for byte. Its own test,
# tests/ci/workflow_policy_test.py, breaks each rule and checks that it is caught.
# Tools come from PATH or the repository's .venv (scripts/setup.sh installs them).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"
status=0
fail() {
  echo "lint: $*" >&2
  status=1
}
for tool in actionlint zizmor hadolint shellcheck yamllint; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/setup.sh installs it)"
done
python3 -c 'import yaml' 2>/dev/null || fail "python3 has no PyYAML (requirements-lint.txt)"
[ "$status" -eq 0 ] || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-lint-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

shopt -s nullglob globstar
prune=(-path ./build -prune -o -path './build-*' -prune -o -path ./.git -prune -o -path ./.venv -prune
  -o -path './.stage-*' -prune -o -path ./.device-debs -prune -o -path '*/node_modules' -prune)
mapfile -t workflows < <(find . "${prune[@]}" -o -type f -path '*/.github/workflows/*.yml' -print | sort)
mapfile -t actions < <(find . "${prune[@]}" -o -type f \( -name action.yml -o -name action.yaml \) -print | sort)
mapfile -t scripts < <(find . "${prune[@]}" -o -type f -name '*.sh' -print | sort)

# The copy-paste workflow of docs/OPERATORS.md: the ```yaml block after the marker line.
doc_workflow="$tmp/.github/workflows/operators-example.yml"
mkdir -p "$(dirname "$doc_workflow")"
cp .github/actionlint.yaml "$tmp/.github/"
awk '/<!-- lint: copy-paste workflow -->/ { armed = 1; next }
     armed && /^```yaml/ { inside = 1; next }
     inside && /^```/ { exit }
     inside { print }' docs/OPERATORS.md >"$doc_workflow"
[ -s "$doc_workflow" ] || fail "docs/OPERATORS.md has no \`\`\`yaml block after '<!-- lint: copy-paste workflow -->'"

yamllint -s -c ci/yamllint.yml "${workflows[@]}" "${actions[@]}" || fail "yamllint found problems"
actionlint -config-file .github/actionlint.yaml -shellcheck= "${workflows[@]}" || fail "actionlint found problems in the workflows"
(cd "$tmp" && actionlint -config-file .github/actionlint.yaml -shellcheck= .github/workflows/operators-example.yml) ||
  fail "actionlint found problems in docs/OPERATORS.md's workflow"
zizmor --offline --no-progress "${workflows[@]}" "${actions[@]}" "$doc_workflow" ||
  fail "zizmor found problems (default persona; fix, or ignore inline with the reason)"
hadolint Dockerfile || fail "hadolint found problems in the Dockerfile"
shellcheck -x -P SCRIPTDIR "${scripts[@]}" || fail "shellcheck found problems"

# uses: pinned by commit SHA everywhere users copy from.
while IFS= read -r hit; do
  ref=${hit#*uses:}
  ref=${ref%%#*}
  ref=$(echo "$ref" | tr -d " \"'")
  case $ref in
    ./* | docker://*@sha256:*) ;;
    *@*) [[ ${ref##*@} =~ ^[0-9a-f]{40}$ ]] || fail "not pinned by commit SHA: $hit" ;;
    *) fail "no ref at all: $hit" ;;
  esac
done < <(grep -rnE '^\s*(-\s+)?uses:\s*[^ ]' "${workflows[@]}" "${actions[@]}" README.md docs/*.md examples/ \
  2>/dev/null || true)

for f in "${workflows[@]}" "${actions[@]}"; do
  dir=$(dirname "$f")
  # Scripts named by repository path (ci/scripts/x.sh, scripts/setup.sh, tests/ci/y.sh,
  # packaging/build_tarball.sh).
  while read -r script; do
    [ -n "$script" ] || continue
    script=${script#trusted/}
    if [ ! -f "$script" ]; then
      fail "$f calls $script, which does not exist"
    elif [ ! -x "$script" ]; then
      fail "$f calls $script, which is not executable"
    fi
  done < <(grep -v '^\s*#' "$f" | grep -oE '(^|[ "])(trusted/)?(ci|scripts|tests|bench|packaging)/[A-Za-z0-9_./-]+\.sh' |
    sed -E 's#^[ "]##' | sort -u || true)
  # Scripts named relative to the action: "$GITHUB_ACTION_PATH/../scripts/x.sh".
  # shellcheck disable=SC2016  # the literal text $GITHUB_ACTION_PATH is what is searched for
  while read -r rel; do
    [ -n "$rel" ] || continue
    script="$dir/$rel"
    [ -x "$script" ] || fail "$f calls \$GITHUB_ACTION_PATH/$rel: $script is missing or not executable"
  done < <(grep -oE '\$GITHUB_ACTION_PATH/[A-Za-z0-9_./-]+' "$f" | sed 's#^\$GITHUB_ACTION_PATH/##' |
    sort -u || true)
  # Local actions: uses: ./path (./trusted/... is main's own checkout of this repository).
  while read -r action; do
    [ -n "$action" ] || continue
    action=${action#./trusted/}
    [ -f "$action/action.yml" ] || [ -f "$action/action.yaml" ] ||
      fail "$f uses $action, which has no action.yml"
  done < <(grep -oE 'uses:\s*\./[A-Za-z0-9_./-]+' "$f" | sed -E 's#uses:\s*##' | sort -u || true)
done

# Every file the Dockerfile copies from the build context exists.
while read -r src; do
  [ -e "$src" ] || fail "Dockerfile copies $src, which does not exist"
done < <(grep -E '^COPY ' Dockerfile | grep -v -- '--from=' | awk '{for (i = 2; i < NF; i++) print $i}')

# perfgate's policy on every workflow it ships, the docs' copies included, and the policy's own test.
python3 tests/ci/workflow_policy.py "${workflows[@]}" ||
  fail "workflows break perfgate's workflow policy (tests/ci/workflow_policy.py says why each rule holds)"
python3 tests/ci/workflow_policy_test.py >"$tmp/policy_test.log" 2>&1 ||
  { cat "$tmp/policy_test.log" >&2; fail "tests/ci/workflow_policy_test.py failed"; }

for s in ci/scripts/*.sh; do
  case $(basename "$s") in lib.sh | sandbox.sh) ;; *) [ -x "$s" ] || fail "$s is not executable" ;; esac
done
[ "$status" -eq 0 ] && echo "lint: ${#workflows[@]} workflows, ${#actions[@]} actions, ${#scripts[@]} scripts, the Dockerfile, the docs' workflows and the workflow policy OK"
exit "$status"
