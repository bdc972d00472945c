# syntax=docker/dockerfile:1
# perfgate's image for a self-hosted GPU runner. Stages:
#   deps        Debian 12 + every dependency, installed by scripts/setup.sh (the README's script)
#               into /opt/perfgate/venv + the CUDA 13.0 compiler and headers LibTorch's CMake
#               package needs at build time (GPU variant only)
#   build       perfgate built in Release against the wheel's LibTorch; stages the runtime tree
#   ci          deps + perfgate, non-root user 10001, for a job container that builds the
#               measured commits itself (the action's build-command)
#   runtime     (default) slim: perfgate, the LibTorch/CUDA shared libraries it loads, the
#               Debian runtime libraries, non-root user 10001; ENTRYPOINT ["perfgate"]
#   quickstart  runtime whose default command is the CPU quick start
#
#   docker build -t perfgate .                                     # GPU runner image
#   docker run --rm --gpus all -v "$PWD":/repo:ro -v perfgate-data:/data perfgate \
#     run --config perf/sweep.toml --db /data/perfgate.db          # runs tagged with /repo's commit
#   docker build --build-arg VARIANT=cpu --target quickstart -t perfgate-cpu .
#   docker run --rm perfgate-cpu                                   # quick start on CPU
#
# What takes the space (docs/OPERATORS.md, "The Docker image"): in runtime, LibTorch's libraries
# (torch/lib, ~0.95 GB) and the CUDA libraries the wheel brings (nvidia/, ~2.7 GB: cu13 1.7 GB with
# cuBLAS/cuFFT/cuSPARSE/NVRTC, cuDNN 0.47 GB, cuSPARSELt 0.22 GB, NCCL 0.21 GB); all are loaded
# by libtorch_cuda.so or dlopen'ed by it. In ci, the whole venv (~5 GB, with the Python packages
# and test oracles) and the CUDA compiler.
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
 && apt-get install -y -qq --no-install-recommends ca-certificates curl gnupg python3 python3-venv \
      python3-pip \
 && rm -rf /var/lib/apt/lists/*
# The CUDA 13.0 compiler, headers and development libraries (the components of the toolkit that
# LibTorch's CMake package looks for), from NVIDIA's Debian 12 repository; not the whole toolkit.
RUN if [ "$VARIANT" = gpu ]; then \
      curl -fsSL -o /tmp/cuda-keyring.deb \
        https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb \
      && dpkg -i /tmp/cuda-keyring.deb && rm /tmp/cuda-keyring.deb \
      && apt-get update -qq \
      && apt-get install -y -qq --no-install-recommends cuda-nvcc-13-0 cuda-cudart-dev-13-0 \
           cuda-nvrtc-dev-13-0 cuda-cupti-dev-13-0 cuda-nvtx-13-0 cuda-profiler-api-13-0 \
           cuda-cccl-13-0 libcublas-dev-13-0 libcufft-dev-13-0 libcurand-dev-13-0 \
           libcusolver-dev-13-0 libcusparse-dev-13-0 libnvjitlink-dev-13-0 \
      && rm -rf /var/lib/apt/lists/*; \
    elif [ "$VARIANT" != cpu ]; then echo "VARIANT must be gpu or cpu" >&2; exit 2; fi
ENV PATH=/usr/local/cuda/bin:${PATH}
# Only what setup.sh reads, so that editing the sources does not reinstall the dependencies.
COPY scripts/setup.sh scripts/setup.sh
COPY requirements.txt requirements-lint.txt ./
RUN if [ "$VARIANT" = cpu ]; then \
      export PIP_INDEX_URL=https://download.pytorch.org/whl/cpu \
             PIP_EXTRA_INDEX_URL=https://pypi.org/simple; \
    fi \
 && PIP_NO_CACHE_DIR=1 scripts/setup.sh --no-build \
 && rm -rf /root/.cache /var/lib/apt/lists/* \
 && chmod -R a+rX /opt/perfgate

FROM deps AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY . .
# The runtime tree in /stage (ci/scripts/stage_runtime.sh): perfgate, and of the venv only the
# shared libraries of torch/lib and nvidia/, at the paths perfgate's RUNPATH names; and the list of
# Debian packages owning the other libraries it links, which the runtime stage installs.
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPERFGATE_PYTHON=/opt/perfgate/.venv/bin/python3 \
 && cmake --build build --target perfgate -j"$(nproc)" \
 && ./build/perfgate --version \
 && ci/scripts/stage_runtime.sh build/perfgate /stage \
 && cat /stage/runtime-packages.txt

# For a GitHub Actions job container on the GPU runner: the gate can build the measured commits
# itself (build-command), so it keeps the toolchain; `perfgate` is on PATH as well. Everything in
# /opt/perfgate is world-readable and owned by root: the job's user cannot change it.
FROM deps AS ci
COPY --from=build /stage/usr/local/bin/perfgate /usr/local/bin/perfgate
# The workspace is mounted from the host and belongs to the runner's uid, not to this user.
RUN useradd --create-home --uid 10001 perfgate \
 && git config --system --add safe.directory '*' \
 && perfgate --version
ENV PERFGATE_PYTHON=/opt/perfgate/.venv/bin/python3
USER 10001
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
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
COPY --from=build /stage/opt /opt
COPY --from=build /stage/usr/local/bin/perfgate /usr/local/bin/perfgate
COPY ci/sweeps /opt/perfgate/ci/sweeps
# Runs are tagged with the commit of the repository mounted at /repo (the working directory), which
# belongs to the host's user: git must accept it. The store goes to the /data volume.
RUN useradd --create-home --uid 10001 perfgate \
 && mkdir -p /data /repo && chown 10001 /data \
 && git config --system --add safe.directory /repo \
 && perfgate --version
USER 10001
WORKDIR /repo
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["perfgate"]
CMD ["--help"]

FROM runtime AS quickstart
CMD ["run", "--model", "tiny", "--device", "cpu", "--db", "/data/perfgate.db"]
