// The LibTorch side of the runner behind a LibTorch-free header: its measurer (runner/measurer.h),
// a cell held open one repetition at a time (perfgate's own worker, docs/PROTOCOL.md "Worker
// mode"), and what the sweep asks of the device before it runs. Everything that includes
// <torch/...> lives in runner/lm/*.cpp.
#pragma once
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/run.h"
#include "runner/measurer.h"

namespace pg::lm {

// One timed repetition: the prefill and each of the gen_tokens - 1 decode steps, ms.
struct RepSample {
  double prefill_ms = 0;
  std::vector<double> decode_ms;
};

// LibTorch could not measure the cell: `oom` when memory ran out, else `error`; the reason is
// LibTorch's first line. `libtorch`: LibTorch itself threw (its cache is worth emptying).
struct CellFailure : std::runtime_error {
  CellFailure(CellStatus status, const std::string& reason, bool libtorch)
      : std::runtime_error(reason), status(status), libtorch(libtorch) {}
  CellStatus status;
  bool libtorch;
};

// One cell held open (LibTorchMeasurer::open): its model loaded, its buffers (and a graph cell's
// stream and graph) alive, the warm-up done. measure() is open, opt.reps repetition() calls and
// finish(); perfgate's worker calls repetition() once per request. Every method throws
// CellFailure for an oom or a LibTorch error.
class CellSession {
 public:
  virtual ~CellSession() = default;
  // One timed repetition, exactly as measure() times each of its own.
  virtual RepSample repetition() = 0;
  // Why the cell's output cannot be trusted (an AOTInductor package's logits failed their check
  // after some repetition, the warm-up's included), else nullopt. Repetitions still run.
  virtual std::optional<std::string> invalid_reason() const = 0;
  // After the timed repetitions, once: reads the memory peak, runs the profiled sequence
  // (opt.profile), checks the samples and derives the metrics of the repetitions run so far.
  // status ok or invalid; the memory metric is in the metrics when they were derived.
  virtual CellResult finish() = 0;
  // The peak finish() read: device bytes allocated (CUDA) since the model was loaded, or the
  // growth of the process's peak RSS (CPU); nullopt before finish().
  virtual std::optional<int64_t> memory_peak() const = 0;
};

// perfgate's own models and AOTInductor packages, timed in this process. Keeps the last loaded
// model so that consecutive cells of one model/dtype/device reuse it.
class LibTorchMeasurer final : public runner::Measurer {
 public:
  LibTorchMeasurer();
  ~LibTorchMeasurer() override;
  // check_cell_supported's refusals and bad options throw UsageError; an oom or a sanity failure
  // comes back as status oom / invalid / error.
  CellResult measure(const CellKey& key, const runner::MeasureOptions& opt) override;
  // The cell loaded and warmed up (opt.warmup untimed repetitions). Refusals as for measure();
  // an oom or LibTorch error throws CellFailure. One session at a time: it borrows the loaded
  // model and must be destroyed before the next open() or measure().
  std::unique_ptr<CellSession> open(const CellKey& key, const runner::MeasureOptions& opt);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws UsageError when this build / device cannot run the cell (sdpa on LibTorch 1.x, a dtype
// the device can't run, cuda-graphs before it exists, a missing GPU, a bad model name or file).
void check_cell_supported(const CellKey& key);

bool cuda_available();
std::string default_attention();  // "sdpa" on LibTorch 2.x, "math" otherwise
std::string torch_version();      // the LibTorch this runner is built with, e.g. "2.11.0+cpu"

// Device/software part of the fingerprint: device, compute_capability, driver, cuda, cudnn,
// torch, threads (+ peak figures used for MBU/MFU).
Environment device_environment(const std::string& device);

}  // namespace pg::lm
