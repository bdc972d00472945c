#include "stats/sim/scenario.h"

#include <algorithm>
#include <cmath>

#include "stats/random.h"

namespace pg::sim {

Run make_run(const Scenario& s, bool head, std::mt19937_64& gen) {
  const double sigma = std::sqrt(std::log1p(s.cv * s.cv));  // log-normal: CV^2 = e^(s^2) - 1
  Run run;
  run.status = RunStatus::complete;
  run.env = {
      {"device", "simulated"}, {"driver", "-"}, {"cuda", "-"}, {"cudnn", "-"}, {"torch", "-"}};
  const double run_factor = std::exp(s.run_drift_sd * stats::standard_normal(gen));
  int index = 0;
  for (int batch : {1, 4, 8, 16}) {
    for (int seq : {64, 256, 512}) {
      CellResult cell;
      cell.key = CellKey{"sim", "fp32", batch, seq, 9, true, "math", false, "cpu"};
      const bool slowed = head && (s.slow_all_cells || index == 0);
      const double cell_factor = std::exp(s.cell_drift_sd * stats::standard_normal(gen));
      const double center = (0.5 + 0.1 * batch + 0.002 * seq) * run_factor * cell_factor *
                            (slowed ? 1.0 + s.slowdown : 1.0);
      for (int r = 0; r < s.reps; ++r) {
        const double tpot = center * std::exp(sigma * stats::standard_normal(gen));
        cell.samples.prefill_ms.push_back(10 * tpot);
        cell.samples.decode_ms.emplace_back(8, tpot);  // gen_tokens 9: 8 decode steps
      }
      run.cells.push_back(std::move(cell));
      ++index;
    }
  }
  return run;
}

GateRuns simulate_runs(const Scenario& s, int rounds, uint64_t seed) {
  std::mt19937_64 gen(seed);
  GateRuns g;
  for (int r = 0; r < rounds; ++r) {
    g.base.push_back(make_run(s, false, gen));
    g.head.push_back(make_run(s, true, gen));
  }
  return g;
}

GateResult simulate_gate(const Scenario& s, const GateOptions& opt, uint64_t seed) {
  const GateRuns g = simulate_runs(s, std::max(1, s.runs), seed);
  return evaluate_gate("base", g.base, "head", g.head, opt);
}

}  // namespace pg::sim
