#include "gate/sim/ab_scenario.h"

#include <cmath>
#include <random>
#include <vector>

#include "stats/random.h"

namespace pg::sim {
namespace {

// The slow drift of one run at each of its `slots` measurements.
std::vector<double> slow_drift(const AbScenario& s, int slots, std::mt19937_64& gen) {
  std::vector<double> d(slots, 0.0);
  if (s.slow_sd <= 0.0) return d;
  if (s.drift_model == "ar1") {
    double x = s.slow_sd * stats::standard_normal(gen);  // stationary start
    const double innov = s.slow_sd * std::sqrt(1.0 - s.ar1_phi * s.ar1_phi);
    for (double& v : d) {
      v = x;
      x = s.ar1_phi * x + innov * stats::standard_normal(gen);
    }
  } else {
    const double change = s.slow_sd * stats::standard_normal(gen);
    for (int i = 0; i < slots; ++i) d[i] = change * i / std::max(1, slots - 1);
  }
  return d;
}

Run empty_run() {
  Run run;
  run.status = RunStatus::complete;
  run.env = {
      {"device", "simulated"}, {"driver", "-"}, {"cuda", "-"}, {"cudnn", "-"}, {"torch", "-"}};
  return run;
}

void add_rep(CellResult& cell, double tpot) {
  cell.samples.prefill_ms.push_back(10 * tpot);
  cell.samples.decode_ms.emplace_back(8, tpot);  // gen_tokens 9: 8 decode steps
}

CellKey key_of(int index) {
  return CellKey{"sim", "fp32", 1 + index, 64, 9, true, "math", false, "cpu"};
}

double center_of(int index) { return 0.5 + 0.1 * index; }

bool slowed(const AbScenario& s, int cell) { return s.slow_all_cells || cell == 0; }

// One ordinary run of one side: cells in order, repetitions in order.
Run ordinary_run(const AbScenario& s, bool head, std::mt19937_64& gen) {
  Run run = empty_run();
  const double run_effect = s.run_sd * stats::standard_normal(gen);
  const std::vector<double> drift = slow_drift(s, s.cells * s.reps, gen);
  int slot = 0;
  for (int c = 0; c < s.cells; ++c) {
    CellResult cell;
    cell.key = key_of(c);
    const double shift = head && slowed(s, c) ? std::log1p(s.slowdown) : 0.0;
    for (int r = 0; r < s.reps; ++r)
      add_rep(cell, center_of(c) * std::exp(run_effect + drift[slot++] + shift +
                                            s.rep_sd * stats::standard_normal(gen)));
    run.cells.push_back(std::move(cell));
  }
  return run;
}

// One A/B run: per cell, pairs in ABBA blocks (a coin per block), one measurement per slot.
void ab_run(const AbScenario& s, const std::string& uuid, std::mt19937_64& gen, GateRuns& g) {
  Run base = empty_run(), head = empty_run();
  base.ab = AbPairing{uuid, "base", "abba", 0};
  head.ab = AbPairing{uuid, "head", "abba", 0};
  const double run_effect = s.run_sd * stats::standard_normal(gen);
  const double worker_base = s.worker_sd * stats::standard_normal(gen);
  const double worker_head = s.worker_sd * stats::standard_normal(gen);
  const std::vector<double> drift = slow_drift(s, s.cells * s.reps * 2, gen);
  int slot = 0;
  for (int c = 0; c < s.cells; ++c) {
    CellResult bc, hc;
    bc.key = hc.key = key_of(c);
    const double shift = slowed(s, c) ? std::log1p(s.slowdown) : 0.0;
    bool head_first = false;
    for (int i = 0; i < s.reps; ++i) {
      head_first = i % 2 == 0 ? (gen() & 1) != 0 : !head_first;
      const double first = drift[slot++], second = drift[slot++];
      const double t_head = head_first ? first : second, t_base = head_first ? second : first;
      add_rep(bc, center_of(c) * std::exp(run_effect + worker_base + t_base +
                                          s.rep_sd * stats::standard_normal(gen)));
      add_rep(hc, center_of(c) * std::exp(run_effect + worker_head + t_head + shift +
                                          s.rep_sd * stats::standard_normal(gen)));
      hc.samples.ab_position.push_back(head_first ? 0 : 1);
      bc.samples.ab_position.push_back(head_first ? 1 : 0);
    }
    base.cells.push_back(std::move(bc));
    head.cells.push_back(std::move(hc));
  }
  g.base.push_back(std::move(base));
  g.head.push_back(std::move(head));
}

}  // namespace

GateRuns simulate_ab_runs(const AbScenario& s, uint64_t seed) {
  std::mt19937_64 gen(seed);
  GateRuns g;
  for (int r = 0; r < s.runs; ++r) {
    if (s.paired) {
      ab_run(s, "ab" + std::to_string(r), gen, g);
    } else {
      g.base.push_back(ordinary_run(s, false, gen));
      g.head.push_back(ordinary_run(s, true, gen));
    }
  }
  return g;
}

std::string design_label(const AbScenario& s) {
  if (s.paired)
    return "paired, " + std::to_string(s.runs) + " A/B run" + (s.runs > 1 ? "s" : "") + " x " +
           std::to_string(s.reps) + " pairs";
  return "unpaired, " + std::to_string(s.runs) + " run" + (s.runs > 1 ? "s" : "") + " x " +
         std::to_string(s.reps) + " reps a side";
}

}  // namespace pg::sim
