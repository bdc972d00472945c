// From raw samples to docs/METRICS.md's metrics, and the sanity checks that make a cell
// `invalid`. LibTorch-free and pure, so every rule is tested on hand-made samples.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/descriptive.h"  // median and quantile, used with these metrics
#include "core/run.h"
#include "runner/lm/cost_model.h"

namespace pg::lm {

// Limits on one decode step (docs/METRICS.md: under 1 µs or over a minute is a unit error).
inline constexpr double kMinStepMs = 1e-3;
inline constexpr double kMaxStepMs = 60'000.0;

// Peak figures of the device for the cell's dtype; absent = MBU / MFU are not reported.
struct PeakFigures {
  std::optional<double> bw_gbps;
  std::optional<double> tflops;
};

// Why the samples cannot be trusted (non-finite, a step out of limits, wrong counts), or nullopt.
std::optional<std::string> sanity_failure(const CellSamples& s, int reps, int gen_tokens);

// Every timing metric of the metrics table plus weight_bytes, kv_bytes, achieved_bw_gbps, mbu and
// prefill_mfu; the memory metric is added by the caller, which alone can read the allocator.
std::map<std::string, double> derive_metrics(const CellKey& key, const CellSamples& s,
                                             const CellCost& cost, const PeakFigures& peak);

}  // namespace pg::lm
