// The whole gate against an independent reimplementation of docs/STATISTICS.md's rule in scipy and
// statsmodels (tests/gate/gen_gate_refs.py): per tested cell and metric, the deciding test, its
// estimate, interval, p-values adjusted across every test, the Mann-Whitney diagnostic, the
// minimum detectable effect and the verdict. Run on the committed fixture and, by ctest, live.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "gate/gate.h"
#include "tests/stats/scipy_refs.h"
#include "synthetic_runs.h"

namespace pg {
namespace {

using test::parse_doubles;
using test::RefLine;

std::string gate_refs_path() {
  const char* env = std::getenv("PG_GATE_REFS");
  return env && *env ? env : PG_GATE_REFS_FIXTURE;
}

std::vector<std::vector<double>> runs_of(const std::string& text) {
  std::vector<std::vector<double>> out;
  std::stringstream ss(text);
  std::string run;
  while (std::getline(ss, run, ';')) out.push_back(parse_doubles(run));
  return out;
}

std::optional<double> opt_num(const std::string& s) {
  if (s == "None") return std::nullopt;
  return std::stod(s);
}

void expect_close(const std::optional<double>& expected, const std::optional<double>& actual,
                  double tol, const std::string& what) {
  ASSERT_EQ(expected.has_value(), actual.has_value()) << what;
  if (expected) {
    EXPECT_NEAR(*actual, *expected, tol * std::max(std::abs(*expected), 1e-300)) << what;
  }
}

struct Case {
  gate::GateOptions opt;
  std::vector<RefLine> lines;
};

// The runs of one side of a case: run i holds every cell with more than i runs on that side;
// its decode steps give the tpot_ms line's values, its prefill samples the prefill_ms line's.
std::vector<Run> side_runs(const std::vector<RefLine>& lines, size_t field, int first_id) {
  std::map<int, std::map<std::string, std::vector<std::vector<double>>>> cells;
  size_t most = 0;
  for (const RefLine& l : lines) {
    auto& runs = cells[std::stoi(l.fields[0])][l.fields[1]];
    runs = runs_of(l.fields[field]);
    most = std::max(most, runs.size());
  }
  std::vector<Run> out;
  for (size_t i = 0; i < most; ++i) {
    Run run = test::make_run(first_id + int(i), {});
    for (auto& [cell, metrics] : cells) {
      const auto& tpot = metrics["tpot_ms"];
      if (i >= tpot.size()) continue;
      CellResult c = test::cell_with_tpot(test::cell_key(1 + cell, 64), tpot[i]);
      if (metrics.contains("prefill_ms")) c.samples.prefill_ms = metrics["prefill_ms"][i];
      run.cells.push_back(c);
    }
    out.push_back(run);
  }
  return out;
}

TEST(GateRefs, EveryCellAgreesWithScipyAndStatsmodels) {
  std::map<std::string, Case> cases;
  for (const RefLine& r : test::read_scipy_refs(gate_refs_path())) {
    if (!r.kind.starts_with("gate ")) continue;
    std::stringstream ss(r.kind.substr(5));
    std::string name;
    Case& c = cases[(ss >> name, name)];
    ss >> c.opt.correction >> c.opt.alpha >> c.opt.power;
    const std::string& metric = r.fields[1];
    if (c.lines.empty()) c.opt.metrics.clear();
    if (std::find(c.opt.metrics.begin(), c.opt.metrics.end(), metric) == c.opt.metrics.end())
      c.opt.metrics.push_back(metric);
    if (metric == "tpot_ms")
      c.opt.min_effect = std::stod(r.fields[2]);
    else
      c.opt.metric_min_effect[metric] = std::stod(r.fields[2]);
    c.lines.push_back(r);
  }
  ASSERT_GE(cases.size(), 6u);
  for (const auto& [name, c] : cases) {
    const gate::GateResult g =
        gate::evaluate_gate("b", side_runs(c.lines, 3, 1), "h", side_runs(c.lines, 4, 100), c.opt);
    ASSERT_EQ(g.cells.size(), c.lines.size()) << name;
    for (const RefLine& l : c.lines) {
      const CellKey key = test::cell_key(1 + std::stoi(l.fields[0]), 64);
      const gate::CellComparison* cell = nullptr;
      for (const gate::CellComparison& x : g.cells)
        if (x.key == key && x.metric == l.fields[1]) cell = &x;
      const std::string what = name + " cell " + l.fields[0] + " " + l.fields[1];
      ASSERT_NE(cell, nullptr) << what;
      EXPECT_EQ(to_string(cell->verdict), l.fields[5]) << what;
      EXPECT_EQ(cell->test, l.fields[14]) << what;
      expect_close(opt_num(l.fields[6]), cell->ratio, 1e-10, what + ": ratio");
      expect_close(opt_num(l.fields[7]), cell->ci_low, 1e-10, what + ": ci low");
      expect_close(opt_num(l.fields[8]), cell->ci_high, 1e-10, what + ": ci high");
      expect_close(opt_num(l.fields[9]), cell->p_value, 1e-8, what + ": p");
      expect_close(opt_num(l.fields[10]), cell->p_adjusted, 1e-8, what + ": p adjusted");
      expect_close(opt_num(l.fields[11]), cell->mann_whitney_p, 1e-8, what + ": Mann-Whitney p");
      expect_close(opt_num(l.fields[15]), cell->mw_p_adjusted, 1e-8, what + ": MW p adjusted");
      expect_close(opt_num(l.fields[12]), cell->upper_bound, 1e-10, what + ": upper bound");
      // With one run a side no MDE can be stated (None); else the noncentral t's, at alpha / m.
      expect_close(opt_num(l.fields[13]), cell->mde, 1e-6, what + ": mde");
    }
  }
}

}  // namespace
}  // namespace pg
