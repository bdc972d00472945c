#!/usr/bin/env bash
# Builds the Dockerfile's images without a Docker engine, with buildah (Debian 12: `apt-get install
# buildah`), as root, rootless-engine-free: --isolation chroot runs each RUN line in a chroot, so no
# daemon, runc or user namespaces are needed. The base image is made locally with mmdebstrap from
# Debian's mirror (no registry is contacted), then every target is built: deps and build (as the
# stages of the others), ci, runtime and quickstart. With a Docker engine, `docker build` does the
# same (docs/INSTALL.md, "Container image").
# Usage: scripts/build_image.sh [TARGET...]   (default: ci runtime quickstart)
# Environment: PERFGATE_IMAGE=perfgate (image name; tags are :TARGET), VARIANT=gpu|cpu,
#   PERFGATE_BASE=localhost/perfgate-base:bookworm (made with mmdebstrap when absent),
#   PERFGATE_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt (pip's CA bundle, a build secret),
#   BUILDAH_ISOLATION=chroot, STORAGE_DRIVER (buildah's; overlay where the kernel allows it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
name=${PERFGATE_IMAGE:-perfgate}
base=${PERFGATE_BASE:-localhost/perfgate-base:bookworm}
variant=${VARIANT:-gpu}
export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ci runtime quickstart)

for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || {
    echo "build_image: $tool is not installed (apt-get install $tool)" >&2
    exit 2
  }
done
[ "$(id -u)" -eq 0 ] || {
  echo "build_image: run as root (buildah's chroot isolation and mmdebstrap need it)" >&2
  exit 2
}

# The base: Debian 12 minbase from the mirror, as debian:bookworm is (apt, bash, coreutils).
if ! buildah inspect --type image "$base" >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "build_image: making $base with mmdebstrap (Debian 12 minbase)"
  mmdebstrap --variant=minbase --quiet bookworm "$tmp/rootfs.tar"
  ctr=$(buildah from scratch)
  buildah add --quiet "$ctr" "$tmp/rootfs.tar" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd /bin/bash "$ctr"
  buildah commit --quiet --rm "$ctr" "$base" >/dev/null
fi

# pip's CA bundle (the build secret ca-bundle): this machine's, which trusts a TLS-inspecting
# proxy where the machine does.
ca=${PERFGATE_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
secret=()
[ -s "$ca" ] && secret=(--secret "id=ca-bundle,src=$ca")

# --layers keeps each step's result, so the second target reuses deps and build; the Docker
# image format keeps SHELL (bash with pipefail), which the OCI format drops.
for target in "${targets[@]}"; do
  echo "build_image: $name:$target (VARIANT=$variant)"
  start=$(date +%s)
  buildah bud --format docker --layers --pull=never --build-arg DEBIAN="$base" \
    --build-arg VARIANT="$variant" "${secret[@]}" --target "$target" --tag "$name:$target" .
  echo "build_image: $name:$target built in $(($(date +%s) - start)) s"
done
buildah images --filter reference="$name" --format '{{.Name}}:{{.Tag}} {{.Size}}'
