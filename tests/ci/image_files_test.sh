#!/usr/bin/env bash
# The Dockerfile against the files it builds from, without building it (that takes an hour and
# the network: scripts/build_image.sh and scripts/verify_image.sh, docs/INSTALL.md):
#   - every stage a FROM or COPY --from names is defined above it; the targets the build script
#     builds and the documented ones exist;
#   - requirements-cuda.txt pins the same torch as requirements.txt, and its CUDA compiler wheels
#     are of the CUDA release (major.minor) of the CUDA runtime that torch wheel brings (read from
#     the venv scripts/setup.sh made): nvcc of another release fails CMake's version check;
#   - the RUN lines that need bash run under the SHELL line (bash, pipefail);
#   - .dockerignore keeps the venv, build trees, databases and .git out of the build context.
# Usage: image_files_test.sh   (from anywhere; reads the repository this script is in)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# shellcheck source=tests/common/check.sh
source tests/common/check.sh

stages_defined_before_use() {
  local defined=" " line from stage ok=0
  while read -r line; do
    if [[ $line =~ ^FROM[[:space:]]+([^[:space:]]+)([[:space:]]+AS[[:space:]]+([^[:space:]]+))? ]]; then
      from=${BASH_REMATCH[1]} stage=${BASH_REMATCH[3]}
      # A base image is an ARG (${DEBIAN}) or a reference with a registry path or tag.
      if [[ $from != \$* && $from != *:* && $defined != *" $from "* ]]; then
        echo "  FROM $from: no such stage above" && ok=1
      fi
      [ -z "$stage" ] || defined+="$stage "
    elif [[ $line =~ ^COPY[[:space:]]+--from=([^[:space:]]+) ]]; then
      from=${BASH_REMATCH[1]}
      [[ $defined == *" $from "* ]] || { echo "  COPY --from=$from: no such stage above" && ok=1; }
    fi
  done <Dockerfile
  return "$ok"
}
check "every FROM and COPY --from names a stage defined above it" stages_defined_before_use

stage_exists() { grep -Eq "^FROM .* AS $1\$" Dockerfile; }
for target in deps build ci runtime quickstart; do
  check "the Dockerfile has the stage $target (docs/INSTALL.md, scripts/build_image.sh)" stage_exists "$target"
done

pin() { grep -E "^$1==" "$2" | head -1; }
check "requirements-cuda.txt pins the torch of requirements.txt ($(pin torch requirements.txt))" \
  test "$(pin torch requirements.txt)" = "$(pin torch requirements-cuda.txt)"

# The CUDA release of the runtime the torch wheel installed, e.g. 13.0 of nvidia-cuda-runtime 13.0.96.
py=.venv/bin/python3
[ -x "$py" ] || py=python3
runtime=$("$py" -c 'import importlib.metadata as m; print(m.version("nvidia-cuda-runtime"))' 2>/dev/null || true)
if [ -z "$runtime" ]; then
  check "the venv has nvidia-cuda-runtime (scripts/setup.sh installs the torch wheel's)" false
else
  release=$(cut -d. -f1,2 <<<"$runtime")
  for wheel in nvidia-cuda-nvcc nvidia-cuda-crt nvidia-nvvm nvidia-cuda-cccl; do
    version=$(pin "$wheel" requirements-cuda.txt | cut -d= -f3)
    check "$wheel==$version is of CUDA $release, the torch wheel's runtime ($runtime)" \
      test "$(cut -d. -f1,2 <<<"$version")" = "$release"
  done
fi

check "the SHELL line runs RUN lines in bash with pipefail" \
  grep -qxF 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]' Dockerfile
# A stage from a base image starts with /bin/sh; one from another stage inherits its SHELL.
shell_in_every_stage() {
  awk '/^FROM /{ if (run && !shell) bad = bad " " name; name = $NF; run = 0; shell = ($2 in has) }
       /^SHELL /{ shell = 1; has[name] = 1 } /^RUN /{ if (!shell) run = 1 }
       END { if (run && !shell) bad = bad " " name; if (bad != "") { print "  no SHELL before RUN in:" bad; exit 1 } }' Dockerfile
}
check "every stage with a RUN line has the SHELL line" shell_in_every_stage

for path in .venv/ 'build*/' .git '*.db'; do
  check ".dockerignore leaves out $path" grep -qxF -- "$path" .dockerignore
done

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
