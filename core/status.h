// The status of a cell and of a run (docs/METRICS.md, "The cell"; docs/FORMATS.md).
#pragma once
#include <string>

namespace pg {

enum class CellStatus { ok, oom, invalid, error };
enum class RunStatus { complete, incomplete, failed };

std::string to_string(CellStatus s);
std::string to_string(RunStatus s);
CellStatus cell_status_from_string(const std::string&);  // throws UsageError
RunStatus run_status_from_string(const std::string&);    // throws UsageError

}  // namespace pg
