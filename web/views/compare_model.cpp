// The commits page's catalog and the compare view (web/views/models.h): the gate itself is
// app::compare, the one `perfgate compare` runs; this adds what the page shows around it.
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "app/compare.h"
#include "web/views/models.h"
#include "web/views/triage.h"

namespace pg::web {

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
      throw ViewError::bad_input(std::string(which) + ": revision contains control characters");
  if (rev.size() >= 4 && rev.size() <= 40 && is_hex(rev)) {
    std::string lower = rev;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto hits = app.store().commits_with_prefix(lower);
    if (hits.size() == 1) return hits.front();
    if (hits.size() > 1)
      throw ViewError::bad_input(std::string(which) + ": revision '" + rev + "' is ambiguous (" +
                                 std::to_string(hits.size()) + " stored commits start with it)");
  }
  auto catalog = commit_catalog(app, gen);
  auto it = catalog->branch_heads.find(rev);
  if (it != catalog->branch_heads.end()) return it->second;
  throw ViewError::not_found(std::string(which) + ": unknown revision '" + rev +
                             "': no stored commit or branch by that name");
}

// A gate setting as the compare page and API name it: its query parameter, which is the
// setting's own name (docs/API.md), never `perfgate compare`'s flag.
std::string query_parameter(const std::string& setting) { return setting; }

}  // namespace

namespace {

// How many commits the compare page's small trends show on each side of base and head.
constexpr size_t kAround = 4;

// The regressed cells' trends and alerts (CompareView::regressed). Alerts are those of the
// regressions page: the main branch's tpot_ms series.
void add_regressed_cells(App& app, uint64_t gen, CompareView& v) {
  // Per entry of v.regressed: its series' view and where base and head stand in it.
  struct OnTrend {
    std::shared_ptr<const SeriesView> view;
    std::optional<size_t> base, head;
  };
  std::vector<OnTrend> trends;
  for (size_t i = 0; i < v.result.cells.size(); ++i) {
    const gate::CellComparison& c = v.result.cells[i];
    if (c.verdict != gate::CellVerdict::regression || !v.series_ids[i]) continue;
    OnTrend t{
        app.series_view(v.series_ids[i], parse_metric(c.metric).value_or(Metric::tpot_ms), gen),
        {},
        {}};
    if (!t.view) continue;
    for (size_t p = 0; p < t.view->points.size(); ++p) {
      if (t.view->points[p].commit == v.result.base) t.base = p;
      if (t.view->points[p].commit == v.result.head) t.head = p;
    }
    CompareView::RegressedCell rc;
    rc.cell = i;
    if (t.base || t.head) {
      const size_t lo = std::min(t.base.value_or(*t.head), t.head.value_or(*t.base));
      const size_t hi = std::max(t.base.value_or(*t.head), t.head.value_or(*t.base));
      const size_t from = lo > kAround ? lo - kAround : 0;
      const size_t to = std::min(t.view->points.size(), hi + kAround + 1);
      for (size_t p = from; p < to; ++p) rc.medians.push_back(t.view->points[p].median);
      if (t.base) rc.base_at = *t.base - from;
      if (t.head) rc.head_at = *t.head - from;
    }
    v.regressed.push_back(std::move(rc));
    trends.push_back(std::move(t));
  }
  // Their alerts, from one read of the triage records (series_alerts); only the tpot_ms series
  // that hold the head have any between base and head.
  std::vector<std::shared_ptr<const SeriesView>> watched;
  std::vector<size_t> entry;
  for (size_t k = 0; k < trends.size(); ++k)
    if (trends[k].view->metric == Metric::tpot_ms && trends[k].head) {
      watched.push_back(trends[k].view);
      entry.push_back(k);
    }
  const auto alerts = series_alerts(app, watched);
  for (size_t w = 0; w < watched.size(); ++w) {
    const OnTrend& t = trends[entry[w]];
    CompareView::RegressedCell& rc = v.regressed[entry[w]];
    for (const RegressionAlert& a : alerts[w]) {
      const size_t at = a.regression.index;
      if (at > *t.head || (t.base && at <= *t.base)) continue;
      rc.alert_commit = a.commit;
      rc.alert_state = a.state;
      if (!a.events.empty()) {
        rc.alert_author = a.events.back().author;
        rc.alert_at = a.events.back().at;
        rc.alert_reason = a.events.back().reason;
      }
    }
  }
}

}  // namespace

std::shared_ptr<const CompareView> build_compare(App& app, const CompareParams& params,
                                                 const std::string& base, const std::string& head,
                                                 uint64_t gen) {
  // serve's gate settings unless the request says otherwise: the same rule as the chart's flags
  // and the badges. Validated where `perfgate compare` validates them (app/gate_settings.h).
  pg::app::GateSettings settings = app.options().gate_settings;
  try {
    if (params.alpha) settings.gate.alpha = *params.alpha;
    if (params.min_effect) pg::app::set_min_effect(settings, *params.min_effect);
    if (params.metrics) pg::app::set_metrics(settings, *params.metrics);
    if (params.correction) settings.gate.correction = *params.correction;
    pg::app::validate(settings);
  } catch (const SettingError& e) {
    throw ViewError::bad_input(e.spelled(query_parameter));
  }

  const std::string base_sha = resolve_stored(app, base, "base", gen);
  const std::string head_sha = resolve_stored(app, head, "head", gen);
  const std::optional<std::string>& device = params.device;
  std::ostringstream key;
  key << base << '\n'
      << head << '\n'
      << base_sha << head_sha << '\n'
      << settings.gate.alpha << '/' << pg::app::min_effect_text(settings) << '/'
      << pg::app::metrics_text(settings) << '/' << settings.gate.correction << '\n'
      << device.value_or("");
  return app.compare_cache().get(key.str(), gen, [&] {
    auto v = std::make_shared<CompareView>();
    store::Store& s = app.store();
    pg::app::Comparison c;
    pg::app::CompareScope scope;  // the server's own runs alone: no trusted history
    scope.device = device;
    v->stored = s.latest_gate_result(base_sha, head_sha);
    if (v->stored && !v->stored->ref.empty()) {
      v->acceptances = s.acceptances(v->stored->ref);
      scope.acceptances = &v->acceptances;
      scope.ref = v->stored->ref;
    }
    try {
      c = pg::app::compare(s, base_sha, head_sha, settings, scope, query_parameter);
    } catch (const pg::app::NoHeadRuns& e) {
      throw ViewError::not_found(std::string("head: ") + e.what());
    }
    v->info = gate::ReportInfo{base, head, "database", "database", c.notes, c.explanations};
    v->result = std::move(c.result);
    v->device = device.value_or("");
    v->repo_url = app.repo_url(gen);
    const std::vector<Run>& base_runs = c.base_runs;
    const std::vector<Run>& head_runs = c.head_runs;
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
    add_regressed_cells(app, gen, *v);
    for (const auto& e : commit_catalog(app, gen)->commits) {
      if (e.sha == base_sha) v->base_subject = e.subject;
      if (e.sha == head_sha) v->head_subject = e.subject;
    }
    std::ostringstream out;
    gate::GateJsonReporter{}.report(v->result, v->info, out);
    v->json = std::make_shared<const CachedBody>(out.str(), kJsonType);
    return std::shared_ptr<const CompareView>(std::move(v));
  });
}

}  // namespace pg::web
