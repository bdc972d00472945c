#include "gate/sim/history_study.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gate/sim/scenario.h"
#include "stats/binomial.h"
#include "stats/random.h"

namespace pg::sim {
namespace {

struct Design {
  int runs, history_commits;
  double history_drift_scale;  // < 1: today's drift is larger than the history's
};

struct Outcome {
  int gates = 0, regression = 0;
  std::vector<double> mdes;  // the gate's (one cell), -1 when none is stated
};

Outcome run(Scenario s, const gate::GateOptions& opt, int gates, uint64_t seed) {
  Outcome o;
  for (int i = 0; i < gates; ++i) {
    const gate::GateResult r = simulate_gate(s, opt, stats::derive_seed(seed, uint64_t(i)));
    ++o.gates;
    o.regression += r.verdict == gate::GateVerdict::regression;
    o.mdes.push_back(r.mde.value_or(-1.0));
  }
  return o;
}

std::string rate(const Outcome& o) {
  const auto [lo, hi] = stats::clopper_pearson(o.regression, o.gates, 0.95);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%d/%d (%.1f-%.1f%%)", o.regression, o.gates, 100 * lo, 100 * hi);
  return buf;
}

std::string median_mde(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  const double m = v[v.size() / 2];
  if (m < 0) return "none";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * m);
  return buf;
}

}  // namespace

void print_history_study(const gate::GateOptions& opt, int gates, uint64_t seed) {
  const std::vector<Design> designs = {{3, 0, 1.0},  {1, 0, 1.0},  {1, 10, 1.0},
                                       {1, 30, 1.0}, {2, 10, 1.0}, {3, 10, 1.0},
                                       {1, 10, 0.5}, {3, 10, 0.5}, {1, 30, 0.7}};
  gate::GateOptions aa = opt;
  aa.min_effect = 0.0;  // the test's own alpha, whatever the filter
  std::printf(
      "\nTrusted history: H200-like noise (0.1%% a repetition, 0.1%% a run, 0.05%% a cell's run), "
      "12 cells x 10 repetitions, alpha %.2g, %d gates per entry, seed %llu; detection at "
      "min_effect %.2g%%; exact 95%% intervals:\n\n| runs a side | history (commits x 2 runs) | "
      "history's drift / today's | A/A, min_effect 0 | A/A | +0.5%% every cell | +1%% every "
      "cell | +1%% one cell | gate MDE, one cell (median) "
      "|\n|---|---|---|---|---|---|---|---|---|\n",
      opt.alpha, gates, static_cast<unsigned long long>(seed), 100 * opt.min_effect);
  for (const Design& d : designs) {
    Scenario s{
        0.001, 10, 0.0, true, 0.001, d.runs, 0.0005, d.history_commits, d.history_drift_scale};
    const Outcome aa0 = run(s, aa, gates, seed), aa1 = run(s, opt, gates, seed);
    s.slowdown = 0.005;
    const Outcome half = run(s, opt, gates, seed);
    s.slowdown = 0.01;
    const Outcome one = run(s, opt, gates, seed);
    s.slow_all_cells = false;
    const Outcome cell = run(s, opt, gates, seed);
    char scale[16] = "-";
    if (d.history_commits) std::snprintf(scale, sizeof scale, "%.2gx", d.history_drift_scale);
    std::printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", d.runs,
                d.history_commits ? std::to_string(d.history_commits).c_str() : "none", scale,
                rate(aa0).c_str(), rate(aa1).c_str(), rate(half).c_str(), rate(one).c_str(),
                rate(cell).c_str(), median_mde(aa1.mdes).c_str());
    std::fflush(stdout);
  }
}

}  // namespace pg::sim
