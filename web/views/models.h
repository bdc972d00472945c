// What each page shows, computed once and rendered twice: as HTML (pages.h) and as the page's JSON
// twin under /api/v1/. Builders take plain values (parsed from the request by web/routes/params.h)
// and throw ViewError for bad or unknown ones.
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "gate/report.h"
#include "web/views/alert_state.h"
#include "web/views/app.h"
#include "web/views/series_names.h"
#include "web/views/view_error.h"

namespace pg::web {

// --- overview -----------------------------------------------------------------------------------
struct OverviewFilter {
  std::optional<std::string> model, dtype, device;
  std::optional<int> batch, prompt;
};

struct OverviewGroup {
  std::string model, device;  // device: the environment's device name, else the cell's device
  std::vector<std::shared_ptr<const SeriesView>> series;
};

struct OverviewModel {
  OverviewFilter filter;
  std::map<std::string, std::vector<std::string>> options;  // filter name -> values present
  std::vector<OverviewGroup> groups;
  size_t total_series = 0, shown_series = 0;
  std::map<std::string, size_t> status_counts;
  size_t open_regressions = 0;                // over every series, not only the shown ones
  std::map<int64_t, AlertState> alert_state;  // series id -> its regression's triage state
  std::string branch, repo_url;
  double alpha = 0, min_effect = 0;  // serve's gate settings, to say which rule the badges use
  // false while some series' views are still being computed (App::default_views_by): those are in
  // `computing`, not in the groups, and the counts and open_regressions cover the ready ones only
  // (open_regressions is unknown until every view is ready).
  bool complete = true;
  std::vector<store::SeriesInfo> computing;  // that match the filter, series id order
};
OverviewModel build_overview(App& app, const OverviewFilter& f, uint64_t gen);
// The badge: the series' status, with its regression's triage applied ("acknowledged" while
// someone owns it; "steady" once dismissed or marked fixed).
SeriesStatus shown_status(const SeriesView& v, const OverviewModel& m);
// Whether shown_status is final without the regressions model (which needs every series' view):
// triage only ever changes a "regressed" badge.
bool status_final_without_triage(const SeriesView& v);
nlohmann::json overview_json(const OverviewModel& m);

// --- trend --------------------------------------------------------------------------------------
struct TrendModel {
  Metric metric = Metric::tpot_ms;
  std::vector<std::shared_ptr<const SeriesView>> views;
  std::string branch, main_branch, repo_url;
  std::vector<std::string> branches;  // every stored branch, for the filter
  // Other series of the same cell on the same device whose environment differs (a driver, CUDA or
  // LibTorch change starts a new series): shown as annotations where the environment changed.
  struct EnvChange {
    int64_t series_id;
    std::string first_commit, last_commit, what;  // the other series' span; "driver 550 → 560"
    size_t at_index;  // the first point of this series after the other series' last point
    bool before;      // the other series ended before this one started (else it came after)
  };
  std::vector<EnvChange> env_changes;
  std::vector<nlohmann::json> alerts;  // per view: series_alerts_json (web/views/triage.h)
};
// `branch` picks the commits drawn (routes/params.h branch_param); the main branch when not given.
// ViewError: no ids (bad input), an unknown series (not found).
TrendModel build_trend(App& app, const std::vector<int64_t>& ids, Metric metric, uint64_t gen,
                       const std::optional<std::string>& branch = std::nullopt);
// {"metric", "unit", "label", "axis": [commits in history order], "series": [series document plus
// "x" (each point's position on the axis), "name", "env_text"]}
nlohmann::json trend_json(const TrendModel& m);

// --- commits and compare (web/views/compare_model.cpp)
// ------------------------------------------------------------------------
struct CommitEntry {
  std::string sha, subject, time, branch;
  int runs = 0;
  int64_t last_run_id = 0;
};
struct CommitCatalog {
  std::vector<CommitEntry> commits;                 // newest first
  std::map<std::string, std::string> branch_heads;  // branch -> commit of its latest stored run
  std::vector<std::string> devices;                 // environment device names seen
};
std::shared_ptr<const CommitCatalog> commit_catalog(App& app, uint64_t gen);

struct CompareView {
  gate::GateResult result;
  gate::ReportInfo info;
  // For the page: each cell's series (0: none) and runs; the devices and the comparable fields
  // that differ between the two sides; the stored devices present on both.
  std::vector<int64_t> series_ids;
  std::vector<int64_t> base_run_ids, head_run_ids;
  std::vector<std::string> env_differences;  // "driver: 550.54 (base) vs 560.35 (head)"
  std::vector<std::string> common_devices;
  std::string device, repo_url;
  std::shared_ptr<const CachedBody> json;          // compare --format json; warnings in web terms
  std::optional<store::Store::GateRecord> stored;  // the newest stored gate of this base/head pair
  // The acceptances of the stored gate's ref (none without one): the page judges the pair as the
  // next gate of that ref would, with those in force (app/acceptance.h).
  std::vector<store::Store::Acceptance> acceptances;
  std::string base_subject, head_subject;  // as stored with the runs (empty when none was)
  // Each regressed cell's trend around the two commits, and its alert there, for the page's
  // triage: the series' medians from a few commits before base to a few after head.
  struct RegressedCell {
    size_t cell = 0;  // index into result.cells
    std::vector<double> medians;
    std::optional<size_t> base_at, head_at;  // in medians, when the trend holds the commit
    // The series' alert between base (excluded) and head, when it has one (web/views/triage.h).
    std::string alert_commit, alert_author, alert_at, alert_reason;
    std::optional<AlertState> alert_state;  // none: no alert there
  };
  std::vector<RegressedCell> regressed;
};
// What a compare asks besides its two revisions: gate settings that replace serve's (each as the
// client spelled it, validated by build_compare) and a device; nullopt where not given.
struct CompareParams {
  std::optional<double> alpha;
  std::optional<std::string> min_effect, metrics, correction;
  // ?device=NAME (web only) keeps the runs measured on that device, for commits benchmarked on
  // several machines; without it the JSON is exactly the CLI's.
  std::optional<std::string> device;
};
// base/head as a client spelled them: a stored SHA or unique prefix, or a stored branch name.
// ViewError: bad input for a setting out of range or a malformed or ambiguous revision, not found
// for an unknown one or a head without runs.
std::shared_ptr<const CompareView> build_compare(App& app, const CompareParams& params,
                                                 const std::string& base, const std::string& head,
                                                 uint64_t gen);

}  // namespace pg::web
