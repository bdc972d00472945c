#include "gate/report_text.h"

#include "common/inert_text.h"
#include "gate/gate_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace pg::gate::report_text {
namespace {
bool usable(const std::optional<double>& v) { return v && std::isfinite(*v); }
}  // namespace

std::string label(const CellKey& key) { return inert_text(cell_label(key), kInertNameChars); }

std::string inert_message(const std::string& s) { return inert_text(s, kInertMessageChars); }

std::string short_sha(const std::string& sha) {
  return sha.empty() ? "(none)" : sha.substr(0, std::min<size_t>(7, sha.size()));
}

std::string fmt_ms(const std::optional<double>& v) {
  if (!usable(v)) return "-";
  double a = std::fabs(*v);
  if (a >= 100) return fmt::format("{:.1f}", *v);
  if (a >= 10) return fmt::format("{:.2f}", *v);
  if (a >= 0.01) return fmt::format("{:.3f}", *v);
  return fmt::format("{:.3g}", *v);
}

std::string fmt_value(const std::optional<double>& v, const std::string& metric) {
  if (!usable(v) || metric.find("bytes") == std::string::npos) return fmt_ms(v);
  const double a = std::fabs(*v);
  if (a >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", *v / (1024.0 * 1024 * 1024));
  if (a >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", *v / (1024.0 * 1024));
  return fmt::format("{:.0f} B", *v);
}

std::string metric_phrase(const std::string& metric) {
  if (metric == "tpot_ms") return "decode latency (tpot_ms)";
  if (metric == "prefill_ms") return "prefill (prefill_ms)";
  if (metric == "peak_alloc_bytes") return "peak memory (peak_alloc_bytes)";
  return metric;
}

std::string cell_name(const CellComparison& c) {
  return label(c.key) + (c.metric == "tpot_ms" ? "" : " [" + c.metric + "]");
}

std::string fmt_ratio(const std::optional<double>& v) {
  return usable(v) ? fmt::format("{:.3f}", *v) : "-";
}

std::string fmt_change(const std::optional<double>& ratio) {
  return usable(ratio) ? fmt::format("{:+.1f}%", (*ratio - 1.0) * 100.0) : "-";
}

std::string fmt_ci(const CellComparison& c) {
  if (!usable(c.ci_low) || !usable(c.ci_high)) return "-";
  return fmt::format("[{:.3f}, {:.3f}]", *c.ci_low, *c.ci_high);
}

std::string fmt_p(const std::optional<double>& v) {
  if (!usable(v)) return "-";
  if (*v >= 0.0001) return fmt::format("{:.4f}", *v);
  return fmt::format("{:.1e}", *v);
}

std::string fmt_pooled(int runs, int reps) {
  return plural(runs, "run") + " / " + plural(reps, "rep");
}

std::string plural(int n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::vector<const CellComparison*> worst_first(const std::vector<CellComparison>& cells) {
  std::vector<const CellComparison*> out;
  for (const auto& c : cells) out.push_back(&c);
  std::stable_sort(out.begin(), out.end(), [](const CellComparison* a, const CellComparison* b) {
    bool ha = usable(a->ratio), hb = usable(b->ratio);
    if (ha != hb) return ha;
    if (ha && *a->ratio != *b->ratio) return *a->ratio > *b->ratio;
    return a->key < b->key;
  });
  return out;
}

std::map<CellVerdict, int> count_verdicts(const GateResult& r) {
  std::map<CellVerdict, int> n;
  for (const auto& c : r.cells) ++n[c.verdict];
  return n;
}

std::map<std::string, std::pair<std::string, std::string>> env_differences(const GateResult& r) {
  std::map<std::string, std::pair<std::string, std::string>> diff;
  std::vector<std::string> fields = comparable_env_fields();
  fields.insert(fields.end(), gate::timing_env_fields().begin(), gate::timing_env_fields().end());
  for (const auto& field : fields) {
    auto b = r.base_env.find(field), h = r.head_env.find(field);
    std::string bv = b == r.base_env.end() ? "" : b->second;
    std::string hv = h == r.head_env.end() ? "" : h->second;
    if (bv != hv) diff[field] = {bv, hv};
  }
  return diff;
}

std::vector<std::string> inconclusive_causes(const GateResult& r) {
  std::vector<std::string> causes;
  auto n = count_verdicts(r);
  const int total = static_cast<int>(r.cells.size());
  if (r.base_runs == 0) {
    causes.push_back("no stored run of the base " + short_sha(r.base) +
                     ": nothing to compare with");
  } else if (n[CellVerdict::no_baseline] > 0) {
    causes.push_back(fmt::format("{} of {} have no baseline (not measured on base {})",
                                 n[CellVerdict::no_baseline], plural(total, "cell"),
                                 short_sha(r.base)));
  }
  if (n[CellVerdict::incomparable] > 0) {
    std::string why;
    for (const auto& [field, v] : env_differences(r)) {
      why += fmt::format("{}{}: '{}' vs '{}'", why.empty() ? "" : "; ", field, v.first, v.second);
    }
    causes.push_back(fmt::format(
        "{} of {} are incomparable: base and head ran on different "
        "environments{}",
        n[CellVerdict::incomparable], plural(total, "cell"), why.empty() ? "" : " (" + why + ")"));
  }
  // Warnings that explain an inconclusive verdict first; those that only qualify a verdict (one
  // run per side, an underpowered gate that is not required to have power) after them.
  std::vector<std::string> qualifying;
  for (const auto& w : r.warnings) {
    const bool qualifies = (w.starts_with("ONE RUN PER SIDE") || w.starts_with("UNDERPOWERED") ||
                            w.starts_with("ONE A/B RUN") || w.starts_with("TWO A/B RUNS")) &&
                           !r.options.require_power;
    (qualifies ? qualifying : causes).push_back(w);
  }
  if (r.cells.empty() && r.base_runs > 0) causes.push_back("no cell to compare");
  causes.insert(causes.end(), qualifying.begin(), qualifying.end());
  return causes;
}

std::string fmt_effect(const std::optional<double>& effect) {
  return usable(effect) ? fmt::format("{:+.2f}%", *effect * 100.0) : "none";
}

std::string power_line(const GateResult& r) {
  const auto& o = r.options;
  std::string s = fmt::format(
      "detects with {:.0f}% probability a slowdown of one cell from {}, of every cell from {} "
      "(min effect {:.2f}%, {}){}",
      o.power * 100.0, fmt_effect(r.mde), fmt_effect(r.mde_all_cells), o.min_effect * 100.0,
      o.min_effect_source, r.underpowered ? ": UNDERPOWERED" : "");
  if (r.rules_out_min_effect)
    s += fmt::format("; every cell's {:.0f}% upper bound is below +{:.2f}%", o.power * 100.0,
                     o.min_effect * 100.0);
  if (r.design == "paired")
    s += "; paired: drift shared by base and head cancels in each ABBA block";
  else
    s += r.drift_estimated ? "; interval includes run-to-run drift"
                           : "; one run per side: the interval ignores run-to-run drift";
  if (!r.rule.empty()) s += "; rule: " + r.rule;
  if (o.max_looks > 1)
    s += fmt::format("; look {} of {} at alpha {:.3g} each, next: {} ({})", o.look, o.max_looks,
                     r.alpha_per_look, to_string(r.next), r.next_reason);
  s += fmt::format("; measured {:.1f} s of repetitions in {:.0f} s of runs", r.measured_seconds,
                   r.run_seconds);
  return s;
}

std::string headline(const GateResult& r) {
  auto n = count_verdicts(r);
  // The metrics the cells are of, in the gate's order, and the distinct cell keys.
  std::vector<std::string> metrics;
  std::map<std::string, int> regressed;
  std::set<CellKey> keys;
  for (const auto& c : r.cells) {
    if (std::find(metrics.begin(), metrics.end(), c.metric) == metrics.end())
      metrics.push_back(c.metric);
    regressed[c.metric] += c.verdict == CellVerdict::regression;
    keys.insert(c.key);
  }
  std::string what;
  for (size_t i = 0; i < metrics.size(); ++i)
    what += (i == 0 ? "" : i + 1 == metrics.size() ? " and " : ", ") + metric_phrase(metrics[i]);
  if (metrics.empty()) what = metric_phrase("tpot_ms");
  if (r.verdict == GateVerdict::regression) {
    double worst = 0;
    std::string parts;
    int metrics_regressed = 0;
    for (const std::string& m : metrics) {
      if (regressed[m] == 0) continue;
      ++metrics_regressed;
      parts +=
          (parts.empty() ? "" : ", ") + std::to_string(regressed[m]) + " in " + metric_phrase(m);
    }
    for (const auto& c : r.cells) {
      if (c.verdict == CellVerdict::regression && usable(c.ratio))
        worst = std::max(worst, *c.ratio);
    }
    std::string s = plural(n[CellVerdict::regression], "regression");
    s += metrics_regressed > 1 ? ": " + parts : parts.substr(parts.find(" in "));
    if (worst > 0) s += ", worst " + fmt_change(worst);
    return s;
  }
  if (r.verdict == GateVerdict::inconclusive) {
    auto causes = inconclusive_causes(r);
    return "inconclusive: " + (causes.empty() ? std::string("see details") : causes.front());
  }
  std::string s = "no regression in " + what + " across " + plural(int(keys.size()), "cell");
  if (n[CellVerdict::improvement] > 0)
    s += ", " + plural(n[CellVerdict::improvement], "improvement");
  if (n[CellVerdict::accepted] > 0)
    s += ", " + std::to_string(n[CellVerdict::accepted]) + " slower as accepted";
  return s;
}

}  // namespace pg::gate::report_text
