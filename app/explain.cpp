#include "app/explain.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pg::app {
namespace {

// One side's profiles of one cell, averaged per step of one phase.
struct PhaseMeans {
  int steps = 0;
  bool timeline = true;                    // every step has span_ms and busy_ms
  double span_ms = 0, busy_ms = 0;         // per step
  std::map<std::string, double> counters;  // per step
  std::map<ProfileOpKind, std::map<std::string, std::pair<double, double>>> rows;  // count, ms
};

const char* const kCounters[] = {"ops",        "kernels",     "syncs",
                                 "d2h_copies", "alloc_bytes", "peak_bytes"};

// The name a kernel is matched by across base and head. Inductor names the kernels it generates
// after what they fuse plus an index in the order it generated them
// ("triton_poi_fused_mul_silu_8"); one kernel added early in the graph shifts the index of every
// later one, and a profile diff would list each as disappeared and appeared. Without the index,
// a kernel is matched by what it computes.
std::string kernel_identity(const std::string& name) {
  if (name.rfind("triton_", 0) != 0 && name.rfind("cpp_fused_", 0) != 0) return name;
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  if (end == name.size() || end == 0 || name[end - 1] != '_') return name;
  return name.substr(0, end - 1);
}

PhaseMeans phase_means(const std::vector<const CellProfile*>& profiles, bool decode) {
  PhaseMeans m;
  bool peak_everywhere = true;
  for (const CellProfile* p : profiles)
    for (const ProfileStep& s : p->steps) {
      if ((s.step >= 0) != decode) continue;
      ++m.steps;
      m.counters["ops"] += static_cast<double>(s.ops);
      m.counters["kernels"] += static_cast<double>(s.kernels);
      m.counters["syncs"] += static_cast<double>(s.syncs);
      m.counters["d2h_copies"] += static_cast<double>(s.d2h_copies);
      m.counters["alloc_bytes"] += static_cast<double>(s.alloc_bytes);
      if (s.peak_bytes)
        m.counters["peak_bytes"] += static_cast<double>(*s.peak_bytes);
      else
        peak_everywhere = false;
      if (s.span_ms && s.busy_ms) {
        m.span_ms += *s.span_ms;
        m.busy_ms += *s.busy_ms;
      } else {
        m.timeline = false;
      }
      for (const ProfileOp& o : s.ops_by_name) {
        auto& [count, ms] = m.rows[o.kind][kernel_identity(o.name)];
        count += static_cast<double>(o.count);
        ms += o.total_ms;
      }
    }
  if (!peak_everywhere) m.counters.erase("peak_bytes");
  if (m.steps == 0) return m;
  const double n = m.steps;
  m.span_ms /= n;
  m.busy_ms /= n;
  for (auto& [name, v] : m.counters) v /= n;
  for (auto& [kind, rows] : m.rows)
    for (auto& [name, v] : rows) v = {v.first / n, v.second / n};
  return m;
}

bool differs(double a, double b) { return std::fabs(a - b) > 1e-9 * std::max(1.0, std::fabs(a)); }

// Every name of `kind` on either side, with both sides' means.
std::vector<gate::OpDelta> deltas(const PhaseMeans& base, const PhaseMeans& head,
                                  ProfileOpKind kind) {
  std::map<std::string, gate::OpDelta> by_name;
  auto add = [&](const PhaseMeans& side, bool is_head) {
    auto it = side.rows.find(kind);
    if (it == side.rows.end()) return;
    for (const auto& [name, v] : it->second) {
      gate::OpDelta& d = by_name[name];
      d.name = name;
      (is_head ? d.head_count : d.base_count) = v.first;
      (is_head ? d.head_ms : d.base_ms) = v.second;
    }
  };
  add(base, false);
  add(head, true);
  std::vector<gate::OpDelta> out;
  for (auto& [name, d] : by_name) out.push_back(std::move(d));
  return out;
}

gate::PhaseExplanation explain_phase(const PhaseMeans& base, const PhaseMeans& head,
                                     ProfileOpKind kind, const char* phase,
                                     std::optional<double> tpot_change_ms) {
  gate::PhaseExplanation e;
  e.phase = phase;
  std::vector<gate::OpDelta> rows = deltas(base, head, kind);
  for (gate::OpDelta& d : rows) {
    e.base_ms += d.base_ms;
    e.head_ms += d.head_ms;
    if (tpot_change_ms && *tpot_change_ms > 0) d.share = d.delta_ms() / *tpot_change_ms;
    if (d.base_count == 0 && d.head_count > 0) e.appeared.push_back(d);
    if (d.base_count > 0 && d.head_count == 0) e.disappeared.push_back(d);
    if (d.delta_ms() > 0) e.grew.push_back(d);
  }
  auto by_time = [](const gate::OpDelta& a, const gate::OpDelta& b) {
    return a.delta_ms() > b.delta_ms();
  };
  std::sort(e.grew.begin(), e.grew.end(), by_time);
  if (e.grew.size() > kExplainTopRows) e.grew.resize(kExplainTopRows);
  e.other_rows = static_cast<int>(rows.size() - e.grew.size());
  e.other_delta_ms = e.rows_delta_ms();
  for (const gate::OpDelta& d : e.grew) e.other_delta_ms -= d.delta_ms();
  if (base.steps > 0 && head.steps > 0 && base.timeline && head.timeline)
    e.timeline = gate::StepTimeline{base.span_ms, head.span_ms, base.busy_ms, head.busy_ms};
  auto by_count = [](const gate::OpDelta& a, const gate::OpDelta& b) {
    return std::max(a.head_count, a.base_count) > std::max(b.head_count, b.base_count);
  };
  std::sort(e.appeared.begin(), e.appeared.end(), by_count);
  std::sort(e.disappeared.begin(), e.disappeared.end(), by_count);

  for (const char* counter : kCounters) {
    auto b = base.counters.find(counter), h = head.counters.find(counter);
    if (b == base.counters.end() || h == head.counters.end() || !differs(b->second, h->second))
      continue;
    gate::CounterChange c{counter, b->second, h->second, {}};
    const std::string name = counter;
    if (name == "ops" || name == "kernels") {
      for (const gate::OpDelta& d :
           deltas(base, head, name == "ops" ? ProfileOpKind::op : ProfileOpKind::kernel))
        if (differs(d.base_count, d.head_count)) c.by_name.push_back(d);
      std::sort(
          c.by_name.begin(), c.by_name.end(), [](const gate::OpDelta& x, const gate::OpDelta& y) {
            return std::fabs(x.head_count - x.base_count) > std::fabs(y.head_count - y.base_count);
          });
    }
    e.counters.push_back(std::move(c));
  }
  return e;
}

// The decode step's time between kernels in the timed runs (gate/explanation.h, TimedGaps).
gate::TimedGaps timed_gaps(const PhaseMeans& base, const PhaseMeans& head,
                           const gate::PhaseExplanation& e, ProfileOpKind kind, double base_tpot_ms,
                           double head_tpot_ms) {
  gate::TimedGaps g;
  g.base_tpot_ms = base_tpot_ms;
  g.head_tpot_ms = head_tpot_ms;
  g.base_kernel_ms = e.timeline ? e.timeline->base_busy_ms : e.base_ms;
  g.head_kernel_ms = e.timeline ? e.timeline->head_busy_ms : e.head_ms;
  const char* launches = kind == ProfileOpKind::kernel ? "kernels" : "ops";
  auto count = [&](const PhaseMeans& m) {
    auto it = m.counters.find(launches);
    return it == m.counters.end() ? 0.0 : it->second;
  };
  g.base_launches = count(base);
  g.head_launches = count(head);
  return g;
}

std::vector<const CellProfile*> profiles_of(const std::vector<Run>& runs, const CellKey& key) {
  std::vector<const CellProfile*> out;
  for (const Run& r : runs)
    for (const CellResult& c : r.cells)
      if (c.key == key && c.status == CellStatus::ok && c.profile && !c.profile->steps.empty())
        out.push_back(&*c.profile);
  return out;
}

bool has_kernels(const std::vector<const CellProfile*>& profiles) {
  for (const CellProfile* p : profiles)
    for (const ProfileStep& s : p->steps)
      if (s.kernels > 0) return true;
  return false;
}

}  // namespace

std::vector<gate::CellExplanation> explain(const gate::GateResult& result,
                                           const std::vector<Run>& base_runs,
                                           const std::vector<Run>& head_runs) {
  std::vector<gate::CellExplanation> out;
  for (const gate::CellComparison& c : result.cells) {
    // One explanation per cell key, of its timing: decode latency's cells (a gate's other metrics
    // add cells of the same keys, docs/STATISTICS.md "More than one metric").
    if (c.verdict == gate::CellVerdict::no_baseline || c.metric != "tpot_ms") continue;
    gate::CellExplanation e;
    e.key = c.key;
    e.regressed = c.verdict == gate::CellVerdict::regression;
    const auto base = profiles_of(base_runs, c.key), head = profiles_of(head_runs, c.key);
    e.base_profiles = static_cast<int>(base.size());
    e.head_profiles = static_cast<int>(head.size());
    if (base.empty() || head.empty()) {
      e.missing = base.empty() && head.empty() ? "neither side has a profile of this cell"
                  : base.empty()               ? "the base has no profile of this cell"
                                               : "the head has no profile of this cell";
      out.push_back(std::move(e));
      continue;
    }
    e.kind = has_kernels(base) && has_kernels(head) ? ProfileOpKind::kernel : ProfileOpKind::op;
    if (c.base_median && c.head_median) e.tpot_change_ms = *c.head_median - *c.base_median;
    // A share of the tpot change means something only where the change is real.
    const PhaseMeans base_decode = phase_means(base, true), head_decode = phase_means(head, true);
    e.decode = explain_phase(base_decode, head_decode, e.kind, "decode step",
                             e.regressed ? e.tpot_change_ms : std::nullopt);
    if (c.base_median && c.head_median && base_decode.steps > 0 && head_decode.steps > 0)
      e.decode.timed =
          timed_gaps(base_decode, head_decode, e.decode, e.kind, *c.base_median, *c.head_median);
    e.prefill = explain_phase(phase_means(base, false), phase_means(head, false), e.kind, "prefill",
                              std::nullopt);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace pg::app
