#include "web/views/models.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <sstream>

#include "common/utc_time.h"
#include "core/cell_key_io.h"
#include "core/cell_label.h"
#include "core/environment_json.h"
#include "web/views/triage.h"

namespace pg::web {

// --- overview -----------------------------------------------------------------------------------

SeriesStatus shown_status(const SeriesView& v, const OverviewModel& m) {
  auto it = m.alert_state.find(v.info.id);
  if (it == m.alert_state.end()) return v.status;
  if (it->second == AlertState::acknowledged) return SeriesStatus::acknowledged;
  // An alert stays open until someone acts on it, whether or not the series still stands in it.
  if (it->second == AlertState::open) return SeriesStatus::regressed;
  if (v.status == SeriesStatus::regressed) return SeriesStatus::steady;  // dismissed or fixed
  return v.status;
}

// A series whose own history is steady may still have an open alert kept from before: the partial
// overview shows it steady until every view is ready, as it shows what the history shows.
bool status_final_without_triage(const SeriesView& v) {
  return v.status != SeriesStatus::regressed;
}

OverviewModel build_overview(App& app, const OverviewFilter& f, uint64_t gen) {
  OverviewModel m;
  m.filter = f;
  std::map<std::string, std::set<std::string>> opts;
  std::map<std::string, std::set<int>> int_opts;
  std::map<std::pair<std::string, std::string>, size_t> group_index;
  m.branch = app.main_branch(gen);
  m.repo_url = app.repo_url(gen);
  m.alpha = app.options().gate_settings.gate.alpha;
  m.min_effect = app.options().gate_settings.gate.min_effect;
  auto progress =
      app.default_views_by(gen, std::chrono::steady_clock::now() + app.options().page_wait);
  m.complete = progress.complete();
  std::vector<store::SeriesInfo> computing = std::move(progress.pending);
  if (m.complete) {
    auto regressions = build_regressions(app, gen);
    m.open_regressions = regressions->open + regressions->acknowledged;
    // The series' state: its current alert's, else that of an alert still open from before.
    for (const auto& a : regressions->alerts)
      if (a.current) m.alert_state[a.view->info.id] = a.state;
    for (const auto& a : regressions->alerts)
      if (!a.current && a.is_open()) m.alert_state.emplace(a.view->info.id, a.state);
  } else {
    // No triage state before every view is ready: a regressed series waits with the others.
    std::erase_if(progress.ready, [&](const auto& v) {
      if (status_final_without_triage(*v)) return false;
      computing.push_back(v->info);
      return true;
    });
    std::sort(computing.begin(), computing.end(),
              [](const store::SeriesInfo& a, const store::SeriesInfo& b) { return a.id < b.id; });
  }
  auto matches = [&](const CellKey& k) {
    ++m.total_series;
    opts["model"].insert(k.model);
    opts["dtype"].insert(k.dtype);
    opts["device"].insert(k.device);
    int_opts["batch"].insert(k.batch_size);
    int_opts["prompt"].insert(k.seq_len);
    return !((f.model && *f.model != k.model) || (f.dtype && *f.dtype != k.dtype) ||
             (f.device && *f.device != k.device) || (f.batch && *f.batch != k.batch_size) ||
             (f.prompt && *f.prompt != k.seq_len));
  };
  for (const store::SeriesInfo& info : computing)
    if (matches(info.key)) m.computing.push_back(info);
  for (const auto& v : progress.ready) {
    const CellKey& k = v->info.key;
    if (!matches(k)) continue;
    ++m.shown_series;
    ++m.status_counts[to_string(shown_status(*v, m))];
    auto gk = std::make_pair(k.model, group_device(v->info));
    auto it = group_index.find(gk);
    if (it == group_index.end()) {
      it = group_index.emplace(gk, m.groups.size()).first;
      m.groups.push_back({gk.first, gk.second, {}});
    }
    m.groups[it->second].series.push_back(v);
  }
  for (auto& [name, set] : opts) m.options[name].assign(set.begin(), set.end());
  for (auto& [name, set] : int_opts)
    for (int x : set) m.options[name].push_back(std::to_string(x));
  std::sort(m.groups.begin(), m.groups.end(), [](const OverviewGroup& a, const OverviewGroup& b) {
    return std::tie(a.model, a.device) < std::tie(b.model, b.device);
  });
  for (auto& g : m.groups)
    std::sort(g.series.begin(), g.series.end(), [](const auto& a, const auto& b) {
      return std::tie(a->info.key, a->info.id) < std::tie(b->info.key, b->info.id);
    });
  return m;
}

nlohmann::json overview_json(const OverviewModel& m) {
  nlohmann::json j;
  nlohmann::json filt = nlohmann::json::object();
  if (m.filter.model) filt["model"] = *m.filter.model;
  if (m.filter.dtype) filt["dtype"] = *m.filter.dtype;
  if (m.filter.device) filt["device"] = *m.filter.device;
  if (m.filter.batch) filt["batch"] = *m.filter.batch;
  if (m.filter.prompt) filt["prompt"] = *m.filter.prompt;
  j["filters"] = filt;
  j["options"] = m.options;
  j["total_series"] = m.total_series;
  j["shown_series"] = m.shown_series;
  j["status_counts"] = m.status_counts;
  j["open_regressions"] = m.complete ? nlohmann::json(m.open_regressions) : nlohmann::json(nullptr);
  j["complete"] = m.complete;
  j["computing"] = computing_json(m.computing);
  j["branch"] = m.branch.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.branch);
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : m.groups) {
    nlohmann::json series = nlohmann::json::array();
    for (const auto& v : g.series) {
      nlohmann::json spark = nlohmann::json::array();
      const size_t n = v->points.size(), from = n > 40 ? n - 40 : 0;
      for (size_t i = from; i < n; ++i) spark.push_back(v->points[i].median);
      series.push_back(
          {{"id", v->info.id},
           {"key", cell_key_to_json(v->info.key)},
           {"env", environment_to_json(v->info.env)},
           {"latest", series_latest_json(*v)},
           {"shown_status", to_string(shown_status(*v, m))},
           {"regression_state", m.alert_state.count(v->info.id)
                                    ? nlohmann::json(to_string(m.alert_state.at(v->info.id)))
                                    : nlohmann::json(nullptr)},
           {"sparkline", spark}});
    }
    groups.push_back({{"model", g.model}, {"device", g.device}, {"series", series}});
  }
  j["groups"] = groups;
  return j;
}

// --- trend --------------------------------------------------------------------------------------

TrendModel build_trend(App& app, const std::vector<int64_t>& ids, Metric metric, uint64_t gen,
                       const std::optional<std::string>& branch) {
  if (ids.empty()) throw ViewError::bad_input("no series selected (ids=1,2,...)");
  TrendModel t;
  t.metric = metric;
  t.main_branch = app.main_branch(gen);
  t.branch = branch.value_or(t.main_branch);
  t.repo_url = app.repo_url(gen);
  for (const auto& [name, runs] : *app.branches(gen)) t.branches.push_back(name);
  for (int64_t id : ids) {
    auto v = app.series_view(id, metric, gen, t.branch);
    if (!v) throw ViewError::not_found("no series with id " + std::to_string(id));
    t.views.push_back(std::move(v));
  }
  t.alerts = series_alerts_json(app, gen, t.views);
  if (t.views.size() == 1) {
    // Environment changes: the same cell on the same device under another fingerprint.
    const store::SeriesInfo& me = t.views.front()->info;
    for (const store::SeriesInfo& other : *app.series_list(gen)) {
      if (other.id == me.id || !(other.key == me.key)) continue;
      if (group_device(other) != group_device(me)) continue;
      auto ov = app.series_view(other.id, Metric::tpot_ms, gen, t.branch);
      if (!ov || ov->points.empty()) continue;
      std::string what;
      for (const auto& field : comparable_env_fields()) {
        auto a = other.env.find(field), b = me.env.find(field);
        const std::string va = a == other.env.end() ? "" : a->second;
        const std::string vb = b == me.env.end() ? "" : b->second;
        if (va != vb) what += (what.empty() ? "" : ", ") + field + " " + va + " → " + vb;
      }
      const auto& mine = t.views.front()->points;
      const int64_t other_end = time_key(ov->points.back().time);
      size_t at = 0;
      while (at < mine.size() && time_key(mine[at].time) <= other_end) ++at;
      t.env_changes.push_back({other.id, ov->points.front().commit, ov->points.back().commit, what,
                               at, at == 0 || at < mine.size()});
    }
  }
  return t;
}

nlohmann::json trend_json(const TrendModel& m) {
  const MetricInfo& mi = metric_info(m.metric);
  // The axis: the union of every series' commits, merged in history (commit time) order.
  struct AxisEntry {
    std::string id, commit, subject, time;
    int64_t t;
    size_t first_seen;
  };
  std::vector<AxisEntry> axis;
  std::map<std::string, size_t> pos;
  auto point_id = [](const SeriesPoint& p) {
    return p.commit.empty() ? "run:" + std::to_string(p.run_ids.front()) : p.commit;
  };
  for (const auto& v : m.views)
    for (const auto& p : v->points) {
      const std::string id = point_id(p);
      if (pos.count(id)) continue;
      pos[id] = axis.size();
      axis.push_back({id, p.commit, p.subject, p.time, time_key(p.time), axis.size()});
    }
  if (m.views.size() > 1)
    std::stable_sort(axis.begin(), axis.end(),
                     [](const AxisEntry& a, const AxisEntry& b) { return a.t < b.t; });
  std::map<std::string, int> label_count;
  nlohmann::json jaxis = nlohmann::json::array();
  for (size_t i = 0; i < axis.size(); ++i) {
    pos[axis[i].id] = i;
    std::string label =
        axis[i].commit.empty() ? "run " + axis[i].id.substr(4) : axis[i].commit.substr(0, 7);
    // Category labels must be unique for the chart; short SHAs rarely collide, but can.
    if (int c = label_count[label]++; c > 0) label += "·" + std::to_string(c + 1);
    jaxis.push_back({{"label", label},
                     {"commit", axis[i].commit.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(axis[i].commit)},
                     {"subject", axis[i].subject},
                     {"time", axis[i].time}});
  }
  nlohmann::json series = nlohmann::json::array();
  for (const auto& v : m.views) {
    nlohmann::json s = series_view_json(*v);
    nlohmann::json x = nlohmann::json::array();
    for (const auto& p : v->points) x.push_back(pos[point_id(p)]);
    s["x"] = std::move(x);
    s["name"] = series_name(v->info);
    s["env_text"] = env_text(v->info.env);
    s["alerts"] =
        m.alerts.size() == m.views.size() ? m.alerts[&v - m.views.data()] : nlohmann::json::array();
    series.push_back(std::move(s));
  }
  nlohmann::json env_changes = nlohmann::json::array();
  for (const auto& e : m.env_changes)
    env_changes.push_back({{"series_id", e.series_id},
                           {"first_commit", e.first_commit},
                           {"last_commit", e.last_commit},
                           {"what", e.what},
                           {"at_index", e.at_index},
                           {"before", e.before}});
  return {{"metric", mi.name},
          {"unit", mi.unit},
          {"label", mi.label},
          {"branch", m.branch.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.branch)},
          {"repo_url", m.repo_url.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.repo_url)},
          {"axis", jaxis},
          {"env_changes", env_changes},
          {"series", series}};
}

}  // namespace pg::web
