// Printing stored runs for people and tools: one reporter per export format (in the manner of
// Google Benchmark's reporters), so `perfgate export`, `perfgate run --csv/--json` and the web
// server share one implementation of each format.
#pragma once
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/run.h"

namespace pg::store {

class RunReporter {
 public:
  virtual ~RunReporter() = default;
  virtual std::string content_type() const = 0;  // MIME type, for HTTP
  virtual void report(std::ostream& out, const std::vector<Run>& runs) const = 0;
};

// "json": the export shape (docs/FORMATS.md) with samples. "csv": one row per cell (see run_csv.h).
// Anything else throws UsageError naming the format.
std::unique_ptr<RunReporter> make_run_reporter(const std::string& format);

}  // namespace pg::store
