// Regressions as alerts: every series that currently stands in a regression (series_view.h's
// current_regression, on the main branch, tpot_ms: the gated metric), joined with its triage
// state from the store's append-only event log. Open until someone acknowledges (still open, but
// owned), dismisses (with a reason) or marks it fixed; a later regression at another commit is a
// new alert.
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "web/app.h"

namespace pg::web {

struct RegressionAlert {
  std::shared_ptr<const SeriesView> view;
  CurrentRegression regression;
  std::string commit, subject, time;           // the first bad commit
  std::string parent;                          // the point before it (empty when none)
  size_t commits_since = 0;                    // points after the first bad one
  std::string state = "open";                  // open | acknowledged | dismissed | fixed
  std::vector<Store::RegressionEvent> events;  // this alert's, oldest first
  bool is_open() const { return state == "open" || state == "acknowledged"; }
};

struct RegressionsModel {
  std::vector<RegressionAlert> alerts;  // largest open first, then the closed ones
  size_t open = 0, acknowledged = 0, closed = 0;
  std::string branch;
};

// The state after a list of events (oldest first): the latest event decides.
std::string triage_state(const std::vector<Store::RegressionEvent>& events);

std::shared_ptr<const RegressionsModel> build_regressions(App& app, uint64_t gen);
nlohmann::json regressions_json(const RegressionsModel& m);
// The alert of one series (nullptr: none), for the overview's badges.
const RegressionAlert* find_alert(const RegressionsModel& m, int64_t series_id);

}  // namespace pg::web
