#include "runner/lm/gpu_table.h"

#include <array>
#include <cctype>

namespace pg::lm {
namespace {

// Dense figures: datasheets quote tensor TFLOP/s "with sparsity"; these are half of those.
constexpr const char* kH200 = "https://www.nvidia.com/en-us/data-center/h200/";
constexpr const char* kH100 = "https://www.nvidia.com/en-us/data-center/h100/";
constexpr const char* kA100 =
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-nvidia-us-2188504-web.pdf";
constexpr const char* kL4 = "https://www.nvidia.com/en-us/data-center/l4/";
constexpr const char* kL40S = "https://www.nvidia.com/en-us/data-center/l40s/";
constexpr const char* kA10 = "https://www.nvidia.com/en-us/data-center/products/a10-gpu/";
constexpr const char* kAda =
    "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/"
    "nvidia-ada-gpu-architecture.pdf (RTX 4090, Appendix A)";
constexpr const char* kAmpere =
    "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf";

// Ordered: a more specific name comes before a shorter one it contains.
constexpr std::array kTable = {
    GpuPeaks{"H200 NVL", 4800, 60, 835.5, 835.5, kH200},
    GpuPeaks{"H200", 4800, 67, 989.5, 989.5, kH200},
    GpuPeaks{"H100 NVL", 3900, 60, 835.5, 835.5, kH100},
    GpuPeaks{"H100 PCIe", 2000, 51, 756.5, 756.5, kH100},
    GpuPeaks{"H100", 3350, 67, 989.5, 989.5, kH100},  // SXM5: "NVIDIA H100 80GB HBM3"
    GpuPeaks{"A100-SXM4-80GB", 2039, 19.5, 312, 312, kA100},
    GpuPeaks{"A100 80GB PCIe", 1935, 19.5, 312, 312, kA100},
    GpuPeaks{"A100", 1555, 19.5, 312, 312, kA100},  // the 40 GB SXM4 and PCIe cards
    GpuPeaks{"L40S", 864, 91.6, 362, 362, kL40S},
    GpuPeaks{"L4", 300, 30.3, 121, 121, kL4},
    GpuPeaks{"A10", 600, 31.2, 125, 125, kA10},
    GpuPeaks{"RTX 4090", 1008, 82.6, 165.2, 165.2, kAda},
    GpuPeaks{"RTX 3090", 936, 35.6, 71, 71, kAmpere},
};

bool whole_word_at(const std::string& s, size_t pos, size_t len) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  return (pos == 0 || !word(s[pos - 1])) && (pos + len == s.size() || !word(s[pos + len]));
}

}  // namespace

std::optional<GpuPeaks> find_gpu_peaks(const std::string& device_name) {
  for (const auto& g : kTable) {
    const std::string m = g.match;
    for (size_t pos = device_name.find(m); pos != std::string::npos;
         pos = device_name.find(m, pos + 1))
      if (whole_word_at(device_name, pos, m.size())) return g;
  }
  return std::nullopt;
}

PeakFigures peaks_for(const std::string& device_name, const std::string& dtype,
                      std::optional<double> bw_override, std::optional<double> tflops_override) {
  PeakFigures p{bw_override, tflops_override};
  if (auto g = find_gpu_peaks(device_name)) {
    if (!p.bw_gbps) p.bw_gbps = g->bw_gbps;
    const double tf = dtype == "fp32"   ? g->tflops_fp32
                      : dtype == "fp16" ? g->tflops_fp16
                                        : g->tflops_bf16;
    if (!p.tflops && tf > 0) p.tflops = tf;
  }
  return p;
}

}  // namespace pg::lm
