// The settings of `perfgate run`: every flag is also a key of the TOML sweep file. Values given
// on the command line override the file; the file overrides the defaults. Every value is
// validated here, before anything runs, and a bad one throws UsageError whose message starts with
// where it came from: `--batch-sizes: ...` or `sweep.toml:3: batch-sizes: ...`.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runner/sweep_config.h"

namespace CLI {
class App;
}

namespace pg {

// What the user typed, before validation. `values` maps a flag name without dashes
// ("batch-sizes") to its text as given; a name that is absent was not given.
struct RunFlags {
  std::string config_path;  // --config
  std::map<std::string, std::string> values;
  bool quiet = false;
};

// How one setting looks on the command line, in TOML, and in `--help`.
struct SettingInfo {
  std::string name;        // the flag without dashes, and the TOML key
  std::string value_hint;  // e.g. "LIST", "N", "FILE"
  std::string help;
  std::string default_text;  // shown by --help; empty = none
};
const std::vector<SettingInfo>& run_settings();

// Registers --config and every flag of run_settings() on `cmd`, writing into `flags`
// (which must outlive parsing).
void add_run_flags(CLI::App& cmd, RunFlags& flags);

// File (if any), then flags, then defaults; validated. Throws UsageError.
SweepConfig resolve_sweep_config(const RunFlags& flags);

// The same from TOML text, for tests and for callers that have the text in hand; `source_name`
// is the name messages use for the file.
SweepConfig sweep_config_from_toml(const std::string& toml_text, const std::string& source_name,
                                   const RunFlags& overrides = {});

}  // namespace pg
