#include "runner/export_files.h"

#include "store/atomic_file.h"
#include "store/run_csv.h"
#include "store/run_json.h"

namespace pg {

void ExportFileReporter::sweep_finished(const Run& run) {
  const std::string text =
      format_ == ExportFormat::json ? runs_to_json({run}, true) + "\n" : runs_to_csv({run});
  write_file_atomically(path_, text, format_ == ExportFormat::json ? "--json" : "--csv");
}

}  // namespace pg
