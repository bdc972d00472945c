#!/bin/bash
# One GPU call for bench/own_model/decode_program_probe.py: export the 1.1B model twice (a
# program over a symbolic T, and one for T = 1), time the torch.compile peer
# (compile_baseline.py) after the exports, then each package's decode in the same call.
#   bash bench/own_model/decode_program_probe.sh OUTDIR
set -u
OUT=${1:?usage: decode_program_probe.sh OUTDIR}
W=/tmp/decprobe CONFIG=bench/own_model/llama_1b.json
rm -rf "$W"; mkdir -p "$W" "$OUT"
# shellcheck source=SCRIPTDIR/../device_env.sh
source bench/device_env.sh
echo "$device_info" > "$OUT/device.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -l 1 > "$OUT/gpu_clocks.csv" 2>&1 &
CLOCKS=$!
EXPORTS=()
for mode in dynamic static; do
  CXX=/usr/bin/g++ CC=/usr/bin/gcc python3 bench/own_model/decode_program_probe.py export \
    "$CONFIG" "$W/$mode.pt2" "$mode" > "$OUT/export_$mode.log" 2>&1 &
  EXPORTS+=($!)
done
BASELINE_DEVICE=cuda BASELINE_DTYPE=bf16 python3 bench/own_model/compile_baseline.py \
  "$CONFIG" 128 32 20 "$W/exports.done" > "$OUT/baseline.json" 2> "$OUT/baseline.err" &
BASE=$!
wait "${EXPORTS[@]}"
touch "$W/exports.done"
wait "$BASE"
grep -v Warn "$OUT"/export_*.log | tail -n 6
cat "$OUT/baseline.json"
python3 bench/own_model/decode_program_probe.py time "$OUT/probe.json" 128 32 20 \
  "$W/dynamic.pt2" "$W/static.pt2" 2>&1 | grep -v Warn | tail -n 12
python3 bench/own_model/compile_baseline.py "$CONFIG" 128 32 20 > "$OUT/baseline_after.json" \
  2> "$OUT/baseline_after.err"
cat "$OUT/baseline_after.json"
kill "$CLOCKS"
