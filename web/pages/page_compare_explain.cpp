// The compare page's explanations: for each cell whose profiles say why it changed (a regression
// with a profile on both sides, or exact counters that changed), a collapsed <details> with the
// ops or kernels whose time per step grew, those that appeared or disappeared, and the exact
// counters that changed. The same explanation and selection as the markdown report
// (gate/report_explain.h); names come from the user's model, so each is made inert and escaped.
#include <cstdio>

#include "core/cell_label.h"
#include "gate/report_explain.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {
namespace {

namespace rx = gate::report_explain;

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string list(const std::vector<std::string>& lines, const char* cls) {
  if (lines.empty()) return "";
  std::string h = std::string("<ul class=\"") + cls + "\">";
  for (const auto& l : lines) h += "<li class=\"mono\">" + html_escape(l) + "</li>";
  return h + "</ul>";
}

// The decode step's largest growths in profiled time per step (regressions only: profiled time
// is one noisy sequence, worth reading only where the timed test found the step slower).
std::string growth_table(const gate::CellExplanation& e) {
  if (!e.regressed || e.decode.grew.empty()) return "";
  std::string h = std::string("<h4>") + (e.kind == ProfileOpKind::kernel ? "Kernels" : "Host ops") +
                  " whose time per decode step grew most</h4><table class=\"explain-grew\"><thead>"
                  "<tr><th>name</th><th class=\"num\">base ms</th><th class=\"num\">head ms</th>"
                  "<th class=\"num\">change ms</th><th class=\"num\">share of the tpot "
                  "change</th><th class=\"num\">calls (base → head)</th></tr></thead><tbody>";
  for (const gate::OpDelta& d : e.decode.grew) {
    std::string share = "–";
    if (d.share) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * *d.share);
      share = buf;
    }
    h += "<tr><td class=\"mono op-name\">" + html_escape(rx::shown_name(d.name)) +
         "</td><td class=\"num\">" + ms(d.base_ms) + "</td><td class=\"num\">" + ms(d.head_ms) +
         "</td><td class=\"num\">+" + ms(d.delta_ms()) + "</td><td class=\"num\">" + share +
         "</td><td class=\"num\">" + fmt_num(d.base_count) + " → " + fmt_num(d.head_count) +
         "</td></tr>";
  }
  return h + "</tbody></table>";
}

}  // namespace

std::string render_compare_explanations(const CompareView& v) {
  const gate::GateResult& r = v.result;
  std::string body;
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const gate::CellComparison& c = r.cells[i];
    if (c.metric != "tpot_ms") continue;  // explanations are of decode latency's cells
    const gate::CellExplanation* e = rx::find(v.info.explanations, c.key);
    if (!e || !rx::worth_showing(*e)) continue;
    const double min_effect = r.options.min_effect_for(c.metric);
    const bool underpowered = c.mde && *c.mde > min_effect;
    const std::string why = rx::label(*e, c, min_effect);
    body += "<details class=\"explain\" id=\"explain-" + std::to_string(i) + "\"><summary>Why <b>" +
            html_escape(c.key.model + " · " + cell_label(c.key, false)) + "</b> changed";
    if (underpowered)
      body +=
          " <span class=\"badge underpowered\" title=\"the timing test could not see a "
          "slowdown of the min effect\">underpowered</span>";
    if (!why.empty()) body += " <span class=\"muted small\">" + html_escape(why) + "</span>";
    body += "</summary>";
    if (!e->missing.empty()) {
      body += "<p class=\"muted\">No explanation: " + html_escape(e->missing) + "</p>";
    } else {
      const auto appeared = rx::appeared_lines(*e), counters = rx::counter_lines(*e);
      std::string shown = growth_table(*e) + list(rx::accounting_lines(*e), "explain-accounted");
      if (!appeared.empty())
        shown += "<h4>Appeared and disappeared</h4>" + list(appeared, "explain-appeared");
      if (!counters.empty())
        shown += "<h4>Exact counters that changed</h4>" + list(counters, "explain-counters");
      body += shown.empty() ? "<p class=\"muted\">The profiles show no difference in ops, "
                              "kernels or counters.</p>"
                            : shown;
      char buf[96];
      std::snprintf(buf, sizeof buf, "%d base and %d head profiles", e->base_profiles,
                    e->head_profiles);
      body += std::string("<p class=\"muted small\">") + buf + "</p>";
    }
    body += "</details>";
  }
  if (body.empty()) return "";
  return "<div class=\"card\" id=\"explanations\"><h2>Why cells changed</h2><p class=\"muted "
         "small\">From the profiles the runs of both sides stored: per step of each phase, "
         "averaged over each side's profiles.</p>" +
         body + "</div>";
}

}  // namespace pg::web
