#!/usr/bin/env bash
# Judges the gates of bench/gpu_history_gates.sh (one round a side, on the H200) on any machine:
#   bench/history_gates_eval.sh OUT TARBALL... [-- PERFGATE]
# Unpacks each call's results, splits every g-*.db into its A/A (A vs B) and A/B (A vs the
# slowed C) gate, and judges each with `perfgate compare` at min effects 0.5% and 1%: without
# history, with the first call's history.db (the pushes: 4 commits x 2 runs), and with a store of
# those and every gate's runs ("all": for a gate A vs B, `compare` leaves A and B out, so the
# history is the pushes and C's runs; for A vs C, the pushes and B's, as a runner that keeps every
# gate's base runs would have). Writes OUT/*.md.
set -euo pipefail
out=${1:?usage: bench/history_gates_eval.sh OUT TARBALL... [-- PERFGATE]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
tars=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do tars+=("$1") && shift; done
[ "${1:-}" = -- ] && shift
pg=${1:-$root/build/perfgate}
py=${PYTHON:-$root/.venv/bin/python3}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
for t in "${tars[@]}"; do
  n=$((n + 1))
  mkdir -p "$work/call$n"
  tar xzf "$t" -C "$work/call$n"
done
history=$work/call1/history.db
# The kept databases predate later schema steps: a writing command migrates them (forward only,
# nothing stored is changed).
for db in "$work"/call*/*.db; do "$pg" init --db "$db" >/dev/null; done
shas=$work/call1/shas.txt
mkdir -p "$work/split"
for d in "$work"/call*; do
  cmp -s "$d/shas.txt" "$shas" || { echo "$d: other commits than call 1's" >&2 && exit 1; }
  "$py" "$root/bench/gpu_gates_split.py" --shas "$shas" "$work/split" "$d"/g-*.db >/dev/null
done
{
  echo "gates: $(find "$work/split" -name 'aa-*.db' | wc -l) A/A and $(find "$work/split" -name 'ab-*.db' | wc -l) A/B"
  echo "history: $(sqlite3 "$history" 'SELECT COUNT(*) FROM runs') runs of $(sqlite3 "$history" 'SELECT COUNT(DISTINCT git_commit) FROM runs') commits"
  echo "commits A B C: $(cat "$shas")"
  cat "$work"/call*/runs.log | awk '{s[$2] += $3; n[$2]++} END {for (k in s) printf "run wall time, %s: mean %.1f s over %d runs\n", k, s[k] / n[k], n[k]}' | sort
} | tee "$out/inputs.txt"
all=$work/history-all.db
for db in "$history" "$work"/call*/g-*.db; do
  "$pg" export --db "$db" --format json >"$work/export.json"
  "$pg" import --db "$all" "$work/export.json" >/dev/null
done
export PERFGATE_EVAL_BASE
PERFGATE_EVAL_BASE=$(cut -d' ' -f1 "$shas")
for me in 0.005 0.01; do
  for h in own history history-all; do
    args=(--min-effect "$me")
    [ $h = history ] && args+=(--history "$history")
    [ $h = history-all ] && args+=(--history "$all")
    (cd "$work" && "$py" "$root/bench/real_gates_eval.py" gates --perfgate "$pg" split/*.db \
      -- "${args[@]}") >"$out/h200-one-round-$h-me$me.md"
    tail -n 2 "$out/h200-one-round-$h-me$me.md"
  done
done
