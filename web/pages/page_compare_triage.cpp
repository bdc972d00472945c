// The compare page as the triage page: each regressed cell's trend around the two commits (base
// and head marked), and the alert the regressions page lists for it, with the same triage buttons,
// so that the engineer a red check sent here can see and mark it without leaving.
#include "core/cell_label.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {

std::string render_regressed_cells(const CompareView& v, bool with_auth_form) {
  if (v.regressed.empty()) return "";
  bool any_alert = false;
  std::string rows;
  for (const auto& rc : v.regressed) {
    const gate::CellComparison& c = v.result.cells[rc.cell];
    const int64_t sid = v.series_ids[rc.cell];
    const std::string id = std::to_string(sid);
    std::vector<SparkMark> marks;
    if (rc.base_at) marks.push_back({*rc.base_at, "base"});
    if (rc.head_at) marks.push_back({*rc.head_at, "head"});
    const std::string label = c.key.model + " · " + cell_label(c.key, false) +
                              (c.metric == "tpot_ms" ? "" : " · " + c.metric);
    rows += "<tr data-series=\"" + id + "\" data-commit=\"" + html_escape(rc.alert_commit) +
            "\" data-state=\"" + html_escape(rc.alert_state ? to_string(*rc.alert_state) : "") +
            "\"><td class=\"wrap\"><a href=\"/series/" + id + "?at=" + url_encode(v.result.head) +
            "\">" + html_escape(label) + "</a></td><td>" +
            sparkline_svg(rc.medians, marks,
                          std::to_string(rc.medians.size()) + " commits around base and head") +
            "</td><td class=\"num\"><span class=\"change regression\">" +
            (c.ratio ? fmt_change(*c.ratio - 1.0) : "") + "</span></td>";
    if (!rc.alert_state) {
      rows +=
          "<td class=\"muted small\" colspan=\"2\">no alert on its trend between base and "
          "head</td></tr>";
      continue;
    }
    any_alert = true;
    rows += "<td class=\"small\">" + commit_html(rc.alert_commit, v.repo_url) + "</td>" +
            state_and_triage(*rc.alert_state, rc.alert_author, rc.alert_at, rc.alert_reason) +
            "</tr>";
  }
  std::string h =
      "<div class=\"card\" id=\"regressed-cells\"><h2>Regressed cells on their trends</h2><p "
      "class=\"muted small\">Each regressed cell's medians from a few commits before the base to a "
      "few after the head (<span class=\"base\">●</span> base, <span class=\"head\">●</span> "
      "head), and its alert on the regressions page: triage it here.</p>";
  if (any_alert && with_auth_form) h += triage_auth_form();
  return h +
         "<div class=\"scroll\"><table "
         "class=\"triage-table\"><thead><tr><th>cell</th><th>trend</th><th "
         "class=\"num\">change</th><th>alert "
         "at</th><th>state</th><th>triage</th></tr></thead><tbody>" +
         rows + "</tbody></table></div></div>";
}

}  // namespace pg::web
