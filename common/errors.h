// Errors every layer may raise, and the exit codes they map to (docs/CLI.md).
// Header-only and dependency-free so that runner/, store/, stats/, web/ and ci/ can all use it.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pg {

enum ExitCode : int {
  kExitOk = 0,
  kExitRegression = 1,    // compare: significant regression
  kExitUsage = 2,         // bad usage or bad input; message names flag, file or line
  kExitInconclusive = 3,  // compare: no baseline, incomparable environments, too few reps
  kExitRuntime = 4,       // runtime failure
};

// Bad flag, bad config file, bad --db file, malformed input document. Exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How a front end writes a setting's name: `perfgate` as its flag ("--min-effect",
// cli/setting_flags.h), the sweep file as its key ("kv-cache"), the web as its query parameter
// (the name as it is, "min_effect").
using SettingSpelling = std::function<std::string(const std::string& name)>;

// The one error that names a setting: bad input found below the command line, which does not know
// how a value was given (a flag, a sweep file, a query parameter, a library call). Its text marks
// each setting's name with setting("name") (docs/RUN.md's names for `perfgate run`, those of
// app/gate_settings.h for the gate); what() reads them as they are ("cuda-graphs on needs device
// cuda"), and each front end spells them in its own words: the CLI's main prints
// spelled(cli::flag_for_setting), "--cuda-graphs on needs --device cuda". Without a mark it is a
// plain UsageError (exit 2).
class SettingError : public UsageError {
 public:
  explicit SettingError(const std::string& text)
      : UsageError(spell_settings(text, as_is)), text_(text) {}
  // A setting's own rule broken: "<setting> <problem>" ("min_effect must be >= 0, got -1").
  SettingError(const std::string& name, const std::string& problem)
      : SettingError(setting(name) + " " + problem) {}

  // The spelling of what(): each name as it is.
  static std::string as_is(const std::string& name) { return name; }
  // `name` marked as a setting's name, for a message (or any text a front end spells).
  static std::string setting(const std::string& name) { return kMark + name + kMark; }
  // `text` with each marked name as `spell` writes it.
  static std::string spell_settings(const std::string& text, const SettingSpelling& spell) {
    std::string out, name;
    bool open = false;
    for (char c : text) {
      if (c == kMark) {
        if (open) out += spell(name);
        name.clear();
        open = !open;
      } else {
        (open ? name : out) += c;
      }
    }
    return open ? out + name : out;
  }

  std::string spelled(const SettingSpelling& spell) const { return spell_settings(text_, spell); }
  // Each name after `prefix`: spelled("--") writes `perfgate run`'s settings as its flags.
  std::string spelled(const std::string& prefix) const {
    return spelled([&prefix](const std::string& name) { return prefix + name; });
  }
  // The settings the message names, in order; the first is the one it is about.
  std::vector<std::string> settings() const {
    std::vector<std::string> names;
    spelled([&names](const std::string& name) { return names.push_back(name), name; });
    return names;
  }
  // The same error with context in front, e.g. the cell it was found in.
  SettingError with_context(const std::string& context) const {
    return SettingError(context + text_);
  }

 private:
  // A control character no setting value can hold: the text around it may quote user input.
  static constexpr char kMark = '\x1f';
  std::string text_;
};

// Something that should have worked did not (I/O, SQLite, CUDA). Exit 4.
struct RuntimeFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace pg
