#!/usr/bin/env bash
# `perfgate` links no LibTorch (so serve, compare and the rest start without loading it) and hands
# `perfgate run` to perfgate-runner beside it (cli/runner_exec.cpp). Checked on the real binaries:
# - perfgate's dynamic section names no LibTorch library; perfgate-runner's does;
# - `perfgate run` through a symlink in another directory still finds the runner beside the real
#   file, keeps its arguments (a bad flag's message and exit 2 are the runner's), and stores a run;
# - a perfgate copied without its runner says which file is missing, and exits 4.
# Usage: runner_split_test.sh /path/to/perfgate
set -uo pipefail
pg=$(realpath "${1:?usage: runner_split_test.sh /path/to/perfgate}")
work=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-split-XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/common/check.sh
source "$(dirname "$0")/../common/check.sh"
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
check "perfgate needs no LibTorch library" bash -c "! grep -q 'libtorch\|libc10' <<<'$(needed "$pg")'"
check "perfgate-runner needs LibTorch" grep -q libtorch <<<"$(needed "$(dirname "$pg")/perfgate-runner")"
check "perfgate --help lists run" grep -q '^  run ' <<<"$("$pg" --help)"

mkdir -p "$work/bin"
ln -s "$pg" "$work/bin/perfgate"
init_repo "$work/repo"
git -C "$work/repo" commit -q --allow-empty -m one
out=$("$work/bin/perfgate" run --model tiny --device cpu --batch-sizes 0 --db "$work/r.db" 2>&1)
rc=$?
check "a bad flag of run: the runner's exit 2 (got $rc)" test "$rc" -eq 2
check "... and its message names the flag" grep -q -- '--batch-sizes' <<<"$out"
"$work/bin/perfgate" run --model tiny --device cpu --batch-sizes 1 --seq-lens 4 --gen-tokens 2 \
  --warmup 0 --reps 2 --repo "$work/repo" --db "$work/r.db" --quiet
check "run through a symlink stores a run" grep -q complete <<<"$("$pg" runs --db "$work/r.db")"

cp "$pg" "$work/alone"
out=$("$work/alone" run --model tiny --device cpu --db "$work/x.db" 2>&1)
rc=$?
check "without its runner: exit 4 (got $rc)" test "$rc" -eq 4
check "... naming the missing file" grep -q "$work/perfgate-runner" <<<"$out"
echo "$out"
# The action's install step refuses such a perfgate at once, rather than at the first run.
out=$(PERFGATE_BIN="$work/alone" "$(dirname "$0")/../../ci/scripts/install.sh" 2>&1)
rc=$?
check "the action's install.sh refuses a perfgate without its runner (exit $rc)" test "$rc" -ne 0
check "... naming it" grep -q "no perfgate-runner beside it" <<<"$out"
PERFGATE_BIN="$pg" "$(dirname "$0")/../../ci/scripts/install.sh" > /dev/null 2>&1
check "... and takes perfgate with its runner" test "$?" -eq 0
echo "$failures failed"
[ "$failures" -eq 0 ]
