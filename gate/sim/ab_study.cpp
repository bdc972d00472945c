#include "gate/sim/ab_study.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "stats/binomial.h"
#include "stats/random.h"

namespace pg::sim {
namespace {

std::string pct(double v, const char* f = "%.2f%%") {
  char buf[32];
  std::snprintf(buf, sizeof buf, f, 100.0 * v);
  return buf;
}

std::string effect(double v) {
  if (v < 0.0) return "none";
  if (v > 1.0) return "> 100%";
  return pct(v, "%.2f%%");
}

// "3/2000 (0.15%; 0.03-0.44%)": count, rate and the exact 95% interval.
std::string rate_cp(int k, int n) {
  const auto [lo, hi] = stats::clopper_pearson(k, n, 0.95);
  return std::to_string(k) + "/" + std::to_string(n) + " (" + pct(double(k) / n) + "; " + pct(lo) +
         "-" + pct(hi) + ")";
}

struct Setting {
  const char* name;
  double rep_sd, run_sd;
};

constexpr Setting kSettings[] = {{"H200-like (0.1% within, 0.1% between)", 0.001, 0.001},
                                 {"noisy CPU (2% within, 2% between)", 0.02, 0.02}};

AbScenario unpaired(const Setting& st, int runs, int reps) {
  AbScenario s;
  s.paired = false;
  s.runs = runs;
  s.reps = reps;
  s.rep_sd = st.rep_sd;
  s.run_sd = st.run_sd;
  return s;
}

AbScenario paired(const Setting& st, int ab_runs, int pairs) {
  AbScenario s = unpaired(st, ab_runs, pairs);
  s.paired = true;
  return s;
}

}  // namespace

AbTally run_ab_gates(const AbScenario& s, const gate::GateOptions& opt, int gates, uint64_t seed) {
  AbTally t;
  std::vector<double> mdes;
  for (int i = 0; i < gates; ++i) {
    const GateRuns g = simulate_ab_runs(s, stats::derive_seed(seed, uint64_t(i)));
    const gate::GateResult r = gate::evaluate_gate("base", g.base, "head", g.head, opt);
    ++t.gates;
    t.regression += r.verdict == gate::GateVerdict::regression;
    t.inconclusive += r.verdict == gate::GateVerdict::inconclusive;
    mdes.push_back(r.mde.value_or(-1.0));
  }
  if (!mdes.empty()) {
    std::nth_element(mdes.begin(), mdes.begin() + mdes.size() / 2, mdes.end());
    t.median_mde = mdes[mdes.size() / 2];
  }
  return t;
}

double ab_smallest_detected(AbScenario s, const gate::GateOptions& opt, int gates, uint64_t seed,
                            double target) {
  auto detected = [&](double slowdown) {
    s.slowdown = slowdown;
    return run_ab_gates(s, opt, gates, seed).rate() >= target;
  };
  double lo = 0.0, hi = 1.0;
  if (!detected(hi)) return 2.0;
  while (hi - lo > 0.0001 && hi - lo > 0.002 * hi) {
    const double mid = (lo + hi) / 2;
    (detected(mid) ? hi : lo) = mid;
  }
  return hi;
}

void print_ab_scenario(const AbScenario& s, const gate::GateOptions& opt, int gates,
                       int bisect_gates, uint64_t seed, const std::vector<double>& slowdowns) {
  std::printf(
      "perfgate-sim: %s, %d cells, repetition sd %.3g%%, run sd %.3g%%, slow drift %s sd "
      "%.3g%%, worker sd %.3g%%; alpha %.2g %s, min_effect %.2g, power %.2g, %d gates, seed "
      "%llu\n\n",
      design_label(s).c_str(), s.cells, 100 * s.rep_sd, 100 * s.run_sd, s.drift_model.c_str(),
      100 * s.slow_sd, 100 * s.worker_sd, opt.alpha, opt.correction.c_str(), opt.min_effect,
      opt.power, gates, static_cast<unsigned long long>(seed));
  AbScenario aa = s;
  aa.slowdown = 0.0;
  const AbTally t = run_ab_gates(aa, opt, gates, seed);
  std::printf(
      "| slowdown of %s | gates failed (95%% Clopper-Pearson) | inconclusive |\n|---|---|---|\n",
      s.slow_all_cells ? "every cell" : "one cell");
  std::printf("| none (A/A) | %s | %d |\n", rate_cp(t.regression, t.gates).c_str(), t.inconclusive);
  for (double slow : slowdowns) {
    if (slow <= 0.0) continue;
    AbScenario b = s;
    b.slowdown = slow;
    const AbTally d = run_ab_gates(b, opt, gates, seed);
    std::printf("| %s | %s | %d |\n", effect(slow).c_str(), rate_cp(d.regression, d.gates).c_str(),
                d.inconclusive);
  }
  std::printf(
      "\nreported MDE (median over A/A gates): %s; smallest slowdown caught in 95%% of %d "
      "gates: %s\n",
      effect(t.median_mde).c_str(), bisect_gates,
      effect(ab_smallest_detected(s, opt, bisect_gates, seed)).c_str());
}

void print_ab_study(const gate::GateOptions& base_opt, int gates, int bisect_gates, uint64_t seed) {
  gate::GateOptions opt = base_opt;
  opt.metrics = {"tpot_ms"};
  std::printf(
      "perfgate-sim, the paired-design study: %d cells, alpha %.2g %s, min_effect %.2g, power "
      "%.2g, seed %llu; "
      "the same repetition budget in every design (30 repetitions of each cell a side)\n\n",
      kCells, opt.alpha, opt.correction.c_str(), opt.min_effect, opt.power,
      static_cast<unsigned long long>(seed));

  // A/A under each drift model.
  std::printf(
      "## A/A false alarms under drift (%d gates each; gates failed, rate, exact 95%% interval)\n\n"
      "| setting | drift model | unpaired, 3 runs x 10 a side | paired, 1 A/B run x 30 pairs | "
      "paired, 3 A/B runs x 10 pairs |\n|---|---|---|---|---|\n",
      gates);
  for (const Setting& st : kSettings) {
    struct Model {
      const char* name;
      double slow_sd;
      const char* kind;
      double worker_sd;
    };
    const Model models[] = {
        {"between-run drift only", 0.0, "linear", 0.0},
        {"+ linear drift within a run (sd = between)", st.run_sd, "linear", 0.0},
        {"+ AR(1) drift within a run (sd = between, phi 0.99)", st.run_sd, "ar1", 0.0},
        {"+ worker-process effect (sd = between / 2)", 0.0, "linear", st.run_sd / 2}};
    for (const Model& m : models) {
      std::printf("| %s | %s |", st.name, m.name);
      for (const AbScenario& d0 : {unpaired(st, 3, 10), paired(st, 1, 30), paired(st, 3, 10)}) {
        AbScenario d = d0;
        d.slow_sd = m.slow_sd;
        d.drift_model = m.kind;
        d.worker_sd = d.paired ? m.worker_sd : 0.0;  // unpaired: already in each run's effect
        const AbTally t = run_ab_gates(d, opt, gates, seed);
        std::printf(" %s |", rate_cp(t.regression, t.gates).c_str());
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }

  // Power at the same budget.
  std::printf(
      "\n## Power: the smallest slowdown of one cell caught in 95%% of %d gates (bisection), "
      "and the median MDE the gate reports\n\n| setting | design | smallest caught | reported "
      "MDE (median) |\n|---|---|---|---|\n",
      bisect_gates);
  for (const Setting& st : kSettings) {
    for (const AbScenario& d :
         {unpaired(st, 3, 10), unpaired(st, 5, 6), paired(st, 1, 10), paired(st, 1, 20),
          paired(st, 1, 30), paired(st, 1, 60), paired(st, 3, 10), paired(st, 5, 6)}) {
      const double smallest = ab_smallest_detected(d, opt, bisect_gates, seed);
      const AbTally t = run_ab_gates(d, opt, std::min(gates, 501), seed);
      std::printf("| %s | %s | %s | %s |\n", st.name, design_label(d).c_str(),
                  effect(smallest).c_str(), effect(t.median_mde).c_str());
      std::fflush(stdout);
    }
  }

  // Power curves.
  std::printf("\n## Power curves: share of %d gates that catch a slowdown of one cell\n", gates);
  for (const Setting& st : kSettings) {
    const bool gpu = st.rep_sd < 0.01;
    const std::vector<double> grid = gpu ? std::vector<double>{0.001, 0.0015, 0.0025, 0.005, 0.01}
                                         : std::vector<double>{0.01, 0.02, 0.03, 0.05, 0.1, 0.2};
    std::printf("\n%s:\n\n| design |", st.name);
    for (double g : grid) std::printf(" %s |", effect(g).c_str());
    std::printf("\n|---|");
    for (size_t i = 0; i < grid.size(); ++i) std::printf("---|");
    std::printf("\n");
    for (const AbScenario& d0 : {unpaired(st, 3, 10), paired(st, 1, 30), paired(st, 3, 10)}) {
      std::printf("| %s |", design_label(d0).c_str());
      for (double g : grid) {
        AbScenario d = d0;
        d.slowdown = g;
        std::printf(" %s |", pct(run_ab_gates(d, opt, gates, seed).rate(), "%.1f%%").c_str());
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
}

}  // namespace pg::sim
