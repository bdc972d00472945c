// CSV export: one row per cell, a benchmark_results.csv with the run, commit and
// environment added. RFC 4180 quoting; numbers in shortest round-trip form.
#pragma once
#include <string>
#include <vector>

#include "core/run.h"

namespace pg::store {

// docs/METRICS.md's metrics in order, then any other metric found in `runs`, sorted by name, so
// the column set is stable for a given set of runs and readers can index columns by name.
std::vector<std::string> csv_metric_columns(const std::vector<Run>& runs);
std::vector<std::string> csv_header(const std::vector<Run>& runs);
std::string runs_to_csv(const std::vector<Run>& runs);
std::string csv_field(const std::string& s);                  // quoted only when it must be
std::string csv_row(const std::vector<std::string>& fields);  // quoted fields, CRLF at the end
std::string csv_number(double v);                             // shortest round-trip form

}  // namespace pg::store
