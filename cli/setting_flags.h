// The command line's spelling of a setting (common/errors.h): min_effect is --min-effect,
// kv-cache is --kv-cache. main.cpp spells every SettingError with it.
#pragma once
#include <string>

namespace pg::cli {

// "--min-effect" for "min_effect": the gate's settings (app/gate_settings.h) by name, and any
// other setting as its name with dashes ("kv-cache" -> "--kv-cache", "db" -> "--db").
std::string flag_for_setting(const std::string& setting);

}  // namespace pg::cli
