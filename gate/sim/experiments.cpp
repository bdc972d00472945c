#include "gate/sim/experiments.h"

#include <algorithm>
#include <cmath>

#include "stats/bootstrap.h"
#include "stats/descriptive.h"
#include "stats/hodges_lehmann.h"
#include "stats/random.h"

namespace pg::sim {

Tally run_gates(const Scenario& s, const gate::GateOptions& opt, int gates, uint64_t seed) {
  Tally t;
  for (int i = 0; i < gates; ++i) {
    const gate::GateResult r = simulate_gate(s, opt, stats::derive_seed(seed, uint64_t(i)));
    ++t.gates;
    t.regression += r.verdict == gate::GateVerdict::regression;
    t.inconclusive += r.verdict == gate::GateVerdict::inconclusive;
    bool ci_flag = false, wrong_flag = false;
    for (size_t c = 0; c < r.cells.size(); ++c) {
      const gate::CellComparison& cell = r.cells[c];
      const bool truly_slowed = s.slowdown > 0 && (s.slow_all_cells || c == 0);
      if (cell.verdict == gate::CellVerdict::regression && !truly_slowed) wrong_flag = true;
      if (cell.p_adjusted && *cell.p_adjusted <= opt.alpha && cell.ci_low &&
          *cell.ci_low >= 1.0 + opt.min_effect)
        ci_flag = true;
    }
    t.ci_rule += ci_flag;
    t.unslowed_flagged += wrong_flag;
  }
  return t;
}

SequentialTally run_sequential(const Scenario& s, gate::GateOptions opt, int first_rounds,
                               int max_looks, int gates, uint64_t seed, int budget_looks) {
  SequentialTally t;
  opt.max_looks = max_looks;
  const int most = first_rounds + max_looks - 1;
  for (int i = 0; i < gates; ++i) {
    const GateRuns all = simulate_runs(s, most, stats::derive_seed(seed, uint64_t(i)));
    for (int look = 1; look <= max_looks; ++look) {
      const int rounds = first_rounds + look - 1;
      opt.look = look;
      const std::vector<Run> base(all.base.begin(), all.base.begin() + rounds);
      const std::vector<Run> head(all.head.begin(), all.head.begin() + rounds);
      gate::GateResult r = gate::evaluate_gate("base", base, "head", head, opt, all.history);
      if (r.next != gate::NextStep::stop && look == budget_looks) {
        opt.max_looks = look;  // the budget ends the rounds: this look is the last
        r = gate::evaluate_gate("base", base, "head", head, opt, all.history);
        opt.max_looks = max_looks;
      }
      if (r.next == gate::NextStep::stop || look == max_looks) {
        ++t.gates;
        t.regression += r.verdict == gate::GateVerdict::regression;
        t.inconclusive += r.verdict == gate::GateVerdict::inconclusive;
        t.rounds += rounds;
        (r.verdict == gate::GateVerdict::regression ? t.rounds_regression : t.rounds_other) +=
            rounds;
        t.futility += r.next_reason == "futility";
        break;
      }
    }
  }
  t.rounds /= std::max(1, t.gates);
  t.rounds_regression /= std::max(1, t.regression);
  t.rounds_other /= std::max(1, t.gates - t.regression);
  return t;
}

double smallest_detected(Scenario s, const gate::GateOptions& opt, int gates, uint64_t seed,
                         double target) {
  auto detected = [&](double slowdown) {
    s.slowdown = slowdown;
    return run_gates(s, opt, gates, seed).rate() >= target;
  };
  double lo = 0.0, hi = 1.0;
  if (!detected(hi)) return 2.0;
  while (hi - lo > 0.001) {
    const double mid = (lo + hi) / 2;
    (detected(mid) ? hi : lo) = mid;
  }
  return hi;
}

Coverage interval_coverage(double cv, int reps, double ratio, int trials, int bootstrap_iters,
                           uint64_t seed) {
  const double sigma = std::sqrt(std::log1p(cv * cv));
  Coverage c;
  c.trials = trials;
  for (int t = 0; t < trials; ++t) {
    std::mt19937_64 gen(stats::derive_seed(seed, uint64_t(t)));
    std::vector<double> base(reps), head(reps);
    for (double& v : base) v = std::exp(sigma * stats::standard_normal(gen));
    for (double& v : head) v = ratio * std::exp(sigma * stats::standard_normal(gen));
    const stats::ShiftEstimate hl = stats::hodges_lehmann_ratio(base, head, 0.95);
    if (hl.low && hl.high) {
      c.hl += *hl.low <= ratio && ratio <= *hl.high;
      c.hl_width += *hl.high - *hl.low;
      const double point = stats::median(head) / stats::median(base);
      c.point_outside_hl += point < *hl.low || point > *hl.high;
    }
    const auto boot = stats::bootstrap_ratio_of_medians(
        base, head, {bootstrap_iters, stats::derive_seed(seed ^ 1, uint64_t(t)), 0.95});
    if (boot) {
      c.bootstrap += boot->low <= ratio && ratio <= boot->high;
      c.bootstrap_width += boot->high - boot->low;
    }
  }
  c.hl /= trials;
  c.bootstrap /= trials;
  c.hl_width /= trials;
  c.point_outside_hl /= trials;
  c.bootstrap_width /= trials;
  return c;
}

}  // namespace pg::sim
