# shellcheck shell=bash
# Sourced by bench/own_model/h200_gate.sh (phase 3), which sets PG, W, C1, OUT, COMMON, REPS,
# EXEC_CMD and the functions left and log. Where does `perfgate run --exec` lose time against the
# same model timed in one Python process? The base commit's --exec benchmark, one cell each:
#   1. under perfgate (its child's environment is kept in exec_env.txt, and what the perfgate
#      process holds of the GPU while its child runs in exec_parent.txt);
#   2. the same command standalone, with exactly the PERFGATE_* variables perfgate gave it;
#   3. the same, standalone, with torch.compile's caches off (a cold compile in the process);
#   4. under perfgate again (order effects).
# Each prints its per-step decode median and CV (bench/own_model/decode_summary.py).
exec_wt=$W/wt-$C1
exec_summary() { python3 "$ROOT/bench/own_model/decode_summary.py" "$@" | tee -a "$OUT/log.txt"; }
exec_under_perfgate() {  # $1 = name
  local pid t
  t=$(date +%s%N)
  "$PG" run --exec "env > $W/exec_env.txt; $EXEC_CMD" --model llama-1.1b --exec-timeout 300 \
    "${COMMON[@]}" --reps "$REPS" --cuda-graphs on --db "$W/execprobe.db" --repo "$exec_wt" \
    --json "$OUT/$1.json" > "$W/$1.log" 2>&1 &
  pid=$!
  sleep 15
  {
    echo "perfgate (pid $pid) file descriptors on NVIDIA devices while its child runs:"
    local fd n=0
    for fd in "/proc/$pid/fd"/*; do [[ "$(readlink "$fd")" == /dev/nvidia* ]] && n=$((n + 1)); done
    echo "$n"
    echo "CUDA driver mapped into perfgate: $(grep -c libcuda "/proc/$pid/maps" 2> /dev/null)"
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv 2>&1
  } >> "$OUT/exec_parent.txt"
  wait "$pid"
  log "$1: perfgate rc=$? in $((($(date +%s%N) - t) / 1000000)) ms"
  exec_summary "$1" "$OUT/$1.json"
}
exec_standalone() {  # $1 = name, $2... = extra environment
  local name=$1 t
  shift
  t=$(date +%s%N)
  # shellcheck disable=SC2046  # one word per PERFGATE_ variable (no spaces in their values)
  (cd "$exec_wt" && env $(grep '^PERFGATE_' "$W/exec_env.txt") "$@" sh -c "$EXEC_CMD" \
    < /dev/null > "$OUT/$name.jsonl" 2> "$W/$name.err")
  log "$name: rc=$? in $((($(date +%s%N) - t) / 1000000)) ms; $(tail -n 1 "$W/$name.err")"
  exec_summary "$name" "$OUT/$name.jsonl"
}
env | sort > "$OUT/exec_shell_env.txt"
[ "$(left)" -ge 45 ] && exec_under_perfgate exec_perfgate_1
if [ -s "$W/exec_env.txt" ]; then
  sort "$W/exec_env.txt" | diff "$OUT/exec_shell_env.txt" - > "$OUT/exec_env_diff.txt"
  [ "$(left)" -ge 45 ] && exec_standalone exec_standalone_warm
  [ "$(left)" -ge 80 ] && exec_standalone exec_standalone_cold TORCHINDUCTOR_FORCE_DISABLE_CACHES=1
  [ "$(left)" -ge 45 ] && exec_under_perfgate exec_perfgate_2
fi
