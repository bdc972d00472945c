// Internals shared by config.cpp (the settings table and validation), config_resolve.cpp (the
// values given on the command line, over the sweep file) and config_toml.cpp (the sweep file).
// Command-line values and TOML keys are first turned into the same raw form, so that one validator
// serves both and every message can say where its value came from: the setting, marked for the
// front end to spell (common/errors.h), or the file, line and key.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runner/config.h"
#include "runner/sweep_config.h"

namespace pg::runner::detail {

enum class ValueKind {
  int_list,       // 1,4,8   | [1, 4, 8] or 4
  int_scalar,     // 32      | 32
  string_list,    // a,b     | ["a", "b"] or "a"
  string_scalar,  // x       | "x"
  onoff_list,     // on,off  | ["on", "off"], [true, false], "on" or true
  flag,           // given alone | true / false
  number,         // 3350    | 3350 or 3350.5
};

// One row of the settings table (config.cpp): what a flag and a sweep-file key share.
struct SettingDef {
  SettingInfo info;
  ValueKind kind;
};
const std::vector<SettingDef>& setting_defs();
const SettingDef* find_def(const std::string& name);

ValueKind kind_of(const std::string& setting);  // the setting must exist
bool is_setting(const std::string& name);

struct RawItem {
  std::string text;
  std::string where;  // SettingError::setting("batch-sizes") or "sweep.toml:4: batch-sizes"
};
struct RawSetting {
  std::string where;  // of the whole value
  std::vector<RawItem> items;
  std::string location;  // "sweep.toml:4" for a key of the sweep file; empty on the command line
};
using RawSettings = std::map<std::string, RawSetting>;

// A value given on the command line as a raw setting (list settings split at commas).
RawSetting raw_from_command_line(const std::string& name, const std::string& text);

// Throws UsageError "<source_name>:<line>: ..." for syntax errors, unknown keys and wrong types.
RawSettings read_toml_settings(const std::string& text, const std::string& source_name);

// Checks every value and fills the defaults that depend on the machine. Throws SettingError.
SweepConfig validate_settings(const RawSettings& settings);

}  // namespace pg::runner::detail
