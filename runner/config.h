// The settings of `perfgate run`: every one is a flag and a key of the TOML sweep file (docs/RUN.md
// names them). Values given on the command line override the file; the file overrides the
// defaults. Every value is validated here, before anything runs; a bad one throws SettingError
// (common/errors.h) whose message starts with where it came from: the setting, which the CLI
// spells `--batch-sizes: ...`, or the file, line and key, `sweep.toml:3: batch-sizes: ...`.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runner/sweep_config.h"

namespace pg::runner {

// What the user gave, before validation. `values` maps a setting's name ("batch-sizes") to its
// text as given on the command line; a name that is absent was not given there.
struct RunFlags {
  std::string config_path;  // the sweep file (the `config` setting), or empty
  std::map<std::string, std::string> values;
  bool quiet = false;
};

// How one setting is described: its name (the key of the sweep file, and the CLI's flag without
// dashes), the kind of value and the help, which may name other settings (marked, common/errors.h).
struct SettingInfo {
  std::string name;
  std::string value_hint;  // e.g. "LIST", "N", "FILE"
  std::string help;
  std::string default_text;  // shown by the CLI's help; empty = none
  bool takes_value = true;   // false for a switch (quiet), given alone
};
const std::vector<SettingInfo>& run_settings();

// The file (if any), then the command line, then defaults; validated. Throws SettingError.
SweepConfig resolve_sweep_config(const RunFlags& flags);

// The same from TOML text, for tests and for callers that have the text in hand; `source_name`
// is the name messages use for the file.
SweepConfig sweep_config_from_toml(const std::string& toml_text, const std::string& source_name,
                                   const RunFlags& overrides = {});

}  // namespace pg::runner
