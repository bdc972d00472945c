// `--csv FILE` / `--json FILE`: the finished run's export, in the same formats as
// `perfgate export` (written by the store's serialisers, so the two never disagree).
#pragma once
#include <string>

#include "runner/reporter.h"

namespace pg {

enum class ExportFormat { csv, json };

class ExportFileReporter : public Reporter {
 public:
  ExportFileReporter(std::string path, ExportFormat format)
      : path_(std::move(path)), format_(format) {}
  // Writes FILE.tmp, then renames it over FILE: a reader never sees half a file.
  // Throws RuntimeFailure when the file cannot be written.
  void sweep_finished(const Run& run) override;

 private:
  std::string path_;
  ExportFormat format_;
};

}  // namespace pg
