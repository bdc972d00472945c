#!/bin/bash
# The own-model gate on the GPU machine, in one call (docs/PERFORMANCE.md, "Own models on the
# GPU"): build perfgate; export a ~1.1B Llama-style model (random weights,
# bench/own_model/llama_1b.json) as AOTInductor packages for a base and a head whose static cache
# is 8x longer (every decode step attends over more: a genuine slowdown); time the same model
# under plain torch.compile in Python (bench/own_model/compile_baseline.py); time the base package
# through `--model aoti:` with `--cuda-graphs on` and `off` in one run; then gate three commits
# (base, an A/A commit that changes nothing, the slow head) with alternating rounds through
# `--model aoti:` (with CUDA graphs when the package's decode call could be captured); then time
# the same model through `--exec` with python/perfgate_bench.py around torch.compile
# (bench/own_model_gpu_exec.py) under perfgate and standalone with the same environment
# (bench/own_model/exec_probe.sh); optionally gate through `--exec` too. Stops starting runs
# DEADLINE seconds after its start, so that a call with a time limit still returns what it
# measured.
#   bash bench/own_model/h200_gate.sh OUTDIR        (from the project root; bench/device_env.sh
#                                                    says what the tree must carry)
# Knobs (environment): ROUNDS (3), DEADLINE (565), EXEC_PROBE (1; 0 skips the --exec timings),
# SINGLE (0; 1 also exports the base with --no-decode-program and times both packages, with
# CUDA graphs, in alternating processes before the gate),
# EXEC_GATE (0; 1 also gates through --exec), INDUCTOR_CONFIG (e.g. coordinate_descent_tuning=true:
# one Inductor option, given to the exports as --inductor-config and to the torch.compile peer),
# and for a dry run on a CPU: PG_DEVICE=cpu,
# PG_DTYPE=fp32, MODEL_CONFIG=<a tiny config>, PERFGATE_BIN=<a built perfgate> (no build).
set -u
OUT=${1:?usage: h200_gate.sh OUTDIR}
T0=$(date +%s)
ROOT=$PWD W=/tmp/owngate
ROUNDS=${ROUNDS:-3} DEADLINE=${DEADLINE:-565} EXEC_GATE=${EXEC_GATE:-0} EXEC_PROBE=${EXEC_PROBE:-1}
SINGLE=${SINGLE:-0}
DEVICE=${PG_DEVICE:-cuda} DTYPE=${PG_DTYPE:-bf16}
CONFIG=$(realpath "${MODEL_CONFIG:-bench/own_model/llama_1b.json}")
CTX_BASE=1024 CTX_HEAD=8192 P=128 G=32 REPS=20
rm -rf "$W"; mkdir -p "$W" "$OUT"
log() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$OUT/log.txt"; }
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
if [ "$DEVICE" = cuda ]; then
  # shellcheck source=SCRIPTDIR/../device_env.sh
  source bench/device_env.sh
  echo "$device_info" > "$OUT/device.txt"
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
  # The GPU's clocks, power and temperature through the whole call, once a second.
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv -l 1 > "$OUT/gpu_clocks.csv" 2>&1 &
  CLOCKS=$!
fi
export PYTHONUNBUFFERED=1

log "phase 1: build, two exports, torch.compile peer, exec warm-up (in parallel)"
PG=${PERFGATE_BIN:-}
BUILD=
if [ -z "$PG" ]; then
  PG=$ROOT/build-gpu/perfgate
  ( cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${PLOTLY_ARGS[@]}" > "$W/cmake.log" 2>&1 &&
      cmake --build build-gpu -j12 --target perfgate >> "$W/cmake.log" 2>&1
    echo "build rc=$?" >> "$W/cmake.log" ) &
  BUILD=$!
fi
# The image's $CXX (/opt/gcc) links libstdc++ statically into an AOTInductor package, whose
# std::regex then crashes on the process's libstdc++ (docs/OWN_MODEL_AOTI.md): the system g++.
export_pkg() {  # $1 = dir, $2 = context, $3... = more export_hf.py arguments
  local dir=$1 ctx=$2; shift 2
  local inductor=()
  [ -n "${INDUCTOR_CONFIG:-}" ] && inductor=(--inductor-config "$INDUCTOR_CONFIG")
  CXX=/usr/bin/g++ CC=/usr/bin/gcc python3 python/export_hf.py --config "$CONFIG" \
    --name llama-1.1b --out "$dir/llama-b{batch}.pt2" --batch 1 --context "$ctx" --dtype "$DTYPE" \
    --device "$DEVICE" "${inductor[@]}" "$@" > "$dir.log" 2>&1
  echo "export rc=$?" >> "$dir.log"
}
export_pkg "$W/pkg_base" "$CTX_BASE" & E1=$!
export_pkg "$W/pkg_head" "$CTX_HEAD" & E2=$!
E3=
[ "$SINGLE" = 1 ] && { export_pkg "$W/pkg_single" "$CTX_BASE" --no-decode-program & E3=$!; }
BASELINE_DEVICE=$DEVICE BASELINE_DTYPE=$DTYPE python3 bench/own_model/compile_baseline.py \
  "$CONFIG" "$P" "$G" "$REPS" "$W/phase1.done" > "$OUT/baseline.json" 2> "$W/baseline.err" &
BASE=$!
# The three commits of the gate; model.json is what bench/own_model_gpu_exec.py reads.
R=$W/repo; mkdir -p "$R"; cd "$R" || exit 1
git init -q; git config user.email g@x; git config user.name g
model_json() { python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["context"]=int(sys.argv[2]); print(json.dumps(c))' "$CONFIG" "$1" > model.json; }
model_json "$CTX_BASE"; git add .; git commit -qm "base"; C1=$(git rev-parse HEAD)
echo "docs only" > README; git add .; git commit -qm "A/A: docs only"; C2=$(git rev-parse HEAD)
model_json "$CTX_HEAD"; git add .; git commit -qm "head: 8x longer static cache"; C3=$(git rev-parse HEAD)
for c in "$C1" "$C2" "$C3"; do git worktree add -q --detach "$W/wt-$c" "$c"; mkdir -p "$W/wt-$c/out"; done
cd "$ROOT" || exit 1
echo "$C1 base, $C2 A/A head, $C3 slow head" > "$OUT/commits.txt"
# Warm torch.compile's cache for the head's exec runs (the base's is warmed by the peer above).
[ "$EXEC_GATE" = 1 ] && ( cd "$W/wt-$C3" && PERFGATE_DEVICE=$DEVICE PERFGATE_DTYPE=$DTYPE PERFGATE_PROMPT_LEN=$P \
    PERFGATE_GEN_TOKENS=$G PERFGATE_WARMUP=1 PERFGATE_REPS=1 PERFGATE_CUDA_GRAPHS=on \
    OWN_MODEL_CONFIG=model.json python3 "$ROOT/bench/own_model_gpu_exec.py" > /dev/null 2> "$W/warm.err" ) &
WARM=$!
wait "$E1" "$E2" $E3; log "exports done"
[ -n "$BUILD" ] && wait "$BUILD"; log "build done"
wait "$WARM"; log "exec warm-up done: $(tail -n 1 "$W/warm.err")"
touch "$W/phase1.done"
grep -B2 -A12 "CMake Error\| error" "$W/cmake.log" | head -40; tail -n 1 "$W/cmake.log"
for f in "$W/pkg_base.log" "$W/pkg_head.log"; do grep -v Warning "$f" | tail -n 6 | tee -a "$OUT/log.txt"; done
cp "$W/pkg_base/llama-b1.json" "$OUT/sidecar_base.json"; cp "$W/pkg_head/llama-b1.json" "$OUT/sidecar_head.json"
for c in "$C1" "$C2"; do ln "$W"/pkg_base/llama-b1.* "$W/wt-$c/out/"; done
ln "$W"/pkg_head/llama-b1.* "$W/wt-$C3/out/"
wait "$BASE"; log "peer rc=$?"; cat "$OUT/baseline.json"; tail -n 3 "$W/baseline.err"
[ -x "$PG" ] || { log "no perfgate binary"; exit 1; }

AOTI=(--model 'aoti:out/llama-b{batch}.pt2')
COMMON=(--device "$DEVICE" --dtype "$DTYPE" --batch-sizes 1 --seq-lens "$P" --gen-tokens "$G" --warmup 3)
log "phase 2: the base package with --cuda-graphs on and off (is its decode call capturable?)"
probe() {
  "$PG" run "${AOTI[@]}" "${COMMON[@]}" --reps "$REPS" --cuda-graphs on,off --db "$W/probe.db" \
    --repo "$W/wt-$C1" --json "$OUT/probe.json" > "$OUT/probe.txt" 2>&1
}
probe; rc=$?
log "probe rc=$rc"
if [ "$rc" -ge 128 ]; then
  log "crashed: again with the system libstdc++ preloaded"
  LD_PRELOAD=$(/usr/bin/g++ -print-file-name=libstdc++.so.6); export LD_PRELOAD
  probe; rc=$?; log "probe with LD_PRELOAD=$LD_PRELOAD rc=$rc"
fi
tail -n 20 "$OUT/probe.txt"
GRAPHS=off
if python3 -c 'import json,sys
cells = json.load(open(sys.argv[1]))["runs"][0]["cells"]
for c in cells:
    m = c.get("metrics", {})
    print("probe cell: graphs", c["key"]["cuda_graphs"], c["status"], c.get("reason"), "tpot_ms",
          m.get("tpot_ms"), "cv", m.get("cv"))
sys.exit(0 if any(c["key"]["cuda_graphs"] and c["status"] == "ok" for c in cells) else 1)' \
  "$OUT/probe.json" > "$W/probe_cells.txt" 2>&1
then
  GRAPHS=on
fi
tee -a "$OUT/log.txt" < "$W/probe_cells.txt"
if [ "$SINGLE" = 1 ] && [ -f "$W/pkg_single/llama-b1.pt2" ]; then
  log "phase 2b: the base package with and without its decode program, alternating processes"
  git -C "$R" worktree add -q --detach "$W/wt-single" "$C1"; mkdir -p "$W/wt-single/out"
  ln "$W"/pkg_single/llama-b1.* "$W/wt-single/out/"
  for r in 1 2; do
    for v in "$C1" single; do
      "$PG" run "${AOTI[@]}" "${COMMON[@]}" --reps "$REPS" --cuda-graphs "$GRAPHS" \
        --db "$W/single.db" --repo "$W/wt-$v" > "$W/run.log" 2>&1
      log "decode program of ${v:0:8} (single = none), round $r: rc=$? $(grep -m1 'aoti:' "$W/run.log")"
    done
  done
fi
log "gating with --cuda-graphs $GRAPHS"

gate_runs() {  # $1 = name (db), $2 = seconds one run needs at least, $3... = perfgate run arguments
  local name=$1 need=$2 r c t rc; shift 2
  for ((r = 1; r <= ROUNDS; r++)); do
    local order=("$C1" "$C2" "$C3")
    ((r % 2)) || order=("$C3" "$C2" "$C1")
    for c in "${order[@]}"; do
      if [ "$(left)" -lt "$need" ]; then log "$name: out of time before round $r"; return; fi
      t=$(date +%s%N)
      "$PG" run "$@" --db "$W/$name.db" --repo "$W/wt-$c" --quiet > "$W/run.log" 2>&1
      rc=$?
      echo "$name ${c:0:8} round $r rc=$rc wall_ms=$((($(date +%s%N) - t) / 1000000))" | tee -a "$OUT/runs.txt"
      [ "$rc" = 0 ] || tail -n 8 "$W/run.log"
    done
  done
}
judge() {  # $1 = name
  local k h
  for k in aa slow; do
    h=$C2; [ $k = slow ] && h=$C3
    "$PG" compare --db "$W/$1.db" --repo "$R" --base "$C1" --head "$h" --json "$OUT/${1}_$k.json" \
      > "$OUT/${1}_$k.txt" 2>&1
    log "$1 $k: compare exit $?"
    head -n 25 "$OUT/${1}_$k.txt"
  done
}
gate_runs aoti 40 "${AOTI[@]}" "${COMMON[@]}" --reps "$REPS" --cuda-graphs "$GRAPHS"
judge aoti
EXEC_CMD="OWN_MODEL_CONFIG=model.json python3 $ROOT/bench/own_model_gpu_exec.py"
if [ "$EXEC_PROBE" = 1 ]; then
  log "phase 3: the same model through --exec, under perfgate and standalone"
  # shellcheck source=SCRIPTDIR/exec_probe.sh
  source "$ROOT/bench/own_model/exec_probe.sh"
fi
if [ "$EXEC_GATE" = 1 ]; then
  log "phase 4: gate through --exec and python/perfgate_bench.py (torch.compile)"
  EXEC=(--exec "$EXEC_CMD" --model llama-1.1b --exec-timeout 300)
  gate_runs exec 50 "${EXEC[@]}" "${COMMON[@]}" --reps "$REPS" --cuda-graphs on
  judge exec
fi
cp "$W"/aoti.db "$W"/exec.db "$W"/probe.db "$W"/execprobe.db "$W"/single.db "$OUT/" 2> /dev/null
for f in cmake.log pkg_base.log pkg_head.log pkg_single.log baseline.err warm.err; do tail -n 40 "$W/$f" > "$OUT/$f.tail" 2> /dev/null; done
[ -n "${CLOCKS:-}" ] && kill "$CLOCKS"
log "done"
