#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <set>

#include "common/escape.h"
#include "common/inert_text.h"
#include "gate/report.h"
#include "gate/report_explain.h"
#include "gate/report_links.h"
#include "gate/report_text.h"

namespace pg::gate {
namespace {

namespace rt = report_text;

// Stored text in a Markdown line or table cell: one inert line (common/inert_text.h), then
// Markdown's own escaping.
std::string md(const std::string& s, size_t cap = kInertMessageChars) {
  return markdown_cell(inert_text(s, cap));
}

const char* gate_icon(GateVerdict v) {
  switch (v) {
    case GateVerdict::pass:
      return "✅";
    case GateVerdict::regression:
      return "❌";
    case GateVerdict::inconclusive:
      return "⚠️";
  }
  return "";
}

const char* cell_icon(CellVerdict v) {
  switch (v) {
    case CellVerdict::regression:
      return "❌";
    case CellVerdict::improvement:
      return "🚀";
    case CellVerdict::unchanged:
      return "➖";
    case CellVerdict::no_baseline:
      return "❔";
    case CellVerdict::incomparable:
      return "⚠️";
    case CellVerdict::accepted:
      return "☑️";
  }
  return "";
}

// A regressed cell's name links to its trend on the dashboard, when there is one.
std::string cell_column(const CellComparison& c, const ReportInfo& info) {
  std::string name = "`" + markdown_cell(rt::cell_name(c)) + "`";
  if (info.dashboard_url.empty() || c.verdict != CellVerdict::regression) return name;
  return name + " ([trend](" + gate::report_links::trend_url(info.dashboard_url, c) + "))";
}

void cell_table(const GateResult& r, const ReportInfo& info,
                const std::vector<const CellComparison*>& cells, std::ostream& out) {
  out << "| verdict | cell | base | head | base median (ms) | head median (ms) | change | "
         "ratio [CI] | p (adj.) | MDE | base runs / reps | head runs / reps |\n"
      << "|---|---|---|---|--:|--:|--:|---|--:|--:|--:|--:|\n";
  for (const CellComparison* c : cells) {
    std::string ratio = rt::fmt_ratio(c->ratio);
    if (c->ratio && c->ci_low) ratio += " " + rt::fmt_ci(*c);
    std::string verdict = std::string(cell_icon(c->verdict)) + " " + to_string(c->verdict);
    if (!c->note.empty()) verdict += " (" + md(c->note) + ")";
    out << fmt::format(
        "| {} | {} | `{}` | `{}` | {} | {} | {} | {} | {} | {} | {} / {} | {} / {} |\n", verdict,
        cell_column(*c, info), rt::short_sha(r.base), rt::short_sha(r.head),
        rt::fmt_value(c->base_median, c->metric), rt::fmt_value(c->head_median, c->metric),
        rt::fmt_change(c->ratio), ratio, rt::fmt_p(c->p_adjusted),
        c->ratio ? rt::fmt_effect(c->mde) : "-", c->base_runs, c->base_n, c->head_runs, c->head_n);
  }
}

// "`tpot_ms` per repetition, `peak_alloc_bytes` exactly (5% and 1.0 MiB)": what each metric that
// has cells was judged by.
std::string gated_metrics(const GateResult& r) {
  std::string out;
  for (const MetricSummary& m : r.metrics) {
    if (m.cells == 0 && !(m.metric == "tpot_ms" && r.cells.empty())) continue;
    out += (out.empty() ? "`" : ", `") + m.metric + "` " +
           (m.exact ? fmt::format("exactly ({:.1f}% and {})", m.min_effect * 100,
                                  rt::fmt_value(r.options.memory_tolerance_bytes, m.metric))
            : m.metric == "tpot_ms"
                ? std::string("per repetition")
                : fmt::format("per repetition (min effect {:.1f}%)", m.min_effect * 100));
  }
  return out.empty() ? "`tpot_ms` per repetition" : out;
}

// One collapsed section per cell that regressed or whose exact counters changed.
void explanations(const GateResult& r, const ReportInfo& info, std::ostream& out) {
  for (const CellComparison* c : rt::worst_first(r.cells)) {
    if (c->metric != "tpot_ms") continue;  // explanations are of decode latency's cells
    const CellExplanation* e = gate::report_explain::find(info.explanations, c->key);
    if (!e || !gate::report_explain::worth_showing(*e)) continue;
    const std::string why = gate::report_explain::label(*e, *c, r.options.min_effect);
    out << "<details><summary>" << cell_icon(c->verdict) << " Why <code>"
        << html_escape(cell_label(c->key)) << "</code> changed"
        << (why.empty() ? "" : " — <b>" + html_escape(why) + "</b>") << "</summary>\n\n";
    for (const auto& line : gate::report_explain::lines(*e)) {
      const bool nested = line.starts_with("  ");
      out << (nested ? "  - " : "- ") << md(nested ? line.substr(2) : line) << '\n';
    }
    out << "\n</details>\n\n";
  }
}

void environment_table(const GateResult& r, std::ostream& out) {
  std::set<std::string> fields;
  for (const auto& [k, v] : r.base_env) fields.insert(k);
  for (const auto& [k, v] : r.head_env) fields.insert(k);
  out << "#### Environment\n\n";
  if (fields.empty()) {
    out << "_No environment recorded._\n\n";
    return;
  }
  const auto diff = rt::env_differences(r);
  out << "| field | base | head |\n|---|---|---|\n";
  for (const auto& field : fields) {
    // Keys come from stored (possibly ingested) runs too, values from measured code (engine.*).
    const std::string f = md(field, kInertNameChars);
    auto b = r.base_env.find(field), h = r.head_env.find(field);
    std::string bv = b == r.base_env.end() ? "-" : md(b->second, kInertNameChars);
    std::string hv = h == r.head_env.end() ? "-" : md(h->second, kInertNameChars);
    if (diff.count(field)) {
      out << fmt::format("| **{}** (differs, performance-relevant) | **{}** | **{}** |\n", f, bv,
                         hv);
    } else {
      out << fmt::format("| {} | {} | {} |\n", f, bv, hv);
    }
  }
  out << '\n';
}

}  // namespace

void GateMarkdownReporter::report(const GateResult& r, const ReportInfo& info,
                                  std::ostream& out) const {
  out << "### " << gate_icon(r.verdict) << " perfgate: " << md(rt::headline(r)) << "\n\n";

  auto rev = [](const std::string& sha, const std::string& spelled) {
    std::string s = "`" + rt::short_sha(sha) + "`";
    if (!spelled.empty() && spelled != sha) s += " (" + md(spelled, kInertNameChars) + ")";
    return s;
  };
  // The rule that decided: the paired t test of A/B runs, or the unpaired one.
  const std::string rule =
      r.design == "paired"
          ? "paired A/B runs: " + md(r.rule) + " · " + rt::plural(r.pairs, "pair") + " a cell"
          : std::string(
                "one-sided t test on run means (pooled Mann-Whitney U with one run a side)");
  out << fmt::format(
      "**base** {} → **head** {} · gate on {} · {}, α = {} after {} correction, min effect "
      "{:.1f}% · pooled: base {}, head {}\n\n",
      rev(r.base, info.base_spelled), rev(r.head, info.head_spelled), gated_metrics(r), rule,
      r.options.alpha, r.options.correction == "bh" ? "Benjamini-Hochberg" : "Holm",
      r.options.min_effect * 100, rt::plural(r.base_runs, "run"), rt::plural(r.head_runs, "run"));
  if (!info.dashboard_url.empty())
    out << "[This comparison on the dashboard]("
        << gate::report_links::compare_url(info.dashboard_url, r) << ")\n\n";
  for (const auto& n : info.notes) out << "> [!NOTE]\n> " << md(n) << "\n\n";
  out << "**Power:** " << md(rt::power_line(r)) << "\n\n";

  // Loud: a reader skimming the summary must not miss why the gate could not decide.
  std::vector<std::string> loud = r.warnings;
  if (r.verdict == GateVerdict::inconclusive) {
    for (const auto& c : rt::inconclusive_causes(r)) {
      if (std::find(loud.begin(), loud.end(), c) == loud.end()) loud.push_back(c);
    }
  }
  for (const auto& w : loud) out << "> [!WARNING]\n> **" << md(w) << "**\n\n";

  std::vector<const CellComparison*> notable, unchanged;
  for (const CellComparison* c : rt::worst_first(r.cells)) {
    (c->verdict == CellVerdict::unchanged ? unchanged : notable).push_back(c);
  }
  if (!notable.empty()) {
    cell_table(r, info, notable, out);
    out << '\n';
  }
  if (!unchanged.empty()) {
    out << "<details><summary>" << rt::plural(static_cast<int>(unchanged.size()), "unchanged cell")
        << "</summary>\n\n";
    cell_table(r, info, unchanged, out);
    out << "\n</details>\n\n";
  }
  explanations(r, info, out);
  if (r.cells.empty()) out << "_No cell to compare._\n\n";
  environment_table(r, out);
}

}  // namespace pg::gate
