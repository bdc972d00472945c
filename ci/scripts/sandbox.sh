#!/usr/bin/env bash
# The sandbox for measured (untrusted) code; sourced by lib.sh, never run.
#
# One directory per job, owned by PERFGATE_RUN_AS, holds clones of the commits to measure, their
# builds, caches (ccache, HOME, TMPDIR) and the benchmarks' scratch files. Two walls around
# every command of measured code:
#   1. PERFGATE_SANDBOX=bwrap (the default): a fresh bubblewrap container per command, with its
#      own PID, IPC and mount namespaces. The whole file system is read-only except the job's
#      directory (the user's home too: tools installed there, a venv say, still run); /tmp,
#      /var/tmp, /dev/shm, /run/lock and /run/user are empty tmpfs that vanish with the command;
#      /dev holds only the standard nodes and the GPU's.
#      When the command ends, every process it started ends with it (a daemon, a double fork,
#      setsid), and nothing it wrote outside the job's directory exists: no crontab or at job
#      (their spools are read-only, and no setuid or setgid program gains privileges), no file
#      in a shared temporary directory.
#   2. PERFGATE_RUN_AS: a user that owns nothing persistent and never sees a token, switched to
#      with sudo (a runner user with the sudoers rule of docs/OPERATORS.md), or with setpriv when
#      the job itself runs as root (a container).
# PERFGATE_SANDBOX=none drops the first wall (for a runner where unprivileged user namespaces
# are off); the job says so in a warning. Measured code sees a clean environment: only PATH, the
# variables named in PERFGATE_PASS_ENV and the few set here.
#
#   PG_SANDBOX   the directory (set by pg_sandbox_create, kept in the job state)
#
# A job measures two sides, the merge-base and the head, each a clone in the job's directory:
# $PG_SANDBOX/base and $PG_SANDBOX/head (or main, for a push). In the container a side's command
# can write only its own clone, its build directory (build-SIDE) and its own state (side-SIDE:
# HOME, TMPDIR, the compiler and Python caches, its results and scratch database); the other
# side is read-only. So the head's code cannot edit the base's model, plant a module in the
# base's HOME or an object in its compiler cache, and make the base slower to hide its own
# regression. (With PERFGATE_SANDBOX=none both sides run as one user with no wall between them.)

# Runs CMD... in DIR as the sandbox user, with the clean environment but no container: the
# trusted side's own chores in the job's directory (create it, read a result out, remove it).
pg_as_sandbox_user() { pg_as_side_user "" "$@"; }

# Runs CMD... in DIR as the sandbox user with SIDE's environment (HOME, caches), no container.
pg_as_side_user() {
  local side=$1 dir=$2
  shift 2
  pg_sandbox_env "$side"
  # shellcheck disable=SC2016  # $0 and $@ expand in the sandbox's shell
  pg_switch_user env -i "${PG_SANDBOX_ENV[@]}" bash -c 'cd "$0" && umask 022 && exec "$@"' "$dir" "$@"
}

# Runs CMD... as PERFGATE_RUN_AS (or the current user when it is empty).
pg_switch_user() {
  if [ -z "$PERFGATE_RUN_AS" ]; then
    "$@"
  elif [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid="$PERFGATE_RUN_AS" --regid="$(id -g "$PERFGATE_RUN_AS")" --init-groups \
      --inh-caps=-all -- "$@"
  else
    sudo -n -u "$PERFGATE_RUN_AS" -- "$@"
  fi
}

# The side (base, head, main) that a path in the job's directory belongs to: its clone, its build
# directory or its state. Empty for anything else (the job's own set-up).
pg_sandbox_side() {
  local rel=${1#"$PG_SANDBOX"/}
  [ "$rel" != "$1" ] || return 0
  rel=${rel%%/*}
  rel=${rel#build-}
  rel=${rel#side-}
  case $rel in base | head | main | again) echo "$rel" ;; esac
}

# The writable state of SIDE (or of the job's set-up, for an empty SIDE).
pg_sandbox_state() { echo "$PG_SANDBOX${1:+/side-$1}"; }

# Does SIDE's export replay the merge-base's tuning choices (PG_TUNING_FROM)?
pg_replays_tuning() { [ -n "${PG_TUNING_FROM:-}" ] && { [ "$1" = head ] || [ "$1" = again ]; }; }

# The environment measured code of SIDE gets (PG_SANDBOX_ENV, an array).
pg_sandbox_env() {
  local state
  state=$(pg_sandbox_state "${1:-}")
  PG_SANDBOX_ENV=("PATH=$PATH" "LANG=C.UTF-8" "HOME=$state/home" "TMPDIR=$state/tmp"
    "CCACHE_DIR=$state/ccache" "XDG_CACHE_HOME=$state/cache")
  # The head's export replays the base's tuning choices (pg_base_tuning): nothing of the head wrote
  # them. So does the base's second export of the export A/A check (export_aa.sh).
  if pg_replays_tuning "${1:-}"; then
    PG_SANDBOX_ENV+=("PERFGATE_TUNING_FROM=$PG_TUNING_FROM")
  fi
  local var
  # PERFGATE_PLACEMENT_SEED: perfgate ab's seed for the worker's memory placement (docs/AB.md).
  for var in $PERFGATE_PASS_ENV PERFGATE_BUILD_DIR PERFGATE_PYTHON PERFGATE_PLACEMENT_SEED \
    CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES; do
    [[ $var =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || pg_die "pass-env: '$var' is not a variable name"
    case $var in *TOKEN* | GITHUB_* | ACTIONS_*) pg_die "pass-env: $var is never passed to measured code" ;; esac
    if [ -n "${!var+x}" ]; then PG_SANDBOX_ENV+=("$var=${!var}"); fi
  done
  # The trusted timing harness first (install.sh), before any PYTHONPATH pass-env names; its
  # harness_preload/sitecustomize.py loads it before a benchmark's own folder joins sys.path, so
  # a perfgate_bench.py the pull request puts beside its benchmark is never imported.
  if [ -n "${PERFGATE_HARNESS_DIR:-}" ]; then
    local pythonpath=$PERFGATE_HARNESS_DIR
    if [ -f "$PERFGATE_HARNESS_DIR/harness_preload/sitecustomize.py" ]; then
      pythonpath=$PERFGATE_HARNESS_DIR/harness_preload:$pythonpath
    fi
    case " $PERFGATE_PASS_ENV " in *" PYTHONPATH "*) pythonpath+=${PYTHONPATH:+:$PYTHONPATH} ;; esac
    PG_SANDBOX_ENV+=("PYTHONPATH=$pythonpath")
  fi
}

# The directories under /tmp or /var/tmp that the trusted perfgate needs inside a container, one
# a line: the harness's, perfgate's own, and those of the shared libraries that perfgate and its
# LibTorch runner load (a venv in /tmp, or reached through a ./.venv link of a checkout in /tmp,
# holds LibTorch), with the whole nvidia/ tree beside torch/lib, whose libraries LibTorch also
# opens at run time. Paths are normalised without resolving links: the runner names them so.
pg_trusted_tmp_dirs() {
  local bin=${PERFGATE_BIN:-} path
  {
    [ -z "${PERFGATE_HARNESS_DIR:-}" ] || echo "$PERFGATE_HARNESS_DIR"
    if [ -n "$bin" ]; then
      dirname "$bin"
      for path in "$bin" "$(dirname "$bin")/perfgate-runner"; do
        [ -x "$path" ] && ldd "$path" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
          xargs -r -n1 dirname
      done
    fi
  } | while IFS= read -r path; do
    path=$(realpath -ms "$path")
    case $path in */torch/lib) echo "${path%/torch/lib}/nvidia" ;; esac
    echo "$path"
  done | grep -E '^/(var/)?tmp/' | sort -u | while IFS= read -r path; do
    if [ -d "$path" ]; then echo "$path"; fi
  done
}

# The bubblewrap command line of one container (PG_BWRAP, an array) that runs in DIR, for SIDE;
# with AT, DIR (the side's clone) is also bound at the path AT, and the command runs there.
pg_bwrap_args() {
  local dir=$1 side=$2 at=${3:-} path
  PG_BWRAP=(bwrap --die-with-parent --new-session --unshare-pid --unshare-ipc --unshare-uts
    --unshare-cgroup-try --ro-bind / / --dev /dev --proc /proc)
  # The GPU's device nodes (NVIDIA's and DRM's), where the host has them.
  for path in /dev/nvidia* /dev/nvidia-caps /dev/dri; do
    if [ -e "$path" ]; then PG_BWRAP+=(--dev-bind "$path" "$path"); fi
  done
  for path in /tmp /var/tmp /run/lock /run/user /run/shm; do
    if [ -d "$path" ] && [ ! -L "$path" ]; then PG_BWRAP+=(--tmpfs "$path"); fi
  done
  # The trusted perfgate, its timing harness and the libraries they load, read-only, where they
  # sit under one of those temporary directories (a checkout of the action in /tmp, say): the
  # container would hide them.
  while IFS= read -r path; do
    PG_BWRAP+=(--ro-bind "$path" "$path")
  done < <(pg_trusted_tmp_dirs)
  # The base's tuning choices, read-only, for the head's export.
  if pg_replays_tuning "$side" && [ -d "$PG_TUNING_FROM" ]; then
    PG_BWRAP+=(--ro-bind "$PG_TUNING_FROM" "$PG_TUNING_FROM")
  fi
  # The writable places, after the tmpfs that may hold their mount point: a side's own clone,
  # build directory and state; the whole job's directory only for the job's set-up.
  if [ -z "$side" ]; then
    PG_BWRAP+=(--bind "$PG_SANDBOX" "$PG_SANDBOX")
  else
    for path in "$PG_SANDBOX/$side" "$PG_SANDBOX/build-$side" "$PG_SANDBOX/side-$side"; do
      if [ -d "$path" ]; then PG_BWRAP+=(--bind "$path" "$path"); fi
    done
  fi
  if [ -n "$at" ]; then
    PG_BWRAP+=(--bind "$dir" "$at" --chdir "$at" --)
  else
    PG_BWRAP+=(--chdir "$dir" --)
  fi
}

# Runs CMD... (measured code) in DIR as the sandbox user, inside a fresh container. Its output,
# both streams, goes to stderr between GitHub's ::stop-commands:: markers with a fresh random
# token: nothing measured code prints is read as a workflow command (::error, ::add-mask, the
# legacy ##[...] form anywhere in a line), and measured code cannot learn the token to end the
# block early.
pg_untrusted() {
  local dir=$1 rc=0 token
  shift
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  echo "::stop-commands::$token" >&2
  local side
  side=$(pg_sandbox_side "$dir")
  if [ "$PERFGATE_SANDBOX" = bwrap ]; then
    pg_sandbox_env "$side"
    pg_bwrap_args "$dir" "$side"
    # shellcheck disable=SC2016  # $@ expands in the sandbox's shell
    pg_switch_user env -i "${PG_SANDBOX_ENV[@]}" "${PG_BWRAP[@]}" \
      bash -c 'umask 022 && exec "$@"' _ "$@" >&2 || rc=$?
  else
    pg_as_side_user "$side" "$dir" "$@" >&2 || rc=$?
  fi
  echo "::$token::" >&2
  return "$rc"
}

# The variables `perfgate ab` gives a worker for its cell (docs/PROTOCOL.md, "The cell"): the only
# ones of the trusted perfgate's environment that reach a worker in the sandbox.
PG_CELL_VARS=(PERFGATE_PROTOCOL PERFGATE_WORKER PERFGATE_MODEL PERFGATE_BATCH PERFGATE_PROMPT_LEN
  PERFGATE_GEN_TOKENS PERFGATE_WARMUP PERFGATE_REPS PERFGATE_DEVICE PERFGATE_DTYPE PERFGATE_SEED
  PERFGATE_KV_CACHE PERFGATE_ATTENTION PERFGATE_CUDA_GRAPHS PERFGATE_PROFILE PERFGATE_REPO)

# Runs CMD... (one side's worker of `perfgate ab`: measured code) in SIDE's clone as the sandbox
# user, inside a fresh container as pg_untrusted does, but with stdin and stdout left to the
# caller: they are the worker protocol's channel to the trusted `perfgate ab` (outside the
# sandbox), which validates every line; stderr goes to perfgate, which keeps its tail. AT is the
# path by which perfgate ab names the side's checkout (the trusted copy pr_bench.sh makes, so that
# the trusted side never opens a repository measured code wrote): in the container the side's
# clone is bound there, so the cell's "repo" and PERFGATE_REPO lead to the clone, prepared
# artifacts included. Only the cell's variables (PG_CELL_VARS) join the clean environment. With
# PERFGATE_SANDBOX=none the worker runs in the clone itself, PERFGATE_REPO naming it.
pg_untrusted_worker() {
  local side=$1 at=$2 var
  shift 2
  local dir="$PG_SANDBOX/$side"
  [ -d "$dir" ] || pg_die "pg_untrusted_worker: no clone of side '$side' in the sandbox"
  local -a cell=()
  for var in "${PG_CELL_VARS[@]}"; do
    if [ -n "${!var+x}" ]; then cell+=("$var=${!var}"); fi
  done
  if [ "$PERFGATE_SANDBOX" = bwrap ]; then
    pg_sandbox_env "$side"
    pg_bwrap_args "$dir" "$side" "$at"
    # shellcheck disable=SC2016  # $@ expands in the sandbox's shell
    pg_switch_user env -i "${PG_SANDBOX_ENV[@]}" "${cell[@]}" "${PG_BWRAP[@]}" \
      bash -c 'umask 022 && exec "$@"' _ "$@"
  else
    pg_as_side_user "$side" "$dir" env "${cell[@]}" "PERFGATE_REPO=$dir" "$@"
  fi
}

# The tuning choices the base's prepare recorded (every PATH.tuning.json of an exported package in
# the base's clone, python/perfgate_tuning.py), copied into the job's folder base-tuning, first
# name wins; prints that folder, or nothing when the base recorded none. Run before any of the
# head's code: the head's container then sees the folder read-only (pg_bwrap_args) and its
# prepare gets it as PERFGATE_TUNING_FROM. The exporter refuses a file it cannot replay.
pg_base_tuning() {
  local src=$1 dir="$PG_SANDBOX/base-tuning"
  # First name wins; not `cp -n`, whose meaning coreutils 9.2+ warns may change.
  # shellcheck disable=SC2016  # $1 and $2 expand in the sandbox user's shell
  pg_as_sandbox_user "$PG_SANDBOX" bash -c 'mkdir -p "$2" &&
    find "$1" -path "$1/.git" -prune -o -name "*.tuning.json" -type f -size -8M -print0 |
      while IFS= read -r -d "" f; do [ -e "$2/${f##*/}" ] || cp "$f" "$2/" || exit 1; done' \
    _ "$src" "$dir" ||
    pg_die "could not copy the merge-base's tuning choices into $dir"
  if [ -n "$(ls -A "$dir")" ]; then echo "$dir"; fi
}

# Copies a file that measured code wrote in the sandbox to standard output, refusing anything but
# a regular file (a symlink planted for the trusted side is not followed, a device is not read);
# at most 256 MiB. Read as the sandbox user, so it reaches nothing that user could not.
pg_sandbox_read() {
  local file=$1
  case $file in "$PG_SANDBOX"/*) ;; *) pg_die "pg_sandbox_read: $file is not in the sandbox" ;; esac
  # shellcheck disable=SC2016  # $1 expands in the sandbox user's shell
  pg_as_sandbox_user / bash -c '[ -f "$1" ] && [ ! -L "$1" ] || { echo "not a regular file: $1" >&2; exit 1; }
    exec dd if="$1" iflag=nofollow bs=1M count=256 status=none' _ "$file"
}

# Creates the job's sandbox directory, owned by the sandbox user, readable by the trusted steps.
pg_sandbox_create() {
  case $PERFGATE_SANDBOX in
    bwrap)
      command -v bwrap >/dev/null ||
        pg_die "input 'sandbox' is bwrap, but bubblewrap is not installed (apt-get install bubblewrap; docs/OPERATORS.md)"
      ;;
    none) echo "::warning title=perfgate::sandbox is none: measured code runs without a container; processes and files it leaves outside its directory may outlive the job (docs/OPERATORS.md)" ;;
    *) pg_die "input 'sandbox' must be bwrap or none, got '$PERFGATE_SANDBOX'" ;;
  esac
  if [ -n "$PERFGATE_RUN_AS" ]; then
    id "$PERFGATE_RUN_AS" >/dev/null 2>&1 || pg_die "run-as: no user '$PERFGATE_RUN_AS' (docs/OPERATORS.md: Runner set-up)"
    [ "$PERFGATE_RUN_AS" != "$(id -un)" ] || pg_die "run-as: '$PERFGATE_RUN_AS' is the runner's own user"
  fi
  PG_SANDBOX=/
  PG_SANDBOX=$(pg_as_sandbox_user / mktemp -d "${PERFGATE_SANDBOX_PARENT:-/tmp}/perfgate-sandbox.XXXXXX") ||
    pg_die "could not create a sandbox directory as ${PERFGATE_RUN_AS:-$(id -un)} (sudoers rule?)"
  pg_as_sandbox_user "$PG_SANDBOX" bash -c 'chmod 755 . && mkdir -p home tmp ccache cache runs'
  # The checkout to clone belongs to the runner's user: git refuses another user's repository
  # unless the (sandbox's own, global) config says it is safe.
  pg_as_sandbox_user "$PG_SANDBOX" git config --global --add safe.directory '*'
  if [ "$PERFGATE_SANDBOX" = bwrap ]; then
    pg_untrusted "$PG_SANDBOX" true ||
      pg_die "bubblewrap cannot start a container as ${PERFGATE_RUN_AS:-$(id -un)} (unprivileged user namespaces off? docs/OPERATORS.md)"
  fi
  export PG_SANDBOX
}

# Clones commit SHA of the repository REPO into the sandbox as DIR (a full git checkout, so that
# `perfgate run --repo` tags the run with it); prints the clone's path.
pg_sandbox_clone() {
  local repo=$1 sha=$2 name=$3 dest="$PG_SANDBOX/$3"
  pg_as_sandbox_user "$PG_SANDBOX" git clone -q --no-checkout --no-hardlinks "$repo" "$name" >&2
  pg_as_sandbox_user "$PG_SANDBOX" mkdir -p "side-$name/home" "side-$name/tmp" "side-$name/ccache" \
    "side-$name/cache" "side-$name/runs"
  # The checkout runs the clone's own hooks and filters: measured code's, so in the container.
  pg_untrusted "$dest" git -c advice.detachedHead=false checkout -q --detach "$sha"
  echo "$dest"
}

# Ends every process the sandbox user left behind and removes what it wrote (job end, always).
# With the container nothing of measured code outlives its command; this is the second wall.
pg_sandbox_destroy() {
  [ -n "${PG_SANDBOX:-}" ] && [ -d "$PG_SANDBOX" ] || return 0
  if [ -n "$PERFGATE_RUN_AS" ]; then
    # kill -1 as that user reaches exactly the processes it owns (a daemon a PR left behind).
    pg_as_sandbox_user / kill -KILL -1 2>/dev/null || true
    pg_as_sandbox_user / find /tmp /var/tmp /dev/shm /run/lock -mindepth 1 -maxdepth 1 \
      -user "$PERFGATE_RUN_AS" -exec rm -rf {} + 2>/dev/null || true
    pg_as_sandbox_user / crontab -r 2>/dev/null || true
  fi
  pg_as_sandbox_user / rm -rf "$PG_SANDBOX" || pg_log "could not remove $PG_SANDBOX"
}

# Builds the measured checkout SRC into the sandbox directory OUT with PERFGATE_BUILD_COMMAND;
# prints the perfgate binary it left. (The trusted side never runs git in a sandbox clone: its
# .git/config belongs to measured code, and options like core.fsmonitor run commands.)
pg_build() {
  local src=$1 out=$2
  pg_as_sandbox_user "$PG_SANDBOX" mkdir -p "$out"
  pg_log "building $src in $out (as ${PERFGATE_RUN_AS:-$(id -un)})"
  PERFGATE_BUILD_DIR="$out" pg_untrusted "$src" bash -c "$PERFGATE_BUILD_COMMAND"
  [ -x "$out/perfgate" ] || pg_die "build command '$PERFGATE_BUILD_COMMAND' left no executable $out/perfgate"
  echo "$out/perfgate"
}

# Runs PERFGATE_PREPARE (builds/exports the model artifact) in the measured checkout SRC.
pg_prepare() {
  local src=$1
  [ -n "$PERFGATE_PREPARE" ] || return 0
  pg_log "prepare in $src: $PERFGATE_PREPARE"
  pg_untrusted "$src" bash -c "$PERFGATE_PREPARE"
}

# One benchmark run of the sweep: binary, measured checkout (tags the run; artifact paths in the
# sweep resolve against it), and the trusted database DB the run goes to. Measured code writes
# its own scratch database and the run's export JSON in the sandbox; the trusted perfgate then
# reads that document (pg_sandbox_read: never through a link) and imports it into DB, validated
# as POST /api/v1/runs validates a run. The trusted side never opens a database measured code
# wrote.
pg_bench() {
  local bin=$1 repo=$2 db=$3
  local -a extra=()
  # shellcheck disable=SC2206  # word splitting of the extra arguments is the point
  [ -n "$PERFGATE_RUN_ARGS" ] && extra=($PERFGATE_RUN_ARGS)
  shift 3
  PG_BENCH_SEQ=$((${PG_BENCH_SEQ:-0} + 1))
  local state json
  state=$(pg_sandbox_state "$(pg_sandbox_side "$repo")")
  json="$state/runs/run-$(date +%s)-$$-$PG_BENCH_SEQ.json"
  # The trusted sweep, written afresh before every run: measured code cannot edit it for later runs.
  # shellcheck disable=SC2016  # $1 expands in the sandbox user's shell
  pg_as_sandbox_user "$PG_SANDBOX" bash -c 'rm -f "$1" && cat >"$1"' _ "$state/sweep.toml" <"$SWEEP"
  local rc=0
  pg_untrusted "$repo" "$bin" run --config "$state/sweep.toml" --repo "$repo" \
    --db "$state/scratch.db" --json "$json" "${extra[@]}" "$@" || rc=$?
  if ! pg_sandbox_read "$json" | (umask 077 && "$(pg_trusted_bin)" import --fresh-uuids --db "$db" -) >&2; then
    pg_log "the run left no valid result ($json); nothing stored"
    [ "$rc" -ne 0 ] || rc=4
  fi
  return "$rc"
}
