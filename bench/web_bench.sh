#!/usr/bin/env bash
# Benchmark of `perfgate serve` (not a test): a store of 10,000 runs, wrk on loopback against the
# overview page, one series' JSON and a compare, and nginx serving the same series JSON as a static
# file in the same run (the ceiling). Also ingest throughput over HTTP in samples/s.
#
# Usage: bench/web_bench.sh [BUILD_DIR]   (needs the perfgate and web_seed targets built)
# Env:   RUNS_COMMITS (1000) x RUNS_ENVS (10) runs; REPS (10); GEN_TOKENS (32);
#        WRK_THREADS (2), WRK_CONNS (16), WRK_SECONDS (10); SERVE_THREADS (16);
#        KEEP=1 keeps the work directory; DB=FILE benchmarks a copy of an existing database instead
#        of seeding one (the seed takes minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
perfgate=$build/perfgate
seed=$build/tests/web/web_seed
for b in "$perfgate" "$seed"; do
  [ -x "$b" ] || { echo "web_bench: $b not built (cmake --build $build --target perfgate web_seed)" >&2; exit 2; }
done
for t in wrk nginx curl; do
  command -v "$t" >/dev/null || { echo "web_bench: $t not installed (scripts/setup.sh)" >&2; exit 2; }
done

COMMITS=${RUNS_COMMITS:-1000}
ENVS=${RUNS_ENVS:-10}
REPS=${REPS:-10}
GEN_TOKENS=${GEN_TOKENS:-32}
WRK_THREADS=${WRK_THREADS:-2}
WRK_CONNS=${WRK_CONNS:-16}
WRK_SECONDS=${WRK_SECONDS:-10}
SERVE_THREADS=${SERVE_THREADS:-16}

work=$(mktemp -d /tmp/perfgate-web-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() {  # url: polls until it answers, 60 s at most
  for _ in $(seq 600); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "web_bench: $1 never answered" >&2; exit 4
}
now() { date +%s.%N; }

echo "# perfgate web benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "perfgate: $("$perfgate" --version); wrk: $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2); $(nginx -v 2>&1)"

# --- the store: 10,000 runs, bulk-imported through the Store API in one transaction.
db=$work/bench.db
if [ -n "${DB:-}" ]; then
  cp "$DB" "$db"
  echo "database: copy of $DB" | tee "$work/seed.txt"
else
  "$seed" --db "$db" --commits "$COMMITS" --envs "$ENVS" --batch-sizes 1,4,8,16 --seq-lens 64,256,512 \
    --gen-tokens "$GEN_TOKENS" --reps "$REPS" --step-at $((COMMITS * 3 / 4)) --step-models tiny \
    | tee "$work/seed.txt"
fi
echo "database: $(du -h "$db" | cut -f1)"

# --- perfgate serve, logging every request to a file as it would in production.
port=$(free_port)
token=$work/token
(umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token")
"$perfgate" serve --db "$db" --port "$port" --threads "$SERVE_THREADS" --token-file "$token" \
  2> "$work/serve.log" &
pids+=($!)
base=http://127.0.0.1:$port
wait_http "$base/healthz"
echo "stored runs: $(curl -sf "$base/healthz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"])')"

# Cold: the first request after start (or after new data) computes what it shows. The overview
# computes every series' view; the series below is then asked for another metric (not yet computed).
cold() {  # name path
  local t0 t1
  t0=$(now); curl -sf -o "$work/$1.body" "$base$2"; t1=$(now)
  printf '| %s | %s | %.0f | %s |\n' "$1" "$2" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) * 1000}')" \
    "$(stat -c %s "$work/$1.body")"
}
echo
echo "## first request (cold cache)"
echo "| what | path | ms | bytes |"
echo "| --- | --- | ---: | ---: |"
cold overview "/"
series_id=$(curl -sf "$base/api/v1/series" | python3 -c 'import json,sys; print(json.load(sys.stdin)["series"][0]["id"])')
cold series-prefill "/api/v1/series/$series_id?metric=prefill_ms"
curl -sf -o "$work/series.body" "$base/api/v1/series/$series_id"
read -r base_sha head_sha < <(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["points"]; print(p[-2]["commit"], p[-1]["commit"])' "$work/series.body")
cold compare "/api/v1/compare?base=$base_sha&head=$head_sha"
echo "(series $series_id: $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["points"]))' "$work/series.body") points, $(stat -c %s "$work/series.body") bytes of JSON)"

# --- nginx serving the same series JSON as a static file: the ceiling.
mkdir -p "$work/nginx/www" "$work/nginx/tmp"
cp "$work/series.body" "$work/nginx/www/series.json"
# nginx's workers drop root for an unprivileged user: they must be able to read the file.
chmod 755 "$work" "$work/nginx" "$work/nginx/www"
chmod 644 "$work/nginx/www/series.json"
nport=$(free_port)
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  client_body_temp_path $work/nginx/tmp;
  proxy_temp_path $work/nginx/tmp;
  types { application/json json; }
  server {
    listen 127.0.0.1:$nport;
    root $work/nginx/www;
  }
}
CONF
nginx -c "$work/nginx/nginx.conf" -g 'daemon off;' &
pids+=($!)
wait_http "http://127.0.0.1:$nport/series.json"

bench() {  # name url
  local out rps p50 p99 errors
  out=$work/wrk-$(echo "$1" | tr -c 'a-zA-Z0-9\n' '_').txt
  wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d"${WRK_SECONDS}s" --latency "$2" > "$out"
  rps=$(awk '/Requests\/sec/ {print $2}' "$out")
  p50=$(awk '$1 == "50%" {print $2}' "$out")
  p99=$(awk '$1 == "99%" {print $2}' "$out")
  errors=$(grep -E 'Non-2xx|Socket errors' "$out" | tr '\n' ' ' || true)
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$rps" "$p50" "$p99" "${errors:-none}"
}
echo
echo "## wrk -t$WRK_THREADS -c$WRK_CONNS -d${WRK_SECONDS}s --latency (warm cache)"
echo "| target | req/s | p50 | p99 | errors |"
echo "| --- | ---: | ---: | ---: | --- |"
bench "perfgate overview page /" "$base/"
bench "perfgate series JSON /api/v1/series/$series_id" "$base/api/v1/series/$series_id"
bench "perfgate compare JSON" "$base/api/v1/compare?base=$base_sha&head=$head_sha"
bench "nginx static series.json (ceiling)" "http://127.0.0.1:$nport/series.json"

# --- ingest: export documents of new commits, POSTed one after another.
docs=$work/docs
"$seed" --json-dir "$docs" --docs 20 --runs-per-doc 5 --batch-sizes 1,4,8,16 --seq-lens 64,256,512 \
  --gen-tokens "$GEN_TOKENS" --reps "$REPS" --seed 7 > "$work/docs.txt"
samples=$(awk '{print $6}' "$work/docs.txt")
bytes=$(cat "$docs"/*.json | wc -c)
t0=$(now)
for f in "$docs"/*.json; do
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$token")" \
    -H 'Content-Type: application/json' --data-binary "@$f" "$base/api/v1/runs")
  [ "$code" = 201 ] || { echo "web_bench: ingest of $f answered $code" >&2; exit 4; }
done
t1=$(now)
echo
echo "## ingest: POST /api/v1/runs, 20 documents x 5 runs, one after another"
awk -v s="$samples" -v b="$bytes" -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" 'BEGIN {
  printf "| runs | samples | MB | seconds | samples/s | runs/s |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n";
  printf "| 100 | %d | %.1f | %.2f | %.0f | %.1f |\n", s, b / 1e6, t, s / t, 100 / t }'
echo
echo "bulk import through the Store API (web_seed, one transaction): $(cat "$work/seed.txt")"
echo "requests logged by perfgate serve: $(wc -l < "$work/serve.log")"
