#include "store/run_report.h"

#include "common/errors.h"
#include "store/run_csv.h"
#include "store/run_json.h"

namespace pg::store {
namespace {

class JsonRunReporter : public RunReporter {
 public:
  std::string content_type() const override { return "application/json"; }
  void report(std::ostream& out, const std::vector<Run>& runs) const override {
    out << runs_to_json(runs, /*with_samples=*/true) << '\n';
  }
};

class CsvRunReporter : public RunReporter {
 public:
  std::string content_type() const override { return "text/csv; charset=utf-8"; }
  void report(std::ostream& out, const std::vector<Run>& runs) const override {
    out << runs_to_csv(runs);
  }
};

}  // namespace

std::unique_ptr<RunReporter> make_run_reporter(const std::string& format) {
  if (format == "json") return std::make_unique<JsonRunReporter>();
  if (format == "csv") return std::make_unique<CsvRunReporter>();
  throw UsageError("unknown export format '" + format + "' (expected csv|json)");
}

}  // namespace pg::store
