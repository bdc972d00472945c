#!/usr/bin/env bash
# Soak test of one store shared by every kind of user, for minutes (docs/STORE.md has figures):
# wrk on the pages and /healthz, the real runner (`perfgate run --model tiny`) and a store writer
# in loops, ingest POSTs, a `sqlite3 .backup` every 30 s and a SIGTERM + restart of serve halfway.
# At the end: integrity_check, and every acknowledged run looked up by id.
#   bench/store_soak.sh [SECONDS] [BUILD_DIR]
# Needs wrk, sqlite3, curl, python3.
set -euo pipefail
secs=${1:-180}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${2:-$root/build}" && pwd)
perfgate=$build/perfgate
writer=$build/tests/store/store_writer
work=$(mktemp -d /tmp/perfgate-soak-XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true' EXIT
db=$work/pg.db
echo "work dir: $work"
printf 'soak-token-%s' "$RANDOM$RANDOM$RANDOM" > "$work/token"
chmod 600 "$work/token"
for _ in 1 2 3 4 5 6; do echo commit; done > "$work/commits"
"$perfgate" run --model tiny --device cpu --batch-sizes 1 --seq-lens 8 --gen-tokens 2 --warmup 0 \
  --reps 2 --repo "$work" --db "$db" --quiet > /dev/null
echo 1 > "$work/runner.count"

start_serve() {
  "$perfgate" serve --db "$db" --port 0 --token-file "$work/token" --quiet 2> "$work/serve.$1.log" &
  serve_pid=$!
  for _ in $(seq 1 300); do
    port=$(grep -oE 'listening on http://[^ ]*:[0-9]+/' "$work/serve.$1.log" | grep -oE '[0-9]+/$' | tr -d / || true)
    [[ -n $port ]] && break
    kill -0 "$serve_pid" || { cat "$work/serve.$1.log"; exit 4; }
    sleep 0.1
  done
  echo "$port" > "$work/port"
}
start_serve 1
end=$((SECONDS + secs))

cat > "$work/paths.lua" <<'LUA'
local paths = {"/", "/runs", "/healthz", "/api/v1/runs", "/api/v1/series"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
LUA

# wrk in two halves around the restart (a connection cannot survive it).
half=$((secs / 2))
wrk -t1 -c8 -d"${half}s" --latency -s "$work/paths.lua" "http://127.0.0.1:$(cat "$work/port")" \
  > "$work/wrk.1.txt" 2>&1 &
wrk1=$!

( # runner loop
  n=1
  while ((SECONDS < end)); do
    "$perfgate" run --model tiny --device cpu --batch-sizes 1 --seq-lens 8 --gen-tokens 2 \
      --warmup 0 --reps 2 --seed "$n" --repo "$work" --db "$db" --quiet > /dev/null && n=$((n + 1)) \
      || echo "runner failed" >> "$work/errors"
    echo "$n" > "$work/runner.count"
  done
) &
loops=($!)
( # store writer loop: acknowledged ids to writer.ids
  while ((SECONDS < end)); do
    if out=$("$writer" "$db" 6 < "$work/commits") && grep -q finished <<< "$out"; then
      head -1 <<< "$out" | cut -d' ' -f2 >> "$work/writer.ids"
    else echo "writer failed: $out" >> "$work/errors"; fi
  done
) &
loops+=($!)
( # ingest loop: distinct documents, acknowledged ids to ingest.ids; retried while serve restarts
  v=0
  while ((SECONDS < end)); do
    v=$((v + 1))
    python3 - "$root/tests/fuzz/corpus/ingest/run.json" "$v" > "$work/doc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["runs"][0]["cells"][0]["samples"]["prefill_ms"][0] += int(sys.argv[2]) * 1e-6
json.dump(d, sys.stdout)
PY
    for _ in $(seq 1 100); do
      code=$(curl -s -o "$work/resp.json" -w '%{http_code}' -H "Authorization: Bearer $(cat "$work/token")" \
        -H 'Content-Type: application/json' --data-binary @"$work/doc.json" \
        "http://127.0.0.1:$(cat "$work/port")/api/v1/runs" || true)
      if [[ $code == 201 || $code == 200 ]]; then
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["id"])' \
          "$work/resp.json" >> "$work/ingest.ids"
        break
      fi
      [[ $code == 000 ]] || { echo "ingest $code: $(cat "$work/resp.json")" >> "$work/errors"; break; }
      sleep 0.05
    done
  done
) &
loops+=($!)
( # backups every 30 s
  k=0
  while ((SECONDS + 30 < end)); do
    sleep 30
    k=$((k + 1))
    sqlite3 "$db" ".backup '$work/backup.$k.db'" || echo "backup $k failed" >> "$work/errors"
    echo "backup $k: $(sqlite3 "$work/backup.$k.db" 'PRAGMA integrity_check') \
$(sqlite3 "$work/backup.$k.db" 'SELECT count(*) FROM runs') runs" >> "$work/backups"
  done
) &
loops+=($!)

wait "$wrk1"
kill -TERM "$serve_pid"
t0=$(date +%s.%N)
wait "$serve_pid" && serve_rc=0 || serve_rc=$?
t1=$(date +%s.%N)
start_serve 2
wrk -t1 -c8 -d"$((secs - half))s" --latency -s "$work/paths.lua" \
  "http://127.0.0.1:$(cat "$work/port")" > "$work/wrk.2.txt" 2>&1
for pid in "${loops[@]}"; do wait "$pid" || true; done
kill -0 "$serve_pid" || echo "serve stopped before the end" >> "$work/errors"
kill -TERM "$serve_pid" || true
wait "$serve_pid" || true

missing=0
for f in writer.ids ingest.ids; do
  [[ -f $work/$f ]] || continue
  while read -r id; do
    [[ $(sqlite3 "$db" "SELECT count(*) FROM runs WHERE id = $id AND status = 'complete'") == 1 ]] \
      || { missing=$((missing + 1)); echo "missing $f $id" >> "$work/errors"; }
  done < "$work/$f"
done
echo "== store soak: $secs s, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
for k in 1 2; do
  echo "wrk half $k: $(grep -E 'Requests/sec' "$work/wrk.$k.txt") \
$(grep -E '^ +(50|99)%' "$work/wrk.$k.txt" | tr -s ' ' | tr '\n' ' ') \
$(grep -E 'Non-2xx' "$work/wrk.$k.txt" || echo 'Non-2xx or 3xx responses: 0') \
$(grep -E 'requests in' "$work/wrk.$k.txt" | tr -s ' ')"
done
echo "serve SIGTERM: exit $serve_rc after $(python3 -c "print(round($t1 - $t0, 2))") s"
echo "runner runs: $(( $(cat "$work/runner.count") )), writer runs: $(wc -l < "$work/writer.ids" 2>/dev/null || echo 0), ingested: $(wc -l < "$work/ingest.ids" 2>/dev/null || echo 0)"
echo "runs in the file: $(sqlite3 "$db" 'SELECT count(*) FROM runs'), acknowledged but missing: $missing"
echo "integrity_check: $(sqlite3 "$db" 'PRAGMA integrity_check')"
cat "$work/backups" 2>/dev/null || true
if [[ -s $work/errors ]]; then echo "errors:"; head -20 "$work/errors"; exit 1; fi
[[ $missing == 0 ]]
