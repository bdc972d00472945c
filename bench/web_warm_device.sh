#!/bin/bash
# `perfgate serve` start-up on a many-core machine, in one call on the GPU machine's CPUs (16 cores;
# the GPU is not used): build perfgate and web_seed, seed the 10,000-run store of
# docs/PERFORMANCE.md, then bench/web_warm_bench.sh on all cores and, in the same call, pinned
# to 2 of them (taskset).
#   bash bench/web_warm_device.sh OUTDIR          (OUTDIR gets one tarball)
set -u
# shellcheck source=SCRIPTDIR/device_call.sh
source bench/device_call.sh "${1:?usage: web_warm_device.sh OUTDIR}" web_warm_device
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket"; free -g | head -2; } > "$R/machine.txt"
command -v curl > /dev/null || { log "no curl on this machine"; exit 1; }
log "build"
build_perfgate 16 perfgate web_seed
rc=$?; tail -n 30 "$W/cmake.log" > "$R/cmake.log.tail"
log "build rc=$rc"; [ "$rc" = 0 ] || exit 1
log "seed"
build-gpu/tests/web/web_seed --db "$W"/store.db --commits 1000 --envs 10 \
  --batch-sizes 1,4,8,16 --seq-lens 64,256,512 --gen-tokens 32 --reps 10 --step-at 750 \
  --step-models tiny > "$R/seed.txt" 2>&1
log "seed rc=$? $(du -h "$W"/store.db | cut -f1)"
save
WORK=$W/all bash bench/web_warm_bench.sh "$W"/store.db after=build-gpu/perfgate \
  > "$R/warm_all_cores.md" 2>&1
log "all cores rc=$?"
save
late && { log "out of time before the 2-core run"; exit 0; }
WORK=$W/two taskset -c 0,1 bash bench/web_warm_bench.sh "$W"/store.db \
  after=build-gpu/perfgate > "$R/warm_2_cores.md" 2>&1
log "2 cores rc=$?"
log "done"
