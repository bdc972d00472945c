#!/usr/bin/env bash
# The sandbox for measured (untrusted) code; sourced by lib.sh, never run.
#
# One directory per job, owned by PERFGATE_RUN_AS, holds clones of the commits to measure, their
# builds, caches (ccache, HOME, TMPDIR) and the job's scratch database. Commands run there with a
# clean environment: only PATH, the variables named in PERFGATE_PASS_ENV and the few set here.
# The user is switched with sudo (a runner user with the sudoers rule of docs/OPERATORS.md), or
# with setpriv when the job itself runs as root (a container).
#
#   PG_SANDBOX   the directory (set by pg_sandbox_create, kept in the job state)

# Runs CMD... in DIR as the sandbox user.
pg_untrusted() {
  local dir=$1
  shift
  local -a envs=("PATH=$PATH" "LANG=C.UTF-8" "HOME=$PG_SANDBOX/home" "TMPDIR=$PG_SANDBOX/tmp"
    "CCACHE_DIR=$PG_SANDBOX/ccache" "XDG_CACHE_HOME=$PG_SANDBOX/cache")
  local var
  for var in $PERFGATE_PASS_ENV PERFGATE_BUILD_DIR PERFGATE_PYTHON CUDA_VISIBLE_DEVICES \
    NVIDIA_VISIBLE_DEVICES; do
    [[ $var =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || pg_die "pass-env: '$var' is not a variable name"
    case $var in *TOKEN* | GITHUB_* | ACTIONS_*) pg_die "pass-env: $var is never passed to measured code" ;; esac
    if [ -n "${!var+x}" ]; then envs+=("$var=${!var}"); fi
  done
  # shellcheck disable=SC2016  # $0 and $@ expand in the sandbox's shell
  local -a run=(env -i "${envs[@]}" bash -c 'cd "$0" && umask 022 && exec "$@"' "$dir" "$@")
  if [ -z "$PERFGATE_RUN_AS" ]; then
    "${run[@]}"
  elif [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid="$PERFGATE_RUN_AS" --regid="$(id -g "$PERFGATE_RUN_AS")" --init-groups \
      --inh-caps=-all -- "${run[@]}"
  else
    sudo -n -u "$PERFGATE_RUN_AS" -- "${run[@]}"
  fi
}

# Creates the job's sandbox directory, owned by the sandbox user, readable by the trusted steps.
pg_sandbox_create() {
  if [ -n "$PERFGATE_RUN_AS" ]; then
    id "$PERFGATE_RUN_AS" >/dev/null 2>&1 || pg_die "run-as: no user '$PERFGATE_RUN_AS' (docs/OPERATORS.md: Runner set-up)"
    [ "$PERFGATE_RUN_AS" != "$(id -un)" ] || pg_die "run-as: '$PERFGATE_RUN_AS' is the runner's own user"
  fi
  PG_SANDBOX=/
  PG_SANDBOX=$(pg_untrusted / mktemp -d "${PERFGATE_SANDBOX_PARENT:-/tmp}/perfgate-sandbox.XXXXXX") ||
    pg_die "could not create a sandbox directory as ${PERFGATE_RUN_AS:-$(id -un)} (sudoers rule?)"
  pg_untrusted "$PG_SANDBOX" bash -c 'chmod 755 . && mkdir -p home tmp ccache cache'
  # The checkout to clone belongs to the runner's user: git refuses another user's repository
  # unless the (sandbox's own, global) config says it is safe.
  pg_untrusted "$PG_SANDBOX" git config --global --add safe.directory '*'
  export PG_SANDBOX
}

# Clones commit SHA of the repository REPO into the sandbox as DIR (a full git checkout, so that
# `perfgate run --repo` tags the run with it); prints the clone's path.
pg_sandbox_clone() {
  local repo=$1 sha=$2 name=$3 dest="$PG_SANDBOX/$3"
  pg_untrusted "$PG_SANDBOX" git clone -q --no-checkout --no-hardlinks \
    "$repo" "$name" >&2
  pg_untrusted "$dest" git -c advice.detachedHead=false checkout -q --detach "$sha" >&2
  echo "$dest"
}

# Ends every process the sandbox user left behind and removes what it wrote (job end, always).
pg_sandbox_destroy() {
  [ -n "${PG_SANDBOX:-}" ] && [ -d "$PG_SANDBOX" ] || return 0
  if [ -n "$PERFGATE_RUN_AS" ]; then
    # kill -1 as that user reaches exactly the processes it owns (a daemon a PR left behind).
    pg_untrusted / kill -KILL -1 2>/dev/null || true
    pg_untrusted / find /tmp /var/tmp /dev/shm -mindepth 1 -maxdepth 1 -user "$PERFGATE_RUN_AS" \
      -exec rm -rf {} + 2>/dev/null || true
  fi
  pg_untrusted / rm -rf "$PG_SANDBOX" || pg_log "could not remove $PG_SANDBOX"
}

# Builds the measured checkout SRC into the sandbox directory OUT with PERFGATE_BUILD_COMMAND;
# prints the perfgate binary it left. (The trusted side never runs git in a sandbox clone: its
# .git/config belongs to measured code, and options like core.fsmonitor run commands.)
pg_build() {
  local src=$1 out=$2
  pg_untrusted "$PG_SANDBOX" mkdir -p "$out"
  pg_log "building $src in $out (as ${PERFGATE_RUN_AS:-$(id -un)})"
  PERFGATE_BUILD_DIR="$out" pg_untrusted "$src" bash -c "$PERFGATE_BUILD_COMMAND" >&2
  [ -x "$out/perfgate" ] || pg_die "build command '$PERFGATE_BUILD_COMMAND' left no executable $out/perfgate"
  echo "$out/perfgate"
}

# Runs PERFGATE_PREPARE (builds/exports the model artifact) in the measured checkout SRC.
pg_prepare() {
  local src=$1
  [ -n "$PERFGATE_PREPARE" ] || return 0
  pg_log "prepare in $src: $PERFGATE_PREPARE"
  pg_untrusted "$src" bash -c "$PERFGATE_PREPARE" >&2
}

# One benchmark run of the sweep: binary, measured checkout (tags the run; artifact paths in the
# sweep resolve against it), database in the sandbox.
pg_bench() {
  local bin=$1 repo=$2 db=$3
  local -a extra=()
  # shellcheck disable=SC2206  # word splitting of the extra arguments is the point
  [ -n "$PERFGATE_RUN_ARGS" ] && extra=($PERFGATE_RUN_ARGS)
  shift 3
  # The trusted sweep, written afresh before every run: measured code cannot edit it for later runs.
  pg_untrusted "$PG_SANDBOX" bash -c 'cat >sweep.toml' <"$SWEEP"
  pg_untrusted "$repo" "$bin" run --config "$PG_SANDBOX/sweep.toml" --repo "$repo" --db "$db" \
    "${extra[@]}" "$@"
}
