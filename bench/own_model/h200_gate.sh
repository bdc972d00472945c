#!/bin/bash
# The own-model gate on the GPU machine, in one call (docs/PERFORMANCE.md, "Own models"):
# build perfgate, export a ~1.1B Llama-style model (random weights) as AOTInductor packages for
# three commits (base; an A/A commit that changes nothing; a head whose static cache is 8x
# longer, so every decode step attends over more), gate them with alternating rounds, and time
# the same model under plain torch.compile in Python and through the --exec helper meanwhile.
# Run from the project root with .device-debs: bash bench/own_model/h200_gate.sh OUTDIR
set -u
OUT=${1:?outdir}; W=/tmp/owngate; mkdir -p "$W"; export PYTHONUNBUFFERED=1
ROUNDS=${ROUNDS:-3}; P=128; G=32; REPS=20
log() { echo "[$(date +%T)] $*"; }
# The image's $CXX (/opt/gcc) links libstdc++ statically into an AOTInductor package, whose
# std::regex then crashes on the process's libstdc++ (docs/OWN_MODEL.md): use the system g++.
export CXX=/usr/bin/g++ CC=/usr/bin/gcc
# The web pages embed plotly.min.js; the image has no plotly: carry the file (PLOTLY_JS).
PLOTLY_JS=${PLOTLY_JS:-$PWD/extra-debs/plotly.min.js}
mkdir -p /opt/devroot; for d in extra-debs/*.deb; do dpkg -x "$d" /opt/devroot; done
# shellcheck source=/dev/null
source .device-debs/env.sh
log "phase 1: build, exports, torch.compile (in parallel)"
( cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPERFGATE_PLOTLY_JS="$PLOTLY_JS" > "$W/cmake.log" 2>&1 && cmake --build build-gpu -j10 --target perfgate >> "$W/cmake.log" 2>&1; echo "build rc=$?" >> "$W/cmake.log" ) &
BUILD=$!
export_pkg() {  # $1 = dir, $2 = context
  python3 python/export_hf.py --config bench/own_model/llama_1b.json --name llama-1.1b \
    --out "$1/llama-b{batch}.pt2" --batch 1 --context "$2" --dtype bf16 --device cuda > "$1.log" 2>&1
  echo "export rc=$?" >> "$1.log"
}
export_pkg "$W/pkg_base" 1024 & E1=$!
export_pkg "$W/pkg_head" 8192 & E2=$!
python3 bench/own_model/compile_baseline.py bench/own_model/llama_1b.json "$P" "$G" "$REPS" "$W/phase1.done" > "$OUT/baseline.json" 2> "$W/baseline.err" &
BASE=$!
wait "$BUILD" "$E1" "$E2"; touch "$W/phase1.done"
grep -B2 -A12 "CMake Error\| error" "$W/cmake.log" | head -40; tail -n 3 "$W/cmake.log"
for f in "$W/pkg_base.log" "$W/pkg_head.log"; do grep -v Warning "$f" | tail -n 15; done
cat "$W"/pkg_base/*.json > "$OUT/sidecar_base.json"
(cd "$W" && python3 -c "import zipfile,sys;z=zipfile.ZipFile('pkg_base/llama-b1.pt2');print([n for n in z.namelist() if n.endswith('.so')])")
wait "$BASE"; log "baseline rc=$?"; cat "$OUT/baseline.json"; tail -n 5 "$W/baseline.err"
PG=$PWD/build-gpu/perfgate
log "phase 2: three commits, $ROUNDS alternating rounds"
R=$W/repo; rm -rf "$R"; mkdir -p "$R"; pushd "$R" > /dev/null || exit 1
git init -q; git config user.email g@x; git config user.name g
echo "base" > model.txt; git add .; git commit -qm "base"; C1=$(git rev-parse HEAD)
echo "comment" >> README; git add .; git commit -qm "A/A: docs only"; C2=$(git rev-parse HEAD)
echo "cache 8192" > model.txt; git add .; git commit -qm "head: 8x longer static cache"; C3=$(git rev-parse HEAD)
for c in "$C1" "$C2" "$C3"; do git worktree add -q --detach "$W/wt-$c" "$c"; mkdir -p "$W/wt-$c/out"; done
for c in "$C1" "$C2"; do ln "$W"/pkg_base/llama-b1.* "$W/wt-$c/out/"; done
ln "$W"/pkg_head/llama-b1.* "$W/wt-$C3/out/"
popd > /dev/null || exit 1
DB=$W/gate.db
pgrun() {
  local t0 rc
  t0=$(date +%s%N)
  "$PG" run --model 'aoti:out/llama-b{batch}.pt2' --device cuda \
    --dtype bf16 --batch-sizes 1 --seq-lens "$P" --gen-tokens "$G" --warmup 3 --reps "$REPS" \
    --cuda-graphs off,on --db "$DB" --repo "$W/wt-$1" --quiet > "$W/run.log" 2>&1
  rc=$?
  echo "$1 rc=$rc wall_ms=$((($(date +%s%N) - t0) / 1000000))" | tee -a "$OUT/runs.txt"
  [ "$rc" = 0 ] || tail -n 8 "$W/run.log"
  return "$rc"
}
if ! pgrun "$C1"; then
  log "retry with LD_PRELOAD of the system libstdc++"
  LD_PRELOAD=$(g++ -print-file-name=libstdc++.so.6)
  export LD_PRELOAD
  pgrun "$C1"
fi
for ((r = 1; r <= ROUNDS; r++)); do for c in "$C2" "$C3" "$C1"; do [ "$r" = "$ROUNDS" ] && [ "$c" = "$C1" ] && continue; pgrun "$c"; done; done
log "compare"
"$PG" compare --db "$DB" --repo "$R" --base "$C1" --head "$C2" > "$OUT/compare_aa.txt" 2>&1; echo "A/A exit $?" | tee -a "$OUT/runs.txt"
"$PG" compare --db "$DB" --repo "$R" --base "$C1" --head "$C3" > "$OUT/compare_slow.txt" 2>&1; echo "slow exit $?" | tee -a "$OUT/runs.txt"
"$PG" export --db "$DB" --format json > "$OUT/gate_runs.json"
head -30 "$OUT/compare_aa.txt"; head -30 "$OUT/compare_slow.txt"
log "done"
