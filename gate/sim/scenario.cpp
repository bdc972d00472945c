#include "gate/sim/scenario.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "gate/gate_inputs.h"
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

namespace {

// Other commits' runs, drawn after the gate's so that the gate's own runs stay the same with or
// without history (common random numbers).
stats::TrustedHistory simulate_history(const Scenario& gate, std::mt19937_64& gen) {
  Scenario s = gate;
  s.run_drift_sd *= gate.history_drift_scale;
  s.cell_drift_sd *= gate.history_drift_scale;
  std::map<CellKey, std::vector<stats::RunGroups>> by_cell;
  for (int c = 0; c < s.history_commits; ++c) {
    const std::vector<Run> runs{make_run(s, false, gen), make_run(s, false, gen)};
    for (auto& [key, pool] : gate::pool_cells(runs, "tpot_ms"))
      by_cell[key].push_back(std::move(pool.by_run));
  }
  stats::TrustedHistory h;
  for (const auto& [key, commits] : by_cell)
    if (auto v = stats::history_run_variance(commits, s.reps)) h[{key, "tpot_ms"}] = *v;
  return h;
}

}  // namespace

GateRuns simulate_runs(const Scenario& s, int rounds, uint64_t seed) {
  std::mt19937_64 gen(seed);
  GateRuns g;
  for (int r = 0; r < rounds; ++r) {
    g.base.push_back(make_run(s, false, gen));
    g.head.push_back(make_run(s, true, gen));
  }
  if (s.history_commits > 0) g.history = simulate_history(s, gen);
  return g;
}

gate::GateResult simulate_gate(const Scenario& s, const gate::GateOptions& opt, uint64_t seed) {
  const GateRuns g = simulate_runs(s, std::max(1, s.runs), seed);
  return gate::evaluate_gate("base", g.base, "head", g.head, opt, g.history);
}

}  // namespace pg::sim
