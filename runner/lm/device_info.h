// Devices and dtypes: parsing the flags, naming the hardware, and whether a dtype runs.
#pragma once
#include <ATen/ATen.h>

#include <string>

#include "runner/lm/attention.h"

namespace pg::lm {

// "cpu", "cuda" (device 0) or "cuda:N"; throws SettingError naming the device setting when the
// string is malformed or the GPU is not there.
at::Device parse_device(const std::string& device);
at::ScalarType parse_dtype(const std::string& dtype);  // fp32 | fp16 | bf16, else UsageError

// LibTorch's intra-op threads for CPU cells: PERFGATE_CPU_THREADS, else 1. One thread by default
// because a shared CI runner oversubscribes OpenMP's spinning workers: on a loaded 2-core VM the
// tiny sweep took 112 s (CV up to 2.0) with LibTorch's default of 2 threads, 5.8 s with one.
int cpu_threads();       // throws UsageError for a malformed PERFGATE_CPU_THREADS
void use_cpu_threads();  // at::set_num_threads(cpu_threads()) when it differs

std::string cpu_model();                       // /proc/cpuinfo "model name"
std::string device_name(const at::Device& d);  // CUDA name, or "cpu (<model>)"

// Throws UsageError when `dtype` cannot run on `device`: bf16 below compute capability 8.0, or
// (any device) a LibTorch without the kernels, found by running a one-layer model of each
// family once. Results are cached per device, dtype and attention.
void check_dtype_runs(const at::Device& device, const std::string& dtype, AttentionKind attention);

}  // namespace pg::lm
