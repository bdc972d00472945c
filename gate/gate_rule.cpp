// Which rule decided the gate, in fields and in words (GateResult::design, rule): the paired t
// test of A/B runs, the t test on run means, or the pooled Mann-Whitney (docs/STATISTICS.md).
#include <algorithm>
#include <climits>
#include <set>

#include "gate/gate_steps.h"

namespace pg::gate {

namespace {

// "; run variance from trusted history in 12 of 12 cells (its df 8-40)", or nothing.
std::string history_clause(const GateResult& r) {
  int with = 0, of = 0;
  double lo = 0.0, hi = 0.0;
  for (const CellComparison& c : r.cells) {
    if (c.variance_source.empty()) continue;
    ++of;
    if (!c.history_df) continue;
    lo = with == 0 ? *c.history_df : std::min(lo, *c.history_df);
    hi = std::max(hi, *c.history_df);
    ++with;
  }
  if (with == 0) return "";
  const std::string df = lo == hi ? stats::fmt_g(lo) : stats::fmt_g(lo) + "-" + stats::fmt_g(hi);
  return "; run variance with trusted history in " + std::to_string(with) + " of " +
         std::to_string(of) + " cells, its df " + df;
}

}  // namespace

void describe_rule(GateResult& r) {
  std::set<std::string> tests;
  int min_blocks = INT_MAX, max_pairs = 0;
  for (const CellComparison& c : r.cells) {
    if (c.test.empty() || c.test == "exact") continue;
    tests.insert(c.test);
    if (c.test != "paired-t") continue;
    min_blocks = std::min(min_blocks, c.blocks);
    r.blocks = std::max(r.blocks, c.blocks);
    max_pairs = std::max(max_pairs, c.pairs);
  }
  r.pairs = max_pairs;
  if (tests.empty()) return;
  if (r.design == "paired") {
    const std::string blocks = min_blocks == r.blocks
                                   ? std::to_string(r.blocks)
                                   : std::to_string(min_blocks) + "-" + std::to_string(r.blocks);
    if (r.ab_runs == 1)
      r.rule = "paired t on the " + blocks + " ABBA blocks (up to " + std::to_string(r.pairs) +
               " pairs) a cell of 1 A/B run, df = blocks - 1; drift shared by both sides cancels, "
               "a difference between the two worker processes counts as the code's";
    else
      r.rule = "paired t on the means of " + std::to_string(r.ab_runs) + " A/B runs (" + blocks +
               " ABBA blocks, up to " + std::to_string(r.pairs) +
               " pairs, a cell), df = " + std::to_string(r.ab_runs - 1) +
               ": the A/B run is the unit";
    return;
  }
  std::vector<std::string> parts;
  if (tests.count("runs-t"))
    parts.push_back("t on run means (" + std::to_string(r.base_runs) + " base and " +
                    std::to_string(r.head_runs) + " head runs" + history_clause(r) + ")");
  if (tests.count("mann-whitney"))
    parts.push_back("pooled Mann-Whitney on repetitions (one run a side: drift not estimated)");
  r.rule = join(parts);
}

}  // namespace pg::gate
