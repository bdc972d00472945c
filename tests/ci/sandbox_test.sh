#!/usr/bin/env bash
# Measured code cannot take over the runner (ci/scripts/sandbox.sh): a job's "prepare" tries
# every way to outlive its job that a pull request has, and afterwards nothing of it exists, and
# a later job is unaffected:
#   crontab and at jobs (as the run-as user `nobody`, so run as root; without root the container
#     alone is tested, and these two are skipped: they would touch the tester's own crontab);
#   a background process, a double fork, setsid and nohup daemons, and a daemon that rewrites
#     the files of any later sandbox (the crontab attack: a later PR's base measured the
#     attacker's model);
#   a file in every shared temporary directory (/tmp, /var/tmp, /dev/shm, /run/lock) and in a
#     directory the run-as user owns outside the sandbox (its home, say);
#   a symlink planted where the trusted side reads a result: pg_sandbox_read refuses it;
#   the head's code writing the base's clone, HOME, compiler cache or build (one job's two sides).
# Usage: sandbox_test.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/common/check.sh
source "$here/../common/check.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-sandbox-test-XXXXXX")
chmod 755 "$tmp"
run_as=""
if [ "$(id -u)" -eq 0 ]; then run_as=nobody; fi
tag="perfgate-evil-$$"
cleanup() {
  # Whatever a failing sandbox let through is removed here, so a red test leaves no crontab.
  if [ -n "$run_as" ]; then
    crontab -r -u "$run_as" 2>/dev/null || true
    find /var/spool/cron/atjobs -maxdepth 1 -type f -user "$run_as" -delete 2>/dev/null || true
    pkill -KILL -u "$run_as" 2>/dev/null || true
  fi
  pkill -KILL -f "$tag" 2>/dev/null || true
  rm -rf /tmp/"$tag"* /var/tmp/"$tag"* /dev/shm/"$tag"* /run/lock/"$tag"* "$tmp" "${outside:-}"
}
trap cleanup EXIT

export PERFGATE_WORK="$tmp/work" PERFGATE_RUN_AS=$run_as PERFGATE_SANDBOX=bwrap PERFGATE_PASS_ENV=""
# shellcheck source=ci/scripts/lib.sh
source "$root/ci/scripts/lib.sh"
set +e # check() counts failures; the test goes on after one
mkdir -p "$PERFGATE_WORK"

# Outside /tmp (which the container replaces with its own): a directory the run-as user owns and
# could write without a container (its home, say), and a file the trusted side can read and
# measured code wants, to which it plants a symlink as its "result". In the current directory
# (ctest's build directory), which the run-as user can reach, as it reaches the perfgate binary.
outside=$(mktemp -d "$PWD/perfgate-sandbox-outside-XXXXXX")
chmod 755 "$outside"
owned="$outside/owned-by-run-as"
mkdir -p "$owned"
if [ -n "$run_as" ]; then chown "$run_as" "$owned"; fi
secret="$outside/trusted-secret"
echo "the trusted side's data" >"$secret"
chmod 644 "$secret"

cat >"$tmp/evil.sh" <<EVIL
#!/usr/bin/env bash
# Everything a pull request's prepare step could do to outlive its job.
tag=$tag
if [ -n "$run_as" ]; then
  echo "* * * * * touch /tmp/\$tag-cron" | crontab - 2>/dev/null && echo "CRONTAB: installed"
  echo "touch /tmp/\$tag-at" | at now + 5 minutes 2>/dev/null && echo "AT: queued"
fi
bash -c "exec -a \$tag-bg sleep 600" >/dev/null 2>&1 &
( (exec -a "\$tag-double" sleep 600 &) & )
setsid bash -c "exec -a \$tag-setsid sleep 600" >/dev/null 2>&1 < /dev/null &
nohup bash -c "exec -a \$tag-nohup sleep 600" >/dev/null 2>&1 &
# The daemon of the crontab attack: rewrites the model of every later sandbox it can find.
nohup bash -c 'while :; do for f in /tmp/perfgate-sandbox.*/victim/model.py; do
  [ -f "\$f" ] && echo EVIL >"\$f"; done 2>/dev/null; sleep 0.05; done' "\$tag-rewriter" >/dev/null 2>&1 &
for d in /tmp /var/tmp /dev/shm /run/lock "$owned"; do
  echo x >"\$d/\$tag-file" 2>/dev/null && echo "WROTE: \$d"
done
ln -s "$secret" "\$PWD/runs/result.json"
echo "EVIL: done"
EVIL
chmod 755 "$tmp/evil.sh"

# --- job 1: the attack ------------------------------------------------------------------------
pg_sandbox_create
job1=$PG_SANDBOX
# The attack is the job's own code: it arrives inside the job's directory, as a checkout does.
# shellcheck disable=SC2016  # $1 expands in the sandbox user's shell
pg_as_sandbox_user "$PG_SANDBOX" bash -c 'cat >"$1"' _ "$PG_SANDBOX/evil.sh" <"$tmp/evil.sh"
pg_untrusted "$PG_SANDBOX" bash "$PG_SANDBOX/evil.sh" 2>"$tmp/evil.log"
rc=$?
cat "$tmp/evil.log"
check "the attack ran to its end inside the sandbox (exit $rc)" has "$tmp/evil.log" "EVIL: done"
check "its output was wrapped in ::stop-commands:: with a fresh token" \
  grep -qE '^::stop-commands::[0-9a-f]{32}$' "$tmp/evil.log"
token=$(sed -n 's/^::stop-commands:://p' "$tmp/evil.log" | head -1)
check "... and the block was closed with the same token" grep -qx "::$token::" "$tmp/evil.log"
# The container, not the clean-up, ends them: checked before pg_sandbox_destroy runs.
none_alive() { ! pgrep -f "$tag" >/dev/null; }
check "every process it started ended with its command (bg, double fork, setsid, nohup, rewriter)" none_alive
if [ -n "$run_as" ]; then
  # A zombie has ended; it waits for a parent that is not the sandbox's to reap it.
  # shellcheck disable=SC2009  # pgrep cannot leave zombies out
  none_of_user() { ! ps -u "$run_as" -o stat=,pid=,args= | grep -v '^Z'; }
  check "no process of $run_as is left" none_of_user
fi
for d in /tmp /var/tmp /dev/shm /run/lock; do
  check "nothing it wrote in $d exists" bash -c "! ls -d '$d/$tag'* 2>/dev/null"
done
check "it could not write the directory its user owns outside the sandbox" test ! -e "$owned/$tag-file"
if [ -n "$run_as" ]; then
  check "no crontab of $run_as exists" bash -c "! crontab -l -u '$run_as' >/dev/null 2>&1"
  check "no at job of $run_as exists" \
    bash -c "[ -z \"\$(find /var/spool/cron/atjobs -maxdepth 1 -type f -user '$run_as' 2>/dev/null)\" ]"
fi
out=$(pg_sandbox_read "$PG_SANDBOX/runs/result.json" 2>"$tmp/read.err") && read_rc=0 || read_rc=$?
check "the trusted side refuses the planted symlink (exit $read_rc)" [ "$read_rc" -ne 0 ]
check "... and reads nothing through it" [ -z "$out" ]
pg_untrusted "$PG_SANDBOX" bash -c 'echo "a real result" >runs/real.json' 2>/dev/null
check "a regular result file is read" [ "$(pg_sandbox_read "$PG_SANDBOX/runs/real.json")" = "a real result" ]
pg_sandbox_destroy
check "the job's directory is gone" test ! -e "$job1"

# --- job 2: a later, unrelated job ------------------------------------------------------------
pg_sandbox_create
pg_untrusted "$PG_SANDBOX" bash -c 'mkdir victim && echo GOOD >victim/model.py' 2>/dev/null
# Its own benchmark runs a while, as a real one would; nothing of job 1 is there to interfere.
# shellcheck disable=SC2016  # expands in the sandbox's shell
pg_untrusted "$PG_SANDBOX" bash -c 'for i in $(seq 200000); do :; done; cat victim/model.py' \
  >"$tmp/job2.out" 2>&1
check "the later job measures its own model, untouched" has "$tmp/job2.out" "GOOD"
check "... and nothing from the earlier job is running" none_alive
pg_sandbox_destroy

# --- the timing harness: the pinned perfgate's, whatever the checkout holds ---------------------
# A pull request adds its own perfgate_bench.py beside its benchmark (one that divides every time
# by 4, say); with the trusted harness on PYTHONPATH (install.sh sets PERFGATE_HARNESS_DIR), the
# benchmark imports the pinned one all the same. The system's Python, which every user can run.
if [ -x /usr/bin/python3 ]; then
  export PERFGATE_HARNESS_DIR="$root/python" # read by sandbox.sh
  pg_sandbox_create
  # shellcheck disable=SC2016  # expands in the sandbox's shell
  pg_untrusted "$PG_SANDBOX" bash -c 'mkdir -p pr && cd pr &&
    echo "raise SystemExit(\"the pull request'"'"'s harness ran\")" >perfgate_bench.py &&
    printf "import perfgate_bench\nprint(\"HARNESS:\", perfgate_bench.__file__)\n" >bench.py &&
    /usr/bin/python3 bench.py' >"$tmp/harness.out" 2>&1
  check "a benchmark imports the pinned perfgate_bench.py, not the one beside it" \
    has "$tmp/harness.out" "HARNESS: $root/python/perfgate_bench.py"
  [ "$failures" -eq 0 ] || cat "$tmp/harness.out"
  pg_sandbox_destroy
  # A harness under /tmp (the action checked out there, say), which the container's own /tmp
  # would hide: it is bound in, read-only.
  tmp_harness=$(mktemp -d /tmp/perfgate-harness-XXXXXX)
  cp "$root/python/perfgate_bench.py" "$tmp_harness/"
  chmod -R a+rX "$tmp_harness"
  export PERFGATE_HARNESS_DIR=$tmp_harness
  pg_sandbox_create
  # shellcheck disable=SC2016  # expands in the sandbox's shell
  pg_untrusted "$PG_SANDBOX" /usr/bin/python3 -c 'import perfgate_bench; print("HARNESS:", perfgate_bench.__file__)' \
    >"$tmp/harness-tmp.out" 2>&1
  check "a harness under /tmp is still importable inside the container" \
    has "$tmp/harness-tmp.out" "HARNESS: $tmp_harness/perfgate_bench.py"
  pg_sandbox_destroy
  rm -rf "$tmp_harness"
  unset PERFGATE_HARNESS_DIR
else
  echo "ok   - /usr/bin/python3 is missing: the harness check needs a Python every user can run"
fi

# --- the two sides of one job: the head cannot touch the base -----------------------------------
# A pull request's prepare (or benchmark) that makes the base slower would hide its own
# regression: it edits the base's model, plants a module in the base's HOME, or an object in
# the base's compiler cache. Each side's container writes only its own clone, build and state.
repo="$tmp/repo"
git init -q -b main "$repo"
echo GOOD >"$repo/model.py"
git -C "$repo" add model.py
git -C "$repo" -c user.email=t@t -c user.name=t -c commit.gpgsign=false commit -qm model
sha=$(git -C "$repo" rev-parse HEAD)
pg_sandbox_create
base_src=$(pg_sandbox_clone "$repo" "$sha" base 2>/dev/null)
head_src=$(pg_sandbox_clone "$repo" "$sha" head 2>/dev/null)
pg_as_sandbox_user "$PG_SANDBOX" mkdir -p build-base build-head
# shellcheck disable=SC2016  # expands in the sandbox's shell
pg_untrusted "$head_src" bash -c 'for f in ../base/model.py ../side-base/home/.bashrc \
    ../side-base/ccache/planted ../build-base/perfgate "$PWD/../side-base/runs/r.json"; do
    echo EVIL >"$f" 2>/dev/null && echo "WROTE: $f"; done
  echo HEAD >model.py && echo "OWN: clone"; echo x >"$HOME/own" && echo "OWN: home $HOME"
  echo x >"$CCACHE_DIR/own" && echo "OWN: ccache $CCACHE_DIR"; touch ../build-head/x && echo "OWN: build"' \
  >"$tmp/sides.out" 2>&1
check "the head's code cannot write the base's clone, HOME, compiler cache, build or results" \
  bash -c "! grep -q WROTE: '$tmp/sides.out'"
check "... the base's model is untouched" [ "$(cat "$base_src/model.py")" = GOOD ]
check "the head writes its own clone" has "$tmp/sides.out" "OWN: clone"
check "... its own HOME, not the base's" has "$tmp/sides.out" "OWN: home $PG_SANDBOX/side-head/home"
check "... its own compiler cache" has "$tmp/sides.out" "OWN: ccache $PG_SANDBOX/side-head/ccache"
check "... and its own build directory" has "$tmp/sides.out" "OWN: build"
# shellcheck disable=SC2016  # expands in the sandbox's shell
pg_untrusted "$base_src" bash -c 'echo EVIL >../head/model.py 2>/dev/null && echo "WROTE: head"
  cat model.py' >"$tmp/base.out" 2>&1
check "the base's code cannot write the head's clone either" bash -c "! grep -q WROTE: '$tmp/base.out'"
[ "$failures" -eq 0 ] || cat "$tmp/sides.out" "$tmp/base.out"
pg_sandbox_destroy

# --- a trusted perfgate that lives in /tmp --------------------------------------------------------
# A checkout built in /tmp whose LibTorch comes through its ./.venv link (the set-up script's): the
# container's empty /tmp must still show perfgate, and the libraries it loads through that link.
trusted=$(mktemp -d /tmp/perfgate-trusted-XXXXXX)
chmod 755 "$trusted"
mkdir -p "$trusted/venv-real/lib" "$trusted/build"
ln -s "$trusted/venv-real" "$trusted/.venv"
echo 'const char *pg_probe(void) { return "PROBE: library loaded"; }' >"$trusted/probe.c"
printf '%s\n' '#include <stdio.h>' 'const char *pg_probe(void);' \
  'int main(void) { puts(pg_probe()); return 0; }' >"$trusted/main.c"
"${CC:-cc}" -shared -fPIC -o "$trusted/venv-real/lib/libpgprobe.so" "$trusted/probe.c" &&
  "${CC:-cc}" -o "$trusted/build/perfgate" "$trusted/main.c" -L"$trusted/.venv/lib" -lpgprobe \
    -Wl,--enable-new-dtags,-rpath,"$trusted/.venv/lib"
check "a perfgate built in /tmp, its library through a link, runs outside the sandbox" \
  bash -c "'$trusted/build/perfgate' | grep -q PROBE"
pg_sandbox_create
PERFGATE_BIN="$trusted/build/perfgate" pg_untrusted "$PG_SANDBOX" "$trusted/build/perfgate" \
  >"$tmp/trusted.out" 2>&1
check "... and inside it: the container shows its directory and its library's" \
  has "$tmp/trusted.out" "PROBE: library loaded"
[ "$failures" -eq 0 ] || cat "$tmp/trusted.out"
pg_sandbox_destroy
rm -rf "$trusted"

# --- the container's shape ---------------------------------------------------------------------
pg_sandbox_create
# shellcheck disable=SC2016  # expands in the sandbox's shell
pg_untrusted "$PG_SANDBOX" bash -c 'echo "PID1: $(cat /proc/1/comm)"; touch /usr/perfgate-x 2>/dev/null || echo "ROOT: read-only"
  touch ./writable && echo "SANDBOX: writable"; ls /dev' >"$tmp/shape.out" 2>&1
check "measured code sees its own PID namespace" has "$tmp/shape.out" "PID1: bwrap"
check "the rest of the file system is read-only" has "$tmp/shape.out" "ROOT: read-only"
check "the job's directory is writable" has "$tmp/shape.out" "SANDBOX: writable"
pg_sandbox_destroy

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
