#!/bin/bash
# Where the gap between an AOTInductor package and torch.compile comes from, in one GPU call
# (docs/PERFORMANCE.md): the 1.1B model of bench/own_model/llama_1b.json exported by
# python/export_hf.py with its static T = 1 decode program and without it (--no-decode-program),
# timed through `perfgate run --cuda-graphs on` in alternating processes; torch.compile
# reduce-overhead in several processes (default caches, caches off, and a warm cache last); and
# the GPU kernels of a decode step of each (bench/own_model/kernel_breakdown.py).
#   bash bench/own_model/decode_gap.sh OUTDIR     (OUTDIR gets one tarball: the device returns
#                                                  at most 8 files)
set -u
ROOT=$PWD CONFIG=$PWD/bench/own_model/llama_1b.json
# shellcheck source=SCRIPTDIR/../device_call.sh
source bench/device_call.sh "${1:?usage: decode_gap.sh OUTDIR}" decode_gap
log "phase 1: build, two exports, three torch.compile processes (compile only), in parallel"
build_perfgate 12 &
JOBS=($!)
for v in decode single; do
  flag=(); [ "$v" = single ] && flag=(--no-decode-program)
  mkdir -p "$W/$v/out"
  CXX=/usr/bin/g++ CC=/usr/bin/gcc python3 python/export_hf.py --config "$CONFIG" \
    --name llama-1.1b --out "$W/$v/out/llama-b{batch}.pt2" --batch 1 --context 1024 \
    --dtype bf16 --device cuda "${flag[@]}" > "$R/export_$v.log" 2>&1 &
  JOBS+=($!)
done
COMPILES=()
for c in a b off; do
  env=(); [ "$c" = off ] && env=(TORCHINDUCTOR_FORCE_DISABLE_CACHES=1)
  env "${env[@]}" python3 bench/own_model/kernel_breakdown.py compile "$CONFIG" \
    "$R/compile_$c.json" "$W/go_$c" > "$W/compile_$c.log" 2>&1 &
  COMPILES+=($!)
done
wait "${JOBS[@]}"
log "exports and build done"; tail -n 1 "$W/cmake.log"
tail -n 60 "$W/cmake.log" > "$R/cmake.log.tail"
grep -h "exported in" "$R"/export_*.log | tee -a "$R/log.txt"
cp "$W/decode/out/llama-b1.json" "$R/sidecar_decode.json"
log "phase 2: one process at a time on the GPU"
i=0
for c in a b off; do
  touch "$W/go_$c"; wait "${COMPILES[$i]}"; i=$((i + 1))
  grep -v Warn "$W/compile_$c.log" | tail -n 2 | tee -a "$R/log.txt"
done
for v in decode single; do
  python3 bench/own_model/kernel_breakdown.py aoti "$W/$v/out/llama-b1.pt2" "$R/aoti_$v.json" \
    2>&1 | grep -v Warn | tail -n 2 | tee -a "$R/log.txt"
done
cd "$W" && git init -q repo && cd repo && git -c user.email=g@x -c user.name=g commit -q \
  --allow-empty -m base && cd "$ROOT" || exit 1
for round in 1 2; do
  for v in decode single; do
    late && { log "out of time before perfgate $v round $round"; continue; }
    ln -sfn "$W/$v/out" "$W/repo/out"
    "$ROOT/build-gpu/perfgate" run --model 'aoti:out/llama-b{batch}.pt2' --device cuda --dtype bf16 \
      --batch-sizes 1 --seq-lens 128 --gen-tokens 32 --warmup 3 --reps 20 --cuda-graphs on \
      --db "$R/runs.db" --repo "$W/repo" > "$W/run.log" 2>&1
    log "perfgate $v round $round rc=$? $(grep -m1 'aoti:' "$W/run.log")"
  done
done
"$ROOT/build-gpu/perfgate" export --db "$R/runs.db" > "$R/runs.json" 2>&1
late || python3 bench/own_model/kernel_breakdown.py compile "$CONFIG" "$R/compile_warm.json" 2>&1 |
  grep -v Warn | tail -n 2 | tee -a "$R/log.txt"

log "done"
