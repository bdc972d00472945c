# shellcheck shell=bash disable=SC2034  # W, R, T0: for the scripts that source it
# Sourced by the scripts that run one experiment in one call on the GPU machine, in the project's
# root:  source bench/device_call.sh OUTDIR NAME
# - W=/tmp/NAME (emptied) for scratch, R=$W/res for results, packed into OUTDIR/NAME.tar.gz when
#   the script exits or calls save (the device returns at most 8 files);
# - log MESSAGE: echoed and appended to $R/log.txt with the seconds since the start;
# - late: true past $DEADLINE seconds (default 500; a call's limit is 600 s);
# - bench/device_env.sh sourced (the Debian packages, $PLOTLY_ARGS, $device_info in
#   $R/device.txt), and the GPU's clocks, power and temperature in $R/gpu_clocks.csv once a second
#   ($CLOCKS: that logger's pid).
OUT=${1:?usage: source bench/device_call.sh OUTDIR NAME}
NAME=${2:?usage: source bench/device_call.sh OUTDIR NAME}
W=/tmp/$NAME R=/tmp/$NAME/res
rm -rf "$W"
mkdir -p "$R" "$OUT"
T0=$(date +%s)
log() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$R/log.txt"; }
late() { [ $(($(date +%s) - T0)) -gt "${DEADLINE:-500}" ]; }
# save: packs what is in $R now (also on exit), so a call stopped at its time limit returns it.
save() { tar -czf "$OUT/$NAME.tar.gz" -C "$R" .; }
trap 'kill "$CLOCKS" 2> /dev/null; save' EXIT
# shellcheck source=SCRIPTDIR/device_env.sh
source bench/device_env.sh
echo "$device_info" > "$R/device.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -l 1 > "$R/gpu_clocks.csv" 2>&1 &
CLOCKS=$!
# build_perfgate JOBS [TARGET...]: a Release build in build-gpu (default target perfgate, which
# builds perfgate-runner too); output in $W/cmake.log, whose last line is "build rc=N".
build_perfgate() {
  local jobs=$1 rc
  shift
  {
    # The build RPATH names /opt/devroot's libraries: the action's sandbox gives measured code no
    # LD_LIBRARY_PATH, and a perfgate started there must still find libgit2 and the rest. It is
    # an old-style DT_RPATH (--disable-new-dtags) because a DT_RUNPATH is not searched for the
    # libraries those libraries load (libgit2's libmbedtls).
    cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${PLOTLY_ARGS[@]}" \
      -DCMAKE_BUILD_RPATH=/opt/devroot/usr/lib/x86_64-linux-gnu \
      -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags &&
      cmake --build build-gpu -j"$jobs" --target "${@:-perfgate}"
  } > "$W/cmake.log" 2>&1
  rc=$?
  echo "build rc=$rc" >> "$W/cmake.log"
  return "$rc"
}
