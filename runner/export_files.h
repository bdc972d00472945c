// The `csv` and `json` settings' files: the finished run's export, in the same formats as
// `perfgate export` (written by the store's serialisers, so the two never disagree).
#pragma once
#include <string>

#include "runner/reporter.h"

namespace pg::runner {

enum class ExportFormat { csv, json };

class ExportFileReporter : public Reporter {
 public:
  ExportFileReporter(std::string path, ExportFormat format)
      : path_(std::move(path)), format_(format) {}
  // Replaces FILE atomically (store/atomic_file.h): a reader never sees half a file, a symlink's
  // target is replaced, a non-regular FILE is refused. Throws RuntimeFailure when writing fails.
  void sweep_finished(const Run& run) override;

 private:
  std::string path_;
  ExportFormat format_;
};

}  // namespace pg::runner
