#include "gate/gate_inputs.h"

#include <cmath>
#include <numeric>
#include <set>

#include "core/metrics.h"

namespace pg::gate {
namespace {

bool usable(double v) { return std::isfinite(v) && v > 0.0; }

std::string quoted_set(const std::set<std::string>& values) {
  std::string out;
  for (const std::string& v : values) {
    if (!out.empty()) out += ", ";
    out += "'" + v + "'";
  }
  return out;
}

}  // namespace

const std::vector<std::string>& timing_env_fields() {
  static const std::vector<std::string> f = {"threads", "timing", "decode_attention", "cpu",
                                             "compute_capability"};
  return f;
}

std::vector<double> repetition_values(const CellResult& cell, const MetricDef& metric,
                                      int* unusable) {
  std::vector<double> out;
  const auto& s = cell.samples;
  if (!s.decode_ms.empty()) {
    for (size_t i = 0; i < s.decode_ms.size(); ++i) {
      const std::vector<double>& steps = s.decode_ms[i];
      const bool needs_decode = metric.per_repetition != PerRepetition::prefill_ms;
      if ((needs_decode && steps.empty()) || (!needs_decode && i >= s.prefill_ms.size())) {
        if (unusable) ++*unusable;
        continue;
      }
      const RepetitionTotals totals{i < s.prefill_ms.size() ? s.prefill_ms[i] : 0.0,
                                    std::accumulate(steps.begin(), steps.end(), 0.0),
                                    static_cast<int>(steps.size())};
      const auto v = repetition_value(metric.per_repetition, cell.key, totals);
      if (v && usable(*v))
        out.push_back(*v);
      else if (unusable)
        ++*unusable;
    }
    return out;
  }
  auto it = cell.metrics.find(metric.name);
  if (it != cell.metrics.end() && usable(it->second)) out.push_back(it->second);
  return out;
}

std::vector<double> repetition_tpot(const CellResult& cell, int* unusable) {
  return repetition_values(cell, *find_metric("tpot_ms"), unusable);
}

std::map<CellKey, CellPool> pool_cells(const std::vector<Run>& runs, const std::string& metric) {
  const MetricDef* def = find_metric(metric);
  const bool per_repetition = def && def->per_repetition != PerRepetition::per_cell;
  std::map<CellKey, CellPool> pools;
  for (const Run& run : runs) {
    for (const CellResult& cell : run.cells) {
      CellPool& pool = pools[cell.key];
      if (cell.status != CellStatus::ok) {
        pool.failed.push_back(std::string(to_string(cell.status)) +
                              (cell.reason ? " (" + *cell.reason + ")" : ""));
        continue;
      }
      std::vector<double> t;
      if (per_repetition) {
        t = repetition_values(cell, *def, &pool.unusable);
      } else if (auto it = cell.metrics.find(metric);
                 it != cell.metrics.end() && std::isfinite(it->second) && it->second >= 0.0) {
        t.push_back(it->second);  // one value per run: a deterministic per-cell metric
      }
      if (t.empty()) continue;
      pool.values.insert(pool.values.end(), t.begin(), t.end());
      pool.by_run.push_back(t);
      ++pool.runs;
    }
  }
  return pools;
}

std::string environment_difference(const std::vector<Run>& base, const std::vector<Run>& head) {
  std::string out;
  std::vector<std::string> fields = comparable_env_fields();
  fields.insert(fields.end(), timing_env_fields().begin(), timing_env_fields().end());
  for (const std::string& field : fields) {
    auto values = [&](const std::vector<Run>& runs) {
      std::set<std::string> s;
      for (const Run& r : runs) {
        auto it = r.env.find(field);
        s.insert(it == r.env.end() ? std::string() : it->second);
      }
      return s;
    };
    const std::set<std::string> b = values(base), h = values(head);
    // Runs pooled on one side must agree among themselves too: pooling two GPUs is no baseline.
    if (b == h && b.size() <= 1) continue;
    if (!out.empty()) out += "; ";
    out += field + ": base " + quoted_set(b) + " vs head " + quoted_set(h);
  }
  return out;
}

}  // namespace pg::gate
