// `perfgate compare` (the merge gate) and `perfgate changes` (change points over history).
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "common/descriptive.h"
#include "common/errors.h"
#include "core/cell_key_io.h"
#include "core/environment_json.h"
#include "core/metrics.h"
#include "gate/gate_json.h"
#include "gate/report.h"
#include "gate/report_text.h"
#include "gate/revision.h"
#include "stats/auto_min_effect.h"
#include "stats/changepoint.h"
#include "stats/gate.h"
#include "store/atomic_file.h"
#include "store/store.h"

namespace pg::cli {
namespace {

struct CompareFlags {
  std::string base, head, db = "perfgate.db", repo = ".", main_branch = "main";
  double alpha = 0.01, min_effect = 0.05, min_effect_floor = 0.005, power = 0.95;
  std::string min_effect_text = "0.05";  // a number, or "auto"
  std::string correction = "holm", format = "table", output, json_output;
  bool github = false, allow_missing_baseline = false, require_power = false;
  int look = 1, max_looks = 1;
  uint64_t seed = 0;
  std::vector<std::string> notes;
};

// Opening read-only never creates a file: a mistyped --db must not look like an empty history.
std::unique_ptr<Store> open_existing_db(const std::string& path) {
  if (!std::filesystem::exists(path)) throw UsageError("--db " + path + ": no such database file");
  return std::make_unique<Store>(path, /*read_only=*/true);
}

// --min-effect: "auto" (min_effect stays unset here) or a number >= 0.
void parse_min_effect(CompareFlags& f) {
  if (f.min_effect_text == "auto") return;
  size_t used = 0;
  try {
    f.min_effect = std::stod(f.min_effect_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != f.min_effect_text.size())
    throw UsageError("--min-effect must be a number >= 0 or 'auto', got '" + f.min_effect_text +
                     "'");
}

void validate(const CompareFlags& f) {
  if (!(f.min_effect_floor >= 0.0 && f.min_effect_floor < 1.0))
    throw UsageError(
        fmt::format("--min-effect-floor must be in [0, 1), got {}", f.min_effect_floor));
  if (!(f.power > 0.0 && f.power < 1.0))
    throw UsageError(fmt::format("--power must be in (0, 1), got {}", f.power));
  if (f.max_looks < 1)
    throw UsageError(fmt::format("--max-looks must be >= 1, got {}", f.max_looks));
  if (f.look < 1 || f.look > f.max_looks)
    throw UsageError(
        fmt::format("--look must be in [1, --max-looks {}], got {}", f.max_looks, f.look));
  if (!(f.alpha > 0.0 && f.alpha < 1.0)) {
    throw UsageError(fmt::format("--alpha must be in (0, 1), got {}", f.alpha));
  }
  if (!(f.min_effect >= 0.0) || !std::isfinite(f.min_effect)) {
    throw UsageError(fmt::format("--min-effect must be >= 0, got {}", f.min_effect));
  }
  if (f.correction != "holm" && f.correction != "bh") {
    throw UsageError("--correction must be holm or bh, got '" + f.correction + "'");
  }
  if (f.format != "table" && f.format != "markdown" && f.format != "json" && f.format != "csv") {
    throw UsageError("--format must be table, markdown, json or csv, got '" + f.format + "'");
  }
}

std::string render(const GateReporter& reporter, const GateResult& r, const ReportInfo& info) {
  std::ostringstream s;
  reporter.report(r, info, s);
  return s.str();
}

// The history behind --min-effect auto: every stored run of each head cell's series (same key,
// same comparable environment), except the head's own runs, which are what is being judged.
std::map<CellKey, std::vector<stats::HistoryRun>> min_effect_history(
    Store& store, const std::vector<Run>& head_runs, const std::string& head_sha) {
  std::map<CellKey, std::vector<stats::HistoryRun>> history;
  for (const CellResult& cell : head_runs.front().cells) {
    auto series = store.find_series(cell.key, head_runs.front().env);
    if (!series || history.contains(cell.key)) continue;
    auto& runs = history[cell.key];
    for (const SeriesSample& s : store.series_samples(*series, /*with_samples=*/false)) {
      if (s.status != CellStatus::ok || s.commit.empty() || s.commit == head_sha) continue;
      runs.push_back({s.commit, s.rep_tpot_ms});
    }
  }
  return history;
}

int run_compare(CompareFlags f) {
  parse_min_effect(f);
  validate(f);
  auto store = open_existing_db(f.db);
  RevisionContext ctx{store.get(), f.repo, f.main_branch};
  if (f.head == kMergeBaseRevision) throw UsageError("--head cannot be 'merge-base'");
  ResolvedRevision head = resolve_revision(f.head, ctx);
  ResolvedRevision base = f.base == kMergeBaseRevision ? resolve_merge_base(head.sha, ctx)
                                                       : resolve_revision(f.base, ctx);

  std::vector<Run> head_runs = store->runs_for_commit(head.sha);
  if (head_runs.empty()) {
    throw UsageError(
        fmt::format("--head {}: no stored run of commit {} in {} (benchmark it "
                    "first with `perfgate run --repo ... --db {}`)",
                    f.head, head.sha, f.db, f.db));
  }
  std::vector<Run> base_runs = store->runs_for_commit(base.sha);

  ReportInfo info{f.base, f.head, base.source, head.source, f.notes};
  if (base.source == "merge-base") {
    info.notes.push_back(fmt::format("base = merge-base of head {} and {}: {}",
                                     report_text::short_sha(head.sha), f.main_branch, base.sha));
  }
  auto dirty_note = [&](const std::vector<Run>& runs, const char* side) {
    long dirty = std::count_if(runs.begin(), runs.end(), [](const Run& r) { return r.git.dirty; });
    if (dirty > 0) {
      info.notes.push_back(fmt::format("{} of {} {} runs were measured on a dirty work tree", dirty,
                                       runs.size(), side));
    }
  };
  dirty_note(base_runs, "base");
  dirty_note(head_runs, "head");

  GateOptions opt;
  opt.alpha = f.alpha;
  opt.min_effect = f.min_effect;
  if (f.min_effect_text == "auto") {
    const stats::AutoMinEffect a =
        stats::auto_min_effect(min_effect_history(*store, head_runs, head.sha), f.min_effect_floor,
                               GateOptions{}.min_effect);
    opt.min_effect = a.value;
    opt.min_effect_source = a.reason;
  }
  opt.power = f.power;
  opt.require_power = f.require_power;
  opt.look = f.look;
  opt.max_looks = f.max_looks;
  opt.correction = f.correction;
  opt.seed = f.seed;
  opt.allow_missing_baseline = f.allow_missing_baseline;
  GateResult result = evaluate_gate(base.sha, base_runs, head.sha, head_runs, opt);

  const bool to_stdout = f.output.empty() || f.output == "-";
  auto reporter = make_reporter(f.format, to_stdout && stdout_wants_color());
  std::string report = render(*reporter, result, info);
  if (to_stdout) {
    std::cout << report;
  } else {
    write_file_atomically(f.output, report, "--output");
  }
  if (!f.json_output.empty())
    write_file_atomically(f.json_output, render(GateJsonReporter{}, result, info), "--json");
  if (f.github) {
    // Workflow commands go to stdout, unless stdout carries JSON that a tool must parse: the
    // Actions runner reads commands from both streams.
    std::ostream& cmd_out = (to_stdout && f.format == "json") ? std::cerr : std::cout;
    GateGithubReporter{}.report(result, info, cmd_out);
  }
  std::cout.flush();
  return gate_exit_code(result);
}

// --- perfgate changes -------------------------------------------------------------------------

struct ChangesFlags {
  std::string db = "perfgate.db", metric = "tpot_ms", format = "text";
  size_t min_segment = 3;
  double alpha = 0.01;
};

struct CommitPoint {
  std::string commit, subject;
  std::vector<double> values;  // one per stored run of the commit
};

// One value per commit in history order (series_samples' order): the median over its runs.
std::vector<CommitPoint> commit_points(const std::vector<SeriesSample>& samples,
                                       const std::string& metric) {
  std::vector<CommitPoint> points;
  for (const auto& s : samples) {
    if (s.status != CellStatus::ok || s.commit.empty()) continue;
    auto it = s.metrics.find(metric);
    if (it == s.metrics.end() || !std::isfinite(it->second)) continue;
    auto p = std::find_if(points.begin(), points.end(),
                          [&](const CommitPoint& cp) { return cp.commit == s.commit; });
    if (p == points.end()) {
      points.push_back({s.commit, s.subject, {}});
      p = std::prev(points.end());
    }
    p->values.push_back(it->second);
  }
  return points;
}

int run_changes(const ChangesFlags& f) {
  if (std::find(metric_names().begin(), metric_names().end(), f.metric) == metric_names().end())
    throw UsageError("--metric: unknown metric '" + f.metric + "'");
  if (f.format != "text" && f.format != "json") {
    throw UsageError("--format must be text or json, got '" + f.format + "'");
  }
  if (f.min_segment < 1) throw UsageError("--min-segment must be >= 1");
  if (!(f.alpha > 0.0 && f.alpha < 1.0)) throw UsageError("--alpha must be in (0, 1)");
  auto store = open_existing_db(f.db);
  ChangePointOptions opt;
  opt.min_segment = f.min_segment;
  opt.alpha = f.alpha;

  nlohmann::json series_json = nlohmann::json::array();
  for (const SeriesInfo& series : store->list_series()) {
    auto points = commit_points(store->series_samples(series.id, /*with_samples=*/false), f.metric);
    if (points.empty()) continue;
    std::vector<double> values;
    for (const auto& p : points) values.push_back(median(p.values));
    std::vector<ChangePoint> cps = detect_change_points(values, opt);

    nlohmann::json cps_json = nlohmann::json::array();
    for (const auto& cp : cps) {
      const CommitPoint& at = points.at(cp.index);
      cps_json.push_back(
          {{"index", cp.index},
           {"commit", at.commit},
           {"subject", at.subject},
           {"before", cp.before},
           {"after", cp.after},
           {"ratio", cp.before != 0 ? nlohmann::json(cp.after / cp.before) : nullptr},
           {"p_value", cp.p_value}});
    }
    const nlohmann::json env = environment_to_json(series.env);
    series_json.push_back({{"id", series.id},
                           {"key", cell_key_to_json(series.key)},
                           {"env", env},
                           {"commits", points.size()},
                           {"change_points", cps_json}});

    if (f.format == "text") {
      std::cout << fmt::format("series {}: {} [{}]  {}, {}\n", series.id, cell_label(series.key),
                               env.contains("device") ? env["device"].get<std::string>() : "",
                               report_text::plural(int(points.size()), "commit"),
                               report_text::plural(int(cps.size()), "change point"));
      if (points.size() < 2 * f.min_segment) {
        std::cout << fmt::format("  (fewer than {} commits: too short to find a change)\n",
                                 2 * f.min_segment);
      }
      for (const auto& cp : cps) {
        const CommitPoint& at = points.at(cp.index);
        std::cout << fmt::format("  {}  {} -> {} {}  x{:.3f}  p={}  {}\n",
                                 report_text::short_sha(at.commit), report_text::fmt_ms(cp.before),
                                 report_text::fmt_ms(cp.after), f.metric,
                                 cp.before != 0 ? cp.after / cp.before : NAN,
                                 report_text::fmt_p(cp.p_value), at.subject);
      }
    }
  }
  if (f.format == "json") {
    std::cout << nlohmann::json{{"metric", f.metric}, {"series", series_json}}.dump(2) << '\n';
  } else if (series_json.empty()) {
    std::cout << "no stored series with " << f.metric << " values\n";
  }
  return kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& root, Action& action) {
  auto f = std::make_shared<CompareFlags>();
  CLI::App* c = root.add_subcommand(
      "compare", "the merge gate: is head's decode latency significantly worse than base's?");
  c->add_option("--base", f->base,
                "base revision: stored SHA or prefix, git revision, or 'merge-base'")
      ->required();
  c->add_option("--head", f->head, "head revision: stored SHA or prefix, or git revision")
      ->required();
  c->add_option("--db", f->db, "SQLite store")->capture_default_str();
  c->add_option("--repo", f->repo, "git repository that resolves revisions")->capture_default_str();
  c->add_option("--main", f->main_branch,
                "main branch for --base merge-base (origin/<main> is "
                "tried too)")
      ->capture_default_str();
  c->add_option("--alpha", f->alpha, "significance level after correction, in (0, 1)")
      ->capture_default_str();
  c->add_option("--min-effect", f->min_effect_text,
                "smallest relative change that counts, >= 0, or 'auto': 3 x the run-to-run sd "
                "measured in the store's history of these cells, at least --min-effect-floor")
      ->capture_default_str();
  c->add_option("--min-effect-floor", f->min_effect_floor, "lower bound of --min-effect auto")
      ->capture_default_str();
  c->add_option("--power", f->power,
                "probability with which the gate must catch a slowdown of --min-effect (the "
                "minimum detectable effect is reported at this power)")
      ->capture_default_str();
  c->add_flag("--require-power", f->require_power,
              "an underpowered gate (minimum detectable effect above --min-effect) is "
              "inconclusive (exit 3) instead of a pass");
  c->add_option("--look", f->look,
                "sequential testing: this comparison is look K of --max-looks (each at alpha / "
                "max-looks); JSON sequential.next says whether to measure another round")
      ->capture_default_str();
  c->add_option("--max-looks", f->max_looks, "sequential testing: the most looks allowed")
      ->capture_default_str();
  c->add_option("--correction", f->correction, "multiple-comparison control: holm or bh")
      ->capture_default_str();
  c->add_option("--format", f->format, "table, markdown, json or csv")->capture_default_str();
  c->add_flag("--github", f->github, "also print GitHub ::error / ::warning workflow commands");
  c->add_flag("--allow-missing-baseline", f->allow_missing_baseline,
              "cells without a baseline do not make the gate inconclusive");
  c->add_option("--output", f->output, "write the report to FILE instead of stdout");
  c->add_option("--json", f->json_output, "also write the JSON report to FILE");
  c->add_option("--seed", f->seed, "bootstrap seed (same data, same interval)")
      ->capture_default_str();
  c->add_option("--note", f->notes, "a line to show in the report (repeatable)");
  c->callback([f, &action] { action = [f] { return run_compare(*f); }; });
}

void add_changes_command(CLI::App& root, Action& action) {
  auto f = std::make_shared<ChangesFlags>();
  CLI::App* c = root.add_subcommand("changes", "change points of every stored series");
  c->add_option("--db", f->db, "SQLite store")->capture_default_str();
  c->add_option("--metric", f->metric, "metric to scan")->capture_default_str();
  c->add_option("--min-segment", f->min_segment, "commits needed on each side of a change")
      ->capture_default_str();
  c->add_option("--alpha", f->alpha, "significance of each split")->capture_default_str();
  c->add_option("--format", f->format, "text or json")->capture_default_str();
  c->callback([f, &action] { action = [f] { return run_changes(*f); }; });
}

}  // namespace pg::cli
