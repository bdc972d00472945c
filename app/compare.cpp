#include "app/compare.h"

#include "app/acceptance.h"
#include "app/export_check.h"

#include <algorithm>
#include <map>

#include "app/explain.h"
#include "app/trusted_history.h"
#include "core/cell_label.h"
#include "gate/auto_min_effect.h"

namespace pg::app {

namespace {

// The history behind min_effect 'auto': every stored run of each head cell's series (same key,
// same comparable environment), except the head's own runs, which are what is being judged.
std::map<CellKey, std::vector<gate::HistoryRun>> min_effect_history(
    store::Store& store, const std::vector<Run>& head_runs, const std::string& head_sha) {
  std::map<CellKey, std::vector<gate::HistoryRun>> history;
  for (const CellResult& cell : head_runs.front().cells) {
    auto series = store.find_series(cell.key, head_runs.front().env);
    if (!series || history.contains(cell.key)) continue;
    auto& runs = history[cell.key];
    for (const store::SeriesSample& s : store.series_samples(*series, /*with_samples=*/false)) {
      if (s.status != CellStatus::ok || s.commit.empty() || s.commit == head_sha) continue;
      runs.push_back({s.commit, s.rep_tpot_ms});
    }
  }
  return history;
}

// What the trusted history held, for the reader: the per-cell use is in the rule and the cells.
std::string history_note(const stats::TrustedHistory& h, const std::string& name) {
  if (h.empty())
    return "trusted history " + name +
           ": no cell of the head has 2 or more runs of another commit there on this environment "
           "with its number of repetitions, so the run variance is the gate's own";
  int runs = 0, commits = 0;
  for (const auto& [cell, v] : h) {
    runs = std::max(runs, v.runs);
    commits = std::max(commits, v.commits);
  }
  return "trusted history " + name + ": a run variance for " + std::to_string(h.size()) +
         " cells, from up to " + std::to_string(runs) + " runs of " + std::to_string(commits) +
         " commits each";
}

void note_dirty(const std::vector<Run>& runs, const char* side, std::vector<std::string>& notes) {
  const long dirty =
      std::count_if(runs.begin(), runs.end(), [](const Run& r) { return r.git.dirty; });
  if (dirty > 0)
    notes.push_back(std::to_string(dirty) + " of " + std::to_string(runs.size()) + " " + side +
                    " runs were measured on a dirty work tree");
}

// fail_on_counter_change: an exact counter that changed is a regression whatever the timing
// test said (docs/CLI.md, "Explanations").
void fail_on_counter_change(Comparison& c) {
  std::vector<std::string> changed;
  for (const gate::CellExplanation& e : c.explanations)
    if (e.counters_changed()) changed.push_back(cell_label(e.key));
  if (changed.empty()) return;
  std::string w = "exact profile counters changed in " + std::to_string(changed.size()) +
                  (changed.size() == 1 ? " cell" : " cells") + " (" +
                  SettingError::setting("fail_on_counter_change") + "):";
  for (const auto& label : changed) w += " " + label + ";";
  w.pop_back();
  c.result.warnings.push_back(w);
  c.result.verdict = gate::GateVerdict::regression;
}

// A/A of one commit measured by `perfgate ab` (both checkouts at one commit): its A/B runs are
// judged side against side, base side as the base, so the paired test sees its pairs.
void split_one_commits_ab_runs(Comparison& c) {
  auto side_is = [](const char* side) {
    return [side](const Run& r) { return !r.ab || r.ab->side != side; };
  };
  const bool all_ab = std::all_of(c.base_runs.begin(), c.base_runs.end(),
                                  [](const Run& r) { return r.ab.has_value(); });
  if (!all_ab || c.base_runs.empty()) return;
  std::erase_if(c.base_runs, side_is("base"));
  std::erase_if(c.head_runs, side_is("head"));
  c.notes.push_back("one commit's A/B runs: their base sides against their head sides");
}

// Whether the two sides differ only in their export, and whether a tuned export could decide the
// verdict (app/export_check.h): said in the warnings; such a gate is refused (inconclusive, and
// more rounds would not help).
void judge_exports(Comparison& c, bool allow_unreplayed_tuning) {
  ExportCheck check = check_exports(c.result.base_env, c.result.head_env, allow_unreplayed_tuning);
  for (std::string& w : check.warnings) c.result.warnings.push_back(std::move(w));
  if (!check.refuse) return;
  c.result.verdict = gate::GateVerdict::inconclusive;
  c.result.next = gate::NextStep::stop;
  c.result.next_reason = "export";
}

}  // namespace

Comparison compare(store::Store& store, const std::string& base_sha, const std::string& head_sha,
                   const GateSettings& settings, const CompareScope& scope,
                   const SettingSpelling& spell) {
  validate(settings);
  Comparison c;
  c.base_runs = store.runs_for_commit(base_sha);
  c.head_runs = store.runs_for_commit(head_sha);
  if (base_sha == head_sha) split_one_commits_ab_runs(c);
  if (scope.device) {
    auto other_device = [&](const Run& r) {
      auto it = r.env.find("device");
      return it == r.env.end() || it->second != *scope.device;
    };
    std::erase_if(c.base_runs, other_device);
    std::erase_if(c.head_runs, other_device);
    if (c.head_runs.empty())
      throw NoHeadRuns("no stored run of " + head_sha + " on device '" + *scope.device + "'");
    c.notes.push_back("runs filtered to device '" + *scope.device + "'");
  }
  if (c.head_runs.empty()) throw NoHeadRuns("no stored run of commit " + head_sha);
  note_dirty(c.base_runs, "base", c.notes);
  note_dirty(c.head_runs, "head", c.notes);

  gate::GateOptions opt = settings.gate;
  if (settings.min_effect_auto) {
    const gate::AutoMinEffect a = gate::auto_min_effect(
        min_effect_history(scope.history ? *scope.history : store, c.head_runs, head_sha),
        settings.min_effect_floor, gate::GateOptions{}.min_effect);
    // 'auto' learns decode latency's spread: every other metric keeps its own value, or the
    // fixed default (docs/STATISTICS.md "More than one metric").
    for (const std::string& metric : opt.metrics)
      if (metric != "tpot_ms" && !opt.metric_min_effect.contains(metric))
        opt.metric_min_effect[metric] = gate::GateOptions{}.min_effect;
    opt.min_effect = a.value;
    opt.min_effect_source = a.reason;
  }
  stats::TrustedHistory history;
  if (scope.history) {
    history = trusted_history(*scope.history, c.head_runs, opt.metrics, {base_sha, head_sha});
    c.notes.push_back(history_note(history, scope.history_name));
  }
  std::vector<store::Store::Acceptance> accepted;
  if (scope.acceptances) accepted = apply_acceptances(*scope.acceptances, scope.ref, opt);
  c.result = gate::evaluate_gate(base_sha, c.base_runs, head_sha, c.head_runs, opt, history);
  for (std::string& note : acceptance_notes(accepted, c.result)) c.notes.push_back(std::move(note));
  c.explanations = explain(c.result, c.base_runs, c.head_runs);
  if (settings.fail_on_counter_change) fail_on_counter_change(c);
  judge_exports(c, settings.allow_unreplayed_tuning);
  for (std::string& w : c.result.warnings) w = SettingError::spell_settings(w, spell);
  for (gate::CellComparison& cell : c.result.cells)
    cell.note = SettingError::spell_settings(cell.note, spell);
  return c;
}

}  // namespace pg::app
