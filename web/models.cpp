#include "web/models.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "store/validate.h"
#include "web/http_util.h"
#include "web/json_util.h"
#include "web/triage.h"

namespace pg::web {

namespace {

std::optional<int> int_param(const httplib::Request& req, const char* name) {
  auto v = query_param(req, name, 32);
  if (!v) return std::nullopt;
  auto id = parse_id(*v);
  if (!id || *id > 1'000'000'000)
    throw HttpError(400, std::string("query parameter '") + name + "' must be a positive integer");
  return static_cast<int>(*id);
}

std::string group_device(const SeriesInfo& s) {
  auto it = s.env.find("device");
  return it != s.env.end() && !it->second.empty() ? it->second : s.key.device;
}

int64_t time_key(const std::string& iso) {
  int64_t t = 0;
  return parse_iso8601(iso, &t) ? t : 0;
}

}  // namespace

// --- overview -----------------------------------------------------------------------------------

std::string shown_status(const SeriesView& v, const OverviewModel& m) {
  auto it = m.alert_state.find(v.info.id);
  if (v.status == "regressed" && it != m.alert_state.end()) {
    if (it->second == "dismissed" || it->second == "fixed") return "steady";
    if (it->second == "acknowledged") return "acknowledged";
  }
  return v.status;
}

OverviewFilter parse_overview_filter(const httplib::Request& req) {
  OverviewFilter f;
  f.model = query_param(req, "model");
  f.dtype = query_param(req, "dtype");
  f.device = query_param(req, "device");
  f.batch = int_param(req, "batch");
  f.prompt = int_param(req, "prompt");
  return f;
}

OverviewModel build_overview(App& app, const OverviewFilter& f, uint64_t gen) {
  OverviewModel m;
  m.filter = f;
  std::map<std::string, std::set<std::string>> opts;
  std::map<std::string, std::set<int>> int_opts;
  std::map<std::pair<std::string, std::string>, size_t> group_index;
  m.branch = app.main_branch(gen);
  m.repo_url = app.repo_url(gen);
  m.alpha = app.options().alpha;
  m.min_effect = app.options().min_effect;
  auto regressions = build_regressions(app, gen);
  m.open_regressions = regressions->open + regressions->acknowledged;
  for (const auto& a : regressions->alerts) m.alert_state[a.view->info.id] = a.state;
  for (const auto& v : app.all_views(gen)) {
    const CellKey& k = v->info.key;
    ++m.total_series;
    opts["model"].insert(k.model);
    opts["dtype"].insert(k.dtype);
    opts["device"].insert(k.device);
    int_opts["batch"].insert(k.batch_size);
    int_opts["prompt"].insert(k.seq_len);
    if ((f.model && *f.model != k.model) || (f.dtype && *f.dtype != k.dtype) ||
        (f.device && *f.device != k.device) || (f.batch && *f.batch != k.batch_size) ||
        (f.prompt && *f.prompt != k.seq_len))
      continue;
    ++m.shown_series;
    ++m.status_counts[shown_status(*v, m)];
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
  j["open_regressions"] = m.open_regressions;
  j["branch"] = m.branch.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.branch);
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : m.groups) {
    nlohmann::json series = nlohmann::json::array();
    for (const auto& v : g.series) {
      nlohmann::json spark = nlohmann::json::array();
      const size_t n = v->points.size(), from = n > 40 ? n - 40 : 0;
      for (size_t i = from; i < n; ++i) spark.push_back(v->points[i].median);
      series.push_back({{"id", v->info.id},
                        {"key", key_json(v->info.key)},
                        {"env", env_json(v->info.env)},
                        {"latest", series_latest_json(*v)},
                        {"shown_status", shown_status(*v, m)},
                        {"regression_state", m.alert_state.count(v->info.id)
                                                 ? nlohmann::json(m.alert_state.at(v->info.id))
                                                 : nlohmann::json(nullptr)},
                        {"sparkline", spark}});
    }
    groups.push_back({{"model", g.model}, {"device", g.device}, {"series", series}});
  }
  j["groups"] = groups;
  return j;
}

// --- trend --------------------------------------------------------------------------------------

Metric metric_param(const httplib::Request& req) {
  auto v = query_param(req, "metric", 64);
  if (!v) return Metric::tpot_ms;
  auto m = parse_metric(*v);
  if (!m) {
    std::string names;
    for (const auto& i : all_metrics()) names += std::string(names.empty() ? "" : ", ") + i.name;
    throw HttpError(400, "unknown metric (expected one of " + names + ")");
  }
  return *m;
}

std::optional<std::string> branch_param(App& app, const httplib::Request& req, uint64_t gen) {
  auto b = query_param(req, "branch", 200);
  // Only stored branches: a made-up name would also cost a cached view per name.
  if (b && !app.branches(gen)->count(*b))
    throw HttpError(404, "no stored run was made on branch '" + *b + "'");
  return b;
}

TrendModel build_trend(App& app, const std::vector<int64_t>& ids, Metric metric, uint64_t gen,
                       const std::optional<std::string>& branch) {
  if (ids.empty()) throw HttpError(400, "no series selected (ids=1,2,...)");
  TrendModel t;
  t.metric = metric;
  t.main_branch = app.main_branch(gen);
  t.branch = branch.value_or(t.main_branch);
  t.repo_url = app.repo_url(gen);
  for (const auto& [name, runs] : *app.branches(gen)) t.branches.push_back(name);
  for (int64_t id : ids) {
    auto v = app.series_view(id, metric, gen, t.branch);
    if (!v) throw HttpError(404, "no series with id " + std::to_string(id));
    t.views.push_back(std::move(v));
  }
  if (t.views.size() == 1) {
    // Environment changes: the same cell on the same device under another fingerprint.
    const SeriesInfo& me = t.views.front()->info;
    for (const SeriesInfo& other : *app.series_list(gen)) {
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

std::string series_name(const SeriesInfo& s) {
  return s.key.model + " · " + key_label(s.key) + " · " + group_device(s);
}

std::string env_text(const Environment& env) {
  std::string out;
  for (const auto& field : comparable_env_fields()) {
    auto it = env.find(field);
    if (it == env.end() || it->second.empty()) continue;
    if (!out.empty()) out += " · ";
    out += field == "device" ? it->second : field + " " + it->second;
  }
  return out;
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

// --- commits and compare ------------------------------------------------------------------------

std::shared_ptr<const CommitCatalog> commit_catalog(App& app, uint64_t gen) {
  return app.catalog_cache().get("all", gen, [&] {
    auto c = std::make_shared<CommitCatalog>();
    std::map<std::string, size_t> idx;
    std::set<std::string> devices;
    for (const Run& r : app.store().list_runs({false, false})) {
      if (auto d = r.env.find("device"); d != r.env.end() && !d->second.empty())
        devices.insert(d->second);
      if (!r.git.commit || r.git.commit->empty()) continue;
      const std::string& sha = *r.git.commit;
      auto it = idx.find(sha);
      if (it == idx.end()) {
        it = idx.emplace(sha, c->commits.size()).first;
        c->commits.push_back({sha, r.git.subject.value_or(""), r.git.time.value_or(""), "", 0, 0});
      }
      CommitEntry& e = c->commits[it->second];
      ++e.runs;
      e.last_run_id = r.id;
      if (r.git.branch && *r.git.branch != "detached" && !r.git.branch->empty()) {
        e.branch = *r.git.branch;
        c->branch_heads[*r.git.branch] = sha;
      }
    }
    c->devices.assign(devices.begin(), devices.end());
    std::stable_sort(c->commits.begin(), c->commits.end(),
                     [](const CommitEntry& a, const CommitEntry& b) {
                       const int64_t ta = time_key(a.time), tb = time_key(b.time);
                       return ta != tb ? ta > tb : a.last_run_id > b.last_run_id;
                     });
    return std::shared_ptr<const CommitCatalog>(std::move(c));
  });
}

namespace {

bool is_hex(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

// Returns the full SHA a client's revision names among the stored commits.
std::string resolve_stored(App& app, const std::string& rev, const char* which, uint64_t gen) {
  for (unsigned char c : rev)
    if (c < 0x20 || c == 0x7f)
      throw HttpError(400, std::string(which) + ": revision contains control characters");
  if (rev.size() >= 4 && rev.size() <= 40 && is_hex(rev)) {
    std::string lower = rev;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto hits = app.store().commits_with_prefix(lower);
    if (hits.size() == 1) return hits.front();
    if (hits.size() > 1)
      throw HttpError(400, std::string(which) + ": revision '" + rev + "' is ambiguous (" +
                               std::to_string(hits.size()) + " stored commits start with it)");
  }
  auto catalog = commit_catalog(app, gen);
  auto it = catalog->branch_heads.find(rev);
  if (it != catalog->branch_heads.end()) return it->second;
  throw HttpError(404, std::string(which) + ": unknown revision '" + rev +
                           "': no stored commit or branch by that name");
}

double double_param(const httplib::Request& req, const char* name, double dflt) {
  auto v = query_param(req, name, 32);
  if (!v) return dflt;
  double d = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), d);
  if (ec != std::errc() || p != v->data() + v->size() || !std::isfinite(d))
    throw HttpError(400, std::string("query parameter '") + name + "' must be a number");
  return d;
}

}  // namespace

std::shared_ptr<const CompareView> build_compare(App& app, const httplib::Request& req,
                                                 const std::string& base, const std::string& head,
                                                 uint64_t gen) {
  GateOptions opt;
  // serve's gate settings by default: the same rule as the chart's flags and the badges.
  opt.alpha = app.options().alpha;
  opt.min_effect = app.options().min_effect;
  opt.alpha = double_param(req, "alpha", opt.alpha);
  opt.min_effect = double_param(req, "min_effect", opt.min_effect);
  if (auto c = query_param(req, "correction", 16)) opt.correction = *c;
  // The same limits as `perfgate compare` (cli/cmd_compare.cpp).
  if (!(opt.alpha > 0.0 && opt.alpha < 1.0)) throw HttpError(400, "alpha must be in (0, 1)");
  if (!(opt.min_effect >= 0.0)) throw HttpError(400, "min_effect must be >= 0");
  if (opt.correction != "holm" && opt.correction != "bh")
    throw HttpError(400, "correction must be holm or bh");

  const std::string base_sha = resolve_stored(app, base, "base", gen);
  const std::string head_sha = resolve_stored(app, head, "head", gen);
  const std::optional<std::string> device = query_param(req, "device");
  std::ostringstream key;
  key << base << '\n'
      << head << '\n'
      << base_sha << head_sha << '\n'
      << opt.alpha << '/' << opt.min_effect << '/' << opt.correction << '\n'
      << device.value_or("");
  return app.compare_cache().get(key.str(), gen, [&] {
    auto v = std::make_shared<CompareView>();
    Store& s = app.store();
    std::vector<Run> base_runs = s.runs_for_commit(base_sha);
    std::vector<Run> head_runs = s.runs_for_commit(head_sha);
    v->info = ReportInfo{base, head, "database", "database", {}};
    if (device) {
      auto other_device = [&](const Run& r) {
        auto it = r.env.find("device");
        return it == r.env.end() || it->second != *device;
      };
      std::erase_if(base_runs, other_device);
      std::erase_if(head_runs, other_device);
      if (head_runs.empty())
        throw HttpError(404, "head: no stored run of " + head_sha + " on device '" + *device + "'");
      v->info.notes.push_back("runs filtered to device '" + *device + "'");
    }
    // The notes `perfgate compare` adds, so that both JSON documents are the same.
    auto dirty_note = [&](const std::vector<Run>& runs, const char* side) {
      long dirty =
          std::count_if(runs.begin(), runs.end(), [](const Run& r) { return r.git.dirty; });
      if (dirty > 0)
        v->info.notes.push_back(std::to_string(dirty) + " of " + std::to_string(runs.size()) + " " +
                                side + " runs were measured on a dirty work tree");
    };
    dirty_note(base_runs, "base");
    dirty_note(head_runs, "head");
    v->result = evaluate_gate(base_sha, base_runs, head_sha, head_runs, opt);
    v->device = device.value_or("");
    v->repo_url = app.repo_url(gen);
    std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> fields;
    for (const Run& r : base_runs) v->base_run_ids.push_back(r.id);
    for (const Run& r : head_runs) v->head_run_ids.push_back(r.id);
    for (const auto& field : comparable_env_fields()) {
      auto& [b, h] = fields[field];
      for (const Run& r : base_runs) b.insert(r.env.count(field) ? r.env.at(field) : std::string());
      for (const Run& r : head_runs) h.insert(r.env.count(field) ? r.env.at(field) : std::string());
      if (b.size() > 1 || h.size() > 1 || b != h) {
        auto join = [](const std::set<std::string>& xs) {
          std::string out;
          for (const auto& x : xs) out += (out.empty() ? "" : ", ") + (x.empty() ? "(none)" : x);
          return out;
        };
        v->env_differences.push_back(field + ": " + join(b) + " (base) vs " + join(h) + " (head)");
      }
    }
    {
      const auto& [b, h] = fields["device"];
      for (const auto& d : b)
        if (!d.empty() && h.count(d)) v->common_devices.push_back(d);
    }
    const Environment head_env = head_runs.empty() ? Environment{} : head_runs.front().env;
    for (const auto& c : v->result.cells)
      v->series_ids.push_back(s.find_series(c.key, head_env).value_or(0));
    std::ostringstream out;
    JsonReporter{}.report(v->result, v->info, out);
    v->json = std::make_shared<const CachedBody>(out.str(), kJsonType);
    return std::shared_ptr<const CompareView>(std::move(v));
  });
}

}  // namespace pg::web
