# The slow side of the real gate tests and benchmarks, and the proof that it is slow.
# Sourced, never run.
#
# A gate test that claims "the gate caught a slower head" must first show that the head really is
# slower, by the margin the test relies on: a slowdown that silently stopped working (a knob one
# CPU vendor ignores, say) would otherwise turn the test green or red for the wrong reason.
#
#   slow_env SLOW_ALLOC_SO [US]   prints the VAR=VALUE words of the slow side: the spinning
#                                 allocator of tests/common/slow_alloc.cpp preloaded, US
#                                 microseconds per tensor allocation (default 400: a decode step of
#                                 `tiny` at batch 256 makes about 21 of them, so +8.4 ms on a
#                                 step of 2-8 ms, loaded or not)
#   slow_side_check PERFGATE SWEEP MIN_RATIO VAR=VALUE...
#                                 one run of SWEEP as is and one with the variables set; fails
#                                 (returns 1, saying by how much) unless every cell's tpot_ms is at
#                                 least MIN_RATIO times slower with them
# shellcheck shell=bash

slow_env() {
  local so=${1:?slow_env: the path of libpg_slow_alloc.so} us=${2:-400}
  [ -f "$so" ] || {
    echo "slow_env: $so does not exist (it is built with the tests: cmake --build build)" >&2
    return 1
  }
  echo "LD_PRELOAD=$so PG_SLOW_ALLOC_US=$us"
}

slow_side_check() {
  local pg=$1 sweep=$2 min_ratio=$3
  shift 3
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-slowcheck-XXXXXX")
  local rc=0
  if ! "$pg" run --config "$sweep" --db "$dir/base.db" --quiet >/dev/null 2>"$dir/err" ||
    ! env "$@" "$pg" run --config "$sweep" --db "$dir/slow.db" --quiet >/dev/null 2>>"$dir/err"; then
    echo "slow side check: a run failed:" >&2
    cat "$dir/err" >&2
    rm -rf "$dir"
    return 1
  fi
  "$pg" export --db "$dir/base.db" --format json >"$dir/base.json"
  "$pg" export --db "$dir/slow.db" --format json >"$dir/slow.json"
  # shellcheck disable=SC2016  # a Python program
  python3 -c '
import json, sys
def tpot(path):
    cells = json.load(open(path))["runs"][0]["cells"]
    return {json.dumps(c["key"], sort_keys=True): c["metrics"]["tpot_ms"] for c in cells}
base, slow, need = tpot(sys.argv[1]), tpot(sys.argv[2]), float(sys.argv[3])
worst = min(slow[k] / base[k] for k in base)
for k in sorted(base):
    print(f"slow side check: tpot {base[k]:.4g} ms -> {slow[k]:.4g} ms (x{slow[k] / base[k]:.2f}) in {k}")
if worst < need:
    print(f"slow side check: FAILED: the slow side is only x{worst:.2f} slower, the test needs "
          f"x{need:.2f}: its slowdown no longer works here, so no verdict below would mean anything")
    sys.exit(1)
print(f"slow side check: ok, x{worst:.2f} slower (needs x{need:.2f})")' \
    "$dir/base.json" "$dir/slow.json" "$min_ratio" || rc=1
  rm -rf "$dir"
  return "$rc"
}
