// `perfgate ab` from two resolved sweeps to two stored runs, in named steps: the sides, then per
// cell both workers started and warmed, their repetitions alternated, both finished and stored.
#include "runner/ab/ab_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>

#include "common/errors.h"
#include "common/inert_text.h"
#include "common/program_name.h"
#include "common/utc_time.h"
#include "core/cell_label.h"
#include "runner/ab/ab_side.h"
#include "runner/ab/abba_order.h"
#include "runner/exec/exec_process.h"
#include "runner/fingerprint.h"
#include "runner/stop_signals.h"
#include "runner/sweep.h"
#include "store/store.h"

namespace pg::ab {
namespace {

std::string new_ab_uuid() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) out += fmt::format("{:08x}", rd());
  return out;
}

runner::MeasureOptions measure_options(const runner::SweepConfig& cfg) {
  runner::MeasureOptions opt;
  opt.warmup = cfg.warmup;
  opt.reps = cfg.reps;  // pairs: each side runs one repetition a pair
  opt.seed = cfg.seed;
  opt.peak_bw_gbps = cfg.peak_bw_gbps;
  opt.peak_tflops = cfg.peak_tflops;
  opt.profile = cfg.profile;
  return opt;
}

// Untimed pairs after both workers' own warm-up, in ABBA order: each side's first repetitions
// after its warm-up (and after the other side's) are not the steady state (measured on the H200:
// the first repetition of the side that warmed up last ran 10% slow), and a side must not pay
// for having started second.
constexpr int kSharedWarmupPairs = 2;

// The two sides of one cell: both workers started (each warms up in turn, so only one side is on
// the device at a time), the shared warm-up pairs, then the timed pairs in `order`, then both
// finished. A side that fails stops the pairs; the other side keeps the samples it has.
std::array<CellResult, 2> measure_cell(const CellKey& key, const runner::MeasureOptions& opt,
                                       std::array<SideState, 2>& sides,
                                       const std::vector<Side>& order) {
  runner::MeasureOptions asked = opt;  // the worker's reps: the most it will be asked for
  asked.reps = opt.reps + kSharedWarmupPairs;
  std::array<std::unique_ptr<SideCell>, 2> cell;
  for (size_t s = 0; s < 2; ++s) cell[s] = sides[s].open(key, asked, kSharedWarmupPairs);
  bool ok = true;
  for (int i = 0; i < kSharedWarmupPairs && ok; ++i) {
    const size_t first = static_cast<size_t>(i % 2 == 0 ? Side::base : Side::head);
    ok = cell[first]->repetition(0) && cell[1 - first]->repetition(1);
  }
  for (size_t i = 0; i < order.size() && ok; ++i) {
    const size_t first = static_cast<size_t>(order[i]);
    ok = cell[first]->repetition(0) && cell[1 - first]->repetition(1);
  }
  std::array<CellResult, 2> out;
  for (size_t s = 0; s < 2; ++s) out[s] = cell[s]->finish();
  return out;
}

// A pair's head/base ratio of tpot, geometric mean over the pairs both sides have: the line a
// person watching reads; the verdict is `perfgate compare`'s.
std::string paired_summary(const CellResult& base, const CellResult& head) {
  if (base.status != CellStatus::ok || head.status != CellStatus::ok)
    return fmt::format("base {}, head {}", to_string(base.status), to_string(head.status));
  auto tpot = [](const std::vector<double>& steps) {
    double sum = 0;
    for (double v : steps) sum += v;
    return steps.empty() ? 0.0 : sum / static_cast<double>(steps.size());
  };
  const size_t n = std::min(base.samples.decode_ms.size(), head.samples.decode_ms.size());
  double log_sum = 0;
  size_t used = 0;
  for (size_t i = 0; i < n; ++i) {
    const double b = tpot(base.samples.decode_ms[i]), h = tpot(head.samples.decode_ms[i]);
    if (b > 0 && h > 0) {
      log_sum += std::log(h / b);
      ++used;
    }
  }
  const auto metric = [](const CellResult& c) {
    auto it = c.metrics.find("tpot_ms");
    return it == c.metrics.end() ? std::string("-") : fmt::format("{:.4f}", it->second);
  };
  return fmt::format("tpot base {} ms, head {} ms; paired head/base x{:.4f} over {} pairs",
                     metric(base), metric(head),
                     used ? std::exp(log_sum / static_cast<double>(used)) : 0.0, used);
}

}  // namespace

std::string builtin_worker_command() { return shell_word(own_executable()) + " worker"; }

int perform_ab(const AbSettings& s, const std::string& started_at) {
  if (s.ab_runs < 1) throw SettingError(SettingError::setting("ab-runs") + " must be at least 1");
  const std::vector<CellKey> cells = runner::expand(s.base);
  const std::string start = started_at.empty() ? now_iso8601() : started_at;
  const Environment env = runner::run_environment(s.base.device);
  store::Store store(s.base.db);
  const runner::MeasureOptions opt = measure_options(s.base);
  struct AbRun {
    AbPairing pairing;
    std::array<SideState, 2> sides;
    std::vector<Side> order;
  };
  std::vector<AbRun> runs;
  for (int j = 0; j < s.ab_runs; ++j) {
    const AbPairing pairing{new_ab_uuid(), "", "abba", s.order_seed + static_cast<uint64_t>(j)};
    runs.push_back(AbRun{pairing,
                         {SideState(s.base, s.base_worker, s.default_worker, env, pairing, "base",
                                    s.random_placement),
                          SideState(s.head, s.head_worker, s.default_worker, env, pairing, "head",
                                    s.random_placement)},
                         abba_order(static_cast<size_t>(opt.reps), pairing.seed)});
  }

  bool interrupted = false;
  {
    runner::StopSignals signals;
    try {
      for (size_t i = 0; i < cells.size() && !interrupted; ++i) {
        const std::string label = inert_text(cell_label(cells[i]), kInertNameChars);
        if (!s.base.quiet) fmt::print(stderr, "[{}/{}] {}\n", i + 1, cells.size(), label);
        for (size_t j = 0; j < runs.size(); ++j) {
          if (runner::stop_requested()) {
            interrupted = true;
            break;
          }
          auto results = measure_cell(cells[i], opt, runs[j].sides, runs[j].order);
          if (s.share_workers)
            for (size_t side = 0; side < 2; ++side)
              runs[j].sides[side].pass_worker_to(runs[(j + 1) % runs.size()].sides[side]);
          for (size_t side = 0; side < 2; ++side)
            runs[j].sides[side].store_cell(store, start, results[side]);
          if (!s.base.quiet)
            fmt::print("{}{}: {}\n", label,
                       runs.size() > 1 ? fmt::format(" (A/B run {})", j + 1) : std::string(),
                       paired_summary(results[0], results[1]));
        }
      }
      for (auto& run : runs)
        for (auto& side : run.sides) side.begin_if_needed(store, start);
    } catch (...) {
      for (auto& run : runs)
        for (auto& side : run.sides) side.finish(store, RunStatus::failed);
      throw;
    }
  }
  const RunStatus status = interrupted ? RunStatus::incomplete : RunStatus::complete;
  for (auto& run : runs) {
    for (auto& side : run.sides) side.finish(store, status);
    fmt::print("Stored A/B run {} in {}: base run {} ({}), head run {} ({}), {} pairs a cell\n",
               run.pairing.uuid, s.base.db, run.sides[0].run_id(), run.sides[0].commit_text(),
               run.sides[1].run_id(), run.sides[1].commit_text(), opt.reps);
  }
  const auto& base_git = runs[0].sides[0].git();
  const auto& head_git = runs[0].sides[1].git();
  if (!s.base.quiet && base_git.commit && head_git.commit)
    fmt::print("Judge: {} compare --base {} --head {} --db {}\n", shell_word(program_name()),
               base_git.commit->substr(0, 12), head_git.commit->substr(0, 12),
               shell_word(s.base.db));
  std::fflush(stdout);
  if (interrupted) {
    fmt::print(stderr, "perfgate: interrupted: the A/B runs are stored as incomplete\n");
    return kExitRuntime;
  }
  return kExitOk;
}

}  // namespace pg::ab
