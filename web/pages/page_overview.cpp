#include <cstdio>

#include "core/cell_label.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {

namespace {

std::string filter_select(const OverviewModel& m, const char* name, const char* label,
                          const std::optional<std::string>& current) {
  std::string h = std::string("<label>") + label + "<select name=\"" + name + "\">";
  h += "<option value=\"\">all</option>";
  auto it = m.options.find(name);
  bool found = false;
  if (it != m.options.end())
    for (const auto& v : it->second) {
      const bool sel = current && *current == v;
      found = found || sel;
      h += "<option value=\"" + html_escape(v) + "\"" + (sel ? " selected" : "") + ">" +
           html_escape(v) + "</option>";
    }
  if (current && !found)  // a shared URL naming a value that is gone: keep it visible
    h += "<option value=\"" + html_escape(*current) + "\" selected>" + html_escape(*current) +
         "</option>";
  return h + "</select></label>";
}

// The most recent flagged change point: how much, where, how long ago. Answers "when did this
// change" without opening the chart.
std::string last_change(const SeriesView& v) {
  const SeriesChange* last = nullptr;
  for (const auto& c : v.changes)
    if (c.flagged) last = &c;
  if (!last) return "<span class=\"muted\">none</span>";
  const SeriesPoint& p = v.points[last->index];
  const size_t ago = v.points.size() - 1 - last->index;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%+.1f%%", 100.0 * last->relative);
  const std::string href =
      last->index > 0 && !p.commit.empty() && !v.points[last->index - 1].commit.empty()
          ? compare_href(v.points[last->index - 1].commit, p.commit, v.info)
          : "/runs/" + std::to_string(p.run_ids.back());
  return "<span class=\"change " + last->direction + "\">" + pct +
         "</span> at <a class=\"mono\" href=\"" + html_escape(href) +
         "\" title=\"compare with its parent\">" +
         html_escape(p.commit.empty() ? "(no commit)" : p.commit.substr(0, 7)) +
         "</a> <span class=\"muted\">" +
         (ago == 0 ? std::string("latest")
                   : std::to_string(ago) + " commit" + (ago == 1 ? "" : "s") + " ago") +
         "</span>";
}

std::optional<std::string> str(const std::optional<int>& v) {
  return v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt;
}

// While views are still being computed (first start, new settings, new data): which series.
// They get no badge: a status is shown only once computed.
std::string overview_computing_card(const OverviewModel& m) {
  if (m.complete) return "";
  return computing_card(m.computing,
                        "Their change points and status are not known yet, so they are listed "
                        "here rather than with a badge; the counts above cover the series already "
                        "computed.");
}

}  // namespace

std::string computing_card(const std::vector<store::SeriesInfo>& series, const std::string& why) {
  std::string h =
      "<meta http-equiv=\"refresh\" content=\"2\"><section class=\"card\" id=\"computing\" "
      "role=\"status\"><h2>Computing " +
      std::to_string(series.size()) + " series</h2><p class=\"muted\">" + why +
      " This page reloads every 2 s until every series is ready; a series' own page computes it "
      "at once.</p><ul class=\"computing\">";
  for (const store::SeriesInfo& s : series)
    h += "<li><a href=\"/series/" + std::to_string(s.id) + "\">" + html_escape(series_name(s)) +
         "</a> <span class=\"badge computing\">computing</span></li>";
  return h + "</ul></section>";
}

std::string render_overview_page(const OverviewModel& m, const std::string& query) {
  std::string h = "<h1>Overview</h1><p class=\"muted\">";
  h += std::to_string(m.shown_series) + " of " + std::to_string(m.total_series) + " series";
  for (const auto& [status, n] : m.status_counts)
    h += " · <span class=\"badge " + html_escape(status) + "\">" + std::to_string(n) + " " +
         html_escape(status) + "</span>";
  if (m.complete)
    h += " · <a id=\"open-regressions\" href=\"/regressions\">" +
         std::to_string(m.open_regressions) + " open regression" +
         (m.open_regressions == 1 ? "" : "s") + "</a>";
  else
    h += " · <a id=\"open-regressions\" href=\"/regressions\">open regressions: counted once "
         "every series is computed</a>";
  if (!m.branch.empty()) h += " · branch <span class=\"mono\">" + html_escape(m.branch) + "</span>";
  h +=
      "</p><p class=\"muted small\">A badge says <i>regressed</i> while the series' latest flagged "
      "change point is a slowdown of at least the gate's min effect (" +
      pct_setting(m.min_effect) + "), or the gate (alpha " + pct_setting(m.alpha, false) +
      ") finds the last commit slower than the one before; <i>improved</i> for a speed-up "
      "within the last " +
      std::to_string(kRecentPoints) +
      " commits. The same settings drive the chart's flags and the compare page.</p>";
  h += "<form class=\"filters card\" method=\"get\" action=\"/\" data-autosubmit>";
  h += filter_select(m, "model", "model", m.filter.model);
  h += filter_select(m, "dtype", "dtype", m.filter.dtype);
  h += filter_select(m, "device", "device", m.filter.device);
  h += filter_select(m, "batch", "batch size", str(m.filter.batch));
  h += filter_select(m, "prompt", "prompt length", str(m.filter.prompt));
  h += "<button type=\"submit\">Apply</button><a class=\"button secondary\" href=\"/\">Reset</a>";
  h += "</form>";
  h += "<form id=\"overlay\" method=\"get\" action=\"/trend\"></form>";
  h += overview_computing_card(m);
  if (m.groups.empty() && m.computing.empty())
    h += "<div class=\"card\">No series match. Store runs with <code>perfgate run</code>, or "
         "POST them to <code>/api/v1/runs</code>.</div>";
  h += "<div class=\"groups\">";
  for (const auto& g : m.groups) {
    h += "<section class=\"group card\"><h2>" + html_escape(g.model) + " <span class=\"muted\">" +
         html_escape(g.device) +
         "</span></h2><div class=\"scroll\"><table><thead><tr>"
         "<th class=\"hide-narrow\">overlay</th><th>cell</th>"
         "<th class=\"num\">latest tpot</th><th>trend</th><th>status</th>"
         "<th class=\"hide-narrow\">last change</th>"
         "<th class=\"hide-narrow\">latest commit</th><th class=\"hide-narrow\">environment</th>"
         "</tr></thead><tbody>";
    for (const auto& v : g.series) {
      const std::string id = std::to_string(v->info.id);
      h += "<tr><td class=\"hide-narrow\"><input type=\"checkbox\" form=\"overlay\" name=\"ids\" "
           "value=\"" +
           id + "\" aria-label=\"overlay series " + id + "\"></td>";
      h += "<td class=\"cellname\"><a href=\"/series/" + id + "\">" +
           html_escape(cell_label(v->info.key, false)) + "</a></td>";
      if (v->points.empty()) {
        h += "<td class=\"num\">–</td>";
      } else {
        h += "<td class=\"num\" data-v=\"" + fmt_num(v->points.back().median) + "\">" +
             fmt_metric(v->points.back().median, "ms") + "</td>";
      }
      h += "<td><a href=\"/series/" + id + "\" aria-label=\"trend of series " + id + "\">" +
           sparkline_svg(*v) + "</a></td>";
      const std::string status = to_string(shown_status(*v, m));
      h += "<td><span class=\"badge " + html_escape(status) + "\">" + html_escape(status) +
           "</span></td>";
      h += "<td class=\"hide-narrow\">" + last_change(*v) + "</td>";
      if (v->points.empty()) {
        h += "<td class=\"hide-narrow\"></td>";
      } else {
        const SeriesPoint& p = v->points.back();
        h += "<td class=\"hide-narrow wrap\"><a class=\"mono\" href=\"/runs/" +
             std::to_string(p.run_ids.back()) + "\">" +
             html_escape(p.commit.empty() ? "(no commit)" : p.commit.substr(0, 10)) + "</a> " +
             html_escape(p.subject) + "</td>";
      }
      h += "<td class=\"hide-narrow muted\">" + html_escape(env_text(v->info.env)) + "</td></tr>";
    }
    h += "</tbody></table></div></section>";
  }
  h += "</div>";
  if (!m.groups.empty())
    h += "<p class=\"hide-narrow\"><button type=\"submit\" form=\"overlay\">Overlay selected "
         "series</button></p>";
  PageFrame f{"Overview",
              "overview",
              "/api/v1/overview" + (query.empty() ? "" : "?" + query),
              {"common.js"}};
  return render_frame(f, h);
}

}  // namespace pg::web
