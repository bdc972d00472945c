#!/usr/bin/env bash
# The long fuzz run: libFuzzer (clang, with AddressSanitizer and UBSan) over the three parsers of
# untrusted input. Not part of ctest; the fast deterministic pass is fuzz_smoke_tests.
#   tests/fuzz/run_libfuzzer.sh [SECONDS_PER_TARGET] [WORK_DIR]     (0 seconds: build only)
# Needs clang and libclang-rt-14-dev (Debian: apt-get install clang libclang-rt-14-dev).
# Findings (crash-*, leak-*, timeout-*) are left in WORK_DIR/<target>/ and the script exits 1.
set -euo pipefail
secs=${1:-120}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${2:-$root/build-fuzz}
mkdir -p "$work"
CXX=${CXX:-clang++}

sources=(
  "$here/fuzz_targets.cpp" "$here/libfuzzer_cpu_machine.cpp"
  "$root"/runner/config.cpp "$root"/runner/config_toml.cpp "$root"/runner/submit.cpp
  "$root"/runner/lm/presets.cpp "$root"/runner/lm/safetensors.cpp
  "$root"/runner/lm/gpt2_checkpoint.cpp "$root"/store/*.cpp
)
# shellcheck disable=SC2207
pkg=($(pkg-config --cflags --libs cpp-httplib tomlplusplus fmt sqlite3))
flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$root" -I"$work/generated")
mkdir -p "$work/generated/common"
sed "s/@[A-Z_]*@/fuzz/g" "$root/common/version.h.in" > "$work/generated/common/version.h"

status=0
for target in toml safetensors ingest; do
  bin="$work/fuzz_$target"
  macro="PG_FUZZ_TARGET_$(echo "$target" | tr a-z A-Z)"
  if [[ ! -x $bin || -n ${REBUILD:-} ]]; then
    echo "building $bin"
    "$CXX" "${flags[@]}" -D"$macro" "$here/libfuzzer_entry.cpp" "${sources[@]}" "${pkg[@]}" \
      -o "$bin"
  fi
  ((secs > 0)) || continue
  corpus="$work/$target/corpus"
  mkdir -p "$corpus"
  case $target in
    toml) cp "$here"/corpus/toml/*.toml "$root"/ci/sweeps/*.toml "$corpus"/ ;;
    ingest) cp "$here"/corpus/ingest/*.json "$corpus"/ ;;
    safetensors) PG_FUZZ_WRITE_SEEDS="$corpus" "$bin" -runs=0 "$corpus" > /dev/null 2>&1 ;;
  esac
  echo "== $target: $secs s"
  log="$work/$target/libfuzzer.log"
  if ! (cd "$work/$target" && "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
        -max_len=65536 -print_final_stats=1 "$corpus" > "$log" 2>&1); then
    status=1
    echo "FINDING in $target: see $log and $work/$target/crash-*"
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ *DONE" "$log" || tail -5 "$log"
  echo "corpus: $(ls "$corpus" | wc -l) inputs"
done
exit $status
