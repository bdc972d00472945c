#!/usr/bin/env bash
# The shipped H200 gate databases re-judged with a run variance from trusted history
# (docs/STATISTICS.md "Run variance from trusted history"), on any machine:
#   bench/history_rejudge.sh OUT [PERFGATE]
# Unpacks the 22 A/A + A/B pairs of bench/gpu_gate_calib.sh (4 device calls, 2026-12-01), splits
# them into one database per gate, and pools every gate's runs into one history store. Each gate
# is then judged by `perfgate compare` on its first round (1 run a side) and on all 3 rounds, with
# and without `--history`: the history excludes the judged base and head commits, so it is the
# other gates' commits (leave-one-out). Writes OUT/*.md, one table per setting.
set -euo pipefail
out=${1:?usage: bench/history_rejudge.sh OUT [PERFGATE]}
root=$(cd "$(dirname "$0")/.." && pwd)
pg=${2:-$root/build/perfgate}
py=${PYTHON:-$root/.venv/bin/python3}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

n=0
for tgz in "$root"/bench/results/h200-2026-12-01/gpu_gate_calib_dbs.tgz \
  "$root"/bench/results/h200-2026-12-01b/calib/call2_dbs.tgz \
  "$root"/bench/results/h200-2026-12-01b/calib/call3_dbs.tgz \
  "$root"/bench/results/h200-2026-12-01e/calib/calib_dbs.tgz; do
  n=$((n + 1))
  mkdir -p "$work/raw$n" "$work/split$n"
  tar xzf "$tgz" -C "$work/raw$n"
  mapfile -t dbs < <(find "$work/raw$n" -name 'g-*.db' | sort)
  # The kept databases predate later schema steps: a writing command migrates them (forward only,
  # nothing stored is changed).
  for db in "${dbs[@]}"; do "$pg" init --db "$db" >/dev/null; done
  "$py" "$root/bench/gpu_gates_split.py" "$work/split$n" "${dbs[@]}" >/dev/null
  for db in "${dbs[@]}"; do
    "$pg" export --db "$db" --format json >"$work/export.json"
    "$pg" import --db "$work/history.db" "$work/export.json" >/dev/null
  done
  # One name per gate across the calls: aa-3.db of call 2 becomes aa-2.3.db.
  for db in "$work/split$n"/*.db; do
    b=$(basename "$db")
    mv "$db" "$work/split$n/${b%%-*}-$n.${b#*-}"
  done
done
gates=("$work"/split*/*.db)
echo "gates: ${#gates[@]}; history: $(sqlite3 "$work/history.db" 'SELECT COUNT(*) FROM runs') runs of $(sqlite3 "$work/history.db" 'SELECT COUNT(DISTINCT git_commit) FROM runs') commits" |
  tee "$out/inputs.txt"

judge() {  # NAME ROUNDS [COMPARE_ARGS...]
  local name=$1 rounds=$2
  shift 2
  (cd "$work" && "$py" "$root/bench/real_gates_eval.py" gates --perfgate "$pg" --rounds "$rounds" \
    split*/*.db -- "$@") >"$out/$name.md"
  tail -n 2 "$out/$name.md"
}
for me in 0.005 0.01; do
  judge "one-round-own-me$me" 1 --min-effect "$me"
  judge "one-round-history-me$me" 1 --min-effect "$me" --history "$work/history.db"
  judge "three-rounds-own-me$me" 3 --min-effect "$me"
  judge "three-rounds-history-me$me" 3 --min-effect "$me" --history "$work/history.db"
done
