// Multiple-comparison adjustment of p-values across the cells of one sweep.
//
// Adjusted p-values (Wright 1992, "Adjusted P-values for simultaneous inference"): a hypothesis is
// rejected at level alpha exactly when its adjusted p <= alpha. Both are monotone in the raw
// p-values and capped at 1; the output is in input order.
#pragma once
#include <string>
#include <vector>

namespace pg::stats {

enum class Correction { holm, bh };

// "holm" | "bh"; anything else throws pg::UsageError naming the setting (correction).
Correction correction_from_string(const std::string& s);
std::string to_string(Correction c);

// Holm 1979 step-down: controls the family-wise error rate under any dependence.
//   p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))
std::vector<double> holm_adjust(const std::vector<double>& p);

// Benjamini & Hochberg 1995 step-up: controls the false discovery rate (independent or positively
// dependent tests). p~_(i) = min_{j >= i} min(1, m p_(j) / j)
std::vector<double> bh_adjust(const std::vector<double>& p);

std::vector<double> adjust(const std::vector<double>& p, Correction c);

}  // namespace pg::stats
