// perfgate-sim: calibrates the merge gate by simulation (docs/STATISTICS.md "Calibration").
// Prints markdown tables; with --check exits 1 when the simulation shows a bound of issue 3
// violated beyond Monte Carlo error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gate/sim/ab_study.h"
#include "gate/sim/experiments.h"
#include "gate/sim/history_study.h"
#include "stats/format.h"
#include "stats/random.h"

namespace {

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * v);
  return buf;
}

std::string effect(double v) {
  if (v < 0.0) return "none";
  if (v > 1.0) return "> 100%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
  return buf;
}

// Wilson score interval of a binomial proportion k/n at normal quantile z (99%: 2.576).
std::pair<double, double> wilson(int k, int n, double z = 2.576) {
  const double p = double(k) / n, z2 = z * z;
  const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4.0 * n * n));
  // Rounding can put the bound a hair below 0 (printed "-0.00%") or above 1 when k is 0 or n.
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"perfgate-sim: A/A false alarms and detection power of perfgate's merge gate"};
  int gates = 20000, bisect_gates = 1000, coverage_trials = 2000, reps = 10;
  uint64_t seed = 1;
  bool quick = false, check = false;
  std::vector<double> cvs = {0.01, 0.03, 0.10};
  double min_effect = pg::gate::GateOptions{}.min_effect;
  app.add_option("--gates", gates, "simulated gates per table entry")->check(CLI::PositiveNumber);
  app.add_option("--bisect-gates", bisect_gates, "gates per step of the smallest-slowdown search")
      ->check(CLI::PositiveNumber);
  app.add_option("--coverage-trials", coverage_trials, "samples for interval coverage")
      ->check(CLI::PositiveNumber);
  app.add_option("--reps", reps, "repetitions per side")->check(CLI::Range(2, 1000));
  app.add_option("--seed", seed, "seed of every simulated gate");
  app.add_option("--cvs", cvs, "coefficients of variation to simulate (e.g. 0.001,0.006)")
      ->delimiter(',')
      ->check(CLI::Range(1e-6, 1.0));
  app.add_option("--min-effect", min_effect, "the gate's --min-effect")
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--quick", quick, "the first two tables only (for ctest)");
  bool require_power = false, no_futility = false;
  app.add_flag("--no-futility", no_futility,
               "sequential looks without the futility stop (the rule before issue 25)");
  app.add_flag("--require-power", require_power,
               "the gate's --require-power: an underpowered gate is inconclusive");
  int runs = 3, seq_looks = 1, history_commits = 0;
  double history_drift_scale = 1.0;
  double drift_cv = 0.03, seq_drift = 0.02;
  bool drift_table = false;
  std::vector<double> drifts = {0.0, 0.01, 0.02, 0.03, 0.05};
  std::vector<double> seq_slowdowns = {0.0, 0.05, 0.10};
  app.add_option("--runs", runs, "runs per side in the drift table (the shipped protocol: 3)")
      ->check(CLI::Range(1, 100));
  app.add_option("--drift-cv", drift_cv, "repetition CV of the drift table")
      ->check(CLI::Range(1e-6, 1.0));
  app.add_option("--drifts", drifts, "run drift sds of the drift table (e.g. 0,0.01,0.02)")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--drift-table", drift_table, "print the drift table even with --quick");
  app.add_option("--history-commits", history_commits,
                 "drift and sequential tables: trusted history of this many other commits of 2 "
                 "runs each beside every gate (0: the gate's runs alone)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--history-drift-scale", history_drift_scale,
                 "the history's drift sds as a multiple of the gate's (below 1: today is noisier)")
      ->check(CLI::Range(0.0, 10.0));
  app.add_option("--sequential-looks", seq_looks,
                 "also simulate sequential gates of this many looks")
      ->check(CLI::Range(1, 20));
  app.add_option("--sequential-drift", seq_drift, "run drift sd of the sequential table")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--sequential-slowdowns", seq_slowdowns, "slowdowns of the sequential table")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 10.0));
  app.add_flag("--check", check,
               "exit 1 if the 99% Wilson interval puts A/A false alarms above 1% or the "
               "detection of a 10% slowdown at CV 3% below 95%");
  // The paired design (docs/STATISTICS.md "Paired A/B runs"): one scenario, or the whole study.
  std::string design;
  bool ab_study = false, history_study = false;
  pg::sim::AbScenario ab;
  std::vector<double> ab_slowdowns = {0.001, 0.0025, 0.005, 0.01};
  app.add_option("--design", design,
                 "simulate one scenario of this design: paired (A/B runs) or unpaired")
      ->check(CLI::IsMember({"paired", "unpaired"}));
  app.add_option("--pairs", ab.reps,
                 "with --design: pairs per A/B run (paired) or repetitions per run (unpaired)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--ab-runs", ab.runs, "with --design: A/B runs (paired) or runs per side")
      ->check(CLI::Range(1, 100));
  app.add_option("--rep-sd", ab.rep_sd, "with --design: a repetition's log-sd within a run")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--run-sd", ab.run_sd,
                 "with --design: log-sd of a run's factor (in an A/B run shared by both sides)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--slow-drift", ab.slow_sd, "with --design: sd of the drift within a run")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--drift-model", ab.drift_model, "with --design: linear or ar1")
      ->check(CLI::IsMember({"linear", "ar1"}));
  app.add_option("--ar1-phi", ab.ar1_phi, "with --drift-model ar1: lag-one correlation")
      ->check(CLI::Range(0.0, 0.9999));
  app.add_option("--worker-sd", ab.worker_sd,
                 "with --design paired: log-sd of each side's worker process (does not cancel)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--slowdowns", ab_slowdowns, "with --design: slowdowns to tabulate")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 10.0));
  app.add_flag("--slow-all-cells", ab.slow_all_cells, "with --design: slow every cell, not one");
  app.add_flag("--ab-study", ab_study,
               "the paired-design study: A/A under drift and power against the unpaired design");
  app.add_flag("--history-study", history_study,
               "the trusted-history study: A/A and detection by runs a side and history");
  CLI11_PARSE(app, argc, argv);

  pg::gate::GateOptions holm;  // the defaults: alpha 0.01, min_effect 0.05, holm
  holm.min_effect = min_effect;
  holm.require_power = require_power;
  holm.futility = !no_futility;
  holm.bootstrap_iters = 0;
  if (history_study) {
    pg::sim::print_history_study(holm, gates, seed);
    return 0;
  }
  if (ab_study || !design.empty()) {
    if (ab_study) {
      pg::gate::GateOptions o = holm;
      o.min_effect = 0.0;  // significance alone: what pairing buys, whatever the filter
      pg::sim::print_ab_study(o, gates, bisect_gates, seed);
    } else {
      ab.paired = design == "paired";
      pg::sim::print_ab_scenario(ab, holm, gates, bisect_gates, seed, ab_slowdowns);
    }
    return 0;
  }
  pg::gate::GateOptions bh = holm;
  bh.correction = "bh";

  std::map<std::tuple<double, double, bool, std::string>, pg::sim::Tally> memo;
  auto tally = [&](double cv, double slowdown, bool all, const pg::gate::GateOptions& o) {
    auto key = std::make_tuple(cv, slowdown, all, o.correction);
    auto it = memo.find(key);
    if (it == memo.end())
      it = memo.emplace(key, pg::sim::run_gates({cv, reps, slowdown, all, 0.0}, o, gates, seed))
               .first;
    return it->second;
  };

  std::printf(
      "perfgate-sim: %d cells, %d repetitions per side, log-normal noise, seed %llu, "
      "%d gates per entry; alpha %.2g, min_effect %.2g, %s\n\n",
      pg::sim::kCells, reps, static_cast<unsigned long long>(seed), gates, holm.alpha,
      holm.min_effect, holm.correction.c_str());
  std::printf(
      "| CV | A/A false alarms (99%% interval) | 5%% one cell | 5%% all cells | "
      "10%% one cell | 10%% all cells |%s\n",
      quick ? "" : " smallest slowdown detected in >= 95% (one cell / all cells) |");
  std::printf("|---|---|---|---|---|---|%s\n", quick ? "" : "---|");
  bool ok = true;
  for (double cv : cvs) {
    const auto aa = tally(cv, 0, false, holm);
    const auto [aa_lo, aa_hi] = wilson(aa.regression, aa.gates);
    std::string smallest;
    if (!quick) {
      const double one =
          pg::sim::smallest_detected({cv, reps, 0, false, 0.0}, holm, bisect_gates, seed);
      const double all =
          pg::sim::smallest_detected({cv, reps, 0, true, 0.0}, holm, bisect_gates, seed);
      smallest = " " + effect(one) + " / " + effect(all) + " |";
    }
    std::printf("| %.2g%% | %s (%d/%d; %s-%s) | %s | %s | %s | %s |%s\n", cv * 100,
                pct(aa.rate()).c_str(), aa.regression, aa.gates, pct(aa_lo).c_str(),
                pct(aa_hi).c_str(), pct(tally(cv, 0.05, false, holm).rate()).c_str(),
                pct(tally(cv, 0.05, true, holm).rate()).c_str(),
                pct(tally(cv, 0.10, false, holm).rate()).c_str(),
                pct(tally(cv, 0.10, true, holm).rate()).c_str(), smallest.c_str());
    if (aa.inconclusive > 0) {
      std::fprintf(stderr, "CHECK FAILED: %d A/A gates inconclusive at CV %.0f%%\n",
                   aa.inconclusive, cv * 100);
      ok = false;
    }
    if (aa_lo > 0.01) {
      std::fprintf(stderr, "CHECK FAILED: A/A false alarms %s > 1%% at CV %.0f%%\n",
                   pct(aa.rate()).c_str(), cv * 100);
      ok = false;
    }
    for (bool all : {false, true}) {
      const auto t = tally(cv, 0.10, all, holm);
      if (cv == 0.03 && wilson(t.regression, t.gates).second < 0.95) {
        std::fprintf(stderr, "CHECK FAILED: 10%% slowdown (%s) at CV 3%% detected in %s\n",
                     all ? "all cells" : "one cell", pct(t.rate()).c_str());
        ok = false;
      }
    }
  }

  std::printf(
      "\nEffect rule: the gate's point estimate (ratio >= 1 + min_effect) against the "
      "interval (ci_low >= 1 + min_effect), same gates:\n\n");
  std::printf(
      "| CV | A/A, point | A/A, interval | 10%% one cell, point | 10%% one cell, interval | "
      "10%% all cells, point | 10%% all cells, interval |\n|---|---|---|---|---|---|---|\n");
  for (double cv : cvs) {
    const auto aa = tally(cv, 0, false, holm), one = tally(cv, 0.10, false, holm),
               all = tally(cv, 0.10, true, holm);
    std::printf("| %.2g%% | %s | %s | %s | %s | %s | %s |\n", cv * 100, pct(aa.rate()).c_str(),
                pct(aa.ci_rule_rate()).c_str(), pct(one.rate()).c_str(),
                pct(one.ci_rule_rate()).c_str(), pct(all.rate()).c_str(),
                pct(all.ci_rule_rate()).c_str());
  }

  if (!quick) {
    std::printf("\nCorrection: Holm (default) against Benjamini-Hochberg, same gates:\n\n");
    std::printf(
        "| CV | A/A holm | A/A bh | 5%% all cells holm | 5%% all cells bh | 10%% one cell "
        "holm | 10%% one cell bh |\n|---|---|---|---|---|---|---|\n");
    for (double cv : cvs) {
      std::printf("| %.2g%% | %s | %s | %s | %s | %s | %s |\n", cv * 100,
                  pct(tally(cv, 0, false, holm).rate()).c_str(),
                  pct(tally(cv, 0, false, bh).rate()).c_str(),
                  pct(tally(cv, 0.05, true, holm).rate()).c_str(),
                  pct(tally(cv, 0.05, true, bh).rate()).c_str(),
                  pct(tally(cv, 0.10, false, holm).rate()).c_str(),
                  pct(tally(cv, 0.10, false, bh).rate()).c_str());
    }

    std::printf(
        "\nA/A with run-to-run drift (every cell of a run scaled by one log-normal "
        "factor of this sd), CV 3%%:\n\n| drift sd | false alarms | false alarms with "
        "--min-effect 0.10 |\n|---|---|---|\n");
    pg::gate::GateOptions wide = holm;
    wide.min_effect = 0.10;
    for (double drift : {0.005, 0.01, 0.02, 0.03}) {
      const pg::sim::Scenario s{0.03, reps, 0.0, false, drift};
      std::printf("| %.1f%% | %s | %s |\n", drift * 100,
                  pct(pg::sim::run_gates(s, holm, gates, seed).rate()).c_str(),
                  pct(pg::sim::run_gates(s, wide, gates, seed).rate()).c_str());
    }

    std::printf(
        "\nCoverage of 95%% intervals for head/base, %d vs %d repetitions, %d samples, "
        "true ratio 1.10:\n\n| CV | Hodges-Lehmann (Bauer), the gate's | mean width | "
        "bootstrap ratio of medians | mean width | ratio of medians outside the HL "
        "interval |\n|---|---|---|---|---|---|\n",
        reps, reps, coverage_trials);
    for (double cv : cvs) {
      const auto c = pg::sim::interval_coverage(cv, reps, 1.10, coverage_trials, 2000, seed);
      std::printf("| %.2g%% | %s | %.4f | %s | %.4f | %s |\n", cv * 100, pct(c.hl).c_str(),
                  c.hl_width, pct(c.bootstrap).c_str(), c.bootstrap_width,
                  pct(c.point_outside_hl).c_str());
    }
  }
  if (!quick || drift_table) {
    // The shipped protocol: `runs` alternating runs per side, pooled; each run scaled by a
    // log-normal factor common to its cells (drift), plus one per cell of half that sd.
    pg::gate::GateOptions old_rule = holm;
    old_rule.run_level = false;
    std::printf(
        "\nRun-to-run drift, %d runs per side of %d repetitions, CV %.2g%%, %d gates per entry: "
        "false alarms (A/A) and detection of a slowdown of every cell, pooled Mann-Whitney alone "
        "(the earlier rule) against the two-level rule%s:\n\n| drift sd (run / cell) | A/A "
        "earlier | A/A two-level | A/A two-level inconclusive | 10%% earlier | 10%% two-level | "
        "20%% two-level | gate MDE median, two-level |\n|---|---|---|---|---|---|---|---|\n",
        runs, reps, drift_cv * 100, gates,
        (std::string(require_power ? ", --require-power" : "") +
         (history_commits > 0
              ? ", trusted history of " + std::to_string(history_commits) +
                    " commits x 2 runs at " + pg::stats::fmt_g(history_drift_scale) + "x the drift"
              : ""))
            .c_str());
    for (double drift : drifts) {
      pg::sim::Scenario s{
          drift_cv, reps, 0.0, true, drift, runs, drift / 2, history_commits, history_drift_scale};
      const auto aa_old = pg::sim::run_gates(s, old_rule, gates, seed);
      const auto aa_new = pg::sim::run_gates(s, holm, gates, seed);
      s.slowdown = 0.10;
      const auto ten_old = pg::sim::run_gates(s, old_rule, gates, seed);
      const auto ten_new = pg::sim::run_gates(s, holm, gates, seed);
      s.slowdown = 0.20;
      const auto twenty = pg::sim::run_gates(s, holm, gates, seed);
      s.slowdown = 0.0;
      std::vector<double> mdes;
      for (int i = 0; i < std::min(gates, 501); ++i) {
        const auto r = pg::sim::simulate_gate(s, holm, pg::stats::derive_seed(seed, uint64_t(i)));
        mdes.push_back(r.mde_all_cells.value_or(-1.0));  // printed "none"
      }
      std::nth_element(mdes.begin(), mdes.begin() + mdes.size() / 2, mdes.end());
      std::printf("| %.2g%% / %.2g%% | %s | %s | %s | %s | %s | %s | %s |\n", drift * 100,
                  drift * 50, pct(aa_old.rate()).c_str(), pct(aa_new.rate()).c_str(),
                  pct(double(aa_new.inconclusive) / aa_new.gates).c_str(),
                  pct(ten_old.rate()).c_str(), pct(ten_new.rate()).c_str(),
                  pct(twenty.rate()).c_str(), effect(mdes[mdes.size() / 2]).c_str());
      if (check && wilson(aa_new.regression, aa_new.gates).first > 0.01) {
        std::fprintf(stderr, "CHECK FAILED: two-level A/A false alarms %s > 1%% at drift %.2g\n",
                     pct(aa_new.rate()).c_str(), drift);
        ok = false;
      }
    }
    if (seq_looks > 1) {
      std::printf(
          "\nSequential looks: start with %d rounds, one more round per look, at most %d looks "
          "(alpha / %d each), drift sd %.2g%%, %d gates%s:\n\n| slowdown of every cell | "
          "regression | inconclusive | stopped for futility | mean rounds per side | rounds, "
          "regressions | rounds, passes |\n|---|---|---|---|---|---|---|\n",
          runs, seq_looks, seq_looks, seq_drift * 100, gates,
          (std::string(no_futility ? ", no futility stop" : "") +
           (history_commits > 0
                ? ", trusted history of " + std::to_string(history_commits) + " commits x 2 runs"
                : ""))
              .c_str());
      for (double slow : seq_slowdowns) {
        pg::sim::Scenario s{drift_cv,           reps, slow,          true,
                            seq_drift,          runs, seq_drift / 2, history_commits,
                            history_drift_scale};
        const auto t = pg::sim::run_sequential(s, holm, runs, seq_looks, gates, seed);
        std::printf("| %s | %s | %s | %s | %.2f | %.2f | %.2f |\n", effect(slow).c_str(),
                    pct(t.rate()).c_str(), pct(double(t.inconclusive) / t.gates).c_str(),
                    pct(double(t.futility) / t.gates).c_str(), t.rounds, t.rounds_regression,
                    t.rounds_other);
        if (check && slow == 0.0 && wilson(t.regression, t.gates).first > 0.01) {
          std::fprintf(stderr, "CHECK FAILED: sequential A/A false alarms %s > 1%%\n",
                       pct(t.rate()).c_str());
          ok = false;
        }
      }
    }
  }
  if (check) std::printf("\ncheck: %s\n", ok ? "passed" : "FAILED");
  return check && !ok ? 1 : 0;
}
