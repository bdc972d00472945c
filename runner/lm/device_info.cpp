#include "runner/lm/device_info.h"

#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "common/errors.h"
#include "runner/lm/artifact.h"
#include "runner/lm/attention.h"
#include "runner/lm/cuda_support.h"
#include "runner/lm/generate.h"
#include "runner/lm/gpu_table.h"
#include "runner/lm/measure.h"

namespace pg::lm {

namespace {
// Messages name the run's settings (docs/RUN.md); each front end spells them its own way.
std::string setting(const char* name) { return SettingError::setting(name); }
}  // namespace

at::Device parse_device(const std::string& device) {
  if (device == "cpu") return at::Device(at::kCPU);
  std::smatch m;
  static const std::regex cuda(R"(cuda(:(\d{1,3}))?)");
  if (!std::regex_match(device, m, cuda))
    throw SettingError(setting("device") + ": unknown device '" + device +
                       "' (expected cpu, cuda or cuda:N)");
  const int index = m[2].matched ? std::stoi(m[2].str()) : 0;
  const int count = cuda_device_count();
  if (count == 0)
    throw SettingError(setting("device") + " " + device + ": no CUDA GPU is available" +
                       (at::hasCUDA() ? "" : " to this LibTorch build or machine"));
  if (index >= count)
    throw SettingError(setting("device") + " " + device + ": there are only " +
                       std::to_string(count) + " CUDA devices");
  return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
}

at::ScalarType parse_dtype(const std::string& dtype) {
  if (dtype == "fp32") return at::kFloat;
  if (dtype == "fp16") return at::kHalf;
  if (dtype == "bf16") return at::kBFloat16;
  throw SettingError(setting("dtype") + ": unknown dtype '" + dtype +
                     "' (expected fp32, fp16 or bf16)");
}

int cpu_threads() {
  const char* env = std::getenv("PERFGATE_CPU_THREADS");
  if (!env || !*env) return 1;
  try {
    size_t used = 0;
    const int n = std::stoi(env, &used);
    if (used == std::string(env).size() && n >= 1 && n <= 4096) return n;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string("PERFGATE_CPU_THREADS: '") + env + "' is not a positive integer");
}

void use_cpu_threads() {
  const int n = cpu_threads();
  if (at::get_num_threads() != n) at::set_num_threads(n);
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
      }
    }
  }
  return "unknown";
}

std::string device_name(const at::Device& d) {
  if (d.is_cuda()) return cuda_device_info(d.index()).name;
  return "cpu (" + cpu_model() + ")";
}

void check_dtype_runs(const at::Device& device, const std::string& dtype, AttentionKind attention) {
  const auto type = parse_dtype(dtype);
  if (device.is_cuda() && type == at::kBFloat16) {
    const auto info = cuda_device_info(device.index());
    if (info.major < 8)
      throw SettingError(setting("dtype") + " bf16: " + info.name + " (compute capability " +
                         std::to_string(info.major) + "." + std::to_string(info.minor) +
                         ") has no bf16 support; use fp16 or fp32");
  }
  static std::mutex mu;
  static std::map<std::string, std::string> verdicts;  // key -> "" (runs) or the error
  const std::string key = device.str() + "|" + dtype + "|" + std::to_string(int(attention));
  std::lock_guard lock(mu);
  auto it = verdicts.find(key);
  if (it == verdicts.end()) {
    std::string error;
    try {
      c10::InferenceMode guard;
      for (Family f : {Family::gpt2, Family::cs336}) {
        ModelConfig cfg{"probe", f, 1, 2, 8, 16, 16, 8};
        auto m = random_model(cfg, type, device, 0);
        auto prompt = at::zeros({1, 3}, at::TensorOptions().dtype(at::kLong).device(device));
        KVCache cache(1, 1, 2, 5, 4, m.options());
        generate(m, prompt, {2, attention, &cache, nullptr, false});
        generate(m, prompt, {2, attention, nullptr, nullptr, false});
      }
    } catch (const c10::Error& e) {
      error = e.what_without_backtrace();
      error = error.substr(0, error.find('\n'));
    }
    it = verdicts.emplace(key, error).first;
  }
  if (!it->second.empty())
    throw SettingError(setting("dtype") + " " + dtype + ": this LibTorch cannot run it on " +
                       device.str() + " (" + it->second + ")");
}

}  // namespace pg::lm

namespace pg::lm {
namespace {

std::string number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

}  // namespace

bool cuda_available() { return lm::cuda_device_count() > 0; }

std::string default_attention() { return lm::sdpa_available() ? "sdpa" : "math"; }

Environment device_environment(const std::string& device) {
  const auto d = lm::parse_device(device);
  if (d.is_cpu()) lm::use_cpu_threads();
  Environment env = lm::artifact_environment();  // the models' files and their exporters
  env["torch"] = TORCH_VERSION;
  env["threads"] = std::to_string(at::get_num_threads());
  env["timing"] = lm::timing_mode_name(lm::timing_mode());
  // Recorded only when forced, so that ordinary runs keep the fingerprint they always had.
  if (lm::decode_flash_chosen()) env["decode_attention"] = "flash";
  env["cpu"] = lm::cpu_model();
  if (d.is_cuda()) {
    const auto info = lm::cuda_device_info(d.index());
    env["device"] = info.name;
    env["compute_capability"] = std::to_string(info.major) + "." + std::to_string(info.minor);
    env["driver"] = info.driver;
    env["cuda"] = info.runtime;
    env["cudnn"] = info.cudnn;
    if (auto peaks = lm::find_gpu_peaks(info.name)) {
      env["peak_bw_gbps"] = number(peaks->bw_gbps);
      env["peak_tflops_fp32"] = number(peaks->tflops_fp32);
      env["peak_tflops_fp16"] = number(peaks->tflops_fp16);
      if (peaks->tflops_bf16 > 0) env["peak_tflops_bf16"] = number(peaks->tflops_bf16);
      env["peak_source"] = peaks->source;
    }
  } else {
    // Stable placeholders, so that two CPU runs compare equal on these fields.
    env["device"] = lm::device_name(d);
    env["compute_capability"] = "none";
    env["driver"] = "none";
    env["cuda"] = "none";
    env["cudnn"] = "none";
  }
  return env;
}

}  // namespace pg::lm
