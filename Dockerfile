# syntax=docker/dockerfile:1
# perfgate's image for a self-hosted GPU runner. Stages:
#   deps        Debian 12 + every dependency, installed by scripts/setup.sh (the README's script)
#               into /opt/perfgate/venv, + the CUDA 13.0 compiler and headers LibTorch's CMake
#               package needs at build time, from NVIDIA's PyPI wheels (requirements-cuda.txt)
#   build       perfgate built in Release against the wheel's LibTorch; stages the runtime tree
#   ci          deps + perfgate, non-root user 10001, for a job container that builds the
#               measured commits itself (the action's build-command) and runs the tests
#   runtime     (default) slim: perfgate, the LibTorch/CUDA shared libraries it loads, the
#               Debian runtime libraries, non-root user 10001; ENTRYPOINT ["perfgate"]
#   quickstart  runtime whose default command is the CPU quick start
#
#   docker build -t perfgate .                                     # GPU runner image
#   docker run --rm --gpus all -v "$PWD":/repo:ro -v perfgate-data:/data perfgate \
#     run --config perf/sweep.toml --db /data/perfgate.db          # runs tagged with /repo's commit
#   scripts/build_image.sh                                         # the same without Docker (buildah)
#
# Sizes and what takes the space: docs/INSTALL.md, "Container image". In runtime almost all of it is
# LibTorch's libraries (torch/lib) and the CUDA libraries the torch wheel brings (nvidia/), all
# loaded by libtorch_cuda.so or dlopen'ed by it; ci/scripts/stage_runtime.sh leaves out the rest.
# VARIANT=cpu takes torch==2.11.0 from PyTorch's CPU wheel index (no CUDA libraries or toolkit);
# VARIANT=gpu (default) takes PyPI's torch==2.11.0, the CUDA 13.0 build.

ARG VARIANT=gpu
ARG DEBIAN=debian:bookworm

FROM ${DEBIAN} AS deps
ARG VARIANT
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 PERFGATE_VENV=/opt/perfgate/venv
WORKDIR /opt/perfgate
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends ca-certificates python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
# Only what setup.sh reads, so that editing the sources does not reinstall the dependencies.
COPY scripts/setup.sh scripts/setup.sh
COPY requirements.txt requirements-lint.txt requirements-cuda.txt ./
# The pip cache is a build cache mount: downloads are kept across builds, not in the image. Behind
# a TLS-inspecting proxy, give pip its CA bundle as the build secret ca-bundle (docker build
# --secret id=ca-bundle,src=/etc/ssl/certs/ca-certificates.crt); it is not kept in the image.
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca-bundle \
    if [ -s /run/secrets/ca-bundle ]; then export PIP_CERT=/run/secrets/ca-bundle; fi \
 && if [ "$VARIANT" = cpu ]; then \
      export PIP_INDEX_URL=https://download.pytorch.org/whl/cpu \
             PIP_EXTRA_INDEX_URL=https://pypi.org/simple; \
    elif [ "$VARIANT" != gpu ]; then echo "VARIANT must be gpu or cpu" >&2; exit 2; fi \
 && scripts/setup.sh --no-build \
 && rm -rf /var/lib/apt/lists/*
# The CUDA 13.0 compiler (nvcc, cicc, ptxas), its C runtime headers and CCCL, from NVIDIA's PyPI
# wheels (requirements-cuda.txt; and cuda_profiler_api.h, which runner/lm/cuda_support.cpp
# includes): they unpack into the torch wheel's nvidia/cu13, which then is a toolkit root. CMake's
# FindCUDAToolkit links by unversioned names and nvcc looks in lib64 and targets/x86_64-linux, as
# in NVIDIA's toolkit layout; the wheels ship none of these links: they are made here.
# (No chmod over /opt/perfgate: pip leaves it world-readable, and a chmod in a later step would
# copy the whole venv into that step's layer.)
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca-bundle \
    if [ -s /run/secrets/ca-bundle ]; then export PIP_CERT=/run/secrets/ca-bundle; fi \
 && if [ "$VARIANT" = gpu ]; then \
      venv/bin/python3 -m pip install -q -r requirements-cuda.txt nvidia-cuda-profiler-api==13.0.85 \
      && cuda=$(venv/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/nvidia/cu13 \
      && for so in "$cuda"/lib/lib*.so.[0-9]*; do \
           base=${so%%.so.*}.so; [ -e "$base" ] || ln -s "$(basename "$so")" "$base"; \
         done \
      && ln -sfn lib "$cuda/lib64" && mkdir -p "$cuda/targets/x86_64-linux" \
      && ln -sfn ../../include "$cuda/targets/x86_64-linux/include" \
      && ln -sfn ../../lib "$cuda/targets/x86_64-linux/lib" \
      && ln -sfn "$cuda" /opt/perfgate/cuda \
      && /opt/perfgate/cuda/bin/nvcc --version | tail -2; \
    fi
# /opt/perfgate/cuda links to the venv's nvidia/cu13 (GPU variant; absent for VARIANT=cpu).
ENV CUDA_HOME=/opt/perfgate/cuda PATH=/opt/perfgate/cuda/bin:${PATH}

FROM deps AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY . .
# The runtime tree in /stage (ci/scripts/stage_runtime.sh): perfgate and perfgate-runner (the
# LibTorch part `perfgate run` starts), and of the venv only the shared libraries of torch/lib and
# nvidia/*/lib, at the paths the runner's RUNPATH names; and the
# list of Debian packages owning the other libraries it links, which the runtime stage installs.
# ccache's directory is a build cache mount: a rebuild after a source change recompiles only that.
RUN --mount=type=cache,target=/root/.cache/ccache \
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPERFGATE_PYTHON=/opt/perfgate/venv/bin/python3 \
 && cmake --build build --target perfgate -j"$(nproc)" \
 && ./build/perfgate --version \
 && ci/scripts/stage_runtime.sh build/perfgate /stage \
 && cat /stage/runtime-packages.txt

# For a GitHub Actions job container on the GPU runner: the gate can build the measured commits
# itself (build-command) and run the tests, so it keeps the toolchain and the venv (first on PATH:
# CMake finds LibTorch through its python3, ctest's linters are its scripts); `perfgate` is on PATH
# as well. Everything in /opt/perfgate is world-readable and owned by root: the job's user cannot
# change it.
FROM deps AS ci
COPY --from=build /stage/usr/local/bin/perfgate /stage/usr/local/bin/perfgate-runner /usr/local/bin/
# The workspace is mounted from the host and belongs to the runner's uid, not to this user: git's
# '*' accepts it for the git command line; perfgate's libgit2 takes exact paths (/repo here).
RUN useradd --create-home --uid 10001 perfgate \
 && git config --system --add safe.directory /repo \
 && git config --system --add safe.directory '*' \
 && perfgate --version
ENV PATH=/opt/perfgate/venv/bin:${PATH} PERFGATE_PYTHON=/opt/perfgate/venv/bin/python3
USER 10001
WORKDIR /home/perfgate
ENTRYPOINT ["perfgate"]

FROM ${DEBIAN} AS runtime
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility
# The runtime halves of setup.sh's -dev packages: exactly the Debian packages owning the shared
# libraries the built binary links, plus git for the action's scripts and sqlite3 for backups.
COPY --from=build /stage/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update -qq \
 && xargs -a /tmp/runtime-packages.txt apt-get install -y -qq --no-install-recommends \
      ca-certificates git sqlite3 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /tmp/runtime-packages.txt
COPY --from=build /stage/opt /opt
COPY --from=build /stage/usr/local/bin/perfgate /stage/usr/local/bin/perfgate-runner /usr/local/bin/
COPY ci/sweeps /opt/perfgate/ci/sweeps
# Runs are tagged with the commit of the repository mounted at /repo (the working directory, or
# --repo /repo), which belongs to the host's user: git and libgit2 must accept it. libgit2 1.5
# takes only exact paths from safe.directory (git's '*' serves the git command line). The store
# goes to the /data volume. The build fails here if a library perfgate links is missing.
RUN useradd --create-home --uid 10001 perfgate \
 && mkdir -p /data /repo && chown 10001 /data \
 && git config --system --add safe.directory /repo \
 && git config --system --add safe.directory '*' \
 && if ldd /usr/local/bin/perfgate /usr/local/bin/perfgate-runner | grep 'not found'; then exit 1; fi \
 && perfgate --version
USER 10001
WORKDIR /repo
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["perfgate"]
CMD ["--help"]

FROM runtime AS quickstart
CMD ["run", "--model", "tiny", "--device", "cpu", "--db", "/data/perfgate.db"]
