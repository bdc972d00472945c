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

// Something that should have worked did not (I/O, SQLite, CUDA). Exit 4.
struct RuntimeFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace pg
