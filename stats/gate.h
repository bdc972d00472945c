// The merge gate's decision: compare per-repetition tpot_ms of base and head runs, cell by cell.
// Pure computation over stored data: no I/O, no SQLite, no LibTorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/types.h"

namespace pg {

struct GateOptions {
  double alpha = 0.01;              // family-wise (holm) or FDR (bh) level after correction
  double min_effect = 0.05;         // relative change a verdict needs, besides significance
  std::string correction = "holm";  // "holm" | "bh"
  uint64_t seed = 0;                // bootstrap seed: same data, same interval
  int bootstrap_iters = 2000;
  bool allow_missing_baseline = false;
};

enum class CellVerdict { regression, improvement, unchanged, no_baseline, incomparable };
enum class GateVerdict { pass, regression, inconclusive };
std::string to_string(CellVerdict);  // "regression", ..., "no-baseline", "incomparable"
std::string to_string(GateVerdict);  // "pass" | "regression" | "inconclusive"

struct CellComparison {
  CellKey key;
  std::string metric = "tpot_ms";
  CellVerdict verdict = CellVerdict::unchanged;
  std::optional<double> base_median, head_median, ratio, ci_low, ci_high, p_value, p_adjusted;
  int base_n = 0, head_n = 0;        // pooled repetitions
  int base_runs = 0, head_runs = 0;  // runs pooled
  std::string note;                  // why no-baseline / incomparable, env differences
};

struct GateResult {
  std::string base, head;  // full SHAs
  GateVerdict verdict = GateVerdict::pass;
  GateOptions options;
  std::vector<CellComparison> cells;
  std::vector<std::string> warnings;  // e.g. too few repetitions to ever reach significance
  Environment base_env, head_env;
  int base_runs = 0, head_runs = 0;
};

// base_runs / head_runs: every stored run of each commit (pooled per cell key).
GateResult evaluate_gate(const std::string& base_sha, const std::vector<Run>& base_runs,
                         const std::string& head_sha, const std::vector<Run>& head_runs,
                         const GateOptions& opt);

// Exit code of `perfgate compare` for a result (docs/CLI.md: 0 pass, 1 regression, 3 inconclusive).
int gate_exit_code(const GateResult& r);

}  // namespace pg
