#include "web/triage.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/cell_key_io.h"
#include "core/cell_label.h"
#include "core/environment_json.h"
#include "web/models.h"

namespace pg::web {

std::string triage_state(const std::string& a) {
  if (a == "acknowledge") return "acknowledged";
  if (a == "dismiss") return "dismissed";
  if (a == "fix") return "fixed";
  return "open";  // reopen
}

namespace {

std::shared_ptr<RegressionsModel> regressions_of(
    App& app, uint64_t gen, const std::vector<std::shared_ptr<const SeriesView>>& views) {
  auto m = std::make_shared<RegressionsModel>();
  m->branch = app.main_branch(gen);
  std::map<std::tuple<int64_t, std::string, std::string>, std::vector<Store::RegressionEvent>> log;
  for (auto& e : app.store().regression_events())
    log[{e.series_id, e.metric, e.commit}].push_back(std::move(e));
  for (const auto& v : views) {
    auto reg = current_regression(*v);
    if (!reg || reg->index >= v->points.size()) continue;
    const SeriesPoint& p = v->points[reg->index];
    if (p.commit.empty()) continue;  // a run outside a repository cannot be named
    RegressionAlert a;
    a.view = v;
    a.regression = *reg;
    a.commit = p.commit;
    a.subject = p.subject;
    a.time = p.time;
    if (reg->index > 0) a.parent = v->points[reg->index - 1].commit;
    a.commits_since = v->points.size() - 1 - reg->index;
    auto it = log.find({v->info.id, metric_info(v->metric).name, p.commit});
    if (it != log.end()) a.events = it->second;
    a.state = triage_state(a.events.empty() ? "" : a.events.back().action);
    if (a.state == "open") ++m->open;
    if (a.state == "acknowledged") ++m->acknowledged;
    if (!a.is_open()) ++m->closed;
    m->alerts.push_back(std::move(a));
  }
  std::stable_sort(m->alerts.begin(), m->alerts.end(), [](const auto& x, const auto& y) {
    return std::make_tuple(!x.is_open(), -std::fabs(x.regression.relative)) <
           std::make_tuple(!y.is_open(), -std::fabs(y.regression.relative));
  });
  add_gate_alerts(app.store(), *m);
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

const RegressionAlert* find_alert(const RegressionsModel& m, int64_t series_id) {
  for (const auto& a : m.alerts)
    if (a.view->info.id == series_id) return &a;
  return nullptr;
}

nlohmann::json regressions_json(const RegressionsModel& m) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& a : m.alerts) {
    list.push_back(
        {{"series_id", a.view->info.id},
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
         {"state", a.state},
         {"events", triage_events_json(a.events)}});
  }
  return {{"branch", m.branch.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.branch)},
          {"open", m.open},
          {"acknowledged", m.acknowledged},
          {"closed", m.closed},
          {"regressions", list},
          {"gate_regressions", gate_alerts_json(m)},
          {"complete", m.complete()},
          {"computing", computing_json(m.computing)}};
}

}  // namespace pg::web
