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

inline CellComparison cell(int batch, CellVerdict v, std::optional<double> ratio) {
  CellComparison c;
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

inline GateResult regression_result() {
  GateResult r;
  r.base = kBase;
  r.head = kHead;
  r.verdict = GateVerdict::regression;
  r.cells = {cell(1, CellVerdict::unchanged, 1.01), cell(2, CellVerdict::regression, 1.08),
             cell(3, CellVerdict::improvement, 0.90), cell(4, CellVerdict::regression, 1.25),
             cell(5, CellVerdict::unchanged, 0.99)};
  r.base_env = test::cpu_env();
  r.head_env = test::cpu_env();
  r.base_runs = 2;
  r.head_runs = 3;
  return r;
}

inline std::string render(const GateReporter& rep, const GateResult& r,
                          const ReportInfo& info = {}) {
  std::ostringstream s;
  rep.report(r, info, s);
  return s.str();
}

}  // namespace pg::report_fixtures
