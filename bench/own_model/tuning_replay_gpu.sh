#!/usr/bin/env bash
# Do tuned exports decide the verdict, and does replaying the base's tuning choices stop it?
#   bash bench/own_model/tuning_replay_gpu.sh OUT      (on the GPU machine; torch with CUDA)
# Exports one model (python/tiny_kv_lm.py at d 768, 6 layers, vocab 32000, bf16, batch 1) with
# --inductor-config coordinate_descent_tuning=true four times, each in a fresh Inductor cache:
#   A1, A2   the same model, tuned independently (what two sides of a gate did before replay)
#   R        the same model again, replaying A1's choices (--tuning-from: what the head does now)
#   S        the model with its slow option (genuine extra work per block), replaying A1's choices
# then times each package's decode step (T = 1, CUDA events, rounds interleaved) and writes
# OUT/summary.tsv, OUT/times.txt and OUT/log.txt; the sidecars and choice files to OUT.
set -uo pipefail
out=${1:?usage: tuning_replay_gpu.sh OUT}
mkdir -p "$out" /opt/tr
cd "$(dirname "$0")/../.." || exit 1
py=${PYTHON:-python3}
kw='{"d": 768, "heads": 12, "layers": 6, "vocab": 32000}'
export_one() { # NAME SLOW TUNING_FROM
  local kwargs=$kw
  [ "$2" = 1 ] && kwargs='{"d": 768, "heads": 12, "layers": 6, "vocab": 32000, "slow": true}'
  local from=(); [ -n "$3" ] && from=(--tuning-from "$3")
  local t0=$SECONDS
  # The distribution's compiler: a package built by a GCC that links libstdc++ statically
  # crashes when loaded (docs/OWN_MODEL_AOTI.md, "A segfault when a package is loaded").
  CXX=/usr/bin/g++ CC=/usr/bin/gcc "$py" python/export_module.py --kwargs "$kwargs" --out "/opt/tr/$1.pt2" --batch 1 --context 512 \
    --dtype bf16 --device cuda --no-decode-program \
    --inductor-config coordinate_descent_tuning=true "${from[@]}" >>"$out/log.txt" 2>&1
  echo "export $1: rc $? in $((SECONDS - t0)) s" | tee -a "$out/log.txt"
  cp "/opt/tr/$1.json" "/opt/tr/$1.tuning.json" "$out/" 2>/dev/null
}
export_one A1 0 ""
export_one A2 0 ""
export_one R 0 /opt/tr/A1.tuning.json
export_one S 1 /opt/tr/A1.tuning.json
# Each package is timed in a process of its own (rounds interleaved: A1 A2 R S, twice).
cat >/opt/tr/time.py <<'PY'
import sys, torch
run = torch._inductor.aoti_load_package(sys.argv[1])
tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
pos = torch.tensor([100], device="cuda")
def step_ms(steps=200):
    for _ in range(20): run(tok, pos)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize(); a.record()
    for _ in range(steps): run(tok, pos)
    b.record(); torch.cuda.synchronize()
    return a.elapsed_time(b) / steps
print(",".join(f"{step_ms():.4f}" for _ in range(7)))
PY
for round in 1 2; do
  for n in A1 A2 R S; do
    echo "$n $round $("$py" /opt/tr/time.py "/opt/tr/$n.pt2" 2>>"$out/log.txt")" | tee -a "$out/times.txt"
  done
done
"$py" - "$out" <<'PY' 2>&1 | tee -a "$out/log.txt"
import json, statistics, sys
out = sys.argv[1]
times = {}
for line in open(f"{out}/times.txt"):
    n, _, ms = line.split()
    times.setdefault(n, []).extend(float(x) for x in ms.split(","))
with open(f"{out}/summary.tsv", "w") as f:
    f.write("package\tdecode_ms_median\tvs_A1\ttuned_kernels\treplayed_kernels\tkernels_sha256\ttuning_sha256\tgraph_sha256\n")
    base = statistics.median(times["A1"])
    for n in ["A1", "A2", "R", "S"]:
        e = json.load(open(f"/opt/tr/{n}.json"))["export"]
        m = statistics.median(times[n])
        f.write(f"{n}\t{m:.4f}\t{100 * (m / base - 1):+.2f}%\t{e['tuned_kernels']}\t{e['replayed_kernels']}\t"
                f"{e['kernels_sha256'][:12]}\t{e['tuning_sha256'][:12]}\t{e['graph_sha256'][:12]}\n")
a1 = json.load(open("/opt/tr/A1.tuning.json"))["choices"]
a2 = json.load(open("/opt/tr/A2.tuning.json"))["choices"]
same = sum(1 for k in a1 if k in a2 and a1[k] == a2[k])
print(f"A1 and A2 tuned {len(a1)} and {len(a2)} kernels; {len(set(a1) & set(a2))} shared, {same} chose alike")
print(open(f"{out}/summary.tsv").read())
PY
