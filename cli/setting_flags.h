// The command line's spelling of the gate's settings (app/gate_settings.h): min_effect is
// --min-effect. Errors from the settings are re-worded here so the CLI's messages name its flags.
#pragma once
#include <string>

#include "app/gate_settings.h"
#include "common/errors.h"

namespace pg::cli {

// "--min-effect" for "min_effect"; every gate setting has a flag.
std::string flag_for_setting(const std::string& setting);

// The same error, naming the flag ("--min-effect must be ..."): exit 2.
UsageError as_flag_error(const app::SettingError& e);

}  // namespace pg::cli
