#!/bin/bash
# `perfgate serve` start-up on a many-core machine, in one call on the GPU machine's CPUs (16 cores;
# the GPU is not used): build perfgate and web_seed, seed the 10,000-run store of
# docs/PERFORMANCE_WEB.md, then bench/web_warm_bench.sh on all cores and, in the same call, pinned
# to 2 of them (taskset).
#   bash bench/web_warm_device.sh OUTDIR          (OUTDIR gets one tarball)
set -u
OUT=${1:?usage: web_warm_device.sh OUTDIR}
R=/tmp/webwarm/res
rm -rf /tmp/webwarm; mkdir -p "$R" "$OUT"
T0=$(date +%s)
log() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$R/log.txt"; }
trap 'tar -czf "$OUT/web_warm_device.tar.gz" -C "$R" .' EXIT
# shellcheck source=SCRIPTDIR/device_env.sh
source bench/device_env.sh
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket"; free -g | head -2; } > "$R/machine.txt"
command -v curl > /dev/null || { log "no curl on this machine"; exit 1; }
log "build"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${PLOTLY_ARGS[@]}" > /tmp/webwarm/cmake.log 2>&1 &&
  cmake --build build-gpu -j16 --target perfgate web_seed >> /tmp/webwarm/cmake.log 2>&1
rc=$?; tail -n 30 /tmp/webwarm/cmake.log > "$R/cmake.log.tail"
log "build rc=$rc"; [ "$rc" = 0 ] || exit 1
log "seed"
build-gpu/tests/web/web_seed --db /tmp/webwarm/store.db --commits 1000 --envs 10 \
  --batch-sizes 1,4,8,16 --seq-lens 64,256,512 --gen-tokens 32 --reps 10 --step-at 750 \
  --step-models tiny > "$R/seed.txt" 2>&1
log "seed rc=$? $(du -h /tmp/webwarm/store.db | cut -f1)"
WORK=/tmp/webwarm/all bash bench/web_warm_bench.sh /tmp/webwarm/store.db after=build-gpu/perfgate \
  > "$R/warm_all_cores.md" 2>&1
log "all cores rc=$?"
WORK=/tmp/webwarm/two taskset -c 0,1 bash bench/web_warm_bench.sh /tmp/webwarm/store.db \
  after=build-gpu/perfgate > "$R/warm_2_cores.md" 2>&1
log "2 cores rc=$?"
log "done"
