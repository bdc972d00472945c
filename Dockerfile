# syntax=docker/dockerfile:1
# perfgate's image for a self-hosted GPU runner. Stages:
#   deps        Debian 12 + every dependency, installed by scripts/setup.sh (the README's script,
#               so CI exercises the same install steps) + the CUDA 13.0 toolkit LibTorch's CMake
#               package needs at build time (GPU variant only)
#   build       perfgate built in Release against the PyPI wheel's LibTorch
#   ci          deps + the binary, for a job container that builds merge-base and head itself
#   runtime     (default) slim: perfgate, the LibTorch/CUDA shared libraries it links, runtime
#               Debian libraries, a non-root user; ENTRYPOINT ["perfgate"]
#   quickstart  runtime whose default command is the CPU quick start
#
#   docker build -t perfgate .                                           # GPU runner image
#   docker run --gpus all -v perfgate-data:/data perfgate run --config /data/sweep.toml
#   docker build --build-arg VARIANT=cpu --target quickstart -t perfgate-cpu .
#   docker run --rm perfgate-cpu                                         # quick start on CPU
#
# VARIANT=cpu takes torch==2.11.0 from PyTorch's CPU wheel index (no CUDA toolkit, a far smaller
# image); VARIANT=gpu (default) takes PyPI's torch==2.11.0, the CUDA 13.0 build.
# No Docker engine runs on the machines perfgate is developed on: this file has not been built
# there (docs/OPERATORS.md says so too).

ARG VARIANT=gpu
ARG DEBIAN=debian:bookworm

FROM ${DEBIAN} AS deps
ARG VARIANT
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
WORKDIR /opt/perfgate
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends ca-certificates curl gnupg python3 python3-venv \
      python3-pip \
 && rm -rf /var/lib/apt/lists/*
# The CUDA 13.0 toolkit (nvcc, headers, libraries) from NVIDIA's Debian 12 repository: the
# wheel's LibTorch is a CUDA build and its CMake package looks for the toolkit.
RUN if [ "$VARIANT" = gpu ]; then \
      curl -fsSL -o /tmp/cuda-keyring.deb \
        https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb \
      && dpkg -i /tmp/cuda-keyring.deb && rm /tmp/cuda-keyring.deb \
      && apt-get update -qq \
      && apt-get install -y -qq --no-install-recommends cuda-toolkit-13-0 \
      && rm -rf /var/lib/apt/lists/*; \
    elif [ "$VARIANT" != cpu ]; then echo "VARIANT must be gpu or cpu" >&2; exit 2; fi
ENV PATH=/usr/local/cuda/bin:${PATH}
# Only what setup.sh reads, so that editing the sources does not reinstall the dependencies.
COPY scripts/setup.sh scripts/setup.sh
COPY requirements.txt requirements.txt
RUN if [ "$VARIANT" = cpu ]; then \
      export PIP_INDEX_URL=https://download.pytorch.org/whl/cpu \
             PIP_EXTRA_INDEX_URL=https://pypi.org/simple; \
    fi \
 && scripts/setup.sh --no-build \
 && rm -rf /root/.cache/pip /var/lib/apt/lists/*

FROM deps AS build
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPERFGATE_PYTHON=/opt/perfgate/.venv/bin/python3 \
 && cmake --build build --target perfgate -j"$(nproc)" \
 && ./build/perfgate --version \
 && mkdir -p /opt/perfgate/.venv/lib/python3.11/site-packages/nvidia \
 && ldd build/perfgate | awk '$3 ~ /^\// && $3 !~ /\.venv/ {print $3}' \
    | xargs -rn1 basename | xargs -rI{} dpkg -S '*/{}' | cut -d: -f1 | sort -u \
    > /opt/perfgate/runtime-packages.txt \
 && cat /opt/perfgate/runtime-packages.txt

# For a GitHub Actions job container on the GPU runner: the PR gate builds the merge-base and the
# head itself (ci/scripts/build.sh), so it needs the toolchain; `perfgate` is on PATH as well.
FROM deps AS ci
COPY --from=build /opt/perfgate/build/perfgate /usr/local/bin/perfgate
RUN useradd --create-home --uid 10001 perfgate
ENV PERFGATE_PYTHON=/opt/perfgate/.venv/bin/python3
USER perfgate
ENTRYPOINT ["perfgate"]

FROM ${DEBIAN} AS runtime
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility
# The runtime halves of setup.sh's -dev packages: exactly the Debian packages owning the shared
# libraries the built binary links (listed by the build stage with ldd + dpkg -S), plus git for
# the ci scripts and sqlite3 for backups.
COPY --from=build /opt/perfgate/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update -qq \
 && xargs -a /tmp/runtime-packages.txt apt-get install -y -qq --no-install-recommends \
      ca-certificates git sqlite3 \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
# LibTorch and the CUDA libraries the wheel brings (torch/lib, nvidia/*), at the path perfgate's
# RPATH names; the Python interpreter and the test oracles stay behind.
COPY --from=build /opt/perfgate/.venv/lib/python3.11/site-packages/torch/lib \
     /opt/perfgate/.venv/lib/python3.11/site-packages/torch/lib
COPY --from=build /opt/perfgate/.venv/lib/python3.11/site-packages/nvidia \
     /opt/perfgate/.venv/lib/python3.11/site-packages/nvidia
COPY --from=build /opt/perfgate/build/perfgate /usr/local/bin/perfgate
COPY ci/sweeps /opt/perfgate/ci/sweeps
RUN useradd --create-home --uid 10001 perfgate && mkdir -p /data && chown perfgate /data \
 && perfgate --version
USER perfgate
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["perfgate"]
CMD ["--help"]

FROM runtime AS quickstart
CMD ["run", "--model", "tiny", "--device", "cpu", "--db", "/data/perfgate.db"]
