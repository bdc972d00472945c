// The gate's CSV: one row per compared cell, for spreadsheets and scripts (docs/FORMATS.md,
// "Compare CSV"). The key's columns come from core/cell_key.h's field table, quoting and numbers
// from the export's CSV writer.
#include <cmath>
#include <ostream>

#include "core/cell_key_io.h"
#include "gate/report.h"
#include "store/run_csv.h"

namespace pg::gate {
namespace {

std::string number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? store::csv_number(*v) : "";
}

}  // namespace

void GateCsvReporter::report(const GateResult& r, const ReportInfo& /*info*/,
                             std::ostream& out) const {
  std::vector<std::string> header = {"base", "head"};
  for (auto& k : cell_key_csv_header()) header.push_back(std::move(k));
  for (const char* h : {"metric", "verdict", "base_median", "head_median", "ratio", "ci_low",
                        "ci_high", "p_value", "p_adjusted", "mde", "base_n", "head_n", "base_runs",
                        "head_runs", "note", "test", "ab_runs", "blocks", "pairs"})
    header.emplace_back(h);
  out << store::csv_row(header);
  for (const CellComparison& c : r.cells) {
    const bool paired = c.test == "paired-t";
    std::vector<std::string> row = {r.base, r.head};
    for (auto& v : cell_key_csv_values(c.key)) row.push_back(std::move(v));
    for (std::string v :
         {c.metric, to_string(c.verdict), number(c.base_median), number(c.head_median),
          number(c.ratio), number(c.ci_low), number(c.ci_high), number(c.p_value),
          number(c.p_adjusted), number(c.mde), std::to_string(c.base_n), std::to_string(c.head_n),
          std::to_string(c.base_runs), std::to_string(c.head_runs), c.note, c.test,
          paired ? std::to_string(c.ab_runs) : "", paired ? std::to_string(c.blocks) : "",
          paired ? std::to_string(c.pairs) : ""})
      row.push_back(std::move(v));
    out << store::csv_row(row);
  }
}

}  // namespace pg::gate
