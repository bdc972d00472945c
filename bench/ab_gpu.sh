#!/usr/bin/env bash
# `perfgate ab` on the GPU machine (bench/device_env.sh says what the tree carries):
#   bench/ab_gpu.sh OUT [EVERY...]
# Builds perfgate as shipped and, for each EVERY, a perfgate-runner with one extra copy kernel in
# every EVERY-th layer (runner/CMakeLists.txt PERFGATE_EXTRA_COPY_EVERY: a genuine decode
# slowdown). Then, on the shipped GPU sweep (ci/sweeps/gpu-default.toml): one `perfgate run` (the
# cost of one unpaired run), one A/A `perfgate ab` of two commits with the same tree, and one A/B
# `perfgate ab` per EVERY whose head worker is the slowed runner, each judged by `perfgate
# compare`. Timings of every step in OUT/log.txt.
set -uo pipefail
out=${1:?usage: ab_gpu.sh OUT [EVERY...]}
shift
cd "$(dirname "$0")/.." || exit 1
source .device-debs/env.sh
export PATH=/opt/devroot/usr/bin:$PATH
echo /opt/devroot/usr/lib/x86_64-linux-gnu > /etc/ld.so.conf.d/zz-devroot.conf && ldconfig
mkdir -p "$out"
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$out/log.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$out/log.txt"
build() {  # build EVERY DEST
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPERFGATE_BUILD_TESTS=OFF \
    -DPERFGATE_EXTRA_COPY_EVERY="$1" -DPERFGATE_PLOTLY_JS="$PWD/.device-debs/plotly.min.js" \
    > "$out/cmake-$1.log" 2>&1 &&
    cmake --build build-gpu -j16 --target perfgate perfgate-runner >> "$out/cmake-$1.log" 2>&1 ||
    { tail -30 "$out/cmake-$1.log"; exit 1; }
  mkdir -p "$2" && cp build-gpu/perfgate build-gpu/perfgate-runner "$2/"
  log "built copy-every $1 into $2"
}
build 0 /opt/pg-shipped
for every in "$@"; do build "$every" "/opt/pg-every-$every"; done
pg=/opt/pg-shipped/perfgate
repo=/opt/abcal/repo
rm -rf /opt/abcal && mkdir -p $repo && git init -q -b main $repo
for m in A B; do git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"; done
A=$(git -C $repo rev-parse main~1) B=$(git -C $repo rev-parse main)
git -C $repo worktree add -q --detach /opt/abcal/A "$A"
git -C $repo worktree add -q --detach /opt/abcal/B "$B"
sweep=ci/sweeps/gpu-default.toml
stamp() { while IFS= read -r l; do echo "$(($(date +%s%N) / 1000000)) $l"; done; }

log "perfgate run (one unpaired run of the sweep)"
$pg run --config $sweep --repo /opt/abcal/A --db "$out/run.db" --profile off --quiet > "$out/run.txt" 2>&1
log "perfgate run done"
log "perfgate ab A/A"
$pg ab --config $sweep --base /opt/abcal/A --head /opt/abcal/B --db "$out/aa.db" --profile off \
  --order-seed 1 2> >(stamp > "$out/aa-progress.txt") > "$out/aa.txt"
log "perfgate ab A/A done (rc $?)"
$pg compare --base "$A" --head "$B" --db "$out/aa.db" --min-effect 0.002 > "$out/aa-compare.txt" 2>&1
log "A/A compare rc $?"
for every in "$@"; do
  log "perfgate ab A/B copy-every $every"
  $pg ab --config $sweep --base /opt/abcal/A --head /opt/abcal/B --db "$out/ab-$every.db" \
    --profile off --order-seed 2 --head-worker "/opt/pg-every-$every/perfgate-runner worker" \
    > "$out/ab-$every.txt" 2>&1
  log "perfgate ab A/B copy-every $every done (rc $?)"
  $pg compare --base "$A" --head "$B" --db "$out/ab-$every.db" --min-effect 0.002 \
    > "$out/ab-$every-compare.txt" 2>&1
  log "A/B copy-every $every compare rc $?"
done
tar -czf "$out/dbs.tar.gz" -C "$out" $(cd "$out" && ls ./*.db) && rm -f "$out"/*.db
rm -f "$out"/cmake-*.log
log "total"
