// The table of a finished run printed by `perfgate run` on stdout: one row per cell, columns
// aligned, numbers right-aligned, "-" where a metric does not apply (oom, invalid, error).
#pragma once
#include <cstdio>
#include <string>

#include "runner/reporter.h"

namespace pg::runner {

std::string format_cell_table(const Run& run);

class TableReporter : public Reporter {
 public:
  explicit TableReporter(std::FILE* out) : out_(out) {}
  void sweep_finished(const Run& run) override;

 private:
  std::FILE* out_;
};

}  // namespace pg::runner
