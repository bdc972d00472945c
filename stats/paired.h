// The paired test of an A/B run (`perfgate ab`, docs/STATISTICS.md "Paired A/B runs"): base and
// head of a cell alternate in ABBA blocks inside one A/B run, so whatever the run shares (clocks,
// temperature, neighbours, a slow linear drift) cancels in each block's log ratio. Pure arithmetic
// on the log scale; gate/gate_paired.h builds the inputs from stored runs.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace pg::stats {

// One A/B run's pairs of one cell, in pair order: pair i is base[i] against head[i], and
// head_position[i] is 0 when the head ran first in that pair, 1 when second. A value that is not
// usable (a repetition without decode time) is NaN; its block is left out.
struct AbPairs {
  std::vector<double> base, head;
  std::vector<int> head_position;
};

// The ABBA blocks of one A/B run: pairs 2j and 2j+1 form block j, and its unit is the mean of the
// two pairs' log(head/base). In a balanced block each side ran first once, so a first-or-second
// position effect and a linear drift across the block cancel. The incomplete last block of an odd
// number of pairs is dropped: a lone pair keeps its position effect and its drift, and weighing it
// as a block would bias the mean by half the position effect divided by the blocks.
struct AbBlocks {
  std::vector<double> log_ratios;  // one per complete, usable block
  int pairs_used = 0;              // 2 per block
  int pairs_unpaired = 0;          // the incomplete last block (0 or 1)
  int pairs_unusable = 0;          // pairs of blocks left out for a missing or non-positive value
  int unbalanced = 0;              // blocks where one side ran first twice (not ABBA)
};
AbBlocks abba_blocks(const AbPairs& pairs);

// The paired estimate of one cell over k A/B runs of the same two commits.
//  - k = 1: the unit is the block; one-sample t on the block log ratios, df = blocks - 1. It
//    holds within the A/B run: a difference between the two worker processes themselves (one per
//    side) is taken as the code's.
//  - k >= 2: the unit is the A/B run (its mean block log ratio); one-sample t on the k run means,
//    df = k - 1, exact whatever the variance between A/B runs. docs/STATISTICS.md says why the
//    within-run variance is not combined into it (not even at k = 2).
struct PairedEstimate {
  int ab_runs = 0, blocks = 0, pairs = 0;  // A/B runs and blocks that gave units; pairs in them
  std::string unit;                        // "block" | "ab-run"
  double log_ratio = 0.0;                  // mean unit: estimated log(head/base)
  double ratio = 1.0;                      // exp(log_ratio)
  double df = 0.0;                         // t degrees of freedom; 0: no test (one block)
  double se = 0.0;                         // standard error of log_ratio
  // The spread of block log ratios within an A/B run (pooled over runs), and between A/B runs
  // beyond it (k >= 2, method of moments, 0 when not estimable): log scale, about relative sd.
  double block_sd = 0.0;
  std::optional<double> ab_run_sd;
  std::optional<double> ci_low, ci_high;     // interval for the ratio at `level`
  std::optional<double> p_slower, p_faster;  // one-sided t p-values
  bool has_test() const { return df >= 1.0; }
  // One-sided upper confidence bound for the ratio at `level` (the futility stop's bound):
  // exp(log_ratio + t_{level, df} se). Empty without a test.
  std::optional<double> upper_bound(double level) const;
};

// Blocks of each A/B run (runs without a block are left out). Empty when no run has a block.
std::optional<PairedEstimate> paired_test(const std::vector<AbBlocks>& runs, double level = 0.95);

}  // namespace pg::stats
