// `perfgate run`'s command line: a flag for every setting of runner/config.h, and --config for the
// sweep file; and how its messages name a setting, as the flag or as the sweep file's key.
#pragma once
#include <string>

#include "common/errors.h"
#include "runner/config.h"

namespace CLI {
class App;
}

namespace pg::cli {

// Registers --config and a flag per run_settings() on `cmd`, writing into `flags` (which must
// outlive parsing).
void add_run_flags(CLI::App& cmd, runner::RunFlags& flags);

// The message of `e` for a run of `cfg`: a setting the sweep file gave named as its key, and the
// message led by that key's file and line when it is the setting the error is about; every other
// setting as its flag.
std::string run_error_message(const SettingError& e, const runner::SweepConfig& cfg);

}  // namespace pg::cli
