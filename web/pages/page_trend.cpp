#include <algorithm>
#include <cstdio>

#include "core/cell_label.h"
#include "web/http/assets.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {

namespace {

std::string ids_csv(const TrendModel& m) {
  std::string s;
  for (const auto& v : m.views) s += (s.empty() ? "" : ",") + std::to_string(v->info.id);
  return s;
}

// The series' alerts (series_alerts_json) with their triage: what the regressions page lists.
std::string alerts_html(const nlohmann::json& alerts, const std::string& repo_url) {
  if (alerts.empty()) return "";
  std::string h =
      "<h2>Alerts</h2><div class=\"scroll\"><table class=\"series-alerts\"><thead><tr>"
      "<th>first bad commit</th><th class=\"num\">change</th><th>found by</th><th>state</th>"
      "<th class=\"wrap\">who, why</th></tr></thead><tbody>";
  for (const auto& a : alerts) {
    const std::string state = a["state"].get<std::string>();
    std::string why;
    if (!a["fixed_by"].is_null())
      why =
          "detected: back to its old level from " + a["fixed_by"].get<std::string>().substr(0, 10);
    else if (!a["events"].empty()) {
      const auto& e = a["events"].back();
      why = e["author"].get<std::string>() + ", " + e["at"].get<std::string>();
      if (!e["reason"].get<std::string>().empty()) why += ": " + e["reason"].get<std::string>();
    }
    const double rel = a["relative"].get<double>();
    h += "<tr data-commit=\"" + html_escape(a["commit"].get<std::string>()) + "\" data-state=\"" +
         html_escape(state) + "\"><td>" + commit_html(a["commit"].get<std::string>(), repo_url) +
         "</td><td class=\"num\">" + fmt_change(rel) + "</td><td class=\"muted small\">" +
         html_escape(a["source"].get<std::string>()) + "</td><td><span class=\"badge state-" +
         html_escape(state) + "\">" + html_escape(state) + "</span></td><td class=\"wrap small\">" +
         html_escape(why) + "</td></tr>";
  }
  return h +
         "</tbody></table></div><p class=\"muted small\"><a href=\"/regressions\">Triage "
         "on the regressions page</a>.</p>";
}

std::string series_details(const SeriesView& v, const nlohmann::json& alerts,
                           const std::string& repo_url) {
  const MetricInfo& mi = metric_info(v.metric);
  const std::string id = std::to_string(v.info.id);
  std::string h = "<section class=\"card\"><h2><a href=\"/series/" + id + "\">" +
                  html_escape(series_name(v.info)) + "</a> <span class=\"badge " +
                  html_escape(to_string(v.status)) + "\">" + html_escape(to_string(v.status)) +
                  "</span></h2>";
  h += "<div class=\"grid2\"><dl class=\"kv\">";
  const CellKey& k = v.info.key;
  auto kv = [&](const std::string& name, const std::string& value) {
    h += "<dt>" + html_escape(name) + "</dt><dd>" + html_escape(value) + "</dd>";
  };
  kv("model", k.model);
  kv("dtype", k.dtype);
  kv("batch size", std::to_string(k.batch_size));
  kv("prompt length", std::to_string(k.seq_len));
  kv("generated tokens", std::to_string(k.gen_tokens));
  kv("kv cache", k.kv_cache ? "on" : "off");
  kv("attention", k.attention);
  kv("cuda graphs", k.cuda_graphs ? "on" : "off");
  kv("device", k.device);
  h += "</dl><dl class=\"kv\">";
  for (const auto& [name, value] : v.info.env) kv(name, value);
  kv("points (commits)", std::to_string(v.points.size()));
  if (v.skipped_cells) kv("cells not drawn (oom/invalid/error)", std::to_string(v.skipped_cells));
  if (v.last_compare) {
    std::string lc = v.last_compare->verdict;
    if (v.last_compare->ratio) lc += ", ratio " + fmt_num(*v.last_compare->ratio);
    kv("last two commits (gate)", lc);
  }
  h += "</dl></div>";
  h += alerts_html(alerts, repo_url);
  if (!v.changes.empty()) {
    h += "<h2>Change points</h2><div class=\"scroll\"><table class=\"change-points\"><thead><tr>"
         "<th>first commit</th><th class=\"wrap\">subject</th><th class=\"num\">before</th>"
         "<th class=\"num\">after</th><th class=\"num\">change</th><th class=\"num\">p</th>"
         "<th></th><th>compare</th></tr></thead><tbody>";
    std::string prev_cp;  // the first commit of the previous change point's segment
    for (const auto& c : v.changes) {
      const SeriesPoint& p = v.points[c.index];
      const std::string parent = c.index > 0 ? v.points[c.index - 1].commit : "";
      h += "<tr><td>" + commit_html(p.commit, repo_url) + "</td>";
      h += "<td class=\"wrap\">" + html_escape(p.subject) + "</td>";
      h += "<td class=\"num\">" + fmt_metric(c.before, mi.unit) + "</td>";
      h += "<td class=\"num\">" + fmt_metric(c.after, mi.unit) + "</td>";
      char rel[32];
      std::snprintf(rel, sizeof rel, "%+.1f%%", 100 * c.relative);
      h += "<td class=\"num\">" + std::string(rel) + "</td>";
      h += "<td class=\"num\">" + fmt_num(c.p_value) + "</td>";
      h += "<td><span class=\"badge " + std::string(c.flagged ? c.direction : "unchanged") + "\">" +
           (c.flagged ? c.direction : std::string("below min effect")) + "</span></td><td>";
      if (!parent.empty() && !p.commit.empty())
        h += "<a class=\"cp-parent\" href=\"" +
             html_escape(compare_href(parent, p.commit, v.info)) + "\">vs parent</a> ";
      if (!prev_cp.empty() && !p.commit.empty())
        h += "<a class=\"cp-previous\" href=\"" +
             html_escape(compare_href(prev_cp, p.commit, v.info)) + "\">vs previous change</a> ";
      h += "<a href=\"/runs/" + std::to_string(p.run_ids.back()) + "\">run</a></td></tr>";
      prev_cp = p.commit;
    }
    h += "</tbody></table></div>";
    h += "<p class=\"muted small\">Why a flag and a compare can disagree: a change point compares "
         "the whole segment before it with the whole segment after it (every commit's median), so "
         "it sees a step that is small next to one commit's noise. The compare of the commit with "
         "its parent uses only those two commits' repetitions, and may call the same step "
         "unchanged or inconclusive. Both use the gate's min effect (" +
         pct_setting(v.rules.min_effect) + ") and alpha " + pct_setting(v.rules.alpha, false) +
         ".</p>";
  }
  // The newest commits, newest first: the table view of the chart's right edge.
  const size_t n = v.points.size(), shown = std::min<size_t>(n, 15);
  if (shown) {
    h += "<h2>Latest commits</h2><div class=\"scroll\"><table><thead><tr><th>commit</th>"
         "<th class=\"wrap\">subject</th><th>time</th><th class=\"num\">median</th>"
         "<th class=\"num\">IQR</th><th class=\"num\">n</th><th>runs</th></tr></thead><tbody>";
    for (size_t i = n; i-- > n - shown;) {
      const SeriesPoint& p = v.points[i];
      h += "<tr><td>" + commit_html(p.commit, repo_url) +
           (p.flag.empty() ? "" : " <span class=\"badge " + p.flag + "\">" + p.flag + "</span>") +
           "</td><td class=\"wrap\">" + html_escape(p.subject) + "</td><td>" + html_escape(p.time) +
           "</td><td class=\"num\">" + fmt_metric(p.median, mi.unit) + "</td><td class=\"num\">" +
           fmt_num(p.spread.q1) + "–" + fmt_num(p.spread.q3) + "</td><td class=\"num\">" +
           std::to_string(p.spread.n) + "</td><td>";
      for (int64_t r : p.run_ids)
        h += "<a href=\"/runs/" + std::to_string(r) + "\">#" + std::to_string(r) + "</a> ";
      if (i > 0 && !p.commit.empty() && !v.points[i - 1].commit.empty())
        h += "· <a href=\"" + html_escape(compare_href(v.points[i - 1].commit, p.commit, v.info)) +
             "\">vs parent</a>";
      h += "</td></tr>";
    }
    h += "</tbody></table></div>";
  }
  return h + "</section>";
}

}  // namespace

std::string render_trend_page(const TrendModel& m) {
  const MetricInfo& cur = metric_info(m.metric);
  const std::string ids = ids_csv(m);
  const bool single = m.views.size() == 1;
  const std::string branch_q = m.branch == m.main_branch ? "" : "&branch=" + url_encode(m.branch);
  const std::string base =
      single ? "/series/" + ids + "?metric=" : "/trend?ids=" + url_encode(ids) + "&metric=";
  std::string title = single ? series_name(m.views.front()->info)
                             : std::to_string(m.views.size()) + " series overlaid";
  std::string h = "<h1>" + html_escape(title) + "</h1>";
  h += "<div class=\"controls\"><div class=\"seg\" role=\"tablist\" aria-label=\"metric\">";
  for (const auto& mi : all_metrics())
    h += std::string("<a role=\"tab\" data-keep-view href=\"") +
         html_escape(base + mi.name + branch_q) + "\"" +
         (mi.metric == m.metric ? " class=\"active\" aria-selected=\"true\"" : "") + ">" +
         html_escape(mi.label) + "</a>";
  h += "</div>";
  if (m.branches.size() > 1 || m.branch != m.main_branch) {
    h += "<div class=\"seg\" aria-label=\"branch\"><span class=\"muted\">branch</span>";
    std::vector<std::string> names = {m.main_branch};  // the main branch first
    for (const auto& b : m.branches)
      if (b != m.main_branch) names.push_back(b);
    if (std::find(names.begin(), names.end(), m.branch) == names.end()) names.push_back(m.branch);
    for (const auto& b : names) {
      if (b == "detached") continue;
      const std::string href =
          base + std::string(cur.name) + (b == m.main_branch ? "" : "&branch=" + url_encode(b));
      h += "<a class=\"mono" + std::string(b == m.branch ? " active" : "") +
           "\" data-keep-view href=\"" + html_escape(href) + "\">" + html_escape(b) +
           (b == m.main_branch ? " (main)" : "") + "</a>";
    }
    h += "</div>";
  }
  h += "<div class=\"seg\" aria-label=\"window\"><span class=\"muted\">show</span>";
  for (const char* n : {"50", "200", "1000", "all"})
    h += "<a class=\"window\" href=\"" + html_escape(base + cur.name + branch_q + "&last=" + n) +
         "\">" + (std::string(n) == "all" ? "all" : "last " + std::string(n)) + "</a>";
  h += "</div></div>";
  size_t points = 0;
  for (const auto& v : m.views) points += v->points.size();
  h += "<p class=\"muted\">" + html_escape(cur.label) + " (" + html_escape(cur.unit) +
       "): median per commit, shaded band = interquartile range, whiskers = min–max of the "
       "repetitions. Dashed lines mark change points; triangles flag regressions and improvements. "
       "Commits of branch <span class=\"mono\">" +
       html_escape(m.branch.empty() ? "(any)" : m.branch) +
       "</span> only. Drag to zoom (kept in the URL), double-click to show all; click a point to "
       "compare it with the commit before.</p>";
  if (points == 0) {
    h += "<div class=\"card empty-metric\" id=\"chart-empty\">No " + html_escape(cur.label) +
         " values are stored for " + (single ? "this series" : "these series") + " on branch " +
         html_escape(m.branch.empty() ? "(any)" : m.branch) +
         (m.metric == Metric::peak_alloc_bytes
              ? ": peak device memory is recorded by GPU runs only (CPU runs record "
                "peak_rss_growth_bytes, shown on the run page)."
              : ".") +
         "</div>";
  } else {
    // plotly.js (4.8 MB) is not in the page head: trend.js loads it once the page is painted and
    // the chart is on screen, so the tables and controls never wait for it.
    h += "<div class=\"card\"><div id=\"chart\" data-plotly=\"" +
         html_escape(asset_url("plotly.min.js")) +
         "\"><p class=\"muted chart-loading\">Loading the chart…</p></div><noscript>The chart "
         "needs JavaScript; "
         "the tables below and the JSON twin hold the same data.</noscript></div>";
    h += "<script type=\"application/json\" id=\"trend-data\">" + json_for_script(trend_json(m)) +
         "</script>";
  }
  for (size_t i = 0; i < m.views.size(); ++i)
    h += series_details(*m.views[i], i < m.alerts.size() ? m.alerts[i] : nlohmann::json::array(),
                        m.repo_url);
  const std::string twin = single ? "/api/v1/series/" + ids + "?metric=" + cur.name
                                  : "/api/v1/trend?ids=" + url_encode(ids) + "&metric=" + cur.name;
  PageFrame f{title, "overview", twin, {"common.js", "trend.js"}};
  return render_frame(f, h);
}

}  // namespace pg::web
