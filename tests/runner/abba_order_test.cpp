// The order of an A/B run's pairs: balanced in every complete block, fixed by its seed, and not
// the same block after block.
#include "runner/ab/abba_order.h"

#include <gtest/gtest.h>

namespace pg::ab {
namespace {

TEST(AbbaOrder, EachCompleteBlockRunsEachSideFirstOnce) {
  for (uint64_t seed : {0ull, 1ull, 42ull, 18446744073709551615ull}) {
    const auto first = abba_order(40, seed);
    ASSERT_EQ(first.size(), 40u);
    for (size_t i = 0; i + 1 < first.size(); i += 2) EXPECT_NE(first[i], first[i + 1]) << i;
  }
}

TEST(AbbaOrder, TheSameSeedGivesTheSameOrderAndAnOddCountEndsWithHalfABlock) {
  EXPECT_EQ(abba_order(9, 7), abba_order(9, 7));
  const auto nine = abba_order(9, 7), ten = abba_order(10, 7);
  EXPECT_EQ(std::vector<Side>(ten.begin(), ten.begin() + 9), nine);
  EXPECT_TRUE(abba_order(0, 7).empty());
}

TEST(AbbaOrder, TheCoinVariesTheBlocksAndTheSeeds) {
  // 64 blocks all alike would be a coin that never flips (odds 2^-63 for a fair one).
  const auto first = abba_order(128, 3);
  size_t head_first_blocks = 0;
  for (size_t i = 0; i < first.size(); i += 2) head_first_blocks += first[i] == Side::head;
  EXPECT_GT(head_first_blocks, 0u);
  EXPECT_LT(head_first_blocks, 64u);
  EXPECT_NE(abba_order(128, 3), abba_order(128, 4));
}

}  // namespace
}  // namespace pg::ab
