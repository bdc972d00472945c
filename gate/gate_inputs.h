// What the gate compares: per-repetition values of a metric (tpot, prefill) pooled across the
// stored runs of one commit, or one value per run of a deterministic metric (peak memory), and
// whether two sets of runs ran on comparable environments.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/run.h"
#include "stats/two_level.h"

namespace pg::gate {

// tpot of each repetition = sum(decode_ms[rep]) / (gen_tokens - 1) (docs/METRICS.md "Derived
// metrics"). Computed from the raw samples so that pooling runs is exact; a cell stored without
// samples falls back to its tpot_ms metric, which is one value (the run's median), not one per
// repetition. Non-finite or non-positive values (e.g. a repetition with zero decode time) are
// left out and counted in `*unusable` when given, so the gate can say so.
std::vector<double> repetition_tpot(const CellResult& cell, int* unusable = nullptr);

// The same for any metric with a per-repetition definition (core/metrics.h: tpot_ms,
// prefill_ms, ...); a cell without samples falls back to its stored metric value.
std::vector<double> repetition_values(const CellResult& cell, const MetricDef& metric,
                                      int* unusable = nullptr);

struct CellPool {
  std::vector<double> values;       // the metric's values (tpot by default), every ok run pooled
  stats::RunGroups by_run;          // the same samples, one group per contributing run
  int runs = 0;                     // runs that contributed samples
  int unusable = 0;                 // repetitions left out: zero, negative or non-finite tpot
  std::vector<std::string> failed;  // "oom (reason)" for each run where the cell was not ok
};

// Every cell key seen in `runs`, with its pooled samples of `metric`: per repetition for a metric
// that has them, else one value per run (its stored metric, e.g. peak_alloc_bytes; runs without
// it give none).
std::map<CellKey, CellPool> pool_cells(const std::vector<Run>& runs,
                                       const std::string& metric = "tpot_ms");

// Environment fields that do not split a stored series but change timing, so runs that differ in
// them are not comparable: the CPU thread count (PERFGATE_CPU_THREADS), the timing mode
// (PERFGATE_TIMING), a forced decode attention kernel, the CPU model and the GPU's compute
// capability.
const std::vector<std::string>& timing_env_fields();

// Empty when every run of both sides agrees on comparable_env_fields() and timing_env_fields();
// otherwise a sentence that names each differing field with its values, e.g.
// "device: base 'A' vs head 'B'".
std::string environment_difference(const std::vector<Run>& base, const std::vector<Run>& head);

}  // namespace pg::gate
