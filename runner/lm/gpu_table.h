// Datasheet peak figures of known GPUs, for MBU and MFU. LibTorch-free.
#pragma once
#include <optional>
#include <string>

#include "runner/lm/metrics.h"

namespace pg::lm {

struct GpuPeaks {
  const char* match;   // a word of the CUDA device name, e.g. "H200", "A100-SXM4-80GB"
  double bw_gbps;      // memory bandwidth, GB/s
  double tflops_fp32;  // non-tensor FP32 (perfgate leaves TF32 off)
  double tflops_fp16;  // dense tensor-core FP16 with FP32 accumulation
  double tflops_bf16;  // dense tensor-core BF16; 0 where the GPU has none
  const char* source;
};

// The first table entry whose `match` occurs in `device_name` as a whole word, if any.
std::optional<GpuPeaks> find_gpu_peaks(const std::string& device_name);

// Peak figures for a dtype: the overrides win, then the table; nothing for an unknown device.
PeakFigures peaks_for(const std::string& device_name, const std::string& dtype,
                      std::optional<double> bw_override, std::optional<double> tflops_override);

}  // namespace pg::lm
