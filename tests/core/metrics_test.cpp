// The metric table: every metric once, with a unit and a direction, and the per-repetition values
// the runner, the store, the gate and the dashboard all derive through repetition_value.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "common/errors.h"
#include "core/metrics.h"
#include "tests/core/core_test_util.h"

namespace pg {
namespace {

TEST(Metrics, EveryMetricOnceWithUnitAndLabel) {
  std::set<std::string> seen;
  ASSERT_EQ(metric_names().size(), metric_defs().size());
  for (size_t i = 0; i < metric_defs().size(); ++i) {
    const MetricDef& d = metric_defs()[i];
    EXPECT_TRUE(seen.insert(d.name).second) << d.name;
    EXPECT_EQ(metric_names()[i], d.name);
    EXPECT_EQ(find_metric(d.name), &d);
    EXPECT_STRNE(d.unit, "") << d.name;
    EXPECT_STRNE(d.label, "") << d.name;
  }
  EXPECT_EQ(find_metric("no_such_metric"), nullptr);
  // The CSV export's column order starts with these; a reorder changes every exported file.
  EXPECT_EQ(metric_names().front(), "prefill_ms");
  EXPECT_EQ(metric_names()[1], "tpot_ms");
  EXPECT_EQ(metric_names().back(), "peak_rss_growth_bytes");
}

TEST(Metrics, PerRepetitionValuesFollowTheirDefinitions) {
  CellKey k = test::base_key();  // B = 4, P = 256, G = 32: 31 decode steps
  const RepetitionTotals rep{20.0, 62.0, 31};
  for (const MetricDef& d : metric_defs()) {
    const auto v = repetition_value(d.per_repetition, k, rep);
    switch (d.per_repetition) {
      case PerRepetition::per_cell:
        EXPECT_FALSE(v) << d.name;
        break;
      case PerRepetition::prefill_ms:
        EXPECT_DOUBLE_EQ(*v, 20.0);
        break;
      case PerRepetition::tpot_ms:
        EXPECT_DOUBLE_EQ(*v, 2.0);  // 62 ms / 31 steps
        break;
      case PerRepetition::decode_tok_s:
        EXPECT_DOUBLE_EQ(*v, 4 * 31 / 0.062);
        break;
      case PerRepetition::total_tok_s:
        EXPECT_DOUBLE_EQ(*v, 4 * (256 + 32) / 0.082);
        break;
    }
  }
  EXPECT_EQ(find_metric("tpot_ms")->per_repetition, PerRepetition::tpot_ms);
  EXPECT_EQ(find_metric("tpot_ms")->better, Better::lower);
  EXPECT_EQ(find_metric("decode_tok_s")->better, Better::higher);
}

TEST(Metrics, TpotDividesByGenTokensMinusOneAndNeedsADecodeStep) {
  CellKey k = test::base_key();
  k.gen_tokens = 5;
  EXPECT_DOUBLE_EQ(*repetition_tpot_ms(k, 8.0, 4), 2.0);
  EXPECT_DOUBLE_EQ(*repetition_tpot_ms(k, 8.0, 3), 2.0);  // G decides, not the steps recorded
  k.gen_tokens = 1;                                       // prefill only
  EXPECT_FALSE(repetition_tpot_ms(k, 0.0, 0));
  EXPECT_FALSE(repetition_value(PerRepetition::decode_tok_s, k, {1.0, 0.0, 0}));
  EXPECT_TRUE(repetition_value(PerRepetition::total_tok_s, k, {1.0, 0.0, 0}));
}

TEST(SettingErrors, NameTheSettingAndLetTheCliSpellItAsAFlag) {
  const SettingError e(SettingError::setting("cuda-graphs") + " on needs " +
                       SettingError::setting("device") + " cuda");
  EXPECT_STREQ(e.what(), "cuda-graphs on needs device cuda");
  EXPECT_EQ(e.spelled("--"), "--cuda-graphs on needs --device cuda");
  const SettingError c = e.with_context("cell {x}: ");
  EXPECT_EQ(c.spelled("--"), "cell {x}: --cuda-graphs on needs --device cuda");
  EXPECT_STREQ(c.what(), "cell {x}: cuda-graphs on needs device cuda");
}

}  // namespace
}  // namespace pg
