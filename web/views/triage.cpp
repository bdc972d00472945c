#include "web/views/triage.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "core/cell_key_io.h"
#include "core/cell_label.h"
#include "core/environment_json.h"
#include "web/views/series_names.h"

namespace pg::web {

AlertState triage_state(const std::string& a) {
  if (a == "acknowledge") return AlertState::acknowledged;
  if (a == "dismiss") return AlertState::dismissed;
  if (a == "fix") return AlertState::fixed;
  return AlertState::open;  // reopen
}

namespace {

using AlertKey = std::tuple<int64_t, std::string, std::string>;  // series, metric, commit

// The series' regressions: what its history shows now, and what the server listed before and
// the history no longer shows (a later, larger step, or a slowdown that ended too soon for the
// whole series' change points), in history order.
std::vector<CurrentRegression> regressions_of_series(
    const SeriesView& v, const std::map<AlertKey, store::Store::DetectedRegression>& kept) {
  std::vector<CurrentRegression> regs = regression_history(v);
  const std::string metric = metric_info(v.metric).name;
  for (size_t i = 0; i < v.points.size(); ++i) {
    auto it = kept.find({v.info.id, metric, v.points[i].commit});
    if (it == kept.end() ||
        std::any_of(regs.begin(), regs.end(), [&](const auto& r) { return r.index == i; }))
      continue;
    const store::Store::DetectedRegression& d = it->second;
    // One a server with a smaller min effect found: this server's rule does not call it one.
    if (std::fabs(d.relative) < v.rules.min_effect) continue;
    regs.push_back({i, d.relative, d.before, d.source, returned_after(v, i, d.before)});
  }
  std::sort(regs.begin(), regs.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  return regs;
}

// Keeps the alerts listed for the first time, so they stay. A database serve cannot write to
// still shows what its history shows, with a warning.
void keep_new_alerts(store::Store& store,
                     const std::vector<store::Store::DetectedRegression>& found) {
  if (found.empty()) return;
  try {
    store.record_detected_regressions(found);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perfgate serve: could not keep %zu new alert(s): %s\n", found.size(),
                 e.what());
  }
}

// What the store knows of alerts: the triage log and the regressions listed before.
struct AlertRecords {
  std::map<AlertKey, std::vector<store::Store::RegressionEvent>> log;
  std::map<AlertKey, store::Store::DetectedRegression> kept;
  explicit AlertRecords(store::Store& store) {
    for (auto& e : store.regression_events())
      log[{e.series_id, e.metric, e.commit}].push_back(std::move(e));
    for (auto& d : store.detected_regressions())
      kept.emplace(AlertKey{d.series_id, d.metric, d.commit}, std::move(d));
  }
};

// The alerts of one series, with their triage state; the ones listed for the first time are
// added to `found`.
std::vector<RegressionAlert> alerts_of_view(const std::shared_ptr<const SeriesView>& v,
                                            const AlertRecords& records,
                                            std::vector<store::Store::DetectedRegression>& found) {
  std::vector<RegressionAlert> out;
  const auto now = current_regression(*v);
  const std::string metric = metric_info(v->metric).name;
  for (const CurrentRegression& reg : regressions_of_series(*v, records.kept)) {
    const SeriesPoint& p = v->points[reg.index];
    if (p.commit.empty()) continue;  // a run outside a repository cannot be named
    const AlertKey key{v->info.id, metric, p.commit};
    if (!records.kept.count(key))
      found.push_back({0, v->info.id, metric, p.commit, reg.source, reg.before, reg.relative, ""});
    RegressionAlert a;
    a.view = v;
    a.regression = reg;
    a.commit = p.commit;
    a.subject = p.subject;
    a.time = p.time;
    a.current = now && now->index == reg.index;
    if (reg.index > 0) a.parent = v->points[reg.index - 1].commit;
    a.commits_since = v->points.size() - 1 - reg.index;
    if (auto it = records.log.find(key); it != records.log.end()) a.events = it->second;
    const std::string last = a.events.empty() ? "" : a.events.back().action;
    a.state = triage_state(last);
    // Detected fixed (LNT), unless someone closed it already, or reopened it.
    if (reg.returned_at && a.is_open() && last != "reopen") {
      a.state = AlertState::fixed;
      a.fixed_by_commit = v->points[*reg.returned_at].commit;
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::shared_ptr<RegressionsModel> regressions_of(
    App& app, uint64_t gen, const std::vector<std::shared_ptr<const SeriesView>>& views) {
  auto m = std::make_shared<RegressionsModel>();
  m->branch = app.main_branch(gen);
  const AlertRecords records(app.store());
  std::vector<store::Store::DetectedRegression> found;
  for (const auto& v : views)
    for (RegressionAlert& a : alerts_of_view(v, records, found)) {
      if (a.state == AlertState::open) ++m->open;
      if (a.state == AlertState::acknowledged) ++m->acknowledged;
      if (!a.is_open()) ++m->closed;
      m->alerts.push_back(std::move(a));
    }
  keep_new_alerts(app.store(), found);
  std::stable_sort(m->alerts.begin(), m->alerts.end(), [](const auto& x, const auto& y) {
    return std::make_tuple(!x.is_open(), -std::fabs(x.regression.relative)) <
           std::make_tuple(!y.is_open(), -std::fabs(y.regression.relative));
  });
  add_gate_alerts(app.store(), *m);
  m->groups = alert_groups(*m);
  return m;
}

}  // namespace

std::shared_ptr<const RegressionsModel> build_regressions(App& app, uint64_t gen) {
  return app.regressions_cache().get("all", gen,
                                     [&] { return regressions_of(app, gen, app.all_views(gen)); });
}

std::shared_ptr<const RegressionsModel> regressions_by(
    App& app, uint64_t gen, std::chrono::steady_clock::time_point deadline) {
  if (auto kept = app.regressions_cache().peek("all", gen)) return kept;
  auto progress = app.default_views_by(gen, deadline);
  if (progress.complete()) return build_regressions(app, gen);
  auto m = regressions_of(app, gen, progress.ready);
  m->computing = std::move(progress.pending);
  return m;
}

std::vector<std::vector<RegressionAlert>> series_alerts(
    App& app, const std::vector<std::shared_ptr<const SeriesView>>& views) {
  const AlertRecords records(app.store());  // read once for every view
  std::vector<store::Store::DetectedRegression> found;
  std::vector<std::vector<RegressionAlert>> out;
  for (const auto& v : views) out.push_back(alerts_of_view(v, records, found));
  keep_new_alerts(app.store(), found);
  return out;
}

std::vector<nlohmann::json> series_alerts_json(
    App& app, uint64_t gen, const std::vector<std::shared_ptr<const SeriesView>>& views) {
  // Only the views the regressions page watches; the others have none.
  std::vector<std::shared_ptr<const SeriesView>> watched;
  for (const auto& v : views)
    if (v->metric == Metric::tpot_ms && v->rules.branch == app.main_branch(gen))
      watched.push_back(v);
  const auto alerts = series_alerts(app, watched);
  std::vector<nlohmann::json> out;
  for (size_t i = 0, w = 0; i < views.size(); ++i) {
    nlohmann::json list = nlohmann::json::array();
    if (w < watched.size() && watched[w] == views[i])
      for (const RegressionAlert& a : alerts[w++]) {
        nlohmann::json j = regression_alert_json(a);
        for (const char* same : {"series_id", "series", "key", "env", "metric"}) j.erase(same);
        list.push_back(std::move(j));
      }
    out.push_back(std::move(list));
  }
  return out;
}

const RegressionAlert* find_alert(const RegressionsModel& m, int64_t series_id) {
  for (const auto& a : m.alerts)
    if (a.view->info.id == series_id && a.current) return &a;
  return nullptr;
}

nlohmann::json regression_alert_json(const RegressionAlert& a) {
  return {{"series_id", a.view->info.id},
          {"series", series_name(a.view->info)},
          {"key", cell_key_to_json(a.view->info.key)},
          {"env", environment_to_json(a.view->info.env)},
          {"metric", metric_info(a.view->metric).name},
          {"commit", a.commit},
          {"parent", a.parent.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.parent)},
          {"subject", a.subject},
          {"time", a.time},
          {"relative", a.regression.relative},
          {"source", a.regression.source},
          {"commits_since", a.commits_since},
          {"state", to_string(a.state)},
          {"fixed_by",
           a.fixed_by_commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.fixed_by_commit)},
          {"current", a.current},
          {"events", triage_events_json(a.events)}};
}

nlohmann::json regressions_json(const RegressionsModel& m) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& a : m.alerts) list.push_back(regression_alert_json(a));
  return {{"branch", m.branch.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.branch)},
          {"open", m.open},
          {"acknowledged", m.acknowledged},
          {"closed", m.closed},
          {"regressions", list},
          {"gate_regressions", gate_alerts_json(m)},
          {"groups", alert_groups_json(m)},
          {"complete", m.complete()},
          {"computing", computing_json(m.computing)}};
}

}  // namespace pg::web
