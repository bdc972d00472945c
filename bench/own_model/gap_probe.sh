#!/bin/bash
# What makes the AOTInductor package's decode step idle between kernels where torch.compile is
# not (docs/PERFORMANCE.md), in one GPU call, without a perfgate build: the 1.1B model
# of bench/own_model/llama_1b.json under torch.compile(mode="reduce-overhead") in processes with
# a cold and then a warm Inductor cache, each with Inductor's static CUDA launcher on (default)
# and off; and exported by AOTInductor at a static T = 1 (the decode program's shape) with
# default options and with $VARIANT_OPTIONS. Every process writes kernel_breakdown.py's JSON,
# whose "gaps" holds the idle time before each kernel of 10 profiled steps.
#   bash bench/own_model/gap_probe.sh OUTDIR        (OUTDIR gets one tarball)
set -u
CONFIG=$PWD/bench/own_model/llama_1b.json KB=bench/own_model/kernel_breakdown.py
# shellcheck source=SCRIPTDIR/../device_call.sh
source bench/device_call.sh "${1:?usage: gap_probe.sh OUTDIR}" gap_probe
export CXX=/usr/bin/g++ CC=/usr/bin/gcc
VARIANT=${VARIANT_OPTIONS:-'{"coordinate_descent_tuning": true}'}
echo "variant options: $VARIANT" >> "$R/log.txt"
log "phase 1: compiles and exports in parallel, none timed yet"
declare -A PIDS
start() {  # name, env..., -- args...
  local name=$1; shift
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done; shift
  env "${env[@]}" python3 "$KB" "$@" > "$W/$name.log" 2>&1 &
  PIDS[$name]=$!
}
start cold_static TORCHINDUCTOR_CACHE_DIR="$W/ind_static" -- compile "$CONFIG" "$R/cold_static.json" "$W/go_cold_static"
start cold_nostatic TORCHINDUCTOR_CACHE_DIR="$W/ind_nostatic" TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0 -- \
  compile "$CONFIG" "$R/cold_nostatic.json" "$W/go_cold_nostatic"
start aoti_default TORCHINDUCTOR_CACHE_DIR="$W/ind_aoti" -- \
  aoti-static "$CONFIG" "$R/aoti_default.json" "$W/default.pt2" "$W/go_aoti_default"
start aoti_variant TORCHINDUCTOR_CACHE_DIR="$W/ind_aoti2" AOTI_OPTIONS="$VARIANT" -- \
  aoti-static "$CONFIG" "$R/aoti_variant.json" "$W/variant.pt2" "$W/go_aoti_variant"
# Each says GO.ready once compiled and then waits for GO: time them one at a time, after all
# have compiled (or died).
for name in cold_static cold_nostatic aoti_default aoti_variant; do
  until [ -e "$W/go_$name.ready" ] || ! kill -0 "${PIDS[$name]}" 2>/dev/null || late; do sleep 2; done
done
log "all compiled"
for name in cold_static cold_nostatic aoti_default aoti_variant; do
  touch "$W/go_$name"; wait "${PIDS[$name]}"; log "$name rc=$?"
  grep -v -i warn "$W/$name.log" | tail -n 3 | tee -a "$R/log.txt"
  cp "$W/$name.log" "$R/$name.log"
done
log "phase 2: warm caches, one process at a time"
for spec in "warm_static:TORCHINDUCTOR_CACHE_DIR=$W/ind_static" \
            "warm_nostatic:TORCHINDUCTOR_CACHE_DIR=$W/ind_nostatic TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0" \
            "warm_static_on_nostatic_cache:TORCHINDUCTOR_CACHE_DIR=$W/ind_nostatic"; do
  name=${spec%%:*}; envs=${spec#*:}
  late && { log "out of time before $name"; continue; }
  # shellcheck disable=SC2086
  env $envs python3 "$KB" compile "$CONFIG" "$R/$name.json" > "$R/$name.log" 2>&1
  log "$name rc=$?"; grep -v -i warn "$R/$name.log" | tail -n 2 | tee -a "$R/log.txt"
done
for pkg in default variant; do
  late && { log "out of time before eager-loading $pkg"; continue; }
  CUDA_MODULE_LOADING=EAGER python3 "$KB" aoti "$W/$pkg.pt2" "$R/aoti_${pkg}_eager_loading.json" \
    > "$R/aoti_${pkg}_eager_loading.log" 2>&1
  log "aoti $pkg eager loading rc=$?"
done
python3 - "$R" <<'PY' | tee -a "$R/log.txt"
import json, os, sys
for f in sorted(os.listdir(sys.argv[1])):
    if f.endswith(".json"):
        d = json.load(open(os.path.join(sys.argv[1], f)))
        g = d.get("gaps", {})
        print(f"{f:40s} step {d['graphs']['tpot_ms_median']*1e3:7.1f} us  idle {g.get('idle_us_per_step', 0):6.1f} us  "
              f"kernels/step {g.get('kernels_per_step', 0):5.1f}  {list(g.get('by_kinds', {}).items())[:4]}")
PY
log "done"
