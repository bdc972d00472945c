#!/usr/bin/env bash
# Runs the Dockerfile's runtime stage by hand, without a Docker engine: a Debian 12 root file system
# made by mmdebstrap with exactly the runtime stage's packages, the runtime tree staged into it by
# ci/scripts/stage_runtime.sh, the stage's user and git set-up, then perfgate run as uid 10001 in a
# chroot on a repository mounted at /repo that belongs to another uid. Needs root, mmdebstrap and
# the Debian mirror, so it is not part of ctest (tests/ci/runtime_libs_test.sh is, without them).
# Usage: runtime_chroot.sh /path/to/perfgate ROOTFS   (ROOTFS is created; remove it afterwards)
set -euo pipefail
pg=$(realpath "${1:?usage: runtime_chroot.sh /path/to/perfgate ROOTFS}")
rootfs=${2:?usage: runtime_chroot.sh /path/to/perfgate ROOTFS}
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "runtime_chroot: needs root (mmdebstrap, chroot)" >&2; exit 2; }

stage=$(mktemp -d)
chmod 755 "$stage" # cp -a below gives its mode to the root file system
"$here/../../ci/scripts/stage_runtime.sh" --link "$pg" "$stage" >/dev/null
packages=$(paste -sd, "$stage/runtime-packages.txt"),ca-certificates,git,sqlite3
if [ ! -d "$rootfs/usr" ]; then
  mmdebstrap --variant=minbase --include="$packages" bookworm "$rootfs"
fi
cp -al --remove-destination "$stage/." "$rootfs/"
rm -rf "$stage"

# The runtime stage's RUN line, then a repository of another uid at /repo.
chroot "$rootfs" bash -o pipefail -c 'id perfgate >/dev/null 2>&1 || useradd --create-home --uid 10001 perfgate
  mkdir -p /data /repo && chown 10001 /data
  git config --system --get-all safe.directory | grep -qx /repo || git config --system --add safe.directory /repo
  perfgate --version'
rm -rf "$rootfs/repo" && mkdir "$rootfs/repo"
git -C "$rootfs/repo" init -q
git -C "$rootfs/repo" -c user.email=ci@perfgate.test -c user.name=ci commit -q --allow-empty -m "mounted"
sha=$(git -C "$rootfs/repo" rev-parse HEAD)
chown -R 20000:20000 "$rootfs/repo"

# shellcheck disable=SC2016  # expanded by the inner shell
unshare -m -- bash -c '
  set -euo pipefail
  rootfs=$1
  mount -t proc proc "$rootfs/proc"
  mount --rbind /dev "$rootfs/dev"
  chroot --userspec=10001:10001 "$rootfs" env -i HOME=/home/perfgate PATH=/usr/local/bin:/usr/bin:/bin \
    bash -c "cd /repo && perfgate --version && perfgate run --model tiny --device cpu --batch-sizes 1 \
      --seq-lens 4 --gen-tokens 2 --warmup 0 --reps 2 --db /data/r.db --quiet && perfgate runs --db /data/r.db"
' _ "$rootfs" | tee "$rootfs/tmp/runs.txt"
if grep -q "${sha:0:12}" "$rootfs/tmp/runs.txt"; then
  echo "ok   - as uid 10001 in the runtime tree, the run is tagged with /repo's commit ${sha:0:12}"
else
  echo "FAIL - the run is not tagged with /repo's commit ${sha:0:12}"
  exit 1
fi
