// `perfgate compare`: the merge gate (app/compare.h) with revisions resolved through git, and its
// reports.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "app/acceptance.h"
#include "app/compare.h"
#include "app/gate_record.h"
#include "app/revision.h"
#include "cli/commands.h"
#include "cli/setting_flags.h"
#include "common/errors.h"
#include "gate/gate.h"
#include "gate/gate_json.h"
#include "gate/report.h"
#include "gate/report_links.h"
#include "gate/report_text.h"
#include "remote/submit.h"
#include "store/atomic_file.h"
#include "store/store.h"

namespace pg::cli {
namespace {

struct CompareFlags {
  std::string base, head, db = "perfgate.db", repo = ".", main_branch = "main";
  std::string history_db;      // trusted runs for the run variance (docs/STATISTICS.md)
  std::string acceptances;     // a store or a perfgate serve holding accepted slowdowns
  app::GateSettings settings;  // the gate's settings, their defaults and rules: app/gate_settings.h
  std::string min_effect_text = app::min_effect_text(settings);  // a number, or "auto"
  std::string metrics_text = app::metrics_text(settings);
  std::string format = "table", output, json_output;
  bool github = false;
  std::vector<std::string> notes;
  std::string dashboard_url;  // the reports link to this perfgate serve (gate/report_links.h)
  // Keeping the result as an alert source (docs/CLI.md, "Recording a gate").
  bool record = false;
  std::string submit_url, token_file, ref, submitted_by;
};

void validate(CompareFlags& f) {
  app::set_min_effect(f.settings, f.min_effect_text);
  app::set_metrics(f.settings, f.metrics_text);
  app::validate(f.settings);
  if (f.format != "table" && f.format != "markdown" && f.format != "json" && f.format != "csv") {
    throw UsageError("--format must be table, markdown, json or csv, got '" + f.format + "'");
  }
  if (f.submit_url.empty() != f.token_file.empty())
    throw UsageError(f.submit_url.empty() ? "--token-file is only used with --submit URL"
                                          : "--submit needs --token-file FILE (the ingest token)");
  if (!f.record && f.submit_url.empty() && !f.submitted_by.empty())
    throw UsageError("--submitted-by describes a gate kept by --record or --submit");
  if (!f.record && f.submit_url.empty() && f.acceptances.empty() && !f.ref.empty())
    throw UsageError(
        "--ref names the ref of a gate kept by --record or --submit, or whose --acceptances apply");
  if (!f.acceptances.empty() && f.ref.empty())
    throw UsageError("--acceptances needs --ref REF: acceptances are for the gates of one ref");
  if (!f.dashboard_url.empty()) gate::report_links::check_dashboard_url(f.dashboard_url);
  if (f.submitted_by.empty()) f.submitted_by = default_user_name();
  app::check_gate_label(f.ref, "--ref", app::kMaxGateRef);
  app::check_gate_label(f.submitted_by, "--submitted-by", app::kMaxGateSubmitter);
}

// --record into the store, --submit to a server: after the report is out, so a failure to keep
// the result never hides the verdict. Both store the same record (app/gate_record.h).
void keep_result(const CompareFlags& f, const std::string& gate_json) {
  const auto doc = nlohmann::json::parse(gate_json);
  if (f.record) {
    store::Store store(f.db);
    auto r = store.add_gate_result(
        app::gate_record_from_json(doc, "--record", "cli", f.ref, f.submitted_by));
    std::cerr << fmt::format("recorded gate result {} in {}\n", r.id, f.db);
  }
  if (!f.submit_url.empty()) {
    const remote::SubmitTarget target =
        remote::parse_submit_url(f.submit_url, "--submit", "/api/v1/gates");
    nlohmann::json body = doc;
    if (!f.ref.empty()) body["ref"] = f.ref;
    body["submitted_by"] = f.submitted_by;
    remote::submit_run_json(target, read_token_file(f.token_file), body.dump());
    std::cerr << fmt::format("submitted the gate result to {}{}\n", target.scheme_host_port,
                             target.path);
  }
}

// The accepted slowdowns of --ref from --acceptances: a store file (missing: exit 2), or a
// perfgate serve's GET /api/v1/acceptances. A server that cannot answer is said in a note and the
// gate judges without them: failing to find an acceptance can only fail a gate, never pass one.
std::vector<store::Store::Acceptance> load_acceptances(const CompareFlags& f,
                                                       std::vector<std::string>& notes) {
  if (f.acceptances.rfind("http://", 0) != 0 && f.acceptances.rfind("https://", 0) != 0)
    return open_existing_db(f.acceptances, "--acceptances")->acceptances(f.ref);
  const remote::SubmitTarget target =
      remote::parse_submit_url(f.acceptances, "--acceptances", "/api/v1/acceptances");
  try {
    return app::acceptances_from_json(remote::get_json(target, {{"ref", f.ref}}), "--acceptances");
  } catch (const std::runtime_error& e) {
    const std::string why =
        fmt::format("Accepted slowdowns not read ({}): judged against the base alone.", e.what());
    std::cerr << "perfgate: warning: " << why << "\n";
    notes.push_back(why);
    return {};
  }
}

std::string render(const gate::GateReporter& reporter, const gate::GateResult& r,
                   const gate::ReportInfo& info) {
  std::ostringstream s;
  reporter.report(r, info, s);
  return s.str();
}

int run_compare(CompareFlags f) {
  validate(f);
  if (!f.submit_url.empty()) {  // refuse a bad URL or token file before measuring anything
    remote::parse_submit_url(f.submit_url, "--submit", "/api/v1/gates");
    read_token_file(f.token_file);
  }
  auto store = open_existing_db(f.db);
  app::RevisionContext ctx{store.get(), f.repo, f.main_branch};
  if (f.head == app::kMergeBaseRevision) throw UsageError("--head cannot be 'merge-base'");
  app::ResolvedRevision head = app::resolve_revision(f.head, ctx);
  app::ResolvedRevision base = f.base == app::kMergeBaseRevision
                                   ? app::resolve_merge_base(head.sha, ctx)
                                   : app::resolve_revision(f.base, ctx);

  app::CompareScope scope;
  std::unique_ptr<store::Store> history;
  if (!f.history_db.empty()) {
    history = open_existing_db(f.history_db, "--history");
    scope.history = history.get();
    scope.history_name = f.history_db;
  }
  std::vector<std::string> source_notes;
  std::vector<store::Store::Acceptance> acceptances;
  if (!f.acceptances.empty()) {
    acceptances = load_acceptances(f, source_notes);
    scope.acceptances = &acceptances;
    scope.ref = f.ref;
  }
  app::Comparison c;
  try {
    c = app::compare(*store, base.sha, head.sha, f.settings, scope, flag_for_setting);
  } catch (const app::NoHeadRuns&) {
    throw UsageError(
        fmt::format("--head {}: no stored run of commit {} in {} (benchmark it "
                    "first with `perfgate run --repo ... --db {}`)",
                    f.head, head.sha, f.db, f.db));
  }
  gate::ReportInfo info{f.base, f.head, base.source, head.source, f.notes, c.explanations};
  info.dashboard_url = f.dashboard_url;
  if (base.source == "merge-base") {
    info.notes.push_back(fmt::format("base = merge-base of head {} and {}: {}",
                                     gate::report_text::short_sha(head.sha), f.main_branch,
                                     base.sha));
  }
  info.notes.insert(info.notes.end(), source_notes.begin(), source_notes.end());
  info.notes.insert(info.notes.end(), c.notes.begin(), c.notes.end());
  const gate::GateResult& result = c.result;

  const bool to_stdout = f.output.empty() || f.output == "-";
  auto reporter = gate::make_reporter(f.format, to_stdout && gate::stdout_wants_color());
  std::string report = render(*reporter, result, info);
  if (to_stdout) {
    std::cout << report;
  } else {
    store::write_file_atomically(f.output, report, "--output");
  }
  const std::string gate_json = render(gate::GateJsonReporter{}, result, info);
  if (!f.json_output.empty()) store::write_file_atomically(f.json_output, gate_json, "--json");
  if (f.github) {
    // Workflow commands go to stdout, unless stdout carries JSON that a tool must parse: the
    // Actions runner reads commands from both streams.
    std::ostream& cmd_out = (to_stdout && f.format == "json") ? std::cerr : std::cout;
    gate::GateGithubReporter{}.report(result, info, cmd_out);
  }
  std::cout.flush();
  store.reset();  // --record opens the file for writing
  keep_result(f, gate_json);
  return gate::gate_exit_code(result);
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
  c->add_option("--history", f->history_db,
                "trusted store (written only by pushes to main) whose replicated runs of other "
                "commits give the run variance more degrees of freedom");
  c->add_option("--acceptances", f->acceptances,
                "accepted slowdowns of --ref (`perfgate accept`): a store file, or a perfgate "
                "serve's URL; an accepted cell passes unless the head is slower than accepted");
  c->add_option("--repo", f->repo, "git repository that resolves revisions")->capture_default_str();
  c->add_option("--main", f->main_branch,
                "main branch for --base merge-base (origin/<main> is "
                "tried too)")
      ->capture_default_str();
  c->add_option("--alpha", f->settings.gate.alpha, "significance level after correction, in (0, 1)")
      ->capture_default_str();
  c->add_option("--min-effect", f->min_effect_text,
                "smallest relative change that counts, >= 0, or 'auto': 3 x the run-to-run sd "
                "measured in the store's history of these cells, at least --min-effect-floor; "
                "then METRIC=E for one metric, comma-separated (0.05,prefill_ms=0.1)")
      ->capture_default_str();
  c->add_option("--metrics", f->metrics_text,
                "metrics to gate, comma-separated: tpot_ms, prefill_ms (tested), "
                "peak_alloc_bytes (compared exactly)")
      ->capture_default_str();
  c->add_option("--memory-tolerance-bytes", f->settings.gate.memory_tolerance_bytes,
                "peak memory: a change must exceed this many bytes besides its min effect")
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
  c->add_flag("--fail-on-counter-change", f->settings.fail_on_counter_change,
              "a cell whose exact profile counters (ops, kernels, syncs, device-to-host copies, "
              "allocated bytes) changed is a regression (exit 1), whatever the timing test says");
  c->add_flag("--allow-unreplayed-tuning", f->settings.allow_unreplayed_tuning,
              "judge AOTInductor packages exported with tuned Inductor options even when the "
              "head did not replay the base's tuning choices (warned, not refused; "
              "docs/OWN_MODEL_AOTI.md)");
  c->add_option("--output", f->output, "write the report to FILE instead of stdout");
  c->add_option("--json", f->json_output, "also write the JSON report to FILE");
  c->add_option("--seed", f->settings.gate.seed, "bootstrap seed (same data, same interval)")
      ->capture_default_str();
  c->add_option("--note", f->notes, "a line to show in the report (repeatable)");
  c->add_option("--dashboard-url", f->dashboard_url,
                "a perfgate serve the reports link to: the compare page of this pair, each "
                "regressed cell's trend (http(s)://HOST[:PORT][/PREFIX])");
  c->add_flag("--record", f->record,
              "also store the result in --db as a gate result: an alert on the regressions page "
              "when it regressed, and the verdict the compare page shows for this pair");
  c->add_option("--submit", f->submit_url,
                "also POST the result to a perfgate serve at URL (its /api/v1/gates)");
  c->add_option("--token-file", f->token_file, "ingest token for --submit (a mode-600 file)");
  c->add_option(
      "--ref", f->ref,
      "branch or pull-request ref: stored with the result, and whose --acceptances apply");
  c->add_option("--submitted-by", f->submitted_by,
                "who the stored result names (default: $GITHUB_ACTOR, $USER or $LOGNAME)");
  c->callback([f, &action] { action = [f] { return run_compare(*f); }; });
}

}  // namespace pg::cli
