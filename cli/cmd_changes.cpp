// `perfgate changes`: the change points of every stored series, found by the same history
// (app/history.h) that the web's trend page draws: the same branch, the same values, the same
// size of a change (docs/WEB.md, "The size of a change").
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "app/history.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/inert_text.h"
#include "core/cell_key_io.h"
#include "core/cell_label.h"
#include "core/environment_json.h"
#include "core/metrics.h"
#include "gate/report_text.h"
#include "store/store.h"

namespace pg::cli {
namespace {

struct ChangesFlags {
  std::string db = "perfgate.db", metric = "tpot_ms", format = "text", branch;
  size_t min_segment = stats::ChangePointOptions{}.min_segment;
  double alpha = stats::ChangePointOptions{}.alpha;
};

int run_changes(const ChangesFlags& f) {
  if (std::find(metric_names().begin(), metric_names().end(), f.metric) == metric_names().end())
    throw UsageError("--metric: unknown metric '" + f.metric + "'");
  if (f.format != "text" && f.format != "json") {
    throw UsageError("--format must be text or json, got '" + f.format + "'");
  }
  if (f.min_segment < 1) throw UsageError("--min-segment must be >= 1");
  if (!(f.alpha > 0.0 && f.alpha < 1.0)) throw UsageError("--alpha must be in (0, 1)");
  auto store = open_existing_db(f.db);
  // One branch, as the trend: the one asked for, else the trend's main branch (empty when no run
  // names a branch: then every run with a commit).
  const std::map<std::string, int64_t> branches = store->branch_run_counts();
  if (!f.branch.empty() && !branches.count(f.branch))
    throw UsageError("--branch: no stored run was made on branch '" + f.branch + "'");
  const std::string branch = app::main_branch(branches, f.branch);
  // Branch names come from the measured repository: one inert line.
  const std::string on = branch.empty() ? " (no run names a branch: every run)"
                                        : " on branch " + inert_text(branch, kInertNameChars);
  // The trend's values: a commit's point is the median of every repetition of its runs.
  app::HistoryOptions opt;
  opt.branch = branch;
  opt.runs_without_commit = false;
  opt.change_points.min_segment = f.min_segment;
  opt.change_points.alpha = f.alpha;

  // The size of a change, as every page shows it: after / before - 1 (docs/WEB.md).
  auto relative = [](const stats::ChangePoint& cp) {
    return cp.before != 0 ? std::optional<double>(cp.after / cp.before - 1.0) : std::nullopt;
  };
  if (f.format == "text") std::cout << "change points of " << f.metric << on << '\n';
  nlohmann::json series_json = nlohmann::json::array();
  for (const store::SeriesInfo& series : store->list_series()) {
    opt.values = [&](const store::SeriesSample& s) {
      return app::point_values(s, series.key, f.metric);
    };
    const app::History h = app::history(*store, series.id, opt);
    if (h.points.empty()) continue;
    const std::vector<stats::ChangePoint>& cps = h.changes;

    nlohmann::json cps_json = nlohmann::json::array();
    for (const auto& cp : cps) {
      const app::HistoryPoint& at = h.points.at(cp.index);
      cps_json.push_back(
          {{"index", cp.index},
           {"commit", at.commit},
           {"subject", at.subject},
           {"before", cp.before},
           {"after", cp.after},
           {"ratio", cp.before != 0 ? nlohmann::json(cp.after / cp.before) : nullptr},
           {"relative", relative(cp) ? nlohmann::json(*relative(cp)) : nullptr},
           {"p_value", cp.p_value}});
    }
    const nlohmann::json env = environment_to_json(series.env);
    series_json.push_back({{"id", series.id},
                           {"key", cell_key_to_json(series.key)},
                           {"env", env},
                           {"commits", h.points.size()},
                           {"change_points", cps_json}});

    if (f.format == "text") {
      // The label, the device and the subjects come from measured code: one inert line each.
      std::cout << fmt::format("series {}: {} [{}]  {}, {}\n", series.id,
                               inert_text(cell_label(series.key), kInertNameChars),
                               env.contains("device")
                                   ? inert_text(env["device"].get<std::string>(), kInertNameChars)
                                   : "",
                               gate::report_text::plural(int(h.points.size()), "commit"),
                               gate::report_text::plural(int(cps.size()), "change point"));
      if (h.points.size() < 2 * f.min_segment) {
        std::cout << fmt::format("  (fewer than {} commits: too short to find a change)\n",
                                 2 * f.min_segment);
      }
      for (const auto& cp : cps) {
        const app::HistoryPoint& at = h.points.at(cp.index);
        std::cout << fmt::format(
            "  {}  {} -> {} {}  {}  p={}  {}\n", gate::report_text::short_sha(at.commit),
            gate::report_text::fmt_ms(cp.before), gate::report_text::fmt_ms(cp.after), f.metric,
            relative(cp) ? fmt::format("{:+.1f}%", 100.0 * *relative(cp)) : "-",
            gate::report_text::fmt_p(cp.p_value), inert_text(at.subject, kInertNameChars));
      }
    }
  }
  if (f.format == "json") {
    std::cout << nlohmann::json{{"metric", f.metric},
                                {"branch",
                                 branch.empty() ? nlohmann::json(nullptr) : nlohmann::json(branch)},
                                {"series", series_json}}
                     .dump(2)
              << '\n';
  } else if (series_json.empty()) {
    std::cout << "no stored series with " << f.metric << " values\n";
  }
  return kExitOk;
}

}  // namespace

void add_changes_command(CLI::App& root, Action& action) {
  auto f = std::make_shared<ChangesFlags>();
  CLI::App* c = root.add_subcommand("changes", "change points of every stored series");
  c->add_option("--db", f->db, "SQLite store")->capture_default_str();
  c->add_option("--metric", f->metric, "metric to scan")->capture_default_str();
  c->add_option("--min-segment", f->min_segment, "commits needed on each side of a change")
      ->capture_default_str();
  c->add_option("--alpha", f->alpha, "significance of each split")->capture_default_str();
  c->add_option("--branch", f->branch,
                "the branch followed (default: the trend's: main, else master, else the busiest)");
  c->add_option("--format", f->format, "text or json")->capture_default_str();
  c->callback([f, &action] { action = [f] { return run_changes(*f); }; });
}

}  // namespace pg::cli
