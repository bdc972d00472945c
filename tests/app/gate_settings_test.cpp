// The gate's settings (app/gate_settings.h): defaults, and every bad value rejected with a message
// that names the setting (never a command-line flag: the CLI maps names to flags itself).
#include "app/gate_settings.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

namespace pg::app {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(GateSettings, DefaultsAreTheGatesAndValid) {
  const GateSettings s;
  EXPECT_NO_THROW(validate(s));
  EXPECT_DOUBLE_EQ(s.gate.alpha, 0.01);
  EXPECT_DOUBLE_EQ(s.gate.min_effect, 0.05);
  EXPECT_FALSE(s.min_effect_auto);
  EXPECT_DOUBLE_EQ(s.min_effect_floor, 0.005);
  EXPECT_DOUBLE_EQ(s.gate.power, 0.95);
  EXPECT_EQ(s.gate.correction, "holm");
  EXPECT_EQ(s.gate.look, 1);
  EXPECT_EQ(s.gate.max_looks, 1);
  EXPECT_FALSE(s.gate.require_power);
  EXPECT_FALSE(s.gate.allow_missing_baseline);
  EXPECT_EQ(min_effect_text(s), "0.05");
}

TEST(GateSettings, EveryBadValueNamesItsSetting) {
  struct Case {
    const char* setting;
    std::function<void(GateSettings&)> spoil;
  };
  const std::vector<Case> cases = {
      {"alpha", [](GateSettings& s) { s.gate.alpha = 0; }},
      {"alpha", [](GateSettings& s) { s.gate.alpha = 1; }},
      {"alpha", [](GateSettings& s) { s.gate.alpha = kNaN; }},
      {"min_effect", [](GateSettings& s) { s.gate.min_effect = -0.01; }},
      {"min_effect", [](GateSettings& s) { s.gate.min_effect = kInf; }},
      {"min_effect", [](GateSettings& s) { s.gate.min_effect = kNaN; }},
      {"min_effect_floor", [](GateSettings& s) { s.min_effect_floor = -0.1; }},
      {"min_effect_floor", [](GateSettings& s) { s.min_effect_floor = 1; }},
      {"power", [](GateSettings& s) { s.gate.power = 0; }},
      {"power", [](GateSettings& s) { s.gate.power = 1; }},
      {"max_looks", [](GateSettings& s) { s.gate.max_looks = 0; }},
      {"look", [](GateSettings& s) { s.gate.look = 0; }},
      {"look", [](GateSettings& s) { s.gate.look = 3, s.gate.max_looks = 2; }},
      {"correction", [](GateSettings& s) { s.gate.correction = "bonferroni"; }},
  };
  for (const Case& c : cases) {
    GateSettings s;
    c.spoil(s);
    try {
      validate(s);
      ADD_FAILURE() << "no error for a bad " << c.setting;
    } catch (const SettingError& e) {
      EXPECT_EQ(e.settings().front(), c.setting) << e.what();
      EXPECT_TRUE(std::string(e.what()).starts_with(std::string(c.setting) + " ")) << e.what();
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
    }
  }
}

TEST(GateSettings, MinEffectIsANumberOrAuto) {
  GateSettings s;
  set_min_effect(s, "auto");
  EXPECT_TRUE(s.min_effect_auto);
  EXPECT_EQ(min_effect_text(s), "auto");
  set_min_effect(s, "0.02");
  EXPECT_FALSE(s.min_effect_auto);
  EXPECT_DOUBLE_EQ(s.gate.min_effect, 0.02);
  for (const char* bad : {"", "automatic", "0.05x", "x", "5%"}) {
    try {
      set_min_effect(s, bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const SettingError& e) {
      EXPECT_EQ(e.settings().front(), "min_effect") << e.what();
    }
  }
  set_min_effect(s, "inf");  // parses, but the rule rejects it
  EXPECT_THROW(validate(s), SettingError);
}

TEST(GateSettings, MinEffectTakesPerMetricValuesAndMetricsAList) {
  GateSettings s;
  set_min_effect(s, "0.02,prefill_ms=0.1,peak_alloc_bytes=0");
  EXPECT_DOUBLE_EQ(s.gate.min_effect, 0.02);
  EXPECT_DOUBLE_EQ(s.gate.min_effect_for("prefill_ms"), 0.1);
  EXPECT_DOUBLE_EQ(s.gate.min_effect_for("peak_alloc_bytes"), 0.0);
  EXPECT_DOUBLE_EQ(s.gate.min_effect_for("tpot_ms"), 0.02);
  EXPECT_EQ(min_effect_text(s), "0.02,peak_alloc_bytes=0,prefill_ms=0.1");
  set_min_effect(s, "auto,prefill_ms=0.2");
  EXPECT_TRUE(s.min_effect_auto);
  EXPECT_EQ(min_effect_text(s), "auto,prefill_ms=0.2");
  set_metrics(s, "tpot_ms,prefill_ms");
  EXPECT_EQ(metrics_text(s), "tpot_ms,prefill_ms");
  validate(s);
  for (const char* bad : {"=0.1", "prefill_ms=", "prefill_ms=x", "0.1,,"})
    EXPECT_THROW(set_min_effect(s, bad), SettingError) << bad;
  EXPECT_THROW(set_metrics(s, "tpot_ms,"), SettingError);
  set_metrics(s, "tpot_ms,itl_p50_ms");
  try {
    validate(s);
    ADD_FAILURE() << "accepted an ungated metric";
  } catch (const SettingError& e) {
    EXPECT_EQ(e.settings().front(), "metrics");
  }
}

TEST(GateSettings, EveryNameIsListedOnce) {
  const auto& names = gate_setting_names();
  for (const char* n :
       {"alpha", "min_effect", "min_effect_floor", "power", "require_power", "look", "max_looks",
        "correction", "seed", "allow_missing_baseline", "metrics", "memory_tolerance_bytes"})
    EXPECT_EQ(std::count(names.begin(), names.end(), n), 1) << n;
}

}  // namespace
}  // namespace pg::app
