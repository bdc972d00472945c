// One-sided Mann-Whitney U (Wilcoxon rank-sum) test.
//
// U is the statistic of sample x: the number of pairs (x_i, y_j) with x_i > y_j, ties counting
// one half (scipy.stats.mannwhitneyu's `statistic`). alternative::greater tests "x is
// stochastically greater than y" (the gate: x = head, y = base, "head slower");
// alternative::less the opposite.
#pragma once
#include <cstdint>
#include <vector>

namespace pg::stats {

enum class Alternative { greater, less };
enum class MwuMethod { exact, normal };
enum class MwuMethodChoice { automatic, exact, normal };

// The exact null distribution is used when there are no ties and n1 * n2 <= this bound (e.g. 50
// against 50); it costs about (n1 * n2)^2 / 4 additions, ~2 ms at the bound.
inline constexpr int64_t kExactMaxProduct = 2500;

struct MwuResult {
  double u = 0.0;  // statistic of x
  double p = 1.0;  // one-sided p-value of the chosen alternative
  MwuMethod method = MwuMethod::exact;
  bool ties = false;
};

// automatic: exact without ties and n1 * n2 <= kExactMaxProduct, else the normal approximation
// with tie and continuity correction. Forcing `exact` on tied data throws std::invalid_argument
// (the exact distribution assumes no ties). Empty samples throw std::invalid_argument.
MwuResult mann_whitney(const std::vector<double>& x, const std::vector<double>& y, Alternative alt,
                       MwuMethodChoice choice = MwuMethodChoice::automatic);

// P(U >= u) under H0 for sample sizes (n1, n2) without ties, from the exact distribution.
double mwu_exact_sf(int n1, int n2, int64_t u);

// The smallest one-sided p-value any data can give for these sample sizes (all of x above all of
// y, no ties), with the method `automatic` would use: 1 / C(n1 + n2, n1) when exact.
double mwu_min_p(int n1, int n2);

// Smallest integer u with P(U >= u) <= tail under H0 (no ties): the critical value that the
// Hodges-Lehmann interval is built from. Exact or normal (with continuity correction) by the
// same rule as `automatic`. Returns n1 * n2 + 1 when no u qualifies.
int64_t mwu_upper_critical_value(int n1, int n2, double tail);

}  // namespace pg::stats
