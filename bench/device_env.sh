# shellcheck shell=bash disable=SC2034  # PLOTLY_ARGS, device_info: for the scripts that source it
# Sourced (bash) by the scripts that run on the GPU machine (bench/gpu_gate_calib.sh,
# bench/own_model/h200_gate.sh), in the project's root, in a copy of the tree sent with:
#   .device-debs/  the Debian packages of ../shared/device/fetch-debs.sh, with its env.sh;
#   extra-debs/    further .deb files (libmbedtls-dev: perfgate hashes model artifacts with
#                  libmbedcrypto) and plotly.min.js (the image has no plotly; perfgate serve
#                  embeds it at build time).
# Unpacks them into /opt/devroot, points CMake at them and at the image's LibTorch, and sets
# PLOTLY_ARGS (cmake arguments) and device_info (one line: GPU, driver, CUDA, torch, transformers).
mkdir -p /opt/devroot
for deb in extra-debs/*.deb; do
  [ -e "$deb" ] && dpkg -x "$deb" /opt/devroot
done
# shellcheck source=/dev/null
source .device-debs/env.sh
PLOTLY_ARGS=()
if [ -f extra-debs/plotly.min.js ]; then
  PLOTLY_ARGS=(-DPERFGATE_PLOTLY_JS="$PWD/extra-debs/plotly.min.js")
fi
export PYTHONUNBUFFERED=1
device_info=$(
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' 2>&1 | tail -1
)
device_info=${device_info//$'\n'/; }
echo "device: $device_info"
