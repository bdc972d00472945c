#!/usr/bin/env bash
# Installs the trusted perfgate once per runner and exports PERFGATE_BIN to the job's later steps.
#   PERFGATE_BIN set (the action's `perfgate` input): that binary (a released build, the
#     container's /usr/local/bin/perfgate); it must run.
#   PERFGATE_VERSION set (the action's `perfgate-version` input): the wheel of that release of
#     PERFGATE_RELEASE_REPO (the action's repository), verified against the release's SHA256SUMS,
#     installed into $PERFGATE_INSTALL_ROOT/release-<version>-<hash of the torch it reuses>/, once;
#     the torch of PERFGATE_PYTHON (else PYTHON, else python3) must be the release it was built for.
#   otherwise: perfgate is built from the source tree this script belongs to (the action's own
#     pinned commit, never the measured checkout) into
#     $PERFGATE_INSTALL_ROOT/<hash of that source>/, once; later jobs with the same pinned
#     commit reuse it. LibTorch comes from a venv keyed by the hash of requirements.txt
#     (PERFGATE_INSTALL_VENV overrides it; PERFGATE_INSTALL_ROOT overrides the root).
# The install directory belongs to the runner's user and is only read by measured code.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

harness=""
if [ -n "${PERFGATE_BIN:-}" ]; then
  bin=$(command -v "$PERFGATE_BIN") || pg_die "input 'perfgate': $PERFGATE_BIN is not an executable"
elif [ -n "${PERFGATE_VERSION:-}" ]; then
  # The released wheel of this action's repository, in a venv of its own that reuses the torch of
  # the runner's Python (PERFGATE_PYTHON, else PYTHON, else python3): a .pth file puts that torch's
  # site-packages on the venv's path (pip sees torch installed), and links to its torch/ and
  # nvidia/ sit where perfgate-runner's RPATH looks (site-packages beside perfgate/).
  version=${PERFGATE_VERSION#v}
  py=${PERFGATE_PYTHON:-${PYTHON:-python3}}
  site=$("$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))') ||
    pg_die "input 'perfgate-version': $py has no torch; the wheel runs on an installed torch (set PYTHON, the runner's Python with torch)"
  root=${PERFGATE_INSTALL_ROOT:-${RUNNER_TOOL_CACHE:-$HOME/.cache}/perfgate}
  dest="$root/release-$version-$(echo "$site" | sha256sum | cut -c1-12)"
  mkdir -p "$root"
  exec 9>"$root/.lock"
  flock 9
  if [ ! -f "$dest/complete" ]; then
    repo=${PERFGATE_RELEASE_REPO:?the action passes github.action_repository}
    url="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download/v$version"
    pg_log "installing the perfgate $version wheel from $url into $dest (once for this torch)"
    rm -rf "$dest"
    mkdir -p "$dest"
    curl -fsSL --retry 3 -o "$dest/SHA256SUMS" "$url/SHA256SUMS" ||
      pg_die "input 'perfgate-version': no release v$version of $repo ($url/SHA256SUMS)"
    wheel=$(grep -oE "perfgate-$version-py3-none-manylinux[^ ]*\.whl" "$dest/SHA256SUMS" | head -1)
    [ -n "$wheel" ] || pg_die "input 'perfgate-version': release v$version has no wheel in its SHA256SUMS"
    curl -fsSL --retry 3 -o "$dest/$wheel" "$url/$wheel" || pg_die "cannot download $url/$wheel"
    (cd "$dest" && grep -E " \*?$wheel\$" SHA256SUMS | sha256sum -c --quiet -) ||
      pg_die "$wheel does not match the release's SHA256SUMS"
    "$py" -m venv "$dest/venv"
    vsite=$("$dest/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$site" >"$vsite/perfgate-torch.pth"
    "$dest/venv/bin/python" -m pip install -q --no-index "$dest/$wheel" >&2
    problem=$("$dest/venv/bin/python" -c 'import perfgate; print(perfgate.torch_problem() or "")')
    [ -z "$problem" ] || pg_die "input 'perfgate-version': $problem"
    for d in torch nvidia; do [ ! -d "$site/$d" ] || ln -s "$site/$d" "$vsite/$d"; done
    mkdir -p "$dest/python"
    cp "$vsite/perfgate_bench.py" "$dest/python/"
    echo "$vsite/perfgate/bin/perfgate" >"$dest/bin"
    touch "$dest/complete"
  fi
  exec 9>&-
  bin=$(cat "$dest/bin")
  harness="$dest/python"
else
  src=$(cd "$PG_CI_DIR/.." && pwd)
  if [ ! -f "$src/CMakeLists.txt" ] || [ ! -f "$src/requirements.txt" ]; then
    pg_die "input 'perfgate' is empty and $src is not a perfgate source tree: pass a binary"
  fi
  root=${PERFGATE_INSTALL_ROOT:-${RUNNER_TOOL_CACHE:-$HOME/.cache}/perfgate}
  # The key names exactly the source that is built (tracked files and their content).
  key=$(cd "$src" && find . -path ./build -prune -o -path ./.git -prune -o -path ./.venv -prune \
    -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
  req=$(sha256sum "$src/requirements.txt" | cut -c1-16)
  dest="$root/$key"
  bin="$dest/build/perfgate"
  mkdir -p "$root"
  exec 9>"$root/.lock"
  flock 9 # one install at a time; a second job waits, then finds it done
  if [ ! -f "$dest/complete" ]; then
    pg_log "building perfgate from $src into $dest (once for this source)"
    rm -rf "$dest"
    mkdir -p "$dest"
    venv=${PERFGATE_INSTALL_VENV:-$root/venv-$req}
    PERFGATE_VENV="$venv" "$src/scripts/setup.sh" --no-build >&2
    (cd "$src" && PERFGATE_BUILD_DIR="$dest/build" PERFGATE_PYTHON="$venv/bin/python3" \
      "$PG_SCRIPTS/build.sh") >&2
    echo "$venv/bin/python3" >"$dest/python"
    touch "$dest/complete"
  fi
  exec 9>&-
fi
"$bin" --version >&2 || pg_die "$bin does not run"
# `perfgate run` starts perfgate-runner from beside the real file (docs/INSTALL.md).
runner=$(dirname "$(realpath "$bin")")/perfgate-runner
[ -x "$runner" ] || pg_die "input 'perfgate': $bin has no perfgate-runner beside it ($runner), which \`perfgate run\` needs"
# The --exec timing harness (python/perfgate_bench.py) of this trusted perfgate: put first on the
# measured code's PYTHONPATH (sandbox.sh), so a benchmark that imports perfgate_bench times with
# the pinned copy, not with one the pull request edited. A source install has it in its tree; a
# release carries it beside the binary (python/) or in share/perfgate/python.
for dir in ${harness:+"$harness"} "$PG_CI_DIR/../python" "$(dirname "$(realpath "$bin")")/python" \
  "$(dirname "$(realpath "$bin")")/../share/perfgate/python"; do
  if [ -f "$dir/perfgate_bench.py" ]; then
    harness=$(cd "$dir" && pwd)
    break
  fi
done
[ -n "$harness" ] || pg_log "no perfgate_bench.py beside $bin: --exec benchmarks use their own harness"
if [ -n "${GITHUB_ENV:-}" ]; then
  echo "PERFGATE_BIN=$bin" >>"$GITHUB_ENV"
  echo "PERFGATE_HARNESS_DIR=$harness" >>"$GITHUB_ENV"
  # The LibTorch venv of a source install, for a build-command that builds perfgate per side.
  if [ -z "${PERFGATE_PYTHON:-}" ] && [ -f "$(dirname "$(dirname "$bin")")/python" ]; then
    echo "PERFGATE_PYTHON=$(cat "$(dirname "$(dirname "$bin")")/python")" >>"$GITHUB_ENV"
  fi
fi
pg_output perfgate "$bin"
echo "$bin"
