// The regressions page: every series that stands in a regression, open ones first, with the
// triage buttons (triage.js posts them to /api/v1/regressions with the ingest token).
#include <cmath>
#include <cstdio>

#include "core/cell_label.h"
#include "web/html.h"
#include "web/pages.h"
#include "web/triage.h"

namespace pg::web {

namespace {

std::string pct(double rel) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * rel);
  return buf;
}

std::string alert_row(const RegressionAlert& a, const std::string& repo_url) {
  const SeriesView& v = *a.view;
  const std::string id = std::to_string(v.info.id);
  std::string h = "<tr data-series=\"" + id + "\" data-commit=\"" + html_escape(a.commit) +
                  "\" data-state=\"" + html_escape(a.state) + "\">";
  h += "<td class=\"wrap\"><a href=\"/series/" + id + "\">" + html_escape(series_name(v.info)) +
       "</a></td>";
  h += "<td class=\"num\"><span class=\"change regression\">" + pct(a.regression.relative) +
       "</span></td>";
  h += "<td>" + commit_html(a.commit, repo_url) + " <span class=\"muted wrap\">" +
       html_escape(a.subject) + "</span>";
  if (!a.parent.empty())
    h += "<br><a class=\"small\" href=\"" + html_escape(compare_href(a.parent, a.commit, v.info)) +
         "\">compare with its parent</a>";
  h += "</td>";
  h += "<td>" + std::to_string(a.commits_since) + " commit" + (a.commits_since == 1 ? "" : "s") +
       " ago<br><span class=\"muted small\">" + html_escape(a.time) + "</span></td>";
  h += "<td class=\"muted small\">" + html_escape(a.regression.source) + "</td>";
  h += "<td><span class=\"badge state-" + html_escape(a.state) + "\">" + html_escape(a.state) +
       "</span>";
  if (!a.events.empty()) {
    const auto& e = a.events.back();
    h += "<br><span class=\"muted small\">" + html_escape(e.author) + ", " + html_escape(e.at) +
         (e.reason.empty() ? "" : ": " + html_escape(e.reason)) + "</span>";
  }
  h += "</td><td class=\"triage\"><input type=\"text\" name=\"reason\" placeholder=\"reason\" "
       "aria-label=\"reason\"> ";
  auto button = [&](const char* action, const char* label) {
    h += std::string("<button type=\"button\" class=\"secondary\" data-action=\"") + action +
         "\">" + label + "</button> ";
  };
  if (a.is_open()) {
    if (a.state == "open") button("acknowledge", "Acknowledge");
    button("dismiss", "Dismiss…");
    button("fix", "Mark fixed");
  } else {
    button("reopen", "Reopen");
  }
  return h + "</td></tr>";
}

}  // namespace

std::string render_regressions_page(const RegressionsModel& m, const std::string& repo_url) {
  std::string h = "<h1>Regressions</h1><p class=\"muted\">";
  h += "<span id=\"open-count\">" + std::to_string(m.open + m.acknowledged) + "</span> open (" +
       std::to_string(m.acknowledged) + " acknowledged) · " + std::to_string(m.closed) +
       " dismissed or fixed";
  if (!m.branch.empty()) h += " · branch <span class=\"mono\">" + html_escape(m.branch) + "</span>";
  h += "</p><p class=\"muted\">A series is listed while it stands in a regression: its latest "
       "flagged change point is a slowdown (of at least the gate's min effect), or the gate finds "
       "its last commit slower than the one before. It stays open until someone dismisses it with "
       "a reason or marks it fixed; a later regression at another commit opens a new one. Writes "
       "need the server's ingest token.</p>";
  h += "<form id=\"triage-auth\" class=\"filters card\"><label>your name<input type=\"text\" "
       "name=\"author\" autocomplete=\"name\" required></label><label>ingest token<input "
       "type=\"password\" name=\"token\" autocomplete=\"off\" required></label><span "
       "id=\"triage-status\" class=\"muted\" role=\"status\"></span></form>";
  if (m.alerts.empty()) {
    h += "<div class=\"card\">No regressions: every series' latest change is not a slowdown.</div>";
  } else {
    h += "<div class=\"card scroll\"><table id=\"regressions\"><thead><tr><th>series</th>"
         "<th class=\"num\">size</th><th>first bad commit</th><th>age</th><th>found by</th>"
         "<th>state</th><th>triage</th></tr></thead><tbody>";
    for (const auto& a : m.alerts) h += alert_row(a, repo_url);
    h += "</tbody></table></div>";
  }
  PageFrame f{"Regressions", "regressions", "/api/v1/regressions", {"common.js", "triage.js"}};
  return render_frame(f, h);
}

}  // namespace pg::web
