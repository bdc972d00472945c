#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "common/inert_text.h"
#include "common/text_table.h"
#include "gate/report.h"
#include "gate/report_explain.h"
#include "gate/report_text.h"

namespace pg::gate {
namespace {

namespace rt = report_text;

constexpr const char* kRed = "\033[31m";
constexpr const char* kGreen = "\033[32m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kReset = "\033[0m";

const char* verdict_color(CellVerdict v) {
  switch (v) {
    case CellVerdict::regression:
      return kRed;
    case CellVerdict::improvement:
      return kGreen;
    case CellVerdict::no_baseline:
    case CellVerdict::incomparable:
      return kYellow;
    case CellVerdict::unchanged:
    case CellVerdict::accepted:
      return "";
  }
  return "";
}

const char* gate_color(GateVerdict v) {
  switch (v) {
    case GateVerdict::regression:
      return kRed;
    case GateVerdict::inconclusive:
      return kYellow;
    case GateVerdict::pass:
      return kGreen;
  }
  return "";
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

void GateTableReporter::report(const GateResult& r, const ReportInfo& info,
                               std::ostream& out) const {
  auto paint = [&](const std::string& s, const char* color) {
    return (color_ && *color) ? std::string(color) + s + kReset : s;
  };
  auto rev = [](const std::string& sha, const std::string& spelled) {
    return rt::short_sha(sha) + (spelled.empty() || spelled == sha
                                     ? ""
                                     : " (" + inert_text(spelled, kInertNameChars) + ")");
  };
  out << "perfgate compare: base " << rev(r.base, info.base_spelled) << " -> head "
      << rev(r.head, info.head_spelled) << '\n';
  out << fmt::format("alpha {} ({}), min effect {:.1f}%, pooled: base {}, head {}\n",
                     r.options.alpha, r.options.correction, r.options.min_effect * 100,
                     rt::plural(r.base_runs, "run"), rt::plural(r.head_runs, "run"));
  if (r.design == "paired") out << "paired A/B runs: " << rt::inert_message(r.rule) << '\n';
  for (const auto& n : info.notes) out << "note: " << rt::inert_message(n) << '\n';
  out << '\n';

  TextTable table({{"verdict"},
                   {"cell"},
                   {"base ms", Align::right},
                   {"head ms", Align::right},
                   {"change", Align::right},
                   {"ratio CI"},
                   {"p adj", Align::right},
                   {"mde", Align::right},
                   {"base n", Align::right},
                   {"head n", Align::right}});
  if (color_) table.set_header_style(kBold);
  for (const CellComparison* c : rt::worst_first(r.cells)) {
    table.add_row(
        {to_string(c->verdict), rt::cell_name(*c), rt::fmt_value(c->base_median, c->metric),
         rt::fmt_value(c->head_median, c->metric), rt::fmt_change(c->ratio), rt::fmt_ci(*c),
         rt::fmt_p(c->p_adjusted), c->ratio ? rt::fmt_effect(c->mde) : "-",
         fmt::format("{} ({}r)", c->base_n, c->base_runs),
         fmt::format("{} ({}r)", c->head_n, c->head_runs)},
        color_ ? verdict_color(c->verdict) : "");
  }
  out << table.render();
  if (table.empty()) out << "(no cells)\n";
  out << "n = repetitions pooled (from r runs); change = head/base - 1, the deciding test's "
         "estimate (2+ runs: geometric means of run means); mde = smallest slowdown of the cell "
         "caught with "
      << fmt::format("{:.0f}", r.options.power * 100) << "% probability\n";
  out << "power: " << rt::inert_message(rt::power_line(r)) << "\n\n";
  for (const CellComparison* c : rt::worst_first(r.cells)) {
    if (c->metric != "tpot_ms") continue;  // explanations are of decode latency's cells
    const CellExplanation* e = gate::report_explain::find(info.explanations, c->key);
    if (!e || !gate::report_explain::worth_showing(*e)) continue;
    const std::string why = gate::report_explain::label(*e, *c, r.options.min_effect);
    out << "why " << inert_text(cell_label(c->key), kInertNameChars) << " changed"
        << (why.empty() ? "" : paint(" [" + why + "]", kYellow)) << ":\n";
    for (const auto& line : gate::report_explain::lines(*e)) out << "  " << line << '\n';
    out << '\n';
  }

  for (const auto& w : r.warnings)
    out << paint("WARNING: " + rt::inert_message(w), kYellow) << '\n';
  if (r.verdict == GateVerdict::inconclusive) {
    for (const auto& c : rt::inconclusive_causes(r)) {
      if (std::find(r.warnings.begin(), r.warnings.end(), c) == r.warnings.end()) {
        out << paint("inconclusive: " + rt::inert_message(c), kYellow) << '\n';
      }
    }
  }
  out << paint(upper(to_string(r.verdict)), gate_color(r.verdict)) << ": "
      << rt::inert_message(rt::headline(r)) << '\n';
}

}  // namespace pg::gate
