#!/usr/bin/env bash
# Benchmark (not a test) of `perfgate serve` start-up on a large store: for each perfgate binary
# given (e.g. the previous release and this build), in the same run and interleaved case by case:
#   first    start on the store with an empty view cache (first start after an upgrade),
#   restart  start again on the database that start left behind (views kept),
#   settings start again with other gate settings (--min-effect 0.04: no kept view applies).
# For each: start to listening (/healthz answers), start to the first answer of the overview `/`
# (requested as soon as serve listens) and whether that answer was complete, start to the first
# complete overview (/api/v1/overview without "complete": false), the CPU seconds serve had used
# by then (wall times move with the machine's load; CPU time much less), and the load average.
#
# Usage: bench/web_warm_bench.sh STORE.db NAME=PERFGATE [NAME=PERFGATE ...]
#   STORE.db: e.g. the store of bench/web_bench.sh (KEEP=1) or web_seed --commits 1000 --envs 10
#   ... (docs/PERFORMANCE.md); it is copied, never written.
# Env: WORK (a directory with room for one copy of the store per binary; default mktemp in /tmp).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 STORE.db NAME=PERFGATE [NAME=PERFGATE ...]" >&2; exit 2; }
store=$1
shift
[ -f "$store" ] || { echo "web_warm_bench: no store at $store" >&2; exit 2; }
for t in curl python3; do
  command -v "$t" >/dev/null || { echo "web_warm_bench: $t not installed" >&2; exit 2; }
done
work=${WORK:-$(mktemp -d /tmp/perfgate-warm-bench.XXXXXX)}
mkdir -p "$work"
serve_pid=
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

names=()
declare -A bins
for arg in "$@"; do
  name=${arg%%=*}
  bins[$name]=${arg#*=}
  [ -x "${bins[$name]}" ] || { echo "web_warm_bench: ${bins[$name]} is not executable" >&2; exit 2; }
  names+=("$name")
done

sql() { python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute(sys.argv[2]): print(*row)
db.commit()' "$@"; }  # the sqlite3 shell need not be installed
now() { date +%s.%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
complete() {  # overview JSON on stdin: no only when it says "complete": false (grep: cheap to poll)
  if grep -q '"complete":false'; then echo no; else echo yes; fi
}
cpu_s() {  # user + system CPU seconds of a process so far
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$1/stat"
}

one_case() {  # name case extra-args...
  local name=$1 case=$2 port t0 t1 t2 t3 first_complete load cpu
  shift 2
  port=$(free_port)
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(now)
  "${bins[$name]}" serve --db "$work/$name.db" --port "$port" --quiet "$@" 2> "$work/$name.$case.log" &
  serve_pid=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$port/healthz"; do
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/$name.$case.log" >&2; exit 4; }
    sleep 0.01
  done
  t1=$(now)
  curl -sf -o "$work/$name.$case.html" "http://127.0.0.1:$port/"
  t2=$(now)
  if grep -q 'id="computing"' "$work/$name.$case.html"; then first_complete=no; else first_complete=yes; fi
  until [ "$(curl -sf "http://127.0.0.1:$port/api/v1/overview" | complete)" = yes ]; do sleep 0.1; done
  t3=$(now)
  cpu=$(cpu_s "$serve_pid")
  [ "$first_complete" = yes ] && t3=$t2
  # Every series' full view, to check below that each binary shows the same answers.
  curl -sf "http://127.0.0.1:$port/api/v1/series" > "$work/$name.$case.series.json"
  for id in $(python3 -c 'import json,sys; print(*[s["id"] for s in json.load(open(sys.argv[1]))["series"]])' "$work/$name.$case.series.json"); do
    curl -sf "http://127.0.0.1:$port/api/v1/series/$id" >> "$work/$name.$case.series.json"
  done
  kill "$serve_pid"
  wait "$serve_pid" 2>/dev/null || true
  serve_pid=
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$case" "$(ms "$t0" "$t1")" \
    "$(ms "$t0" "$t2")" "$first_complete" "$(ms "$t0" "$t3")" "$cpu" "$load"
}

echo "# perfgate serve start-up, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "store: $store ($(du -h "$store" | cut -f1), $(sql "$store" 'SELECT count(*) FROM runs') runs, $(sql "$store" 'SELECT count(*) FROM series') series)"
for name in "${names[@]}"; do
  cp "$store" "$work/$name.db"
  sql "$work/$name.db" 'DELETE FROM view_cache'
done
echo
echo "| binary | case | start to listening (ms) | start to first overview (ms) | first overview complete | start to complete overview (ms) | serve CPU by then (s) | load (1 min) |"
echo "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |"
for case in first restart settings; do
  for name in "${names[@]}"; do
    if [ "$case" = settings ]; then one_case "$name" "$case" --min-effect 0.04
    else one_case "$name" "$case"; fi
  done
done
echo
for case in first restart settings; do
  same=yes
  for name in "${names[@]}"; do
    cmp -s "$work/${names[0]}.$case.series.json" "$work/$name.$case.series.json" || same=no
  done
  echo "$case: every series' JSON (points, change points, flags, status, last compare) identical across binaries: $same"
done
