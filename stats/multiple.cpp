#include "stats/multiple.h"

#include <algorithm>
#include <numeric>

#include "common/errors.h"

namespace pg::stats {
namespace {

std::vector<size_t> ascending_order(const std::vector<double>& p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  return order;
}

}  // namespace

Correction correction_from_string(const std::string& s) {
  if (s == "holm") return Correction::holm;
  if (s == "bh") return Correction::bh;
  throw UsageError("correction must be 'holm' or 'bh', got '" + s + "'");
}

std::string to_string(Correction c) { return c == Correction::holm ? "holm" : "bh"; }

std::vector<double> holm_adjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<double> out(m);
  double running = 0.0;
  const std::vector<size_t> order = ascending_order(p);
  for (size_t rank = 0; rank < m; ++rank) {
    const double scaled = std::min(1.0, static_cast<double>(m - rank) * p[order[rank]]);
    running = std::max(running, scaled);
    out[order[rank]] = running;
  }
  return out;
}

std::vector<double> bh_adjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<double> out(m);
  double running = 1.0;
  const std::vector<size_t> order = ascending_order(p);
  for (size_t rank = m; rank-- > 0;) {
    const double scaled = static_cast<double>(m) * p[order[rank]] / static_cast<double>(rank + 1);
    running = std::min(running, std::min(1.0, scaled));
    out[order[rank]] = running;
  }
  return out;
}

std::vector<double> adjust(const std::vector<double>& p, Correction c) {
  return c == Correction::holm ? holm_adjust(p) : bh_adjust(p);
}

}  // namespace pg::stats
