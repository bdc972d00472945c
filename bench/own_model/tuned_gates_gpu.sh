#!/usr/bin/env bash
# Tuned exports, gated: with coordinate descent on, does `perfgate compare` judge the code and not
# the luck of the export? On the GPU machine, from the project root (bench/device_env.sh says what
# the tree must carry):
#   bash bench/own_model/tuned_gates_gpu.sh OUT
# Builds perfgate, then runs trials until DEADLINE seconds (default 560) after its start, at most
# TRIALS (default 3). A trial exports python/tiny_kv_lm.py (d 512, 8 heads, vocab 8192, bf16,
# batch 1, context 512) with --inductor-config coordinate_descent_tuning=true three times, each
# in a fresh Inductor cache, as the action does for a pull request:
#   B   the base: 10 layers, tuned afresh
#   R   the A/A head: the same model (another commit), replaying B's choices (--tuning-from)
#   S   the slow head: 11 layers (about +9% of work per decode step), replaying B's choices
# and measures the three packages in 3 interleaved rounds (B R S B R S B R S) through
# `perfgate run --model aoti:... --cuda-graphs on`, each in its own git checkout, then gates
# B -> R and B -> S with `perfgate compare --metrics tpot_ms` (the report, its JSON and exit code
# to OUT/trial-N/). CONTROL=1 also exports U, the same model tuned afresh (what a head exported
# without the base's choices was), measured beside them and gated B -> U.
set -u
OUT=${1:?usage: tuned_gates_gpu.sh OUT}
T0=$(date +%s)
DEADLINE=${DEADLINE:-560} TRIALS=${TRIALS:-3} CONTROL=${CONTROL:-0}
ROOT=$PWD W=/opt/tuned-gates
rm -rf "$W"
mkdir -p "$W" "$OUT"
log() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$OUT/log.txt"; }
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
# shellcheck source=SCRIPTDIR/../device_env.sh
source bench/device_env.sh
echo "$device_info" >"$OUT/device.txt"

(cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${PLOTLY_ARGS[@]}" >"$W/cmake.log" 2>&1 &&
  cmake --build build-gpu -j12 --target perfgate perfgate-runner >>"$W/cmake.log" 2>&1
  echo "build rc=$?" >>"$W/cmake.log") &
BUILD=$!
PG=$ROOT/build-gpu/perfgate

base_kwargs='{"d": 512, "heads": 8, "layers": 10, "vocab": 8192}'
slow_kwargs='{"d": 512, "heads": 8, "layers": 11, "vocab": 8192}'
# A checkout of its own for each package (a commit of its own, the package ignored by git):
# perfgate tags each run with the checkout's commit, as the action's sandboxes do.
checkout() { # DIR SUBJECT
  git init -q "$1" && echo "pkg/" >"$1/.gitignore" && echo "$2" >"$1/README.md" &&
    git -C "$1" add -A && git -C "$1" -c user.name=t -c user.email=t@t commit -qm "$2"
}
export_pkg() { # DIR KWARGS [TUNING_FROM]
  local from=()
  [ -n "${3:-}" ] && from=(--tuning-from "$3")
  local t=$SECONDS
  # The system compiler: a package built by the image's GCC (libstdc++ linked statically) crashes
  # when loaded (docs/OWN_MODEL_AOTI.md).
  CXX=/usr/bin/g++ CC=/usr/bin/gcc python3 python/export_module.py --kwargs "$2" \
    --out "$1/pkg/m.pt2" --name tuned-lm --batch 1 --context 512 --dtype bf16 --device cuda \
    --no-decode-program --inductor-config coordinate_descent_tuning=true "${from[@]}" \
    >>"$W/export.log" 2>&1
  local rc=$?
  log "export $1: rc $rc in $((SECONDS - t)) s"
  return $rc
}
bench() { # DIR DB
  "$PG" run --model aoti:pkg/m.pt2 --repo "$1" --db "$2" --device cuda --dtype bf16 \
    --batch-sizes 1 --seq-lens 128 --gen-tokens 32 --warmup 3 --reps 20 --cuda-graphs on \
    --quiet >>"$W/run.log" 2>&1 || log "run $1: rc $?"
}
gate() { # DB BASE_DIR HEAD_DIR NAME TRIAL_OUT
  local rc=0
  "$PG" compare --db "$1" --base "$(git -C "$2" rev-parse HEAD)" --head "$(git -C "$3" rev-parse HEAD)" \
    --metrics tpot_ms --json "$5/$4.json" >"$5/$4.txt" 2>&1 || rc=$?
  echo "$rc" >"$5/$4.rc"
  log "gate $4: exit $rc; $(grep -m1 -E 'perfgate|verdict|regression|pass' "$5/$4.txt")"
}

# A trial is expected to take as long as the last one did (before the first: 260 s, 330 with U).
need=$((CONTROL == 1 ? 330 : 260))
for trial in $(seq 1 "$TRIALS"); do
  if [ "$(left)" -lt "$need" ]; then
    log "trial $trial not started: $(left) s left"
    break
  fi
  T=$W/t$trial O=$OUT/trial-$trial trial_start=$(date +%s)
  mkdir -p "$T" "$O"
  checkout "$T/B" "base"
  checkout "$T/R" "head: README only"
  checkout "$T/S" "head: one more layer"
  sides=(B R S)
  export_pkg "$T/B" "$base_kwargs" || continue
  export_pkg "$T/R" "$base_kwargs" "$T/B/pkg/m.tuning.json"
  export_pkg "$T/S" "$slow_kwargs" "$T/B/pkg/m.tuning.json"
  if [ "$CONTROL" = 1 ]; then
    checkout "$T/U" "head: README only, exported without the base's choices"
    export_pkg "$T/U" "$base_kwargs" && sides+=(U)
  fi
  for s in "${sides[@]}"; do cp "$T/$s/pkg/m.json" "$O/$s.json"; done
  wait "$BUILD" 2>/dev/null
  if ! grep -q "build rc=0" "$W/cmake.log"; then
    log "build failed"
    tail -30 "$W/cmake.log" >"$OUT/build-failed.txt"
    break
  fi
  for _ in 1 2 3; do
    for s in "${sides[@]}"; do bench "$T/$s" "$T/gate.db"; done
  done
  gate "$T/gate.db" "$T/B" "$T/R" aa "$O"
  gate "$T/gate.db" "$T/B" "$T/S" ab "$O"
  [ "$CONTROL" = 1 ] && gate "$T/gate.db" "$T/B" "$T/U" control "$O"
  python3 - "$T" "$O" "${sides[@]}" <<'PY' | tee -a "$OUT/log.txt"
import json, sys
t, o, sides = sys.argv[1], sys.argv[2], sys.argv[3:]
base = json.load(open(f"{t}/B/pkg/m.tuning.json"))["choices"]
for s in sides:
    e = json.load(open(f"{o}/{s}.json"))["export"]
    mine = json.load(open(f"{t}/{s}/pkg/m.tuning.json"))["choices"]
    alike = sum(1 for k in base if mine.get(k) == base[k])
    print(f"{s}: kernels {e['kernels']} {e['kernels_sha256'][:12]}, graph {e['graph_sha256'][:12]}, "
          f"tuned {e['tuned_kernels']}, replayed {e['replayed_kernels']}, retuned "
          f"{e.get('retuned_kernels')}, tuning {e['tuning_sha256'][:12]}, alike with B {alike}/{len(base)}")
for name in ("aa", "ab", "control"):
    try:
        r = json.load(open(f"{o}/{name}.json"))
    except OSError:
        continue
    cells = [(c["metric"], c.get("ratio"), c["verdict"]) for c in r["cells"]]
    print(f"gate {name}: {r['verdict']} {cells} warnings {[w[:90] for w in r.get('warnings', [])]}")
PY
  need=$(($(date +%s) - trial_start))
done
(cd "$OUT/.." && tar czf "$OUT.tgz" "$(basename "$OUT")") 2>/dev/null
log "done"
