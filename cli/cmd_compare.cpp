// `perfgate compare`: the merge gate (app/compare.h) with revisions resolved through git, and its
// reports.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <sstream>

#include "app/compare.h"
#include "gate/gate_json.h"
#include "gate/report.h"
#include "gate/report_text.h"
#include "gate/revision.h"
#include "cli/commands.h"
#include "cli/setting_flags.h"
#include "common/errors.h"
#include "stats/gate.h"
#include "store/atomic_file.h"
#include "store/store.h"

namespace pg::cli {
namespace {

struct CompareFlags {
  std::string base, head, db = "perfgate.db", repo = ".", main_branch = "main";
  app::GateSettings settings;  // the gate's settings, their defaults and rules: app/gate_settings.h
  std::string min_effect_text = app::min_effect_text(settings);  // a number, or "auto"
  std::string format = "table", output, json_output;
  bool github = false;
  std::vector<std::string> notes;
};

void validate(CompareFlags& f) {
  try {
    app::set_min_effect(f.settings, f.min_effect_text);
    app::validate(f.settings);
  } catch (const app::SettingError& e) {
    throw as_flag_error(e);
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

int run_compare(CompareFlags f) {
  validate(f);
  auto store = open_existing_db(f.db);
  RevisionContext ctx{store.get(), f.repo, f.main_branch};
  if (f.head == kMergeBaseRevision) throw UsageError("--head cannot be 'merge-base'");
  ResolvedRevision head = resolve_revision(f.head, ctx);
  ResolvedRevision base = f.base == kMergeBaseRevision ? resolve_merge_base(head.sha, ctx)
                                                       : resolve_revision(f.base, ctx);

  app::Comparison c;
  try {
    c = app::compare(*store, base.sha, head.sha, f.settings);
  } catch (const app::NoHeadRuns&) {
    throw UsageError(
        fmt::format("--head {}: no stored run of commit {} in {} (benchmark it "
                    "first with `perfgate run --repo ... --db {}`)",
                    f.head, head.sha, f.db, f.db));
  }
  ReportInfo info{f.base, f.head, base.source, head.source, f.notes};
  if (base.source == "merge-base") {
    info.notes.push_back(fmt::format("base = merge-base of head {} and {}: {}",
                                     report_text::short_sha(head.sha), f.main_branch, base.sha));
  }
  info.notes.insert(info.notes.end(), c.notes.begin(), c.notes.end());
  const GateResult& result = c.result;

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
  c->add_option("--alpha", f->settings.gate.alpha, "significance level after correction, in (0, 1)")
      ->capture_default_str();
  c->add_option("--min-effect", f->min_effect_text,
                "smallest relative change that counts, >= 0, or 'auto': 3 x the run-to-run sd "
                "measured in the store's history of these cells, at least --min-effect-floor")
      ->capture_default_str();
  c->add_option("--min-effect-floor", f->settings.min_effect_floor,
                "lower bound of --min-effect auto")
      ->capture_default_str();
  c->add_option("--power", f->settings.gate.power,
                "probability with which the gate must catch a slowdown of --min-effect (the "
                "minimum detectable effect is reported at this power)")
      ->capture_default_str();
  c->add_flag("--require-power", f->settings.gate.require_power,
              "an underpowered gate (minimum detectable effect above --min-effect) is "
              "inconclusive (exit 3) instead of a pass");
  c->add_option("--look", f->settings.gate.look,
                "sequential testing: this comparison is look K of --max-looks (each at alpha / "
                "max-looks); JSON sequential.next says whether to measure another round")
      ->capture_default_str();
  c->add_option("--max-looks", f->settings.gate.max_looks,
                "sequential testing: the most looks allowed")
      ->capture_default_str();
  c->add_option("--correction", f->settings.gate.correction,
                "multiple-comparison control: holm or bh")
      ->capture_default_str();
  c->add_option("--format", f->format, "table, markdown, json or csv")->capture_default_str();
  c->add_flag("--github", f->github, "also print GitHub ::error / ::warning workflow commands");
  c->add_flag("--allow-missing-baseline", f->settings.gate.allow_missing_baseline,
              "cells without a baseline do not make the gate inconclusive");
  c->add_option("--output", f->output, "write the report to FILE instead of stdout");
  c->add_option("--json", f->json_output, "also write the JSON report to FILE");
  c->add_option("--seed", f->settings.gate.seed, "bootstrap seed (same data, same interval)")
      ->capture_default_str();
  c->add_option("--note", f->notes, "a line to show in the report (repeatable)");
  c->callback([f, &action] { action = [f] { return run_compare(*f); }; });
}

}  // namespace pg::cli
