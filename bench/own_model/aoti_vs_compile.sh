#!/bin/bash
# The AOTInductor package against torch.compile on the H200 with the same Inductor options on
# both sides, in one GPU call (docs/PERFORMANCE.md): the 1.1B model of
# bench/own_model/llama_1b.json exported by python/export_hf.py with Inductor's defaults and with
# `--inductor-config coordinate_descent_tuning=true` (gpt-fast's decode setting), each timed by
# `perfgate run --cuda-graphs on` in alternating processes; and the same model under
# torch.compile(mode="reduce-overhead") with each option set, in a process that compiles from an
# empty Inductor cache ("cold") and in one that loads the code that process left ("warm").
#   bash bench/own_model/aoti_vs_compile.sh OUTDIR       (OUTDIR gets one tarball)
set -u
ROOT=$PWD CONFIG=$PWD/bench/own_model/llama_1b.json KB=bench/own_model/kernel_breakdown.py
# shellcheck source=SCRIPTDIR/../device_call.sh
source bench/device_call.sh "${1:?usage: aoti_vs_compile.sh OUTDIR}" aoti_vs_compile
export CXX=/usr/bin/g++ CC=/usr/bin/gcc
log "phase 1: build, two exports, two torch.compile processes (compile only), in parallel"
build_perfgate 8 &
JOBS=($!)
for v in default cdt; do
  flag=(); [ "$v" = cdt ] && flag=(--inductor-config coordinate_descent_tuning=true)
  mkdir -p "$W/$v/out"
  TORCHINDUCTOR_CACHE_DIR="$W/ind_export_$v" python3 python/export_hf.py --config "$CONFIG" \
    --name llama-1.1b --out "$W/$v/out/llama-b{batch}.pt2" --batch 1 --context 1024 \
    --dtype bf16 --device cuda "${flag[@]}" > "$R/export_$v.log" 2>&1 &
  JOBS+=($!)
done
declare -A CPID
for v in default cdt; do
  env=(TORCHINDUCTOR_CACHE_DIR="$W/ind_$v")
  [ "$v" = cdt ] && env+=(TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1)
  env "${env[@]}" python3 "$KB" compile "$CONFIG" "$R/compile_cold_$v.json" "$W/go_$v" \
    > "$R/compile_cold_$v.log" 2>&1 &
  CPID[$v]=$!
done
wait "${JOBS[@]}"
for v in default cdt; do
  until [ -e "$W/go_$v.ready" ] || ! kill -0 "${CPID[$v]}" 2>/dev/null || late; do sleep 2; done
done
log "exports, build and compiles done"; tail -n 1 "$W/cmake.log" | tee -a "$R/log.txt"
tail -n 40 "$W/cmake.log" > "$R/cmake.log.tail"
grep -h "exported in" "$R"/export_*.log | tee -a "$R/log.txt"
for v in default cdt; do cp "$W/$v/out/llama-b1.json" "$R/sidecar_$v.json" 2>/dev/null; done
log "phase 2: one process at a time on the GPU"
for v in default cdt; do
  touch "$W/go_$v"; wait "${CPID[$v]}"; log "compile cold $v rc=$?"
  grep -v -i warn "$R/compile_cold_$v.log" | tail -n 1 | tee -a "$R/log.txt"
done
cd "$W" && git init -q repo && cd repo && git -c user.email=g@x -c user.name=g commit -q \
  --allow-empty -m base && cd "$ROOT" || exit 1
for round in 1 2 3; do
  for v in cdt default; do
    late && { log "out of time before perfgate $v round $round"; continue; }
    ln -sfn "$W/$v/out" "$W/repo/out"
    "$ROOT/build-gpu/perfgate" run --model 'aoti:out/llama-b{batch}.pt2' --device cuda \
      --dtype bf16 --batch-sizes 1 --seq-lens 128 --gen-tokens 32 --warmup 3 --reps 20 \
      --cuda-graphs on --db "$R/runs.db" --repo "$W/repo" --json "$R/run_${v}_$round.json" \
      > "$W/run.log" 2>&1
    log "perfgate $v round $round rc=$?"; tail -n 4 "$W/run.log" | tee -a "$R/log.txt"
  done
done
python3 - "$R" <<'PY' | tee -a "$R/log.txt"
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "run_*.json"))):
    for c in json.load(open(f))["runs"][0]["cells"]:
        m = c.get("metrics", {})
        print(os.path.basename(f), c["status"], c.get("reason") or "", "tpot_ms", m.get("tpot_ms"),
              "cv", m.get("cv"))
PY
for v in default cdt; do
  late && { log "out of time before compile warm $v"; continue; }
  env=(TORCHINDUCTOR_CACHE_DIR="$W/ind_$v")
  [ "$v" = cdt ] && env+=(TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1)
  env "${env[@]}" python3 "$KB" compile "$CONFIG" "$R/compile_warm_$v.json" \
    > "$R/compile_warm_$v.log" 2>&1
  log "compile warm $v rc=$?"; grep -v -i warn "$R/compile_warm_$v.log" | tail -n 1 | tee -a "$R/log.txt"
done
python3 - "$R" <<'PY' | tee -a "$R/log.txt"
import json, os, sys
for f in sorted(os.listdir(sys.argv[1])):
    if f.startswith("compile_") and f.endswith(".json"):
        d = json.load(open(os.path.join(sys.argv[1], f)))
        g = d.get("gaps", {})
        print(f"{f:28s} step {d['graphs']['tpot_ms_median']*1e3:7.1f} / {d['graphs_again']['tpot_ms_median']*1e3:7.1f} us"
              f"  idle {g.get('idle_us_per_step', 0):6.1f} us  kernels/step {g.get('kernels_per_step', 0):5.1f}")
PY
log "done"
