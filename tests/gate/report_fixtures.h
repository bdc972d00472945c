// The synthetic gate result the reporter suites render (report_test.cpp, report_inert_test.cpp):
// five cells of one CPU sweep, two regressed, one improved.
#pragma once
#include <optional>
#include <sstream>
#include <string>

#include "ci_fixtures.h"
#include "gate/report.h"

namespace pg::report_fixtures {

inline const std::string kBase = "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
inline const std::string kHead = "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

inline gate::CellComparison cell(int batch, gate::CellVerdict v, std::optional<double> ratio) {
  gate::CellComparison c;
  c.key = test::cpu_key(batch, 16);
  c.verdict = v;
  if (ratio) {
    c.base_median = 1.0;
    c.head_median = *ratio;
    c.ratio = ratio;
    c.ci_low = *ratio - 0.01;
    c.ci_high = *ratio + 0.01;
    c.p_value = 0.0001;
    c.p_adjusted = 0.0004;
  }
  c.base_n = 20;
  c.head_n = 30;
  c.base_runs = 2;
  c.head_runs = 3;
  return c;
}

inline gate::GateResult regression_result() {
  gate::GateResult r;
  r.base = kBase;
  r.head = kHead;
  r.verdict = gate::GateVerdict::regression;
  r.cells = {
      cell(1, gate::CellVerdict::unchanged, 1.01), cell(2, gate::CellVerdict::regression, 1.08),
      cell(3, gate::CellVerdict::improvement, 0.90), cell(4, gate::CellVerdict::regression, 1.25),
      cell(5, gate::CellVerdict::unchanged, 0.99)};
  r.base_env = test::cpu_env();
  r.head_env = test::cpu_env();
  r.base_runs = 2;
  r.head_runs = 3;
  return r;
}

inline std::string render(const gate::GateReporter& rep, const gate::GateResult& r,
                          const gate::ReportInfo& info = {}) {
  std::ostringstream s;
  rep.report(r, info, s);
  return s.str();
}

}  // namespace pg::report_fixtures
