#!/usr/bin/env bash
# The false-alarm rate of the gate on real CPU runs of this machine: PAIRS independent A/A gates,
# each with its own database. Base and head are two commits with no change in between,
# benchmarked in ROUNDS alternating rounds (base head, head base, ...) as the workflow does. Then
# AB_PAIRS A/B gates whose head preloads the spinning allocator (tests/common/slow_alloc.cpp:
# genuine extra work on any x86-64 CPU, shown to be slower first) give the detection rate. Each
# gate is evaluated at the defaults and at --min-effect 0.10.
# The result goes to stdout and, as Markdown, to OUT (default bench/real_aa.md).
#   bench/real_aa.sh [--pairs 20] [--rounds 2] [--ab-pairs 5] [--sweep FILE] [--perfgate BIN]
#                    [--slow-alloc build/libpg_slow_alloc.so] [--slow-us 400] [--out FILE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pairs=20 rounds=2 ab_pairs=5 sweep="$root/tests/ci/gate_sweep.toml" pg="$root/build/perfgate"
out="$root/bench/real_aa.md" slow_alloc="$root/build/libpg_slow_alloc.so" slow_us=400
while [ $# -gt 0 ]; do
  case $1 in
    --pairs) pairs=$2 ;;
    --rounds) rounds=$2 ;;
    --ab-pairs) ab_pairs=$2 ;;
    --sweep) sweep=$2 ;;
    --perfgate) pg=$2 ;;
    --slow-alloc) slow_alloc=$2 ;;
    --slow-us) slow_us=$2 ;;
    --out) out=$2 ;;
    *) echo "real_aa.sh: unknown argument $1" >&2 && exit 2 ;;
  esac
  shift 2
done
pg=$(realpath "$pg")
# shellcheck source=../tests/ci/real_gate_lib.sh
source "$root/tests/ci/real_gate_lib.sh"
# shellcheck source=../tests/common/slow_side.sh
source "$root/tests/common/slow_side.sh"
slow=$(slow_env "$slow_alloc" "$slow_us")
if ((ab_pairs > 0)); then
  # shellcheck disable=SC2086  # $slow is a list of VAR=VALUE words
  slow_side_check "$pg" "$sweep" 1.3 $slow
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-realaa-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
read -r A B C < <(real_repo "$tmp")

# gate KIND I HEAD_WT HEAD_SHA [HEAD_ENV]: one gate; prints
# "kind i exit worst_ratio min_p_adj cells improvement_cells best_ratio exit_at_min_effect_0.10".
gate() {
  local kind=$1 i=$2 head_wt=$3 head_sha=$4 head_env=${5:-} db="$tmp/$1-$2.db" rc
  real_rounds "$pg" "$sweep" "$db" "$rounds" "$tmp/wt-A" "$head_wt" "$head_env"
  "$pg" compare --db "$db" --repo "$tmp/repo" --base "$A" --head "$head_sha" --format json \
    >"$tmp/$kind-$i.json" && rc=0 || rc=$?
  # The same runs gated with --min-effect 0.10, the setting docs/STATISTICS.md advises for a
  # shared CPU.
  "$pg" compare --db "$db" --repo "$tmp/repo" --base "$A" --head "$head_sha" --min-effect 0.10 \
    >/dev/null && rc10=0 || rc10=$?
  python3 - "$tmp/$kind-$i.json" "$kind" "$i" "$rc" "$rc10" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ratios = [c["ratio"] for c in j["cells"] if c["ratio"] is not None]
ps = [c["p_adjusted"] for c in j["cells"] if c["p_adjusted"] is not None]
print(sys.argv[2], sys.argv[3], sys.argv[4], f"{max(ratios):.4f}" if ratios else "-",
      f"{min(ps):.3g}" if ps else "-", len(j["cells"]), j["counts"]["improvement"],
      f"{min(ratios):.4f}" if ratios else "-", sys.argv[5])
PY
}

start=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
results="$tmp/results.txt"
for ((i = 1; i <= pairs; i++)); do gate aa "$i" "$tmp/wt-B" "$B" | tee -a "$results"; done
for ((i = 1; i <= ab_pairs; i++)); do
  gate ab "$i" "$tmp/wt-C" "$C" "$slow" | tee -a "$results"
done
elapsed=$(($(date +%s) - start))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$results" "$out" "$sweep" "$rounds" "$elapsed" "$load_before" "$load_after" "$(nproc)" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
out, sweep, rounds, elapsed = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
load_before, load_after, cores = sys.argv[6], sys.argv[7], sys.argv[8]
def summary(kind):
    rs = [r for r in rows if r[0] == kind]
    n = len(rs)
    count = lambda code: sum(1 for r in rs if r[2] == code)
    ratios = sorted(float(r[3]) for r in rs if r[3] != "-")
    return n, count("0"), count("1"), count("3"), ratios
lines = ["| gates | kind | pass (0) | regression (1) | inconclusive (3) | gates with a significant improvement | regression (1) at --min-effect 0.10 | worst-cell ratio, min / median / max |",
         "| --: | --- | --: | --: | --: | --: | --: | --- |"]
for kind, label in (("aa", "A/A (no change)"), ("ab", "A/B (spinning-allocator head)")):
    n, p, reg, inc, ratios = summary(kind)
    if n == 0:
        continue
    med = ratios[len(ratios) // 2] if ratios else float("nan")
    impr = sum(1 for r in rows if r[0] == kind and int(r[6]) > 0)
    reg10 = sum(1 for r in rows if r[0] == kind and r[8] == "1")
    lines.append(f"| {n} | {label} | {p} | {reg} | {inc} | {impr} | {reg10} | {ratios[0]:.3f} / {med:.3f} / {ratios[-1]:.3f} |")
n, p, reg, inc, _ = summary("aa")
fa = reg / n if n else float("nan")
reg10 = sum(1 for r in rows if r[0] == "aa" and r[8] == "1")
text = "\n".join(lines) + "\n\n" + (
    f"False-alarm rate over {n} real A/A gates: {reg}/{n} = {fa:.1%} at the defaults, "
    f"{reg10}/{n} with --min-effect 0.10 "
    f"(sweep {sweep.split('/')[-1]}, {rounds} alternating rounds per side, {elapsed} s in all; "
    f"load average {load_before} before, {load_after} after, on {cores} cores).\n")
abn, abp, abreg, abinc, _ = summary("ab")
if abn:
    text += f"Detection over {abn} real A/B gates: {abreg}/{abn}.\n"
open(out, "w").write(text)
print(text)
PY
