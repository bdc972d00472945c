# shellcheck shell=bash disable=SC2034,SC2154  # pg, A, B, t0 for the scripts that source it; out from them
# Sourced by bench/ab_gpu.sh and bench/ab_gpu_study.sh on the GPU machine, in the project's root,
# after `out` is set: the Debian packages of .device-debs, log (to $out/log.txt), build EVERY DEST
# (perfgate and perfgate-runner, with PERFGATE_EXTRA_COPY_EVERY=EVERY, copied to DEST), the
# shipped build in /opt/pg-shipped ($pg), and a repository of two commits with one tree, A and B,
# checked out in /opt/abcal/A and /opt/abcal/B.
# shellcheck source=/dev/null
source .device-debs/env.sh
export PATH=/opt/devroot/usr/bin:$PATH
echo /opt/devroot/usr/lib/x86_64-linux-gnu > /etc/ld.so.conf.d/zz-devroot.conf && ldconfig
mkdir -p "$out" /opt/gates
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$out/log.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$out/log.txt"
build() {  # build EVERY DEST
  if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPERFGATE_BUILD_TESTS=OFF \
    -DPERFGATE_EXTRA_COPY_EVERY="$1" -DPERFGATE_PLOTLY_JS="$PWD/.device-debs/plotly.min.js" &&
    cmake --build build-gpu -j16 --target perfgate perfgate-runner; } > "/opt/gates/cmake-$1.log" 2>&1; then
    tail -30 "/opt/gates/cmake-$1.log"
    exit 1
  fi
  mkdir -p "$2" && cp build-gpu/perfgate build-gpu/perfgate-runner "$2/"
  log "built copy-every $1 into $2"
}
build 0 /opt/pg-shipped
pg=/opt/pg-shipped/perfgate
repo=/opt/abcal/repo
rm -rf /opt/abcal && mkdir -p $repo && git init -q -b main $repo
for m in A B; do git -C $repo -c user.name=pg -c user.email=pg@local commit -q --allow-empty -m "$m"; done
A=$(git -C $repo rev-parse main~1) B=$(git -C $repo rev-parse main)
git -C $repo worktree add -q --detach /opt/abcal/A "$A"
git -C $repo worktree add -q --detach /opt/abcal/B "$B"
