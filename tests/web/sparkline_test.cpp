// The overview's sparklines (web/pages/page_layout.cpp): a single outlier does not flatten the
// line, and a step, however recent, is drawn at its full height.
#include <gtest/gtest.h>

#include <regex>

#include "web/pages/pages.h"

namespace pg::web {
namespace {

SeriesView series_of(const std::vector<double>& medians) {
  SeriesView v;
  v.status = SeriesStatus::steady;
  for (double m : medians) {
    SeriesPoint p;
    p.median = m;
    v.points.push_back(p);
  }
  return v;
}

// The y coordinate of each vertex of the sparkline's polyline.
std::vector<double> ys(const std::string& svg) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex("points=\"([^\"]*)\""))) << svg;
  std::vector<double> out;
  const std::string pts = m[1];
  const std::regex pair("[0-9.]+,([0-9.]+)");
  for (auto it = std::sregex_iterator(pts.begin(), pts.end(), pair); it != std::sregex_iterator();
       ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

std::vector<double> noisy(size_t n) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(1.0 + (i % 3 == 0 ? 0.01 : i % 3 == 1 ? -0.01 : 0.0));
  return v;
}

TEST(Sparkline, ASingleOutlierDoesNotFlattenTheRest) {
  std::vector<double> m = noisy(30);
  m[12] = 10.0;  // one run on a busy machine
  const std::string svg = sparkline_svg(series_of(m));
  const std::vector<double> y = ys(svg);
  ASSERT_EQ(y.size(), 30u);
  double lo = 1e9, hi = -1e9;
  for (size_t i = 0; i < y.size(); ++i)
    if (i != 12) lo = std::min(lo, y[i]), hi = std::max(hi, y[i]);
  // +-1% noise at the 5% floor span: about 40% of the 18 px of the plot; scaled to the outlier it
  // would be a fraction of a pixel.
  EXPECT_GT(hi - lo, 4.0) << svg;
  EXPECT_LT(y[12], lo) << "the outlier is still drawn above the others";
  EXPECT_NE(svg.find("class=\"clipped\""), std::string::npos) << "and marked as clipped";
}

TEST(Sparkline, ARecentStepIsDrawnAtFullHeight) {
  std::vector<double> m = noisy(28);
  m.push_back(3.0);  // two slow commits in a row: a step, not an outlier
  m.push_back(3.0);
  const std::string svg = sparkline_svg(series_of(m));
  const std::vector<double> y = ys(svg);
  ASSERT_EQ(y.size(), 30u);
  EXPECT_NEAR(y.back(), 3.0, 0.01) << svg;  // the top of the plot (pad 3 of 24)
  EXPECT_GT(y.front(), 20.0) << svg;        // the old level at the bottom
  EXPECT_EQ(svg.find("class=\"clipped\""), std::string::npos) << svg;
}

}  // namespace
}  // namespace pg::web
