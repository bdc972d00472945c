#include "gate/gate_paired.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "core/cell_label.h"
#include "core/metrics.h"

namespace pg::gate {
namespace {

const CellResult* find_cell(const Run& run, const CellKey& key) {
  for (const CellResult& c : run.cells)
    if (c.key == key) return &c;
  return nullptr;
}

// Why the two runs of one A/B run cannot be paired in `cell`; empty when they can.
std::string cell_pairing_problem(const CellResult& b, const CellResult& h) {
  const size_t n = b.samples.decode_ms.size();
  if (h.samples.decode_ms.size() != n)
    return std::to_string(n) + " base and " + std::to_string(h.samples.decode_ms.size()) +
           " head repetitions";
  if (b.samples.ab_position.size() != n || h.samples.ab_position.size() != n)
    return "repetitions without a pair position";
  for (size_t i = 0; i < n; ++i)
    if (b.samples.ab_position[i] + h.samples.ab_position[i] != 1)
      return "pair " + std::to_string(i) + " has both sides in the same position";
  for (size_t j = 0; j + 1 < n; j += 2)
    if (h.samples.ab_position[j] == h.samples.ab_position[j + 1])
      return "block " + std::to_string(j / 2) + " is not ABBA (one side first twice)";
  return "";
}

double value_at(const CellResult& cell, const MetricDef& metric, size_t i) {
  const auto& s = cell.samples;
  const auto& steps = s.decode_ms[i];
  const RepetitionTotals totals{i < s.prefill_ms.size() ? s.prefill_ms[i] : 0.0,
                                std::accumulate(steps.begin(), steps.end(), 0.0),
                                static_cast<int>(steps.size())};
  if (metric.per_repetition == PerRepetition::prefill_ms && i >= s.prefill_ms.size())
    return std::numeric_limits<double>::quiet_NaN();
  const auto v = repetition_value(metric.per_repetition, cell.key, totals);
  return v ? *v : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

PairingCheck pair_ab_runs(const std::vector<Run>& base_runs, const std::vector<Run>& head_runs) {
  PairingCheck p;
  size_t with_ab = 0;
  for (const auto* runs : {&base_runs, &head_runs})
    for (const Run& r : *runs) with_ab += r.ab.has_value();
  if (with_ab == 0) return p;
  auto fail = [&](const std::string& why) {
    p.why_not = why;
    p.ab_runs.clear();
    return p;
  };
  if (with_ab != base_runs.size() + head_runs.size())
    return fail(std::to_string(with_ab) + " of the " +
                std::to_string(base_runs.size() + head_runs.size()) +
                " runs are sides of A/B runs and the others are not");
  if (base_runs.empty() || head_runs.empty()) return fail("one side has no run");
  if (base_runs.size() != head_runs.size())
    return fail(std::to_string(base_runs.size()) + " base and " + std::to_string(head_runs.size()) +
                " head runs");
  for (size_t bi = 0; bi < base_runs.size(); ++bi) {
    const auto& ab = *base_runs[bi].ab;
    if (ab.design != "abba") return fail("A/B design '" + ab.design + "' is not abba");
    if (ab.side != "base") return fail("a base run is the '" + ab.side + "' side of its A/B run");
    std::optional<size_t> match;
    for (size_t hi = 0; hi < head_runs.size(); ++hi)
      if (head_runs[hi].ab->uuid == ab.uuid) {
        if (match) return fail("A/B run " + ab.uuid + " has two head runs");
        match = hi;
      }
    if (!match) return fail("the head run of A/B run " + ab.uuid + " is not among the head runs");
    const auto& hab = *head_runs[*match].ab;
    if (hab.side != "head") return fail("a head run is the '" + hab.side + "' side of its A/B run");
    if (hab.design != ab.design) return fail("A/B run " + ab.uuid + " has two designs");
    for (const auto& [b, h] : p.ab_runs)
      if (h == *match) return fail("A/B run " + ab.uuid + " has two base runs");
    p.ab_runs.emplace_back(bi, *match);
  }
  for (const auto& [bi, hi] : p.ab_runs)
    for (const CellResult& b : base_runs[bi].cells) {
      const CellResult* h = find_cell(head_runs[hi], b.key);
      if (!h || b.status != CellStatus::ok || h->status != CellStatus::ok) continue;
      const std::string why = cell_pairing_problem(b, *h);
      if (!why.empty())
        return fail("in A/B run " + base_runs[bi].ab->uuid + ", cell " + cell_label(b.key) + ": " +
                    why);
    }
  p.paired = true;
  return p;
}

std::map<CellKey, std::vector<stats::AbBlocks>> paired_blocks(const std::vector<Run>& base_runs,
                                                              const std::vector<Run>& head_runs,
                                                              const PairingCheck& pairing,
                                                              const std::string& metric) {
  std::map<CellKey, std::vector<stats::AbBlocks>> out;
  const MetricDef* def = find_metric(metric);
  if (!def || def->per_repetition == PerRepetition::per_cell) return out;
  for (const auto& [bi, hi] : pairing.ab_runs)
    for (const CellResult& b : base_runs[bi].cells) {
      const CellResult* h = find_cell(head_runs[hi], b.key);
      if (!h || b.status != CellStatus::ok || h->status != CellStatus::ok) continue;
      stats::AbPairs pairs;
      for (size_t i = 0; i < b.samples.decode_ms.size(); ++i) {
        pairs.base.push_back(value_at(b, *def, i));
        pairs.head.push_back(value_at(*h, *def, i));
        pairs.head_position.push_back(h->samples.ab_position[i]);
      }
      out[b.key].push_back(stats::abba_blocks(pairs));
    }
  return out;
}

}  // namespace pg::gate
