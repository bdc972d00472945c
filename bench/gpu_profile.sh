#!/usr/bin/env bash
# Where a GPU decode step's time goes for each MODEL at batch 1, prompt 512, bf16:
# the host time per ATen operator of an eager step and the graph replay with each decode-attention
# form (lm_decode_profile), and Nsight Compute's kernel list of one graph replay.
# Usage (GPU machine, repo root, after bench/gpu_build.sh): bench/gpu_profile.sh OUTDIR MODEL...
# Summarise here with: python3 bench/ncu_summary.py OUTDIR/ncu_*.csv
set -uo pipefail
out=${1:?usage: gpu_profile.sh OUTDIR MODEL...}
shift
cd "$(dirname "$0")/.." || exit 1
tool=build-gpu/runner/lm_decode_profile
ncu=$(command -v ncu || find /opt/nvidia/nsight-compute -name ncu -type f 2>/dev/null | head -1)
for m in "$@"; do
  $tool "$m" 1 512 > "$out/host_profile_$m.md" 2>&1
  grep -E "^#|eager step|graph step" "$out/host_profile_$m.md"
  timeout 200 "$ncu" --profile-from-start off --clock-control none --cache-control none \
    --metrics gpu__time_duration.sum --csv --page raw $tool "$m" 1 512 graph \
    > "$out/ncu_${m}_graph.csv" 2>/dev/null
  echo "ncu $m rc=$? lines=$(wc -l < "$out/ncu_${m}_graph.csv")"
done
