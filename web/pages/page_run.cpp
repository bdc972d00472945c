#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/descriptive.h"
#include "core/cell_label.h"
#include "web/http/json_limits.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {

namespace {

// Histogram of every decode step of every repetition, with the median marked: the shape shows
// warm-up outliers and bimodal steps that a single median hides.
std::string distribution_svg(const CellSamples& s) {
  std::vector<double> v;
  for (const auto& rep : s.decode_ms) v.insert(v.end(), rep.begin(), rep.end());
  if (v.empty()) v = s.prefill_ms;
  if (v.empty()) return "<span class=\"muted\">no samples</span>";
  std::sort(v.begin(), v.end());
  const double lo = v.front(), hi = v.back();
  constexpr int kBins = 24;
  int bins[kBins] = {};
  for (double x : v) {
    int b = hi > lo ? static_cast<int>((x - lo) / (hi - lo) * kBins) : kBins / 2;
    bins[std::clamp(b, 0, kBins - 1)]++;
  }
  const int peak = *std::max_element(bins, bins + kBins);
  const double med = sorted_quantile(v, 0.5);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu %s samples: min %s, median %s, max %s ms", v.size(),
                s.decode_ms.empty() ? "prefill" : "decode-step", fmt_num(lo).c_str(),
                fmt_num(med).c_str(), fmt_num(hi).c_str());
  std::string h =
      "<svg class=\"dist\" viewBox=\"0 0 120 24\" preserveAspectRatio=\"none\" "
      "role=\"img\" aria-label=\"" +
      html_escape(buf) + "\"><title>" + html_escape(buf) + "</title>";
  for (int b = 0; b < kBins; ++b) {
    if (!bins[b]) continue;
    const double hgt = 22.0 * bins[b] / peak;
    std::snprintf(buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.2f\" width=\"4.4\" height=\"%.2f\"/>",
                  b * 5.0, 23.0 - hgt, hgt);
    h += buf;
  }
  const double mx = hi > lo ? (med - lo) / (hi - lo) * 120.0 : 60.0;
  std::snprintf(buf, sizeof buf, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"0\" y2=\"24\"/>", mx, mx);
  return h + buf + "</svg>";
}

std::string metric_cell(const CellResult& c, const char* name, const char* unit) {
  auto it = c.metrics.find(name);
  if (it == c.metrics.end()) return "<td class=\"num\" data-v=\"\">–</td>";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", it->second);
  return std::string("<td class=\"num\" data-v=\"") + buf + "\">" + fmt_metric(it->second, unit) +
         "</td>";
}

void kv(std::string& h, const std::string& k, const std::string& v) {
  h += "<dt>" + html_escape(k) + "</dt><dd>" + html_escape(v) + "</dd>";
}

}  // namespace

std::string render_run_page(const Run& run, const std::vector<int64_t>& series_ids,
                            const std::string& parent, const std::string& repo_url) {
  const std::string id = std::to_string(run.id);
  std::string h = "<h1>Run #" + id + " <span class=\"badge " + html_escape(to_string(run.status)) +
                  "\">" + html_escape(to_string(run.status)) + "</span></h1>";
  if (run.git.commit) {
    h += "<p>" + commit_html(*run.git.commit, repo_url);
    if (!parent.empty()) {
      std::string href =
          "/compare?base=" + url_encode(parent) + "&head=" + url_encode(*run.git.commit);
      if (auto d = run.env.find("device"); d != run.env.end() && !d->second.empty())
        href += "&device=" + url_encode(d->second);
      h += " · <a id=\"compare-parent\" href=\"" + html_escape(href) +
           "\">compare with the commit before (" + html_escape(parent.substr(0, 10)) + ")</a>";
    }
    h += "</p>";
  }
  h += "<div class=\"grid2\"><section class=\"card\"><h2>Code</h2><dl class=\"kv\">";
  const GitInfo& g = run.git;
  kv(h, "commit", g.commit.value_or("(none: " + g.state + ")"));
  kv(h, "branch", g.branch.value_or("–"));
  kv(h, "subject", g.subject.value_or("–"));
  kv(h, "commit time", g.time.value_or("–"));
  kv(h, "dirty work tree", g.dirty ? "yes" : "no");
  kv(h, "git state", g.state);
  kv(h, "repository", g.repo_path);
  h += "</dl><h2>Run</h2><dl class=\"kv\">";
  kv(h, "status", to_string(run.status));
  kv(h, "started", run.started_at);
  kv(h, "finished", run.finished_at.empty() ? "–" : run.finished_at);
  kv(h, "cells", std::to_string(run.cells.size()));
  h += "</dl></section><section class=\"card\"><h2>Environment</h2><dl class=\"kv\">";
  for (const auto& [k, v] : run.env) kv(h, k, v);
  h += "</dl></section></div>";
  // Bounded whatever was stored: a hostile config must not make the page huge (json_limits.h).
  const std::string config = json_for_display(run.config_json);
  h += "<details class=\"card\"><summary>Sweep configuration</summary><pre>" + html_escape(config) +
       "</pre></details>";

  h += "<div class=\"card scroll\"><table id=\"cells\" class=\"sortable\"><thead><tr><th>model</th>"
       "<th>cell</th><th>device</th><th>status</th><th class=\"num\">prefill</th>"
       "<th class=\"num\">tpot</th><th class=\"num\">itl p50</th><th class=\"num\">itl p99</th>"
       "<th class=\"num\">decode</th><th class=\"num\">total</th><th class=\"num\">peak mem</th>"
       "<th class=\"num\">cv</th><th>decode steps</th><th>trend</th></tr></thead><tbody>";
  for (size_t i = 0; i < run.cells.size(); ++i) {
    const CellResult& c = run.cells[i];
    const CellKey& k = c.key;
    h += "<tr><td>" + html_escape(k.model) + "</td><td>" + html_escape(cell_label(k, false)) +
         "</td><td>" + html_escape(k.device) + "</td>";
    const std::string st = to_string(c.status);
    h += "<td><span class=\"badge " + std::string(st == "ok" ? "steady" : "inconclusive") +
         "\" title=\"" + html_escape(c.reason.value_or("")) + "\">" + html_escape(st) + "</span>" +
         (c.reason ? " <span class=\"muted\">" + html_escape(*c.reason) + "</span>" : "") + "</td>";
    h += metric_cell(c, "prefill_ms", "ms") + metric_cell(c, "tpot_ms", "ms") +
         metric_cell(c, "itl_p50_ms", "ms") + metric_cell(c, "itl_p99_ms", "ms") +
         metric_cell(c, "decode_tok_s", "tok/s") + metric_cell(c, "total_tok_s", "tok/s") +
         metric_cell(c, "peak_alloc_bytes", "bytes") + metric_cell(c, "cv", "");
    h += "<td>" + distribution_svg(c.samples) + "</td><td>";
    if (i < series_ids.size() && series_ids[i] > 0)
      h += "<a href=\"/series/" + std::to_string(series_ids[i]) + "\">trend</a>";
    h += "</td></tr>";
  }
  h += "</tbody></table></div>";
  PageFrame f{"Run #" + id, "runs", "/api/v1/runs/" + id, {"common.js", "compare.js"}};
  return render_frame(f, h);
}

std::string render_runs_page(const std::vector<Run>& runs) {
  constexpr size_t kShown = 500;
  std::string h = "<h1>Runs</h1><p class=\"muted\">" + std::to_string(runs.size()) +
                  " stored runs" +
                  (runs.size() > kShown ? ", newest " + std::to_string(kShown) + " shown" : "") +
                  ".</p><div class=\"card scroll\"><table class=\"sortable\"><thead><tr>"
                  "<th class=\"num\">id</th><th>status</th><th>commit</th><th>branch</th>"
                  "<th class=\"wrap\">subject</th><th>commit time</th><th>started</th>"
                  "<th>device</th></tr></thead><tbody>";
  size_t n = 0;
  for (auto it = runs.rbegin(); it != runs.rend() && n < kShown; ++it, ++n) {
    const Run& r = *it;
    const std::string id = std::to_string(r.id);
    auto dev = r.env.find("device");
    h += "<tr><td class=\"num\" data-v=\"" + id + "\"><a href=\"/runs/" + id + "\">#" + id +
         "</a></td><td>" + html_escape(to_string(r.status)) + "</td><td class=\"mono\">" +
         html_escape(r.git.commit ? r.git.commit->substr(0, 10) : "(" + r.git.state + ")") +
         "</td><td>" + html_escape(r.git.branch.value_or("")) + "</td><td class=\"wrap\">" +
         html_escape(r.git.subject.value_or("")) + "</td><td>" +
         html_escape(r.git.time.value_or("")) + "</td><td>" + html_escape(r.started_at) +
         "</td><td>" + html_escape(dev == r.env.end() ? "" : dev->second) + "</td></tr>";
  }
  h += "</tbody></table></div>";
  PageFrame f{"Runs", "runs", "/api/v1/runs", {"common.js", "compare.js"}};
  return render_frame(f, h);
}

}  // namespace pg::web
