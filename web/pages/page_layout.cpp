#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {

std::string fmt_change(double relative) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * relative);
  return buf;
}

std::string fmt_num(double v) {
  if (!std::isfinite(v)) return "–";
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 1e5 || (a > 0 && a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.3g", v);
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.3f", v);
  else
    std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string fmt_metric(double v, const std::string& unit) {
  if (unit == "bytes" && std::isfinite(v)) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (std::fabs(v) >= 1024 && u < 4) {
      v /= 1024;
      ++u;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
    return buf;
  }
  return fmt_num(v) + (unit.empty() ? "" : " " + unit);
}

std::string commit_html(const std::string& sha, const std::string& repo_url, size_t len) {
  if (sha.empty()) return "<span class=\"mono muted\">(no commit)</span>";
  std::string h = "<span class=\"mono\" title=\"" + html_escape(sha) + "\">" +
                  html_escape(sha.substr(0, len)) + "</span>";
  if (!repo_url.empty()) {
    std::string base = repo_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    h += " <a class=\"repo-link\" href=\"" + html_escape(base + "/commit/" + sha) +
         "\" rel=\"noopener noreferrer\" title=\"the commit in the repository\">↗</a>";
  }
  return h;
}

std::string compare_href(const std::string& base, const std::string& head,
                         const store::SeriesInfo& s) {
  std::string href = "/compare?base=" + url_encode(base) + "&head=" + url_encode(head);
  auto it = s.env.find("device");
  if (it != s.env.end() && !it->second.empty()) href += "&device=" + url_encode(it->second);
  return href + "&series=" + std::to_string(s.id);  // the row the page highlights
}

std::string pct_setting(double v, bool percent) {
  char buf[32];
  std::snprintf(buf, sizeof buf, percent ? "%g%%" : "%g", percent ? 100 * v : v);
  return buf;
}

namespace {

// Which of a sparkline's values set its scale: all but a single outlier, one point far outside the
// others' spread (beyond 3 interquartile ranges of the quartiles, the range at least 5% of the
// level) whose neighbours are not out on the same side. Two such points in a row are a step, and a
// step is what the line must show.
std::vector<bool> sets_scale(const std::vector<double>& y) {
  const size_t n = y.size();
  std::vector<bool> keep(n, true);
  if (n < 5) return keep;
  std::vector<double> s = y;
  std::sort(s.begin(), s.end());
  const double q1 = s[n / 4], q3 = s[(3 * n) / 4], mid = s[n / 2];
  const double iqr = std::max(q3 - q1, 0.05 * std::fabs(mid));
  const double lo = q1 - 3 * iqr, hi = q3 + 3 * iqr;
  auto side = [&](size_t i) { return y[i] > hi ? 1 : y[i] < lo ? -1 : 0; };
  for (size_t i = 0; i < n; ++i) {
    const int out = side(i);
    if (out == 0) continue;
    const bool run = (i > 0 && side(i - 1) == out) || (i + 1 < n && side(i + 1) == out);
    keep[i] = run;
  }
  return keep;
}

}  // namespace

std::string sparkline_svg(const std::vector<double>& y, const std::vector<SparkMark>& marks,
                          const std::string& label) {
  if (y.empty()) return "<span class=\"muted\">no data</span>";
  const std::vector<bool> keep = sets_scale(y);
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < y.size(); ++i)
    if (keep[i]) {
      lo = std::min(lo, y[i]);
      hi = std::max(hi, y[i]);
    }
  // At least 5% of the level tall: noise of a fraction of a percent should look flat, not like
  // the full-height zigzag an auto-scaled axis would make of it.
  const double floor_span = 0.05 * std::max(std::fabs(hi), std::fabs(lo));
  if (hi - lo < floor_span) {
    const double mid = (hi + lo) / 2;
    lo = mid - floor_span / 2;
    hi = mid + floor_span / 2;
  }
  const double w = 100, hgt = 24, pad = 3;
  const double span = hi > lo ? hi - lo : 1;
  const size_t count = y.size();
  auto px = [&](size_t i) { return count == 1 ? w / 2 : (w - 2 * pad) * i / (count - 1) + pad; };
  // A single outlier is drawn at the edge it lies beyond (within the padding), marked.
  auto py = [&](double v) {
    const double t = hi > lo ? std::clamp((v - lo) / span, -0.1, 1.1) : 0.5;
    return pad + (hgt - 2 * pad) * (1 - t);
  };
  std::string pts, dots;
  char buf[128];
  for (size_t i = 0; i < count; ++i) {
    std::snprintf(buf, sizeof buf, "%.2f,%.2f ", px(i), py(y[i]));
    pts += buf;
    if (!keep[i]) {
      std::snprintf(buf, sizeof buf,
                    "<circle class=\"clipped\" cx=\"%.2f\" cy=\"%.2f\" r=\"1.8\"/>", px(i),
                    py(y[i]));
      dots += buf;
    }
  }
  for (const SparkMark& m : marks) {
    if (m.index >= count) continue;
    std::snprintf(buf, sizeof buf, "<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"2.6\"/>",
                  m.css_class.c_str(), px(m.index), py(y[m.index]));
    dots += buf;
  }
  return "<svg class=\"spark\" viewBox=\"0 0 100 24\" preserveAspectRatio=\"none\" role=\"img\" "
         "aria-label=\"" +
         html_escape(label) + "\"><polyline points=\"" + pts + "\"/>" + dots + "</svg>";
}

std::string sparkline_svg(const SeriesView& v, size_t max_points) {
  const size_t n = v.points.size(), from = n > max_points ? n - max_points : 0;
  std::vector<double> y;
  for (size_t i = from; i < n; ++i) y.push_back(v.points[i].median);
  if (y.empty()) return sparkline_svg(y, {}, "");
  return sparkline_svg(y, {{y.size() - 1, to_string(v.status)}},
                       "last " + std::to_string(y.size()) + " commits");
}

}  // namespace pg::web
