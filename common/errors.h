// Errors every layer may raise, and the exit codes they map to (docs/CLI.md).
// Header-only and dependency-free so that runner/, store/, stats/, web/ and ci/ can all use it.
#pragma once
#include <stdexcept>
#include <string>

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

// Bad input found below the command line, named by setting rather than by how it was given. The
// text marks each setting with setting("name"), docs/RUN.md's names (the config file's keys):
// what() reads "cuda-graphs on needs device cuda"; the CLI, which knows they were flags, prints
// spelled("--"): "--cuda-graphs on needs --device cuda" (cli/main.cpp).
class SettingError : public UsageError {
 public:
  explicit SettingError(const std::string& text) : UsageError(spell(text, "")), text_(text) {}
  static std::string setting(const std::string& name) { return kMark + name + kMark; }
  std::string spelled(const std::string& prefix) const { return spell(text_, prefix); }
  // The same error with context in front, e.g. the cell it was found in.
  SettingError with_context(const std::string& context) const {
    return SettingError(context + text_);
  }

 private:
  // A control character no setting value can hold: the text around it may quote user input.
  static constexpr char kMark = '\x1f';
  static std::string spell(const std::string& text, const std::string& prefix) {
    std::string out;
    bool open = false;
    for (char c : text) {
      if (c == kMark)
        open = !open, out += open ? prefix : "";
      else
        out += c;
    }
    return out;
  }
  std::string text_;
};

// Something that should have worked did not (I/O, SQLite, CUDA). Exit 4.
struct RuntimeFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace pg
