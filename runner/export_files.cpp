#include "runner/export_files.h"

#include "store/atomic_file.h"
#include "store/run_csv.h"
#include "store/run_json.h"

namespace pg::runner {

void ExportFileReporter::sweep_finished(const Run& run) {
  const std::string text = format_ == ExportFormat::json ? store::runs_to_json({run}, true) + "\n"
                                                         : store::runs_to_csv({run});
  // A failure here is a RuntimeFailure, never a setting's error: the file is named by what it is.
  store::write_file_atomically(path_, text,
                               format_ == ExportFormat::json ? "JSON export" : "CSV export");
}

}  // namespace pg::runner
