// Regressions as alerts from two sources: every series that currently stands in a regression
// (series_view.h's current_regression, on the main branch, tpot_ms: the gated metric), and every
// stored gate result whose verdict was regression (the newest gate of its base/head pair; see
// triage_gates.cpp), each joined with its triage state from the store's append-only event logs.
// Open until someone acknowledges (still open, but owned), dismisses (with a reason) or marks it
// fixed, or a later change point returns the series to its old level (fixed, detected); a later
// regression at another commit is a new alert, and the earlier one stays.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/gate_record.h"
#include "web/views/alert_state.h"
#include "web/views/app.h"

namespace pg::web {

struct RegressionAlert {
  std::shared_ptr<const SeriesView> view;
  CurrentRegression regression;
  std::string commit, subject, time;    // the first bad commit
  std::string parent;                   // the point before it (empty when none)
  size_t commits_since = 0;             // points after the first bad one
  AlertState state = AlertState::open;  // open | acknowledged | dismissed | fixed
  // Fixed without anyone acting: a later change point returned the series to its old level (the
  // first commit of that level). A person's reopen overrides it.
  std::string fixed_by_commit;
  // The regression the series stands in now (current_regression): its state is the series'.
  bool current = false;
  std::vector<store::Store::RegressionEvent> events;  // this alert's, oldest first
  bool is_open() const { return web::is_open(state); }
};

// A stored gate that found a regression: its first bad commit is the gate's head.
struct GateAlert {
  store::Store::GateRecord gate;
  nlohmann::json settings;              // what the verdict was decided under
  std::optional<app::WorstCell> worst;  // the size: the worst regressed cell
  size_t regressed_cells = 0, cells = 0;
  AlertState state = AlertState::open;  // open | acknowledged | dismissed | fixed | superseded
  std::string superseded_by;            // head of a later passing gate on the same ref
  std::vector<store::Store::GateEvent> events;  // oldest first
  bool is_open() const { return web::is_open(state); }
};

// Every alert that names one first bad commit, series and gates alike: one cause, one row.
struct AlertGroup {
  std::string commit, subject,
      time;                         // the first bad commit (subject and time when a series has it)
  std::vector<size_t> alerts;       // indices into RegressionsModel::alerts
  std::vector<size_t> gate_alerts;  // and into RegressionsModel::gate_alerts
  double worst = 0;                 // the largest slowdown among the members
  double typical = 0;               // the members' median slowdown
  // open: a member is open and not acknowledged; acknowledged: every open member is; else the
  // members' one closed state (dismissed, fixed, superseded), or "closed" when they differ.
  AlertState state = AlertState::open;
  std::vector<std::string> devices;  // of the series members, sorted
  std::vector<std::string> refs;     // of the gate members, sorted; the series' are the main branch
  size_t commits_since = 0;          // the most among the series members
  bool is_open() const { return web::is_open(state); }
};

struct RegressionsModel {
  std::vector<RegressionAlert> alerts;  // largest open first, then the closed ones
  std::vector<GateAlert> gate_alerts;   // open first, newest first
  std::vector<AlertGroup> groups;       // open first, then by size (alert_groups)
  size_t open = 0, acknowledged = 0, closed = 0;
  std::string branch;
  // Series whose views are still being computed (regressions_by): not in `alerts` or the counts.
  std::vector<store::SeriesInfo> computing;
  bool complete() const { return computing.empty(); }
};

// One triage event as the API shows it (either log): id, action, reason, author, at, and via:
// how the author was authenticated (token, header, legacy; typed for events stored before).
template <class Event>
nlohmann::json triage_event_json(const Event& e) {
  return {{"id", e.id},         {"action", e.action}, {"reason", e.reason},
          {"author", e.author}, {"at", e.at},         {"via", e.via}};
}
template <class Event>
nlohmann::json triage_events_json(const std::vector<Event>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : events) out.push_back(triage_event_json(e));
  return out;
}

// The state after the latest event's action (empty: none): open, acknowledged, dismissed, fixed.
AlertState triage_state(const std::string& last_action);

// The gate alerts of the stored gate results, counted into m's open / acknowledged / closed.
void add_gate_alerts(store::Store& store, RegressionsModel& m);
nlohmann::json gate_alerts_json(const RegressionsModel& m);

// The model's alerts grouped by first bad commit (triage_groups.cpp).
std::vector<AlertGroup> alert_groups(const RegressionsModel& m);
nlohmann::json alert_groups_json(const RegressionsModel& m);
// Whether a member in `state` takes `action` in a bulk action on its group: acknowledge the open
// ones, dismiss or fix the open and acknowledged ones, reopen the closed ones.
bool bulk_action_applies(const std::string& action, AlertState state);

// Every series' views computed first (and the model kept for `gen`).
std::shared_ptr<const RegressionsModel> build_regressions(App& app, uint64_t gen);
// The model as far as the views are computed by `deadline` (App::default_views_by); when some
// are not, they are listed in `computing` and the model is not kept.
std::shared_ptr<const RegressionsModel> regressions_by(
    App& app, uint64_t gen, std::chrono::steady_clock::time_point deadline);
nlohmann::json regressions_json(const RegressionsModel& m);
// One alert as /api/v1/regressions lists it (and the series document's "alerts").
nlohmann::json regression_alert_json(const RegressionAlert& a);
// The alerts of each view (main branch, tpot_ms: what the regressions page lists), oldest first,
// with their triage state, from one read of the store's records; the ones seen for the first
// time are kept, as the page keeps them.
std::vector<std::vector<RegressionAlert>> series_alerts(
    App& app, const std::vector<std::shared_ptr<const SeriesView>>& views);
// Each series document's "alerts": series_alerts as regression_alert_json less the series' own
// fields; empty for another metric or branch, which the regressions page does not watch.
std::vector<nlohmann::json> series_alerts_json(
    App& app, uint64_t gen, const std::vector<std::shared_ptr<const SeriesView>>& views);
// The alert of one series (nullptr: none), for the overview's badges.
const RegressionAlert* find_alert(const RegressionsModel& m, int64_t series_id);

}  // namespace pg::web
