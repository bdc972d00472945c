// The regressions page: every series that stands in a regression, then every stored gate that
// found one, open ones first, with the triage buttons (triage.js posts them to
// /api/v1/regressions with a credential that may triage).
#include <cmath>
#include <cstdio>
#include <set>

#include "core/cell_label.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"
#include "web/views/triage.h"

namespace pg::web {

// The state badge with the latest event, and the triage buttons the state allows.
std::string state_and_triage(AlertState state, const std::string& author, const std::string& at,
                             const std::string& reason) {
  const std::string name = to_string(state);
  std::string h =
      "<td><span class=\"badge state-" + html_escape(name) + "\">" + html_escape(name) + "</span>";
  if (!author.empty() || !reason.empty())
    h += "<br><span class=\"muted small\">" + html_escape(author) +
         (at.empty() ? "" : ", " + html_escape(at)) +
         (reason.empty() ? "" : ": " + html_escape(reason)) + "</span>";
  h += "</td><td class=\"triage\"><input type=\"text\" name=\"reason\" placeholder=\"reason\" "
       "aria-label=\"reason\"> ";
  auto button = [&](const char* action, const char* label) {
    h += std::string("<button type=\"button\" class=\"secondary\" data-action=\"") + action +
         "\">" + label + "</button> ";
  };
  if (is_open(state)) {
    if (state == AlertState::open) button("acknowledge", "Acknowledge");
    button("dismiss", "Dismiss…");
    button("fix", "Mark fixed");
  } else {
    button("reopen", "Reopen");
  }
  return h + "</td>";
}

namespace {

std::string alert_row(const RegressionAlert& a, const std::string& repo_url) {
  const SeriesView& v = *a.view;
  const std::string id = std::to_string(v.info.id);
  std::string h = "<tr data-series=\"" + id + "\" data-commit=\"" + html_escape(a.commit) +
                  "\" data-state=\"" + html_escape(to_string(a.state)) + "\">";
  // The trend opens on a window that holds the first bad commit, however far back it lies.
  h += "<td class=\"wrap\"><a href=\"/series/" + id + "?at=" + url_encode(a.commit) + "\">" +
       html_escape(series_name(v.info)) + "</a></td>";
  h += "<td class=\"num\"><span class=\"change regression\">" + fmt_change(a.regression.relative) +
       "</span></td>";
  h += "<td>" + commit_html(a.commit, repo_url) + " <span class=\"muted wrap\">" +
       html_escape(a.subject) + "</span>";
  if (!a.parent.empty())
    h += "<br><a class=\"small\" href=\"" + html_escape(compare_href(a.parent, a.commit, v.info)) +
         "\">compare with its parent</a>";
  h += "</td>";
  h += "<td class=\"hide-narrow\">" + std::to_string(a.commits_since) + " commit" +
       (a.commits_since == 1 ? "" : "s") + " ago<br><span class=\"muted small\">" +
       html_escape(a.time) + "</span></td>";
  h += "<td class=\"muted small hide-narrow\">" + html_escape(a.regression.source) + "</td>";
  const auto* e = a.events.empty() ? nullptr : &a.events.back();
  if (!a.fixed_by_commit.empty())  // nobody acted: say what closed it
    return h +
           state_and_triage(a.state, "detected", "",
                            "back to its old level from " + a.fixed_by_commit.substr(0, 10)) +
           "</tr>";
  return h + state_and_triage(a.state, e ? e->author : "", e ? e->at : "", e ? e->reason : "") +
         "</tr>";
}

// A stored gate that regressed: its ref and pair, size, first bad commit (the head), age, the
// settings it was decided under, and the same triage as a change point.
std::string gate_row(const GateAlert& a, const std::string& repo_url) {
  const auto& g = a.gate;
  std::string h = "<tr data-gate=\"" + std::to_string(g.id) + "\" data-commit=\"" +
                  html_escape(g.head) + "\" data-state=\"" + html_escape(to_string(a.state)) +
                  "\">";
  h += "<td class=\"wrap\">" + (g.ref.empty() ? "gate" : html_escape(g.ref)) +
       "<br><a class=\"small\" href=\"/compare?base=" + url_encode(g.base) +
       "&amp;head=" + url_encode(g.head) + "\">compare " + html_escape(g.base.substr(0, 10)) +
       " → " + html_escape(g.head.substr(0, 10)) + "</a></td>";
  h += "<td class=\"num gate-size\">" +
       (a.worst ? "<span class=\"change regression\">" + fmt_change(a.worst->relative) +
                      "</span><br><span class=\"muted small\">" + html_escape(a.worst->label) +
                      "</span>"
                : std::string("–")) +
       "<br><span class=\"muted small\">" + std::to_string(a.regressed_cells) + " of " +
       std::to_string(a.cells) + " cells</span></td>";
  h += "<td>" + commit_html(g.head, repo_url) + "</td>";
  h += "<td><time class=\"age\" datetime=\"" + html_escape(g.created_at) + "\">" +
       html_escape(g.created_at) + "</time><br><span class=\"muted small\">by " +
       html_escape(g.submitted_by) + "</span></td>";
  h += "<td class=\"muted small gate-settings\">" + html_escape(gate_settings_text(a.settings)) +
       "</td>";
  const auto* e = a.events.empty() ? nullptr : &a.events.back();
  std::string reason = e ? e->reason : "";
  if (a.state == AlertState::superseded)
    reason = "a later gate on " + g.ref + " passed at " + a.superseded_by.substr(0, 10);
  return h + state_and_triage(a.state, e ? e->author : "", e ? e->at : "", reason) + "</tr>";
}

// One group: its first bad commit, how many alerts name it, its worst and typical size, where it
// was seen, its age and state, and the triage of every member at once.
std::string group_row(const AlertGroup& g, const RegressionsModel& m, const std::string& repo_url) {
  std::vector<std::string> branches = g.refs;
  if (!g.alerts.empty()) branches.push_back(m.branch.empty() ? "(any)" : m.branch);
  auto joined = [](const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
  };
  const size_t cells = g.alerts.size() + g.gate_alerts.size();
  std::string h = "<tr data-group=\"" + html_escape(g.commit) + "\" data-state=\"" +
                  html_escape(to_string(g.state)) + "\" data-worst=\"" + fmt_num(g.worst) +
                  "\" data-cells=\"" + std::to_string(cells) + "\" data-time=\"" +
                  html_escape(g.time) + "\" data-devices=\"" + html_escape(joined(g.devices, "|")) +
                  "\" data-branches=\"" + html_escape(joined(branches, "|")) + "\">";
  h += "<td><input type=\"checkbox\" class=\"pick\" aria-label=\"select this group\"></td>";
  h += "<td>" + commit_html(g.commit, repo_url) + " <span class=\"muted wrap\">" +
       html_escape(g.subject) + "</span></td>";
  std::string members;
  if (!g.alerts.empty()) members = std::to_string(g.alerts.size()) + " series";
  if (!g.gate_alerts.empty())
    members += (members.empty() ? "" : " · ") + std::to_string(g.gate_alerts.size()) +
               (g.gate_alerts.size() == 1 ? " gate" : " gates");
  h += "<td class=\"num\">" + members + "</td>";
  h += "<td class=\"num\"><span class=\"change regression\">" + fmt_change(g.worst) +
       "</span></td><td class=\"num hide-narrow\">" + fmt_change(g.typical) + "</td>";
  h += "<td class=\"small wrap hide-narrow\">" + html_escape(joined(g.devices, ", ")) +
       (g.refs.empty()
            ? ""
            : "<br><span class=\"muted mono\">" + html_escape(joined(g.refs, ", ")) + "</span>") +
       "</td>";
  h += "<td class=\"small hide-narrow\">" +
       (g.alerts.empty() ? "" : std::to_string(g.commits_since) + " commits ago<br>") +
       "<span class=\"muted\">" + html_escape(g.time) + "</span></td>";
  return h + state_and_triage(g.state, "", "", "") + "</tr>";
}

// The filters and sort of the groups table (applied in the page by triage.js, kept in the URL's
// hash) and the bulk bar for the groups selected.
std::string group_controls(const RegressionsModel& m) {
  std::set<std::string> devices, branches;
  for (const AlertGroup& g : m.groups) {
    devices.insert(g.devices.begin(), g.devices.end());
    branches.insert(g.refs.begin(), g.refs.end());
    if (!g.alerts.empty()) branches.insert(m.branch.empty() ? "(any)" : m.branch);
  }
  auto options = [](const std::set<std::string>& values) {
    std::string h = "<option value=\"\" selected>any</option>";
    for (const auto& v : values)
      h += "<option value=\"" + html_escape(v) + "\">" + html_escape(v) + "</option>";
    return h;
  };
  std::string h =
      "<form class=\"controls\" id=\"group-controls\"><label>state <select name=\"state\" "
      "data-default=\"open\"><option value=\"open\" selected>open</option><option "
      "value=\"closed\">closed</option><option value=\"all\">all</option></select></label> "
      "<label>device <select name=\"device\" data-default=\"\">" +
      options(devices) + "</select></label> <label>branch <select name=\"branch\" " +
      "data-default=\"\">" + options(branches) +
      "</select></label> <label>at least <input name=\"min_size\" type=\"number\" min=\"0\" "
      "step=\"any\" size=\"4\" data-default=\"\">%</label> <label>at least <input "
      "name=\"min_cells\" type=\"number\" min=\"0\" step=\"1\" size=\"4\" data-default=\"\"> "
      "alerts</label> <label>at most <input name=\"max_age_days\" type=\"number\" min=\"0\" "
      "step=\"any\" size=\"4\" data-default=\"\"> days old</label> <label>sort <select "
      "name=\"sort\" data-default=\"worst\"><option "
      "value=\"worst\" selected>largest first</option><option value=\"cells\">most alerts "
      "first</option><option value=\"age\">newest first</option></select></label> <span "
      "class=\"muted\" id=\"groups-shown\"></span></form>";
  h +=
      "<div class=\"controls\" id=\"bulk-bar\"><input type=\"text\" id=\"bulk-reason\" "
      "placeholder=\"reason\" aria-label=\"reason for the selected groups\"> <button "
      "type=\"button\" class=\"secondary\" data-bulk=\"acknowledge\">Acknowledge selected</button> "
      "<button type=\"button\" class=\"secondary\" data-bulk=\"dismiss\">Dismiss "
      "selected…</button> "
      "<button type=\"button\" class=\"secondary\" data-bulk=\"fix\">Mark selected fixed</button>"
      "</div>";
  return h;
}

}  // namespace

std::string triage_auth_form() {
  return "<form id=\"triage-auth\" class=\"filters card\"><label id=\"triage-token\">triage "
         "token<input type=\"password\" name=\"token\" autocomplete=\"off\"></label><span>"
         "triaging as <output id=\"triage-who\" class=\"mono\">nobody yet</output></span><span "
         "id=\"triage-status\" class=\"muted\" role=\"status\"></span></form>";
}

std::string render_regressions_page(const RegressionsModel& m, const std::string& repo_url) {
  std::string h = "<h1>Regressions</h1><p class=\"muted\">";
  h += "<span id=\"open-count\">" + std::to_string(m.open + m.acknowledged) + "</span> open (" +
       std::to_string(m.acknowledged) + " acknowledged) · " + std::to_string(m.closed) +
       " dismissed or fixed";
  if (!m.branch.empty()) h += " · branch <span class=\"mono\">" + html_escape(m.branch) + "</span>";
  if (!m.complete()) h += " · so far";
  h += "</p>";
  if (!m.complete())
    h += computing_card(m.computing,
                        "Whether they stand in a regression is not known yet; the list and the "
                        "counts below cover the series already computed.");
  h +=
      "<p class=\"muted\">A series' alert opens when a flagged change point is a slowdown (of "
      "at least the gate's min effect), or the gate finds its last commit slower than the one "
      "before. It stays open until someone acknowledges, dismisses (with a reason) or fixes it, or "
      "the series returns to its old level (fixed, detected); a regression at another commit opens "
      "a new one. Alerts with the same first bad commit form one group, triaged with one click. "
      "Triage "
      "needs a credential that may triage: a token from <code>perfgate token add NAME --role "
      "triage</code> (kept for this tab only), or your login when the server sits behind your "
      "SSO proxy. Each event is recorded under the credential's name.</p>";
  h += triage_auth_form();
  if (!m.groups.empty()) {
    h += "<h2>By first bad commit</h2><p class=\"muted\">Every alert below, series and gates "
         "alike, grouped by the commit it names: one cause, one row. A group's buttons act on each "
         "of its alerts that the action applies to (acknowledge the open ones, dismiss or fix the "
         "open and acknowledged ones, reopen the closed ones), one event each under the "
         "credential's name.</p>";
    h += group_controls(m);
    h += "<div class=\"card scroll\"><table id=\"alert-groups\" class=\"triage-table\"><thead><tr>"
         "<th></th><th>first bad commit</th><th class=\"num\">alerts</th><th "
         "class=\"num\">worst</th><th class=\"num hide-narrow\">typical</th><th "
         "class=\"hide-narrow\">where</th><th class=\"hide-narrow\">age</th>"
         "<th>state</th><th>triage</th></tr></thead><tbody>";
    for (const AlertGroup& g : m.groups) h += group_row(g, m, repo_url);
    h += "</tbody></table></div><h2>Series</h2>";
  }
  if (m.alerts.empty() && !m.complete()) {
    h += "<div class=\"card\">No regressions among the series computed so far.</div>";
  } else if (m.alerts.empty()) {
    h += "<div class=\"card\">No regressions: every series' latest change is not a slowdown.</div>";
  } else {
    h +=
        "<div class=\"card scroll\"><table id=\"regressions\" "
        "class=\"triage-table\"><thead><tr><th>series</th>"
        "<th class=\"num\">size</th><th>first bad commit</th><th class=\"hide-narrow\">age</th><th "
        "class=\"hide-narrow\">found by</th>"
        "<th>state</th><th>triage</th></tr></thead><tbody>";
    for (const auto& a : m.alerts) h += alert_row(a, repo_url);
    h += "</tbody></table></div>";
  }
  h += "<h2>From stored gate results</h2><p class=\"muted\">Gates kept with <code>perfgate "
       "compare --record</code> or submitted to <code>POST /api/v1/gates</code> (the action "
       "submits each pull request's gate when a server is configured). A gate is listed when it "
       "is the newest gate of its base/head pair and found a regression, under the settings "
       "shown; a later passing gate on the same ref supersedes it.</p>";
  if (m.gate_alerts.empty()) {
    h += "<div class=\"card\" id=\"no-gate-regressions\">No stored gate found a regression.</div>";
  } else {
    h += "<div class=\"card scroll\"><table id=\"gate-regressions\" class=\"triage-table\"><thead>"
         "<tr><th>gate</th><th class=\"num\">size</th><th>first bad commit</th><th>age</th>"
         "<th>settings</th><th>state</th><th>triage</th></tr></thead><tbody>";
    for (const auto& a : m.gate_alerts) h += gate_row(a, repo_url);
    h += "</tbody></table></div>";
  }
  PageFrame f{"Regressions", "regressions", "/api/v1/regressions", {"common.js", "triage.js"}};
  return render_frame(f, h);
}

}  // namespace pg::web
