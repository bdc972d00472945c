#!/usr/bin/env bash
# Collects real CPU gate databases for calibrating `perfgate compare` (docs/STATISTICS.md):
# one SQLite file per gate, each with ROUNDS alternating rounds of base and head runs in the order
# ci/scripts/pr_bench.sh uses (base head, head base, ...). Gates are only measured here, never
# judged: bench/real_gates_eval.sh judges every kept database with any perfgate binary, so a new
# decision rule is tried on the same real measurements as the old one.
#   bench/real_gates_collect.sh --dir DIR [--kind aa|ab] [--gates 100] [--rounds 3]
#        [--head-env "VAR=VALUE ..."] [--sweep FILE] [--perfgate BIN]
# DIR gets repo/ (commits A, B = A, C), wt-{A,B,C}/ and KIND-I.db; A/A gates run head B,
# A/B gates run head C with HEAD_ENV set for the head's runs only. For a genuinely slower head on
# any x86-64 CPU: --head-env "LD_PRELOAD=$PWD/build/libpg_slow_alloc.so PG_SLOW_ALLOC_US=400"
# (tests/common/slow_alloc.cpp); A/B gates first check that it is at least 1.3x slower.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="" kind=aa gates=100 rounds=3 head_env="" sweep="$root/tests/ci/gate_sweep.toml"
pg="$root/build/perfgate"
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2 ;;
    --kind) kind=$2 ;;
    --gates) gates=$2 ;;
    --rounds) rounds=$2 ;;
    --head-env) head_env=$2 ;;
    --sweep) sweep=$2 ;;
    --perfgate) pg=$2 ;;
    *) echo "real_gates_collect.sh: unknown argument $1" >&2 && exit 2 ;;
  esac
  shift 2
done
[ -n "$dir" ] || { echo "real_gates_collect.sh: --dir is required" >&2; exit 2; }
pg=$(realpath "$pg")
# shellcheck source=../tests/ci/real_gate_lib.sh
source "$root/tests/ci/real_gate_lib.sh"
mkdir -p "$dir"
dir=$(realpath "$dir")
[ -d "$dir/repo" ] || real_repo "$dir" >"$dir/shas.txt"
# shas.txt holds "A B C"; the worktrees of the same names are what the runs need.
head_wt="$dir/wt-B"
[ "$kind" = ab ] && head_wt="$dir/wt-C"
if [ "$kind" = ab ] && [ -n "$head_env" ]; then
  # shellcheck source=../tests/common/slow_side.sh
  source "$root/tests/common/slow_side.sh"
  # shellcheck disable=SC2086  # a list of VAR=VALUE words
  slow_side_check "$pg" "$sweep" 1.3 $head_env
fi
for ((i = 1; i <= gates; i++)); do
  db="$dir/$kind-$i.db"
  [ -f "$db.done" ] && continue
  rm -f "$db" "$db-wal" "$db-shm"
  t0=$(date +%s)
  real_rounds "$pg" "$sweep" "$db" "$rounds" "$dir/wt-A" "$head_wt" "$head_env"
  echo "$kind $i $(($(date +%s) - t0))s load $(cut -d' ' -f1 /proc/loadavg)" | tee "$db.done"
done
