#!/usr/bin/env bash
# The cache of prepared artifacts (an exported model package, say); sourced by lib.sh, never run.
#
# Exporting and compiling a model takes minutes per side, and most pull requests do not touch the
# model. With PERFGATE_PREPARE_OUTPUTS set, what `prepare` wrote there is kept in a
# content-addressed store on the runner, keyed by everything that went into it:
#   the prepare command, the outputs' paths, the values of the pass-env variables, the pinned
#   perfgate (version and the trusted exporters of PERFGATE_HARNESS_DIR), the machine (CPU
#   architecture, GPUs and driver), and the content of the commit: the git blobs of the paths
#   PERFGATE_PREPARE_INPUTS names (git pathspecs, e.g. "model.py export.py"), or, when it is
#   empty, the commit's whole tree.
# The key is computed by the trusted side from the trusted repository's objects, never from a
# file measured code could rewrite. Only trusted code fills the cache: a push to main, and a pull
# request's merge-base, prepared before any of the head's code has run; the head only reads it.
# A head whose inputs are those of a cached entry gets that entry's outputs instead of running
# `prepare`: the two sides of the gate then measure the very same package, so an export's luck
# (tuning choices, docs/OWN_MODEL_AOTI.md) cannot decide the verdict.
#
#   PERFGATE_PREPARE_OUTPUTS   paths (in the checkout) that prepare writes; empty: no cache
#   PERFGATE_PREPARE_INPUTS    git pathspecs whose content decides them; empty: the whole commit
#   PERFGATE_PREPARE_CACHE     the cache's directory (default: perfgate-prepare-cache beside the
#                              store); private to the runner's user
#   PERFGATE_PREPARE_CACHE_ENTRIES  most entries kept, least recently used removed (default 8)

# The key of the artifact that prepare makes of commit SHA of the trusted repository REPO.
pg_prepare_key() {
  local repo=$1 sha=$2 var py=${PERFGATE_PYTHON:-${PYTHON:-python3}}
  {
    echo "perfgate prepare cache 1"
    echo "prepare: $PERFGATE_PREPARE"
    echo "outputs: $PERFGATE_PREPARE_OUTPUTS"
    for var in $PERFGATE_PASS_ENV; do echo "env $var=${!var-(unset)}"; done
    echo "perfgate: $("$(pg_trusted_bin)" --version 2>&1)"
    if [ -n "${PERFGATE_HARNESS_DIR:-}" ] && [ -d "$PERFGATE_HARNESS_DIR" ]; then
      (cd "$PERFGATE_HARNESS_DIR" && find . -name '*.py' -type f | LC_ALL=C sort | xargs -r sha256sum)
    fi
    # The torch that exports (the runner's Python; read from its metadata, without importing it).
    echo "torch: $("$py" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>&1 || true)"
    echo "machine: $(uname -m)"
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
    fi
    if [ -z "$PERFGATE_PREPARE_INPUTS" ]; then
      echo "tree: $(git -C "$repo" rev-parse "$sha^{tree}")"
    else
      # shellcheck disable=SC2086  # pathspecs, word-split on purpose
      git -C "$repo" ls-tree -r --full-tree "$sha" -- $PERFGATE_PREPARE_INPUTS
    fi
  } | sha256sum | cut -c1-64
}

pg_prepare_cache_dir() { echo "${PERFGATE_PREPARE_CACHE:-$(dirname "$PERFGATE_DB")/perfgate-prepare-cache}"; }

# Prepares the measured checkout SRC of commit SHA: from the cache when an entry has its key,
# else by running prepare, and then (WRITE=write, trusted code only) keeping the outputs.
# Prints a line for the job summary when the outputs came from the cache.
pg_prepare_cached() {
  local src=$1 sha=$2 write=$3 repo cache key entry
  if [ -z "$PERFGATE_PREPARE" ] || [ -z "$PERFGATE_PREPARE_OUTPUTS" ]; then
    pg_prepare "$src"
    return
  fi
  repo=$(pg_checkout)
  cache=$(pg_prepare_cache_dir)
  key=$(pg_prepare_key "$repo" "$sha")
  entry="$cache/$key"
  if [ -f "$entry/outputs.tar" ]; then
    # The outputs land in the checkout as the sandbox user's files; tar never writes outside it
    # (no absolute names, no ..) and the archive was written by the trusted side.
    pg_as_sandbox_user "$src" tar -xf - --no-same-owner --no-same-permissions <"$entry/outputs.tar" ||
      pg_die "could not restore the prepared outputs of $entry into $src"
    touch "$entry/outputs.tar"
    pg_log "prepare of ${sha:0:12}: its inputs are those of $(cat "$entry/made-from"), outputs reused from $entry"
    echo "prepare of ${sha:0:12} skipped: its inputs are those of $(cat "$entry/made-from"), so it measures the same outputs"
    return 0
  fi
  pg_prepare "$src" || return
  [ "$write" = write ] || return 0
  pg_prepare_cache_store "$src" "$sha" "$cache" "$key"
}

# Keeps the outputs that prepare wrote in SRC (commit SHA) as the cache entry KEY.
pg_prepare_cache_store() {
  local src=$1 sha=$2 cache=$3 key=$4 tmp path
  (umask 077 && mkdir -p "$cache")
  tmp=$(mktemp -d "$cache/.new.XXXXXX")
  # Read as the sandbox user, so it reaches nothing that user could not; links are kept as links.
  # shellcheck disable=SC2086  # the outputs' paths, word-split on purpose
  for path in $PERFGATE_PREPARE_OUTPUTS; do
    case $path in /* | *..*) pg_die "input 'prepare-outputs': '$path' must be a path inside the checkout" ;; esac
  done
  # shellcheck disable=SC2086
  if ! pg_as_sandbox_user "$src" tar -cf - -- $PERFGATE_PREPARE_OUTPUTS >"$tmp/outputs.tar"; then
    rm -rf "$tmp"
    pg_log "prepare's outputs ($PERFGATE_PREPARE_OUTPUTS) are not all in $src: not cached"
    return 0
  fi
  echo "${sha:0:12} ($(date -u +%Y-%m-%dT%H:%M:%SZ))" >"$tmp/made-from"
  if mv -T "$tmp" "$cache/$key" 2>/dev/null; then
    pg_log "prepare of ${sha:0:12}: outputs kept in $cache/$key"
  else
    rm -rf "$tmp" # another job kept the same entry first
  fi
  pg_prepare_cache_trim "$cache"
}

# Removes the least recently used entries beyond PERFGATE_PREPARE_CACHE_ENTRIES.
pg_prepare_cache_trim() {
  local cache=$1 keep=${PERFGATE_PREPARE_CACHE_ENTRIES:-8}
  find "$cache" -mindepth 2 -maxdepth 2 -name outputs.tar -printf '%T@ %h\n' | sort -rn |
    tail -n +"$((keep + 1))" | cut -d' ' -f2- | while read -r old; do rm -rf "$old"; done
}
