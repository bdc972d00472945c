#!/usr/bin/env bash
# Judges the kept real CPU gate databases of a calibration (bench/real_gates_collect.sh) and writes
# the per-gate tables of docs/STATISTICS.md: every finished A/A database in the shipped
# protocol (its first 3 rounds), and, where 5 rounds were kept, the sequential protocol of the
# action (rounds 3, max-rounds 5); every A/B level likewise (the sequential replay only where its
# databases kept 5 rounds).
#   [JOBS=2] bench/real_calib_tables.sh OUT_DIR AA_DIR... -- AB_DIR...
# JOBS: databases judged at a time. The variance components of the A/A and A/B databases, too.
# An A/B directory's name ends in its level (ab-100: PERFGATE_CALIBRATION_EXTRA_MATMULS=100).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pg=${PERFGATE:-$root/build/perfgate}
out=$1
shift
aa_dirs=() ab_dirs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do aa_dirs+=("$1") && shift; done
[ $# -gt 0 ] && shift
ab_dirs=("$@")
mkdir -p "$out"
finished() { for f in "$@"; do for d in "$f"/*.db.done; do [ -e "$d" ] && echo "${d%.done}"; done; done; }
rounds_of() { python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM runs').fetchone()[0] // 2)" "$1"; }
eval_py=("$root/bench/real_gates_eval.py" gates --perfgate "$pg" --jobs "${JOBS:-1}")
mapfile -t aa < <(finished "${aa_dirs[@]}")
"${eval_py[@]}" --rounds 3 "${aa[@]}" >"$out/aa_shipped.md"
python3 "$root/bench/real_gates_eval.py" variance "${aa[@]}" >"$out/aa_variance.md"
long=()
for db in "${aa[@]}"; do if [ "$(rounds_of "$db")" -ge 5 ]; then long+=("$db"); fi; done
if [ ${#long[@]} -gt 0 ]; then "${eval_py[@]}" --rounds 3 --sequential 5 "${long[@]}" >"$out/aa_sequential.md"; fi
for dir in "${ab_dirs[@]}"; do
  mapfile -t ab < <(finished "$dir")
  [ ${#ab[@]} -gt 0 ] || continue
  level=${dir##*-}
  "${eval_py[@]}" --rounds 3 "${ab[@]}" >"$out/ab_${level}_shipped.md"
  if [ "$(rounds_of "${ab[0]}")" -ge 5 ]; then
    "${eval_py[@]}" --rounds 3 --sequential 5 "${ab[@]}" >"$out/ab_${level}_sequential.md"
  fi
  python3 "$root/bench/real_gates_eval.py" variance "${ab[@]}" >"$out/ab_${level}_variance.md"
done
for f in "$out"/*_shipped.md "$out"/*_sequential.md; do [ -e "$f" ] || continue; echo "$(basename "$f" .md): $(tail -n 1 "$f")"; done
