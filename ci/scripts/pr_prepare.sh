#!/usr/bin/env bash
# Pull request, step 1 (after install.sh): find the merge-base of the PR head and the main branch,
# clone both commits into the job's sandbox (owned by PERFGATE_RUN_AS), take the sweep from the
# merge-base (a PR cannot edit what it is measured on), and run the measured code's prepare and
# build commands in each clone as the sandbox user.
# Outputs: head-sha, base-sha, main-ref, reuse-base.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
bin=$(pg_trusted_bin)

repo=$(pg_checkout)
head_sha=$(git -C "$repo" rev-parse HEAD)
main_ref=$(pg_main_ref "$repo")
base_sha=$(git -C "$repo" merge-base HEAD "$main_ref") ||
  pg_die "HEAD and $main_ref have no merge-base (shallow clone? use fetch-depth: 0)"
pg_log "head $head_sha, merge-base with $main_ref: $base_sha"
[ "$head_sha" != "$base_sha" ] || pg_log "head is the merge-base itself: both sides are one commit"

rm -f "$(pg_state_file)"
mkdir -p "$PERFGATE_WORK"
if [ -z "$PERFGATE_RUN_AS" ]; then
  echo "::warning title=perfgate::run-as is empty: the pull request's code runs as the runner's own user (docs/OPERATORS.md)"
fi
pg_sandbox_create
pg_state_set PG_SANDBOX "$PG_SANDBOX"
base_src=$(pg_sandbox_clone "$repo" "$base_sha" base)
head_src=$(pg_sandbox_clone "$repo" "$head_sha" head)

# The sweep: the merge-base's file, copied to the trusted work directory before any measured code
# ran. Only a PR that adopts the gate (no sweep at its base) is measured with its own.
[ -n "${PERFGATE_SWEEP:-}" ] || pg_die "PERFGATE_SWEEP (input 'sweep') is not set"
sweep="$PERFGATE_WORK/sweep.toml"
if git -C "$repo" cat-file -e "$base_sha:$PERFGATE_SWEEP" 2>/dev/null; then
  git -C "$repo" show "$base_sha:$PERFGATE_SWEEP" >"$sweep"
  if ! git -C "$repo" diff --quiet "$base_sha" "$head_sha" -- "$PERFGATE_SWEEP"; then
    echo "::notice title=perfgate::this pull request changes $PERFGATE_SWEEP; the gate measures with the merge-base's version"
  fi
elif git -C "$repo" cat-file -e "$head_sha:$PERFGATE_SWEEP" 2>/dev/null; then
  git -C "$repo" show "$head_sha:$PERFGATE_SWEEP" >"$sweep"
  echo "::warning title=perfgate::$PERFGATE_SWEEP is not in the merge-base: measuring with the head's"
else
  pg_die "input 'sweep': $PERFGATE_SWEEP is in neither the merge-base nor the head"
fi

reused=false
base_bin=$bin
if pg_bool "$PERFGATE_REUSE_BASE"; then
  if pg_has_runs "$bin" "$PERFGATE_DB" "$base_sha"; then
    reused=true
    pg_log "reusing stored runs of $base_sha from $PERFGATE_DB: the base is not rebuilt or rerun"
  else
    pg_log "PERFGATE_REUSE_BASE=true but $PERFGATE_DB holds no run of $base_sha: benchmarking it"
  fi
fi
# The base first, before any code of the head has run: its prepared outputs are the product of
# merged code alone, so they may fill the cache of prepared artifacts (prepare_cache.sh) that the
# head, and later jobs, read.
base_note="" prepare_notes=""
if [ "$reused" = false ]; then
  # A merge-base that cannot be prepared or built (typically: the PR that adopts perfgate) leaves
  # the gate without a baseline: inconclusive, said so, not a broken job.
  if ! note=$(pg_prepare_cached "$base_src" "$base_sha" write); then
    base_bin=""
    base_note="The merge-base ${base_sha:0:12} could not be prepared ($PERFGATE_PREPARE failed), so only the head was benchmarked."
  elif [ -n "$PERFGATE_BUILD_COMMAND" ] && ! base_bin=$(pg_build "$base_src" "$PG_SANDBOX/build-base"); then
    base_bin=""
    base_note="The merge-base ${base_sha:0:12} could not be built, so only the head was benchmarked."
  fi
  prepare_notes+=${note:+$note. }
fi

# The base's tuning choices (docs/OWN_MODEL_AOTI.md, "Exports that do not decide the verdict"):
# the head's export replays them, so that a tuned export cannot decide the verdict. Copied before
# any of the head's code has run, into a folder the head's container sees read-only.
PG_TUNING_FROM=""
if [ -n "$base_bin" ] && [ "$reused" = false ]; then
  PG_TUNING_FROM=$(pg_base_tuning "$base_src")
  if [ -n "$PG_TUNING_FROM" ]; then
    n=$(find "$PG_TUNING_FROM" -type f | wc -l)
    prepare_notes+="The head's prepare was given the merge-base's tuning choices to replay ($n file$([ "$n" -eq 1 ] || echo s)). "
  fi
fi
pg_state_set PG_TUNING_FROM "$PG_TUNING_FROM"

# The export A/A check (export_aa.sh), opt-in: the merge-base prepared again as the head will be.
if pg_bool "${PERFGATE_EXPORT_AA:-false}"; then
  if [ -n "$base_bin" ] && [ "$reused" = false ]; then
    if ! note=$(pg_export_aa "$repo" "$base_sha" "$base_src"); then
      echo "::error title=perfgate::export A/A failed: ${note:-see the log}"
      exit 1
    fi
    prepare_notes+="$note. "
  else
    pg_log "export A/A: skipped, the merge-base was not prepared in this job"
  fi
fi

# The head: when it cannot be prepared or built the job fails, as a broken build should.
note=$(pg_prepare_cached "$head_src" "$head_sha" read)
prepare_notes+=${note:+$note. }
head_bin=$bin
if [ -n "$PERFGATE_BUILD_COMMAND" ]; then head_bin=$(pg_build "$head_src" "$PG_SANDBOX/build-head"); fi
if [ -n "$base_note" ]; then echo "::warning title=perfgate::$base_note"; fi

pg_state_set REPO "$repo"
pg_state_set HEAD_SHA "$head_sha"
pg_state_set BASE_SHA "$base_sha"
pg_state_set MAIN_REF "$main_ref"
pg_state_set BASE_SRC "$base_src"
pg_state_set HEAD_SRC "$head_src"
pg_state_set HEAD_BIN "$head_bin"
pg_state_set BASE_BIN "$base_bin"
pg_state_set SWEEP "$sweep"
pg_state_set REUSED "$reused"
pg_state_set BASE_NOTE "$base_note"
pg_state_set PREPARE_NOTES "$prepare_notes"

pg_output head-sha "$head_sha"
pg_output base-sha "$base_sha"
pg_output main-ref "$main_ref"
pg_output reuse-base "$reused"
