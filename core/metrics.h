// The metrics of docs/METRICS.md, described once: name, unit, which direction is better, and how a
// value of one repetition is derived from the raw samples. The runner derives a cell's metrics
// with it, the store and the gate recompute per-repetition values with it, the CSV export orders
// its columns by it and the dashboard labels its charts from it. Adding a metric:
// docs/CONTRIBUTING.md, "Adding a key field or a metric".
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cell_key.h"

namespace pg {

enum class Better { lower, higher, neither };

// How one repetition's value follows from its totals; `per_cell` metrics have one value per cell
// (a percentile over every step, a memory peak, an analytic size) and no per-repetition value.
enum class PerRepetition { per_cell, prefill_ms, tpot_ms, decode_tok_s, total_tok_s };

struct MetricDef {
  const char* name;   // stored, exported and used in URLs and JSON
  const char* unit;   // "ms", "tok/s", "bytes", "GB/s", "ratio"
  const char* label;  // for people
  Better better;
  PerRepetition per_repetition;
};

// docs/METRICS.md's table order, then the CPU memory metric (kept last: CSV headers stay stable).
const std::vector<MetricDef>& metric_defs();
const std::vector<std::string>& metric_names();       // the names of metric_defs(), in order
const MetricDef* find_metric(std::string_view name);  // nullptr when unknown

// One repetition, summed from its raw samples.
struct RepetitionTotals {
  double prefill_ms = 0;
  double decode_ms = 0;  // the sum of the repetition's decode steps
  int decode_steps = 0;  // how many steps were recorded
};

// The value of `per` for one repetition of a cell with `key`; nullopt for per_cell, and where
// nothing was decoded. Decode metrics divide by G - 1 decode steps (G = gen_tokens); a key with
// G < 2 falls back to the number of steps recorded.
std::optional<double> repetition_value(PerRepetition per, const CellKey& key,
                                       const RepetitionTotals& rep);

// tpot of one repetition: the decode time / (G - 1), the gated quantity (docs/METRICS.md).
std::optional<double> repetition_tpot_ms(const CellKey& key, double decode_ms, int decode_steps);

}  // namespace pg
