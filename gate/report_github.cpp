#include <fmt/format.h>

#include <ostream>

#include "common/inert_text.h"
#include "gate/report.h"
#include "gate/report_links.h"
#include "gate/report_text.h"

namespace pg::gate {
namespace {
namespace rt = report_text;

// The title and the message hold stored text (the cell's label, causes): made inert first, then
// escaped as the workflow-command rules say. `link` (a dashboard URL, checked and built by
// gate/report_links.h) follows the message whole, never cut by the message's length cap.
void command(std::ostream& out, const char* level, const std::string& title,
             const std::string& message, const std::string& link = "") {
  out << "::" << level << " title=" << escape_command_property(inert_text(title, kInertNameChars))
      << "::" << escape_command_data(rt::inert_message(message))
      << (link.empty() ? "" : escape_command_data(" · trend: " + link)) << '\n';
}
}  // namespace

void GateGithubReporter::report(const GateResult& r, const ReportInfo& info,
                                std::ostream& out) const {
  for (const CellComparison* c : rt::worst_first(r.cells)) {
    if (c->verdict != CellVerdict::regression && c->verdict != CellVerdict::improvement) continue;
    const bool slower = c->verdict == CellVerdict::regression;
    std::string message = fmt::format(
        "{}: {} median {} -> {} ({}, ratio {} {}, adjusted p {}) between base {} and "
        "head {}; {}",
        rt::label(c->key), c->metric, rt::fmt_value(c->base_median, c->metric),
        rt::fmt_value(c->head_median, c->metric), rt::fmt_change(c->ratio), rt::fmt_ratio(c->ratio),
        rt::fmt_ci(*c), rt::fmt_p(c->p_adjusted), rt::short_sha(r.base), rt::short_sha(r.head),
        c->test == "paired-t" ? fmt::format("paired t on {} ABBA blocks ({} pairs) of {}",
                                            c->blocks, c->pairs, rt::plural(c->ab_runs, "A/B run"))
                              : "pooled base " + rt::fmt_pooled(c->base_runs, c->base_n) +
                                    ", head " + rt::fmt_pooled(c->head_runs, c->head_n));
    command(out, slower ? "error" : "warning",
            std::string("perfgate ") + (slower ? "regression" : "improvement") + " " +
                rt::fmt_change(c->ratio) + " " + rt::label(c->key),
            message,
            slower && !info.dashboard_url.empty()
                ? gate::report_links::trend_url(info.dashboard_url, *c)
                : "");
  }
  command(out, "notice", "perfgate power", rt::power_line(r));
  // One warning per cause, not per cell: twelve identical "no baseline" lines help nobody.
  for (const auto& cause : rt::inconclusive_causes(r)) {
    command(out, "warning", "perfgate inconclusive", cause);
  }
}

}  // namespace pg::gate
