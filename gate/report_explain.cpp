#include "gate/report_explain.h"

#include "common/inert_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>

#include "common/utf8.h"
#include "gate/report_text.h"

namespace pg::gate::report_explain {
namespace {

std::string fmt_count(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:.2f}", v);
}

std::string fmt_signed_count(double v) { return (v >= 0 ? "+" : "-") + fmt_count(std::fabs(v)); }

std::string fmt_bytes(double v) {
  const double a = std::fabs(v);
  if (a >= 1 << 30) return fmt::format("{:.2f} GiB", v / (1 << 30));
  if (a >= 1 << 20) return fmt::format("{:.2f} MiB", v / (1 << 20));
  if (a >= 1 << 10) return fmt::format("{:.1f} KiB", v / (1 << 10));
  return fmt_count(v) + " B";
}

// What one counter is called in a sentence, singular and plural.
std::string noun(const std::string& counter, double n, ProfileOpKind kind) {
  const bool one = std::fabs(n - 1) < 1e-9;
  if (counter == "ops") return one ? "op" : "ops";
  if (counter == "kernels") return one ? "kernel" : "kernels";
  if (counter == "syncs")
    return std::string(kind == ProfileOpKind::op ? "host-device sync (aten::_local_scalar_dense)"
                                                 : "host-device sync") +
           (one ? "" : "s");
  if (counter == "d2h_copies") return one ? "device-to-host copy" : "device-to-host copies";
  if (counter == "alloc_bytes") return "allocated";
  return "peak allocated";
}

std::string counter_line(const std::string& phase, const CounterChange& c, ProfileOpKind kind) {
  if (c.counter == "alloc_bytes" || c.counter == "peak_bytes")
    return fmt::format("{}: {} {} -> {} ({}{} B)", phase, noun(c.counter, 2, kind),
                       fmt_bytes(c.base), fmt_bytes(c.head), c.head >= c.base ? "+" : "-",
                       fmt_count(std::fabs(c.head - c.base)));
  std::string line = fmt::format("{}: {} -> {} {} ({}", phase, fmt_count(c.base), fmt_count(c.head),
                                 noun(c.counter, c.head, kind), fmt_signed_count(c.head - c.base));
  std::vector<std::string> names;
  for (size_t i = 0; i < c.by_name.size() && i < 8; ++i) {
    const OpDelta& d = c.by_name[i];
    const double n = d.head_count - d.base_count;
    names.push_back(shown_name(d.name) + " x" + (n < 0 ? "-" : "") + fmt_count(std::fabs(n)));
  }
  if (c.by_name.size() > 8) names.push_back(fmt::format("{} more", c.by_name.size() - 8));
  if (!names.empty()) line += ": " + fmt::format("{}", fmt::join(names, ", "));
  return line + ")";
}

}  // namespace

std::string shown_name(const std::string& raw) { return inert_text(raw, kInertNameChars); }

std::vector<std::string> counter_lines(const CellExplanation& e) {
  std::vector<std::string> out;
  for (const PhaseExplanation* p : {&e.decode, &e.prefill})
    for (const CounterChange& c : p->counters) out.push_back(counter_line(p->phase, c, e.kind));
  return out;
}

std::vector<std::string> growth_lines(const CellExplanation& e) {
  std::vector<std::string> out;
  // Time under the profiler is as noisy as any single sequence: worth reading only where the
  // timed test found the decode step slower.
  if (!e.regressed) return out;
  for (const PhaseExplanation* p : {&e.decode})
    for (const OpDelta& d : p->grew) {
      std::string share =
          d.share ? fmt::format(", {:.0f}% of the tpot change", *d.share * 100) : "";
      out.push_back(fmt::format("{}: {} {:.4f} -> {:.4f} ms (+{:.4f} ms{}), {} -> {} calls",
                                p->phase, shown_name(d.name), d.base_ms, d.head_ms, d.delta_ms(),
                                share, fmt_count(d.base_count), fmt_count(d.head_count)));
    }
  return out;
}

std::vector<std::string> accounting_lines(const CellExplanation& e) {
  std::vector<std::string> out;
  if (!e.regressed || !e.tpot_change_ms || *e.tpot_change_ms <= 0) return out;
  const PhaseExplanation& d = e.decode;
  const double change = *e.tpot_change_ms;
  const bool kernels = e.kind == ProfileOpKind::kernel;
  const char* row_noun = kernels ? "kernels" : "host ops";
  auto share = [&](double ms) {
    return fmt::format("{:.0f}% of the tpot change", 100 * ms / change);
  };
  if (d.other_rows > 0)
    out.push_back(fmt::format(
        "{}: {} {} {} {:+.4f} ms", d.phase, d.grew.empty() ? "the" : "the other", d.other_rows,
        d.other_rows == 1 ? (kernels ? "kernel" : "host op") : row_noun, d.other_delta_ms));
  if (d.timeline) {
    const double overlap = d.overlap_delta_ms();
    if (std::fabs(overlap) >= 5e-5)
      out.push_back(fmt::format("{}: {} that ran at the same time, counted twice above: {:+.4f} ms",
                                d.phase, row_noun, -overlap));
  }
  if (!d.timed) return out;
  const TimedGaps& g = *d.timed;
  const char* row_one = kernels ? "kernel" : "host op";
  out.push_back(
      fmt::format("{}: time between {} in the timed runs (tpot less the profiled {} time{}) {:.4f} "
                  "-> {:.4f} ms ({:+.4f} ms, {})",
                  d.phase, row_noun, row_one,
                  d.timeline ? "" : ", the rows' sum: no timeline to remove overlap",
                  g.base_gap_ms(), g.head_gap_ms(), g.gap_delta_ms(), share(g.gap_delta_ms())));
  // What the time between kernels holds beyond the launches the counts predict.
  const char* unnamed = "host-device syncs, host stalls, slower launches";
  const double n = g.launch_delta();
  if (std::fabs(n) < 1e-9) {
    out.push_back(fmt::format(
        "{}: no {} added or removed: the {:+.4f} ms between them is time the counts do not name "
        "({})",
        d.phase, row_one, g.gap_delta_ms(), unnamed));
  } else {
    out.push_back(fmt::format(
        "{}: of that, the gaps that come with {} {} {} at the base's {:.2f} µs per {}: {:+.4f} ms; "
        "the rest {:+.4f} ms ({})",
        d.phase, fmt_count(std::fabs(n)), n > 0 ? "more" : "fewer",
        std::fabs(std::fabs(n) - 1) < 1e-9 ? row_one : row_noun, 1000 * g.per_launch_ms(), row_one,
        g.launch_gaps_delta_ms(), g.rest_ms(), unnamed));
  }
  out.push_back(fmt::format(
      "{}: the {}' time ({:+.4f} ms) and the gaps of the added or removed ones ({:+.4f} ms) add "
      "up to {:+.4f} ms per step: {:.0f}% of the {:+.4f} ms tpot change",
      d.phase, row_noun, g.kernel_delta_ms(), g.launch_gaps_delta_ms(), g.listed_delta_ms(),
      100 * g.listed_delta_ms() / change, change));
  return out;
}

std::vector<std::string> appeared_lines(const CellExplanation& e) {
  std::vector<std::string> out;
  auto list = [](const std::vector<OpDelta>& rows, bool head) {
    std::vector<std::string> names;
    for (const OpDelta& d : rows)
      names.push_back(shown_name(d.name) + " x" + fmt_count(head ? d.head_count : d.base_count));
    return fmt::format("{}", fmt::join(names, ", "));
  };
  for (const PhaseExplanation* p : {&e.decode, &e.prefill}) {
    if (!p->appeared.empty()) out.push_back(p->phase + ": appeared " + list(p->appeared, true));
    if (!p->disappeared.empty())
      out.push_back(p->phase + ": disappeared " + list(p->disappeared, false));
  }
  return out;
}

std::string label(const CellExplanation& e, const CellComparison& c, double min_effect) {
  if (e.regressed || !e.counters_changed()) return "";
  std::string why = "exact counters changed; timing verdict " + to_string(c.verdict);
  if (c.mde && *c.mde > min_effect)
    why += " (underpowered: the smallest slowdown it could catch is " +
           gate::report_text::fmt_effect(c.mde) + ")";
  return why;
}

bool worth_showing(const CellExplanation& e) { return e.regressed || e.counters_changed(); }

nlohmann::json to_json(const CellExplanation& e) {
  using nlohmann::json;
  auto op = [](const OpDelta& d) {
    return json{{"name", valid_utf8(d.name)},
                {"base_count", d.base_count},
                {"head_count", d.head_count},
                {"base_ms", d.base_ms},
                {"head_ms", d.head_ms},
                {"delta_ms", d.delta_ms()},
                {"share_of_tpot_change", d.share ? json(*d.share) : json()}};
  };
  auto ops = [&](const std::vector<OpDelta>& rows) {
    json a = json::array();
    for (const OpDelta& d : rows) a.push_back(op(d));
    return a;
  };
  auto phase = [&](const PhaseExplanation& p) {
    json counters = json::array();
    for (const CounterChange& c : p.counters)
      counters.push_back({{"counter", c.counter},
                          {"base", c.base},
                          {"head", c.head},
                          {"by_name", ops(c.by_name)}});
    json timeline;
    if (p.timeline) {
      const StepTimeline& t = *p.timeline;
      timeline = {{"base_span_ms", t.base_span_ms},
                  {"head_span_ms", t.head_span_ms},
                  {"base_busy_ms", t.base_busy_ms},
                  {"head_busy_ms", t.head_busy_ms},
                  {"base_gap_ms", t.base_gap_ms()},
                  {"head_gap_ms", t.head_gap_ms()},
                  {"gap_delta_ms", t.gap_delta_ms()},
                  {"overlap_delta_ms", p.overlap_delta_ms()},
                  {"span_delta_ms", t.span_delta_ms()},
                  {"gap_share_of_tpot_change",
                   e.regressed && e.tpot_change_ms && *e.tpot_change_ms > 0 && &p == &e.decode
                       ? json(t.gap_delta_ms() / *e.tpot_change_ms)
                       : json()}};
    }
    json timed;
    if (p.timed) {
      const TimedGaps& g = *p.timed;
      const bool share = e.regressed && e.tpot_change_ms && *e.tpot_change_ms > 0;
      timed = {{"base_tpot_ms", g.base_tpot_ms},
               {"head_tpot_ms", g.head_tpot_ms},
               {"base_kernel_ms", g.base_kernel_ms},
               {"head_kernel_ms", g.head_kernel_ms},
               {"base_gap_ms", g.base_gap_ms()},
               {"head_gap_ms", g.head_gap_ms()},
               {"gap_delta_ms", g.gap_delta_ms()},
               {"base_launches", g.base_launches},
               {"head_launches", g.head_launches},
               {"per_launch_gap_ms", g.per_launch_ms()},
               {"launch_gaps_delta_ms", g.launch_gaps_delta_ms()},
               {"rest_ms", g.rest_ms()},
               {"listed_delta_ms", g.listed_delta_ms()},
               {"listed_share_of_tpot_change",
                share ? json(g.listed_delta_ms() / *e.tpot_change_ms) : json()}};
    }
    return json{{"base_ms", p.base_ms},
                {"head_ms", p.head_ms},
                {"other_rows", p.other_rows},
                {"other_delta_ms", p.other_delta_ms},
                {"timeline", timeline},
                {"timed", timed},
                {"grew", ops(p.grew)},
                {"appeared", ops(p.appeared)},
                {"disappeared", ops(p.disappeared)},
                {"counters", counters}};
  };
  json j = {{"available", e.missing.empty()},
            {"missing", e.missing.empty() ? json() : json(e.missing)},
            {"kind", to_string(e.kind)},
            {"base_profiles", e.base_profiles},
            {"head_profiles", e.head_profiles},
            {"counters_changed", e.counters_changed()},
            {"tpot_change_ms", e.tpot_change_ms ? json(*e.tpot_change_ms) : json()}};
  if (e.missing.empty()) {
    j["decode"] = phase(e.decode);
    j["prefill"] = phase(e.prefill);
  }
  return j;
}

std::vector<std::string> lines(const CellExplanation& e) {
  if (!e.missing.empty()) return {"no explanation: " + e.missing};
  std::vector<std::string> out = counter_lines(e);
  for (auto& l : appeared_lines(e)) out.push_back(std::move(l));
  auto grew = growth_lines(e);
  if (!grew.empty())
    out.push_back(fmt::format("profiled {} time per step that grew most:",
                              e.kind == ProfileOpKind::kernel ? "kernel" : "host op"));
  for (auto& l : grew) out.push_back("  " + l);
  for (auto& l : accounting_lines(e)) out.push_back(std::move(l));
  if (out.empty()) out.push_back("the profiles show no difference in ops, kernels or counters");
  return out;
}

const CellExplanation* find(const std::vector<CellExplanation>& all, const CellKey& key) {
  for (const CellExplanation& e : all)
    if (e.key == key) return &e;
  return nullptr;
}

}  // namespace pg::gate::report_explain
