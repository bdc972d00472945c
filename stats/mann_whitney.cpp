#include "stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "stats/normal.h"

namespace pg::stats {
namespace {

// Null pmf of U for sizes (n1, n2), by the recurrence on the largest observation (Mann & Whitney
// 1947, eq. 1): it belongs to x with probability n1/(n1+n2) and then beats all n2 y's, or to y.
//   p(i, j, u) = i/(i+j) p(i-1, j, u-j) + j/(i+j) p(i, j-1, u)
// Probabilities (not counts) keep every term positive and in range: no cancellation, no overflow.
std::vector<double> build_pmf(int n1, int n2) {
  std::vector<std::vector<double>> prev(n2 + 1, std::vector<double>{1.0}), cur(n2 + 1);
  for (int i = 1; i <= n1; ++i) {
    cur[0] = {1.0};
    for (int j = 1; j <= n2; ++j) {
      const int64_t max_u = int64_t{i} * j;
      std::vector<double>& out = cur[j];
      out.assign(max_u + 1, 0.0);
      const double wx = double(i) / (i + j), wy = double(j) / (i + j);
      const std::vector<double>& from_x = prev[j];     // (i-1, j): max u (i-1)*j
      const std::vector<double>& from_y = cur[j - 1];  // (i, j-1): max u i*(j-1)
      for (size_t k = 0; k < from_x.size(); ++k) out[k + j] += wx * from_x[k];
      for (size_t k = 0; k < from_y.size(); ++k) out[k] += wy * from_y[k];
    }
    std::swap(prev, cur);
  }
  return prev[n2];
}

// Upper tail sums sf[u] = P(U >= u), cached: the gate asks for the same sizes many times.
// Shared pointers keep a table alive for a caller while another thread trims the cache.
std::shared_ptr<const std::vector<double>> exact_sf_table(int n1, int n2) {
  if (n1 > n2) std::swap(n1, n2);  // the distribution is symmetric in the sizes
  static std::mutex mu;
  static std::map<std::pair<int, int>, std::shared_ptr<const std::vector<double>>> cache;
  {
    std::lock_guard lock(mu);
    auto it = cache.find({n1, n2});
    if (it != cache.end()) return it->second;
  }
  const std::vector<double> pmf = build_pmf(n1, n2);
  auto sf = std::make_shared<std::vector<double>>(pmf.size() + 1, 0.0);
  for (size_t u = pmf.size(); u-- > 0;) (*sf)[u] = (*sf)[u + 1] + pmf[u];
  std::lock_guard lock(mu);
  if (cache.size() >= 64) cache.clear();  // bounded memory; pooled sizes vary little
  cache.emplace(std::pair{n1, n2}, sf);
  return sf;
}

bool use_exact(int64_t n1, int64_t n2, bool ties) { return !ties && n1 * n2 <= kExactMaxProduct; }

double normal_sigma(double n1, double n2, double tie_term) {
  const double n = n1 + n2;
  return std::sqrt(n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0))));
}

}  // namespace

double mwu_exact_sf(int n1, int n2, int64_t u) {
  if (n1 < 0 || n2 < 0) throw std::invalid_argument("mwu_exact_sf: negative sample size");
  if (u <= 0) return 1.0;
  const auto sf = exact_sf_table(n1, n2);
  if (u >= static_cast<int64_t>(sf->size())) return 0.0;
  return std::min(1.0, (*sf)[u]);
}

MwuResult mann_whitney(const std::vector<double>& x, const std::vector<double>& y, Alternative alt,
                       MwuMethodChoice choice) {
  if (x.empty() || y.empty()) throw std::invalid_argument("mann_whitney: empty sample");
  const int64_t n1 = static_cast<int64_t>(x.size()), n2 = static_cast<int64_t>(y.size());
  // Mid-ranks of the pooled sample; tie groups give the variance correction.
  std::vector<std::pair<double, bool>> pooled;  // value, from x
  pooled.reserve(x.size() + y.size());
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0.0, tie_term = 0.0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_x += mid_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  MwuResult r;
  r.ties = tie_term > 0.0;
  r.u = rank_sum_x - static_cast<double>(n1 * (n1 + 1)) / 2.0;
  // "less" is "greater" for y: P(U2 >= u2) with U2 = n1 n2 - U1, by symmetry the same sizes.
  const double u_tail = alt == Alternative::greater ? r.u : static_cast<double>(n1 * n2) - r.u;

  const bool exact = choice == MwuMethodChoice::exact ||
                     (choice == MwuMethodChoice::automatic && use_exact(n1, n2, r.ties));
  if (exact && r.ties)
    throw std::invalid_argument("mann_whitney: the exact distribution assumes no ties");
  if (exact) {
    r.method = MwuMethod::exact;
    r.p = mwu_exact_sf(static_cast<int>(n1), static_cast<int>(n2), std::llround(u_tail));
    return r;
  }
  r.method = MwuMethod::normal;
  const double s = normal_sigma(double(n1), double(n2), tie_term);
  // Continuity correction as scipy: the sf includes the mass at u, so move u half a step down.
  const double numerator = u_tail - double(n1 * n2) / 2.0 - 0.5;
  if (s == 0.0) {  // every value tied: no evidence either way
    r.p = 1.0;
    return r;
  }
  r.p = std::clamp(normal_sf(numerator / s), 0.0, 1.0);
  return r;
}

double mwu_min_p(int n1, int n2) {
  if (n1 <= 0 || n2 <= 0) return 1.0;
  const int64_t nn = int64_t{n1} * n2;
  if (use_exact(n1, n2, false)) {
    // 1 / C(n1 + n2, n1), in logs: C(100, 50) is 1e29.
    return std::exp(std::lgamma(n1 + 1.0) + std::lgamma(n2 + 1.0) - std::lgamma(n1 + n2 + 1.0));
  }
  return normal_sf((double(nn) / 2.0 - 0.5) / normal_sigma(n1, n2, 0.0));
}

int64_t mwu_upper_critical_value(int n1, int n2, double tail) {
  const int64_t nn = int64_t{n1} * n2;
  if (n1 <= 0 || n2 <= 0) return nn + 1;
  if (use_exact(n1, n2, false)) {
    // sf is non-increasing in u: the first u whose tail is small enough.
    int64_t lo = 0, hi = nn + 1;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      // The tolerance keeps P(U >= 9) = 0.05 for (3, 3) at "<= 0.05" despite the summation.
      if (mwu_exact_sf(n1, n2, mid) <= tail * (1.0 + 1e-12))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  }
  // Smallest integer u with sf_normal((u - nn/2 - 0.5) / s) <= tail.
  const double z = normal_quantile(1.0 - tail);
  const double s = normal_sigma(n1, n2, 0.0);
  int64_t u = static_cast<int64_t>(std::ceil(double(nn) / 2.0 + 0.5 + z * s));
  u = std::max<int64_t>(u, 0);
  while (u > 0 && normal_sf((double(u - 1) - double(nn) / 2.0 - 0.5) / s) <= tail) --u;
  while (u <= nn && normal_sf((double(u) - double(nn) / 2.0 - 0.5) / s) > tail) ++u;
  return std::min(u, nn + 1);
}

}  // namespace pg::stats
