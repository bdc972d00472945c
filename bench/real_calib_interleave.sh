#!/usr/bin/env bash
# Collects A/A and A/B calibration gates interleaved (docs/STATISTICS.md), so that drift of
# the machine over the collection falls on every kind and level alike: it cycles through a
# schedule of kinds, one gate of each per turn, through bench/real_gates_collect.sh (one SQLite
# database per gate, base and head in alternating rounds as ci/scripts/pr_bench.sh runs them).
#   bench/real_calib_interleave.sh --dir DIR --until HH:MM [--rounds 3] [--schedule FILE]
# The schedule is read again before each turn (so a level can be added while it runs): one entry
# a line, "aa" or "ab N" (N = PERFGATE_CALIBRATION_EXTRA_MATMULS of the head, build-calib's
# perfgate on both sides). A/A gates run build/perfgate (the shipped build). DIR/aa, DIR/ab-N get
# the databases; DIR/context.log gets, per gate, the time, the load average and the five busiest
# processes beside it (niceness, %CPU, name).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="" until="" rounds=3 schedule=""
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2 ;;
    --until) until=$2 ;;
    --rounds) rounds=$2 ;;
    --schedule) schedule=$2 ;;
    *) echo "real_calib_interleave.sh: unknown argument $1" >&2 && exit 2 ;;
  esac
  shift 2
done
if [ -z "$dir" ] || [ -z "$until" ]; then
  echo "real_calib_interleave.sh: --dir and --until are required" >&2 && exit 2
fi
mkdir -p "$dir"
[ -n "$schedule" ] || { schedule="$dir/schedule.txt" && printf 'aa\nab 100\n' >"$schedule"; }
end=$(date -d "$until" +%s)
next_gate() { # next_gate DIR KIND: the number of the first gate of DIR not yet done
  local i=1
  while [ -f "$1/$2-$i.db.done" ]; do i=$((i + 1)); done
  echo "$i"
}
collect=("$root/bench/real_gates_collect.sh" --rounds "$rounds")
while (($(date +%s) < end)); do
  mapfile -t entries < <(grep -v '^ *#' "$schedule" | grep .)
  for entry in "${entries[@]}"; do
    (($(date +%s) < end)) || break
    read -r kind level <<<"$entry"
    if [ "$kind" = aa ]; then
      sub="$dir/aa"
      i=$(next_gate "$sub" aa)
      "${collect[@]}" --dir "$sub" --kind aa --gates "$i" --perfgate "$root/build/perfgate"
    else
      sub="$dir/ab-$level"
      i=$(next_gate "$sub" ab)
      "${collect[@]}" --dir "$sub" --kind ab --gates "$i" --perfgate "$root/build-calib/perfgate" \
        --head-env "PERFGATE_CALIBRATION_EXTRA_MATMULS=$level"
    fi
    # top's second frame: %CPU over the last half second, not since each process started.
    busy=$(top -b -n 2 -d 0.5 -w 200 | awk '/^ *PID/ {frame++; next} frame == 2 && n < 5 && $1 ~ /^[0-9]+$/ {printf "%s/%s/%s ", $4, $9, $12; n++}')
    echo "$(date -u +%FT%TZ) $(basename "$sub") $i load $(cut -d' ' -f1-3 /proc/loadavg) busy $busy" >>"$dir/context.log"
  done
done
