// JSON twins of the pages, plus health. Views are cached per data generation; see
// web/views/cache.h.
#include "common/version.h"
#include "core/cell_key_io.h"
#include "core/cell_label.h"
#include "core/environment_json.h"
#include "web/routes/http_util.h"
#include "web/routes/params.h"
#include "web/routes/routes.h"
#include "web/views/models.h"
#include "web/views/triage.h"

namespace pg::web {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::shared_ptr<const CachedBody> json_body(App& app, const std::string& key, uint64_t gen,
                                            const std::function<nlohmann::json()>& make) {
  return app.body_cache().get(
      key, gen, [&] { return std::make_shared<const CachedBody>(dump(make()), kJsonType); });
}

std::string filter_key(const OverviewFilter& f) {
  return f.model.value_or("") + '\x1f' + f.dtype.value_or("") + '\x1f' + f.device.value_or("") +
         '\x1f' + (f.batch ? std::to_string(*f.batch) : "") + '\x1f' +
         (f.prompt ? std::to_string(*f.prompt) : "");
}

std::string ids_key(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) s += std::to_string(id) + ",";
  return s;
}

}  // namespace

void register_api_routes(httplib::Server& http, App& app) {
  register_triage_routes(http, app);
  register_gate_routes(http, app);
  register_acceptance_routes(http, app);
  register_auth_routes(http, app);
  http.Get("/healthz", guarded([&app](const Req& req, Res& res) {
             // Touches the database, so a health check fails when the file went away.
             send_json(req, res, 200,
                       {{"status", "ok"},
                        {"version", kVersion},
                        {"runs", app.store().run_count()},
                        {"schema_version", store::Store::schema_version()}});
           }));

  http.Get("/api/v1/series", guarded([&app](const Req& req, Res& res) {
             const uint64_t gen = app.generation();
             auto body = json_body(app, "series-list", gen, [&] {
               nlohmann::json list = nlohmann::json::array();
               for (const auto& v : app.all_views(gen))
                 list.push_back({{"id", v->info.id},
                                 {"key", cell_key_to_json(v->info.key)},
                                 {"env", environment_to_json(v->info.env)},
                                 {"latest", series_latest_json(*v)}});
               return nlohmann::json{{"series", list}};
             });
             send_cached(req, res, *body);
           }));

  http.Get(R"(/api/v1/series/([^/]+))", guarded([&app](const Req& req, Res& res) {
             const int64_t id = id_param(req, "series");
             const Metric m = metric_param(req);
             const uint64_t gen = app.generation();
             const auto branch = branch_param(app, req, gen);
             auto view = app.series_view(id, m, gen, branch);
             if (!view) throw HttpError(404, "no series with id " + std::to_string(id));
             auto body = json_body(app,
                                   "series/" + std::to_string(id) + "/" + metric_info(m).name +
                                       "/" + branch.value_or(""),
                                   gen, [&] {
                                     nlohmann::json j = series_view_json(*view);
                                     j["alerts"] = series_alerts_json(app, gen, {view}).front();
                                     return j;
                                   });
             send_cached(req, res, *body);
           }));

  http.Get("/api/v1/trend", guarded([&app](const Req& req, Res& res) {
             const auto ids = id_list_param(req, "ids");
             const Metric m = metric_param(req);
             const uint64_t gen = app.generation();
             TrendModel t = build_trend(app, ids, m, gen, branch_param(app, req, gen));
             auto body =
                 json_body(app, "trend/" + ids_key(ids) + metric_info(m).name + "/" + t.branch, gen,
                           [&] { return trend_json(t); });
             send_cached(req, res, *body);
           }));

  http.Get("/api/v1/overview", guarded([&app](const Req& req, Res& res) {
             const OverviewFilter f = parse_overview_filter(req);
             const uint64_t gen = app.generation();
             const std::string key = "overview/" + filter_key(f);
             if (auto kept = app.body_cache().peek(key, gen)) return send_cached(req, res, *kept);
             const OverviewModel m = build_overview(app, f, gen);
             if (!m.complete) return send_json(req, res, 200, overview_json(m));  // not kept
             send_cached(req, res, *json_body(app, key, gen, [&] { return overview_json(m); }));
           }));

  http.Get("/api/v1/commits", guarded([&app](const Req& req, Res& res) {
             const uint64_t gen = app.generation();
             auto body = json_body(app, "commits", gen, [&] {
               auto c = commit_catalog(app, gen);
               nlohmann::json commits = nlohmann::json::array();
               for (const auto& e : c->commits)
                 commits.push_back({{"commit", e.sha},
                                    {"subject", e.subject},
                                    {"time", e.time},
                                    {"branch", e.branch},
                                    {"runs", e.runs},
                                    {"last_run_id", e.last_run_id}});
               return nlohmann::json{{"commits", commits}, {"branches", c->branch_heads}};
             });
             send_cached(req, res, *body);
           }));

  http.Get("/api/v1/compare", guarded([&app](const Req& req, Res& res) {
             auto base = query_param(req, "base");
             auto head = query_param(req, "head");
             if (!base || !head) throw HttpError(400, "compare needs ?base=REV&head=REV");
             const uint64_t gen = app.generation();
             auto v = build_compare(app, compare_params(req), *base, *head, gen);
             send_cached(req, res, *v->json);
           }));
}

}  // namespace pg::web
