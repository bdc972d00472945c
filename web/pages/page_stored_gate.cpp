// The compare page of a pair whose runs this server does not hold, but whose gate it does: a
// pull request's gate measured on a runner and submitted (POST /api/v1/gates) shows the verdict,
// the settings and the cells it judged, as stored. docs/WEB.md, "Stored verdict on the compare
// page".
#include <cmath>
#include <cstdio>

#include "core/cell_key_io.h"
#include "core/cell_key_query.h"
#include "core/cell_label.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {
namespace {

std::string change_of(const nlohmann::json& cell) {
  const auto it = cell.find("ratio");
  if (it == cell.end() || !it->is_number()) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * (it->get<double>() - 1.0));
  return buf;
}

std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string render_stored_gate_page(const store::Store::GateRecord& g, const std::string& reason,
                                    const std::string& repo_url,
                                    const std::vector<store::Store::Acceptance>& of_ref) {
  const auto result = nlohmann::json::parse(g.result, nullptr, false);
  const auto settings = nlohmann::json::parse(g.settings, nullptr, false);
  std::string h = "<h1>Compare <span class=\"mono\">" + html_escape(g.base.substr(0, 10)) +
                  "</span> → <span class=\"mono\">" + html_escape(g.head.substr(0, 10)) +
                  "</span></h1>";
  h += "<div class=\"card stored-gate\" id=\"stored-gate\"><p><b>Stored gate</b> #" +
       std::to_string(g.id) + (g.ref.empty() ? "" : " on " + html_escape(g.ref)) + ", " +
       html_escape(g.created_at) + " by " + html_escape(g.submitted_by) +
       ": <span id=\"stored-verdict\" class=\"badge big " +
       html_escape(g.verdict == "regression" ? "fail" : g.verdict) + "\">" +
       html_escape(g.verdict) + "</span> <span class=\"muted small\">(" +
       html_escape(gate_settings_text(settings)) + ")</span></p><p id=\"runs-elsewhere\">" +
       "This server cannot judge the pair again (" + html_escape(reason) +
       "): the gate ran on another store, and submitted its verdict and report. Below, the cells "
       "as that gate judged them; base " +
       commit_html(g.base, repo_url) + ", head " + commit_html(g.head, repo_url) + ".</p></div>";
  if (!result.is_object() || !result.contains("cells") || !result["cells"].is_array())
    return render_frame(PageFrame{"Compare", "compare", "", {"common.js"}}, h);
  h += accept_box(g, of_ref);
  h += "<div class=\"card scroll\"><table id=\"stored-cells\"><thead><tr><th>cell</th>"
       "<th>metric</th><th class=\"num\">change</th><th>verdict</th></tr></thead><tbody>";
  for (const auto& cell : result["cells"]) {
    std::string name = "?", trend;
    try {  // stored documents were checked on the way in (app/gate_record.h); a key still may
           // not parse under a later perfgate
      const CellKey key = cell_key_from_json(cell.at("key"), "/key");
      name = html_escape(key.model + " · " + cell_label(key, false));
      trend = "/series?" + cell_key_query(key) + "&metric=" + url_encode(text_of(cell, "metric"));
    } catch (const std::exception&) {
    }
    const std::string verdict = text_of(cell, "verdict");
    h += "<tr><td class=\"cellname\">" +
         (trend.empty() ? name
                        : "<a href=\"" + html_escape(trend) + "\" title=\"trend of this cell\">" +
                              name + "</a>") +
         "</td><td>" + html_escape(text_of(cell, "metric")) + "</td><td class=\"num\">" +
         change_of(cell) + "</td><td><span class=\"badge " + html_escape(verdict) + "\">" +
         html_escape(verdict) + "</span></td></tr>";
  }
  h += "</tbody></table></div>";
  return render_frame(PageFrame{"Compare", "compare", "", {"common.js", "triage.js"}}, h);
}

}  // namespace pg::web
