#include "runner/export_files.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/errors.h"
#include "store/run_csv.h"
#include "store/run_json.h"

namespace pg {

void ExportFileReporter::sweep_finished(const Run& run) {
  const std::string text =
      format_ == ExportFormat::json ? runs_to_json({run}, true) + "\n" : runs_to_csv({run});
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw RuntimeFailure(fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0)
    throw RuntimeFailure(fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
}

}  // namespace pg
