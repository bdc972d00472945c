// The merge gate's settings as a user gives them (to `perfgate compare`, `perfgate serve` or the
// compare API), in one place: their names, defaults and validation. A bad one throws SettingError
// (common/errors.h) naming the setting ("min_effect must be ..."), which each front end spells its
// own way (cli/setting_flags.h: --min-effect; the API's query parameters are the names as they
// are). docs/CLI.md lists them.
#pragma once
#include <string>
#include <vector>

#include "common/errors.h"
#include "gate/gate.h"

namespace pg::app {

struct GateSettings {
  // alpha, min_effect, correction, power, require_power, look, max_looks, seed,
  // allow_missing_baseline: the statistics' own options, whose defaults are the rule's
  // (gate/gate.h). The fields below are what a user may say beyond them.
  gate::GateOptions gate;
  bool min_effect_auto = false;     // min_effect from the store's history of the head's cells
  double min_effect_floor = 0.005;  // the least min_effect 'auto' may choose
  // A cell whose exact profile counters changed (app/explain.h) fails the gate by itself.
  bool fail_on_counter_change = false;
  // A tuned AOTInductor export whose head did not replay the base's choices is judged anyway,
  // with a warning, instead of refused (app/export_check.h).
  bool allow_unreplayed_tuning = false;
};

// Every setting's name, for front ends that map them to their own spelling.
const std::vector<std::string>& gate_setting_names();

// Throws SettingError for the first bad setting.
void validate(const GateSettings& s);

// min_effect as text: a comma-separated list of a number >= 0 or "auto" (every metric's, 'auto'
// for tpot_ms only) and METRIC=NUMBER (one metric's: "0.05,prefill_ms=0.1"). Throws SettingError
// naming min_effect.
void set_min_effect(GateSettings& s, const std::string& text);
std::string min_effect_text(const GateSettings& s);  // "auto" or the number, then the overrides

// metrics as text: a comma-separated list of metric names ("tpot_ms,prefill_ms,peak_alloc_bytes").
// Throws SettingError naming metrics; validate() checks the names.
void set_metrics(GateSettings& s, const std::string& text);
std::string metrics_text(const GateSettings& s);

}  // namespace pg::app
