#include <algorithm>
#include <cmath>
#include <cstdio>

#include "web/html.h"
#include "web/pages.h"

namespace pg::web {

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

std::string sparkline_svg(const SeriesView& v, size_t max_points) {
  const size_t n = v.points.size();
  if (n == 0) return "<span class=\"muted\">no data</span>";
  const size_t from = n > max_points ? n - max_points : 0;
  double lo = v.points[from].median, hi = lo;
  for (size_t i = from; i < n; ++i) {
    lo = std::min(lo, v.points[i].median);
    hi = std::max(hi, v.points[i].median);
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
  const size_t count = n - from;
  auto px = [&](size_t i) {
    return count == 1 ? w / 2 : (w - 2 * pad) * (i - from) / (count - 1) + pad;
  };
  auto py = [&](double y) {
    return hi > lo ? pad + (hgt - 2 * pad) * (1 - (y - lo) / span) : hgt / 2;
  };
  std::string pts;
  char buf[64];
  for (size_t i = from; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%.2f,%.2f ", px(i), py(v.points[i].median));
    pts += buf;
  }
  std::string s =
      "<svg class=\"spark\" viewBox=\"0 0 100 24\" preserveAspectRatio=\"none\" role=\"img\" "
      "aria-label=\"last " +
      std::to_string(count) + " commits\"><polyline points=\"" + pts + "\"/>";
  std::snprintf(buf, sizeof buf, "<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"2.6\"/>",
                v.status.c_str(), px(n - 1), py(v.points.back().median));
  s += buf;
  s += "</svg>";
  return s;
}

}  // namespace pg::web
