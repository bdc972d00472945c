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
# shellcheck source=SCRIPTDIR/ab_gpu_lib.sh
source bench/ab_gpu_lib.sh
for every in "$@"; do build "$every" "/opt/pg-every-$every"; done
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
(cd "$out" && tar -czf dbs.tar.gz ./*.db* && rm -f ./*.db*)
log "total"
