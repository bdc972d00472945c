#!/usr/bin/env bash
# Does `perfgate compare` explain a regression from the profiles, on a real GPU, for both ways of
# measuring your own model (issue 26, item 5)? A ~1.1B-parameter Llama-style model (random
# weights, bench/explain/llama_1b.json: hidden 2048, 22 layers, like TinyLlama) at three commits
# of a scratch repository (bench/explain/variant_model.py):
#   base       the model
#   extra_op   x * sigmoid(x) on every layer's attention output: an unfused elementwise op
#   item_sync  the base model, the benchmark reading the new token back with .item() every step
# measured at batch 1 over a short sweep of prompt lengths through an AOTInductor package
# (`--model aoti:`, base and extra_op: the sync is the benchmark's, not the package's) and through
# `--exec` with python/perfgate_bench.py (bench/explain/exec_bench.py: eager, decode in one CUDA
# graph; its profile is protocol 2's profile line from torch.profiler). Then `perfgate compare
# --format json` per head, and bench/explain/check.py prints a table and checks that the
# explanation names the added kernels (a name with "sigmoid"), that what it accounts for (the
# profiled kernels' time, and the gaps the added kernels bring at the base's gap per kernel in the
# timed runs) is within 15% of the measured tpot change, and that item_sync shows one more
# host-device sync per decode step. The table's "listed / tpot" is that share, "kernels / tpot"
# the kernels' alone; the end of the log repeats each regressed cell's accounting lines from the
# text report. Writes everything to OUTDIR; exit 1 when a check fails.
#   bash bench/explain_gpu.sh OUTDIR                    GPU machine, project root, after a build in
#                                                       build-gpu (bench/device_env.sh says what the
#                                                       tree must carry); ~5 minutes of GPU time
#   The machine is bare for every call, so build and measure in one:
#     source bench/device_env.sh && cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release \
#       && cmake --build build-gpu -j16 --target perfgate && bash bench/explain_gpu.sh "$OUT"
#   If the AOTInductor package's decode cannot run in a CUDA graph, that path runs without.
#   bash bench/explain_gpu.sh OUTDIR --device cpu --tiny
#       the same pipeline on a CPU with a 2-layer model (bench/explain/tiny.json) and the build in
#       build/: proves the script's logic; its timing check is reported, not enforced (check.py
#       --cpu says why).
# Knobs (environment): PERFGATE_BIN (default build-gpu/perfgate, build/perfgate with --tiny),
# PYTHON (python3; with --tiny the venv's when there is one), SEQ_LENS, REPS.
set -u
OUT=${1:?usage: explain_gpu.sh OUTDIR [--device cpu] [--tiny]}
shift
DEVICE=cuda TINY=0
while [ $# -gt 0 ]; do
  case $1 in
    --device) DEVICE=${2:?--device needs cpu or cuda}; shift 2 ;;
    --tiny) TINY=1; shift ;;
    *) echo "explain_gpu.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD T0=$(date +%s)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-explain-XXXXXX")
trap 'git -C "$W/repo" worktree prune 2>/dev/null; rm -rf "$W"' EXIT
log() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$OUT/log.txt"; }

if [ "$TINY" = 1 ]; then
  CONFIG=$ROOT/bench/explain/tiny.json DTYPE=fp32 P_LIST=${SEQ_LENS:-8,16} G=8 REPS=${REPS:-3} WARMUP=1
  PG=${PERFGATE_BIN:-$ROOT/build/perfgate}
  PY=${PYTHON:-$([ -x "$ROOT/.venv/bin/python3" ] && echo "$ROOT/.venv/bin/python3" || echo python3)}
  CHECK_TIME=--cpu
else
  CONFIG=$ROOT/bench/explain/llama_1b.json DTYPE=bf16 P_LIST=${SEQ_LENS:-128,256} G=32
  REPS=${REPS:-10} WARMUP=3
  PG=${PERFGATE_BIN:-$ROOT/build-gpu/perfgate}
  PY=${PYTHON:-python3}
  CHECK_TIME=
fi
GRAPHS=off
if [ "$DEVICE" != cpu ]; then
  GRAPHS=on
  # shellcheck source=SCRIPTDIR/device_env.sh
  [ -f .device-debs/env.sh ] && source bench/device_env.sh
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
fi
[ -x "$PG" ] || { log "no perfgate binary at $PG (build it first, or set PERFGATE_BIN)"; exit 2; }
export PYTHONUNBUFFERED=1 PYTHONPATH=$ROOT/python:$ROOT/bench/explain${PYTHONPATH:+:$PYTHONPATH}
# The image's $CXX links libstdc++ statically into an AOTInductor package, whose std::regex then
# crashes on the process's libstdc++ (docs/OWN_MODEL_AOTI.md): exports use the system compiler.
export_env=()
[ "$DEVICE" != cpu ] && [ -x /usr/bin/g++ ] && export_env=(CXX=/usr/bin/g++ CC=/usr/bin/gcc)

# --- the scratch repository: one commit per variant, each naming it in explain_model.json -----
R=$W/repo
mkdir -p "$R" && git -C "$R" init -q -b main && git -C "$R" config user.email bench@perfgate.test &&
  git -C "$R" config user.name bench && git -C "$R" config commit.gpgsign false
declare -A SHA
for v in base extra_op item_sync; do
  "$PY" -c 'import json, sys; print(json.dumps({"variant": sys.argv[2], "config": json.load(open(sys.argv[1]))}))' \
    "$CONFIG" "$v" > "$R/explain_model.json"
  git -C "$R" add -A && git -C "$R" commit -qm "$v"
  SHA[$v]=$(git -C "$R" rev-parse HEAD)
  git -C "$R" worktree add -q --detach "$W/wt-$v" "${SHA[$v]}"
  mkdir -p "$W/wt-$v/out"
  echo "${SHA[$v]} $v" >> "$OUT/commits.txt"
done

# --- the AOTInductor packages of base and extra_op, exported in parallel -----------------------
log "exporting the packages (device $DEVICE, dtype $DTYPE)"
for v in base extra_op; do
  (cd "$W/wt-$v" && env "${export_env[@]}" "$PY" "$ROOT/bench/explain/export_variant.py" \
      "$CONFIG" "$v" "out/llama-b{batch}.pt2" --batch 1 --dtype "$DTYPE" --device "$DEVICE" \
      > "$OUT/export_$v.log" 2>&1; echo "export rc=$?" >> "$OUT/export_$v.log") &
done
wait
for v in base extra_op; do log "$v: $(tail -n 1 "$OUT/export_$v.log")"; done

# --- the runs: each commit through each path ---------------------------------------------------
COMMON=(--device "$DEVICE" --dtype "$DTYPE" --batch-sizes 1 --seq-lens "$P_LIST" --gen-tokens "$G"
  --warmup "$WARMUP" --reps "$REPS" --profile on --quiet)
AOTI_GRAPHS=$GRAPHS
measure() { # PATH VARIANT: one run into OUT/PATH.db, retried once with the system libstdc++ on a crash
  local path=$1 v=$2 model graphs=$GRAPHS
  if [ "$path" = aoti ]; then model=(--model 'aoti:out/llama-b{batch}.pt2') graphs=$AOTI_GRAPHS; else
    model=(--exec "$PY $ROOT/bench/explain/exec_bench.py" --model llama-explain); fi
  "$PG" run "${model[@]}" "${COMMON[@]}" --cuda-graphs "$graphs" --repo "$W/wt-$v" --db "$OUT/$path.db" \
    > "$OUT/run_${path}_$v.log" 2>&1
  local rc=$?
  if [ "$rc" -ge 128 ] && [ "$DEVICE" != cpu ] && [ -z "${LD_PRELOAD:-}" ]; then
    LD_PRELOAD=$(/usr/bin/g++ -print-file-name=libstdc++.so.6) "$PG" run "${model[@]}" "${COMMON[@]}" \
      --cuda-graphs "$graphs" --repo "$W/wt-$v" --db "$OUT/$path.db" >> "$OUT/run_${path}_$v.log" 2>&1
    rc=$?
  fi
  log "run $path $v rc=$rc (cuda-graphs $graphs): $(all_ok "$OUT/$path.db" && echo every cell ok || echo NOT every cell ok)"
}
all_ok() { # DB: every cell of its last run is ok
  "$PG" export --db "$1" --format json 2>/dev/null | "$PY" -c '
import json, sys
cells = json.load(sys.stdin)["runs"][-1]["cells"]
sys.exit(not cells or any(c["status"] != "ok" for c in cells))'
}
for v in base extra_op; do
  if grep -q "export rc=0" "$OUT/export_$v.log"; then
    measure aoti "$v"
    if [ "$v" = base ] && [ "$AOTI_GRAPHS" = on ] && ! all_ok "$OUT/aoti.db"; then
      log "the package's decode could not run in a CUDA graph: the AOTInductor path without"
      rm -f "$OUT"/aoti.db*
      AOTI_GRAPHS=off
      measure aoti "$v"
    fi
  else
    log "no package for $v: the AOTInductor path is skipped"
  fi
done
for v in base extra_op item_sync; do measure exec "$v"; done
"$PG" export --db "$OUT/exec.db" --format json > "$OUT/exec_export.json" 2>/dev/null
[ -f "$OUT/aoti.db" ] && "$PG" export --db "$OUT/aoti.db" --format json > "$OUT/aoti_export.json" 2>/dev/null

# --- compare each head with the base, then check the explanations -------------------------------
checks=()
# Judged at --min-effect 0.01: the package's change is about +2%, and only a regressed cell's
# explanation lists where its decode step went (PERFORMANCE.md, "Why a cell changed").
compare() { # PATH HEAD
  local f="$OUT/compare_$1_$2.json"
  [ -f "$OUT/$1.db" ] || return 0
  "$PG" compare --base "${SHA[base]}" --head "${SHA[$2]}" --db "$OUT/$1.db" --repo "$R" \
    --min-effect 0.01 --format json > "$f" 2> "$OUT/compare_$1_$2.err"
  "$PG" compare --base "${SHA[base]}" --head "${SHA[$2]}" --db "$OUT/$1.db" --repo "$R" \
    --min-effect 0.01 > "$OUT/compare_$1_$2.txt" 2>&1
  checks+=("$1:$2:$f")
}
compare aoti extra_op
compare exec extra_op
compare exec item_sync
"$PY" "$ROOT/bench/explain/check.py" $CHECK_TIME "${checks[@]}" | tee "$OUT/explain_table.md"
rc=${PIPESTATUS[0]}
# What a person reads: each regressed cell's time between kernels and what the lines add up to.
for f in "$OUT"/compare_*.txt; do
  [ -f "$f" ] || continue
  grep -E "time between (kernels|host ops)|gaps that come with|added or removed|add up to" "$f" |
    sed "s|^|$(basename "$f" .txt):|" | tee -a "$OUT/log.txt"
done
log "check rc=$rc; total $(($(date +%s) - T0)) s"
exit "$rc"
