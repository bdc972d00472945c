// `perfgate ab --base DIR --head DIR [sweep flags]`: base and head of every cell measured side by
// side in one A/B run (runner/ab/ab_run.h, docs/AB.md). The sweep flags are `perfgate run`'s; each
// side's sweep is resolved with its own checkout as the repository, so its `exec` command runs in
// that checkout.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/run_flags.h"
#include "cli/setting_flags.h"
#include "common/errors.h"
#include "common/utc_time.h"
#include "runner/ab/ab_run.h"
#include "runner/ab/abba_order.h"
#include "runner/config.h"

namespace pg::cli {

namespace {

struct AbFlags {
  runner::RunFlags run;
  std::string base, head, base_worker, head_worker;
  std::optional<uint64_t> order_seed;
  // Five: on the H200 one A/B run gave A/A false alarms (two worker processes differ by up to
  // 0.8% in a cell), five kept 0 of 6 A/A gates (docs/AB.md, "Measured on an H200").
  int ab_runs = 5;
  bool share_workers = false;
  std::string placement = "random";
};

runner::SweepConfig resolve_side(const AbFlags& f, const std::string& dir,
                                 const std::string& flag) {
  runner::RunFlags side = f.run;
  side.values["repo"] = dir;
  try {
    return runner::resolve_sweep_config(side);
  } catch (const SettingError& e) {
    // The side's checkout is its `repo`: a message about it names the side's flag.
    const auto spell = [&flag](const std::string& name) {
      return name == "repo" ? flag : flag_for_setting(name);
    };
    const auto named = e.settings();
    const bool about_checkout = !named.empty() && named.front() == "repo";
    throw UsageError((about_checkout ? "" : flag + " " + dir + ": ") + e.spelled(spell));
  }
}

void check_models(const runner::SweepConfig& cfg) {
  for (const auto& m : cfg.models)
    if (m.rfind("aoti:", 0) == 0 || m.rfind("file:", 0) == 0)
      throw UsageError("--model " + m +
                       ": perfgate ab measures perfgate's presets and --exec benchmarks; a "
                       "package or checkpoint model is not supported by perfgate ab yet (measure "
                       "it through an --exec benchmark, or with perfgate run)");
}

ab::AbSettings settings_from(const AbFlags& f) {
  if (f.run.values.contains("repo"))
    throw UsageError("--repo: perfgate ab measures two checkouts; give them as --base and --head");
  for (const char* name : {"csv", "json", "submit", "token-file"})
    if (f.run.values.contains(name))
      throw UsageError(flag_for_setting(name) +
                       ": perfgate ab stores its two runs in --db only; copy them elsewhere with "
                       "perfgate export");
  ab::AbSettings s;
  s.base = resolve_side(f, f.base, "--base");
  s.head = resolve_side(f, f.head, "--head");
  check_models(s.base);
  const std::string worker = s.base.exec.empty() ? ab::builtin_worker_command() : s.base.exec;
  s.base_worker = f.base_worker.empty() ? worker : f.base_worker;
  s.head_worker = f.head_worker.empty() ? worker : f.head_worker;
  s.default_worker = worker;
  s.order_seed = f.order_seed ? *f.order_seed : ab::random_order_seed();
  s.ab_runs = f.ab_runs;
  s.share_workers = f.share_workers;
  s.random_placement = f.placement == "random";
  return s;
}

}  // namespace

void add_ab_command(CLI::App& root, Action& action) {
  auto* cmd = root.add_subcommand("ab", kAbDescription);
  auto flags = std::make_shared<AbFlags>();
  cmd->add_option("--base", flags->base, "checkout of the base commit")
      ->required()
      ->type_name("DIR");
  cmd->add_option("--head", flags->head, "checkout of the head commit")
      ->required()
      ->type_name("DIR");
  cmd->add_option("--base-worker", flags->base_worker,
                  "command that measures the base side's cells in worker mode (docs/PROTOCOL.md); "
                  "default: --exec, or perfgate's own worker")
      ->type_name("CMD");
  cmd->add_option("--head-worker", flags->head_worker, "the same for the head side")
      ->type_name("CMD");
  cmd->add_option_function<uint64_t>(
         "--order-seed", [f = flags.get()](uint64_t v) { f->order_seed = v; },
         "seed of the ABBA order (default: drawn at random, and stored with both runs)")
      ->type_name("N");
  cmd->add_option("--ab-runs", flags->ab_runs,
                  "A/B runs, each with its own worker per side, measured cell by cell; 3 or more "
                  "replicate the difference between two worker processes, which the paired test "
                  "then includes")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_flag("--share-workers", flags->share_workers,
                "the A/B runs share one worker per side, each opening the cell afresh (cheaper; "
                "replicates what differs between two openings of a cell, not between processes)");
  cmd->add_option("--placement", flags->placement,
                  "random: each opening of a cell places its device memory at random (perfgate's "
                  "own worker; a seed in PERFGATE_PLACEMENT_SEED), so where two processes' "
                  "buffers land is noise the A/B runs replicate, not a bias; fixed: where the "
                  "allocator puts them")
      ->check(CLI::IsMember({"random", "fixed"}))
      ->capture_default_str();
  add_run_flags(*cmd, flags->run);
  cmd->callback([&action, flags] {
    action = [flags] {
      const std::string started_at = now_iso8601();
      return ab::perform_ab(settings_from(*flags), started_at);
    };
  });
}

}  // namespace pg::cli
