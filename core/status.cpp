#include "core/status.h"

#include "common/errors.h"

namespace pg {

std::string to_string(CellStatus s) {
  switch (s) {
    case CellStatus::ok:
      return "ok";
    case CellStatus::oom:
      return "oom";
    case CellStatus::invalid:
      return "invalid";
    case CellStatus::error:
      return "error";
  }
  return "error";
}

std::string to_string(RunStatus s) {
  switch (s) {
    case RunStatus::complete:
      return "complete";
    case RunStatus::incomplete:
      return "incomplete";
    case RunStatus::failed:
      return "failed";
  }
  return "failed";
}

CellStatus cell_status_from_string(const std::string& s) {
  if (s == "ok") return CellStatus::ok;
  if (s == "oom") return CellStatus::oom;
  if (s == "invalid") return CellStatus::invalid;
  if (s == "error") return CellStatus::error;
  throw UsageError("unknown cell status '" + s + "' (expected ok|oom|invalid|error)");
}

RunStatus run_status_from_string(const std::string& s) {
  if (s == "complete") return RunStatus::complete;
  if (s == "incomplete") return RunStatus::incomplete;
  if (s == "failed") return RunStatus::failed;
  throw UsageError("unknown run status '" + s + "' (expected complete|incomplete|failed)");
}

}  // namespace pg
