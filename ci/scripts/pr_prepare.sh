#!/usr/bin/env bash
# Pull request, step 1: find the merge-base of the PR head and the main branch, check it out in a
# separate worktree, and build perfgate for both sides. Run from the PR head checkout.
# Outputs: head-sha, base-sha, main-ref, reuse-base.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

repo=$(git rev-parse --show-toplevel)
head_sha=$(git -C "$repo" rev-parse HEAD)
main_ref=$(pg_main_ref "$repo")
base_sha=$(git -C "$repo" merge-base HEAD "$main_ref") ||
  pg_die "HEAD and $main_ref have no merge-base (shallow clone? use fetch-depth: 0)"
pg_log "head $head_sha, merge-base with $main_ref: $base_sha"
[ "$head_sha" != "$base_sha" ] || pg_log "head is the merge-base itself: both sides are one commit"

rm -f "$(pg_state_file)"
mkdir -p "$PERFGATE_WORK"
base_src="$PERFGATE_WORK/base-src"
if [ -e "$base_src" ]; then git -C "$repo" worktree remove --force "$base_src" 2>/dev/null || rm -rf "$base_src"; fi
git -C "$repo" worktree prune
git -C "$repo" worktree add --detach "$base_src" "$base_sha" >&2

pg_default_python "$repo"
head_bin=$(pg_build "$repo" "$PERFGATE_WORK/build-head")

reused=false
base_bin=""
if pg_bool "$PERFGATE_REUSE_BASE"; then
  if pg_has_runs "$head_bin" "$PERFGATE_DB" "$base_sha"; then
    reused=true
    pg_log "reusing stored runs of $base_sha from $PERFGATE_DB: the base is not rebuilt or rerun"
  else
    pg_log "PERFGATE_REUSE_BASE=true but $PERFGATE_DB holds no run of $base_sha: benchmarking it"
  fi
fi
base_note=""
if [ "$reused" = false ]; then
  # A merge-base that cannot be built (typically: the PR that adopts perfgate, whose base has no
  # build for it) leaves the gate without a baseline: inconclusive, said so, not a broken job.
  if ! base_bin=$(pg_build "$base_src" "$PERFGATE_WORK/build-base"); then
    base_bin=""
    base_note="The merge-base ${base_sha:0:12} could not be built, so only the head was benchmarked."
    echo "::warning title=perfgate::$base_note"
  fi
fi

pg_state_set REPO "$repo"
pg_state_set HEAD_SHA "$head_sha"
pg_state_set BASE_SHA "$base_sha"
pg_state_set MAIN_REF "$main_ref"
pg_state_set BASE_SRC "$base_src"
pg_state_set HEAD_BIN "$head_bin"
pg_state_set BASE_BIN "$base_bin"
pg_state_set REUSED "$reused"
pg_state_set BASE_NOTE "$base_note"

pg_output head-sha "$head_sha"
pg_output base-sha "$base_sha"
pg_output main-ref "$main_ref"
pg_output reuse-base "$reused"
