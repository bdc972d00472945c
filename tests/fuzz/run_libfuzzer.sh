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
  "$root"/runner/config.cpp "$root"/runner/config_toml.cpp "$root"/remote/submit.cpp
  "$root"/runner/lm/presets.cpp "$root"/runner/lm/safetensors.cpp
  "$root"/runner/lm/gpt2_checkpoint.cpp "$root"/store/run_json.cpp "$root"/store/validate.cpp
  "$root"/store/types.cpp "$root"/store/atomic_file.cpp
)
# shellcheck disable=SC2207
cflags=($(pkg-config --cflags cpp-httplib tomlplusplus fmt))
# shellcheck disable=SC2207
libs=($(pkg-config --libs cpp-httplib tomlplusplus fmt))
common=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=undefined
        -I"$root" -I"$work/generated" "${cflags[@]}")
mkdir -p "$work/generated/common"
sed "s/@[A-Z_]*@/fuzz/g" "$root/common/version.h.in" > "$work/generated/common/version.h"

# The shared sources are compiled once, instrumented; each target only links its entry point.
objs=()
for src in "${sources[@]}"; do
  obj="$work/obj/$(realpath --relative-to="$root" "$src" | tr / _).o"
  mkdir -p "$work/obj"
  if [[ ! -f $obj || $src -nt $obj || -n ${REBUILD:-} ]]; then
    echo "compiling $src"
    "$CXX" "${common[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "$src" -o "$obj"
  fi
  objs+=("$obj")
done

status=0
for target in toml safetensors ingest; do
  bin="$work/fuzz_$target"
  macro="PG_FUZZ_TARGET_${target^^}"
  "$CXX" "${common[@]}" -fsanitize=fuzzer,address,undefined -D"$macro" \
    "$here/libfuzzer_entry.cpp" "${objs[@]}" "${libs[@]}" -o "$bin"
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
  echo "corpus: $(find "$corpus" -type f | wc -l) inputs"
done
exit $status
