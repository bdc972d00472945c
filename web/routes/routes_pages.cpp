// The HTML pages. Each renders the same model as its JSON twin (routes_api.cpp).
#include "core/cell_key_query.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"
#include "web/routes/http_util.h"
#include "web/routes/params.h"
#include "web/routes/routes.h"
#include "web/views/models.h"

namespace pg::web {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

std::shared_ptr<const CachedBody> html_body(App& app, const std::string& key, uint64_t gen,
                                            const std::function<std::string()>& make) {
  return app.body_cache().get(
      key, gen, [&] { return std::make_shared<const CachedBody>(make(), kHtmlType); });
}

// Every response carries kPageCsp (server.cpp's default headers).
void send_page(const Req& req, Res& res, const CachedBody& body) { send_cached(req, res, body); }

void send_page(const Req& req, Res& res, int status, std::string html) {
  send_text(req, res, status, std::move(html), kHtmlType);
}

std::string filter_query(const OverviewFilter& f) {
  std::string q;
  auto add = [&](const char* k, const std::string& v) {
    q += (q.empty() ? "" : "&") + std::string(k) + "=" + url_encode(v);
  };
  if (f.model) add("model", *f.model);
  if (f.dtype) add("dtype", *f.dtype);
  if (f.device) add("device", *f.device);
  if (f.batch) add("batch", std::to_string(*f.batch));
  if (f.prompt) add("prompt", std::to_string(*f.prompt));
  return q;
}

std::string trend_key(const TrendModel& t) {
  std::string k = "trend-page/";
  for (const auto& v : t.views) k += std::to_string(v->info.id) + ",";
  return k + metric_info(t.metric).name + "/" + t.branch;
}

// A compare that could not be made (`status`, `reason`). Runs measured elsewhere (a pull request's
// gate on a runner): the gate submitted for exactly this pair, as stored. Otherwise the form again,
// filled in, with the reason: a typo is one edit away from fixed.
void answer_failed_compare(App& app, const Req& req, Res& res, const CommitCatalog& catalog,
                           const std::optional<std::string>& base,
                           const std::optional<std::string>& head, const std::string& device,
                           int status, const std::string& reason, uint64_t gen) {
  if (status == 404 && base && head) {
    if (auto g = app.store().latest_gate_result(*base, *head))
      return send_page(
          req, res, 200,
          render_stored_gate_page(*g, reason, app.repo_url(gen),
                                  g->ref.empty() ? std::vector<store::Store::Acceptance>{}
                                                 : app.store().acceptances(g->ref)));
  }
  send_page(req, res, status,
            render_compare_form(catalog, base.value_or(""), head.value_or(""), device, reason));
}

}  // namespace

void register_page_routes(httplib::Server& http, App& app) {
  http.Get("/", guarded([&app](const Req& req, Res& res) {
             const OverviewFilter f = parse_overview_filter(req);
             const std::string q = filter_query(f);
             const uint64_t gen = app.generation();
             const std::string key = "overview-page/" + q;
             if (auto kept = app.body_cache().peek(key, gen)) return send_page(req, res, *kept);
             const OverviewModel m = build_overview(app, f, gen);
             // Kept only once every series is computed: a page listing some as computing is
             // never served again as the answer.
             if (!m.complete) return send_page(req, res, 200, render_overview_page(m, q));
             send_page(req, res,
                       *html_body(app, key, gen, [&] { return render_overview_page(m, q); }));
           }));

  // A cell's trend by its key (core/cell_key_query.h), for links written from another store (the
  // gate's reports): its series here, or its series of every environment overlaid.
  http.Get("/series", guarded([&app](const Req& req, Res& res) {
             CellKey key;
             try {
               key = cell_key_from_query([&req](const std::string& name) {
                 return query_param(req, name.c_str(), 1024);
               });
             } catch (const SettingError& e) {
               throw HttpError(400, e.what());
             }
             const Metric m = metric_param(req);
             std::string ids;
             size_t n = 0;
             for (const store::SeriesInfo& s : *app.series_list(app.generation()))
               if (s.key == key && ++n <= 16)
                 ids += (ids.empty() ? "" : ",") + std::to_string(s.id);
             if (n == 0) throw HttpError(404, "no series of this cell is stored here");
             const std::string metric = url_encode(metric_info(m).name);
             res.set_redirect(n == 1 ? "/series/" + ids + "?metric=" + metric
                                     : "/trend?ids=" + url_encode(ids) + "&metric=" + metric,
                              303);
           }));

  http.Get(R"(/series/([^/]+))", guarded([&app](const Req& req, Res& res) {
             const int64_t id = id_param(req, "series");
             const Metric m = metric_param(req);
             const uint64_t gen = app.generation();
             TrendModel t = build_trend(app, {id}, m, gen, branch_param(app, req, gen));
             send_page(req, res,
                       *html_body(app, trend_key(t), gen, [&] { return render_trend_page(t); }));
           }));

  http.Get("/trend", guarded([&app](const Req& req, Res& res) {
             const auto ids = id_list_param(req, "ids");
             const Metric m = metric_param(req);
             const uint64_t gen = app.generation();
             TrendModel t = build_trend(app, ids, m, gen, branch_param(app, req, gen));
             send_page(req, res,
                       *html_body(app, trend_key(t), gen, [&] { return render_trend_page(t); }));
           }));

  http.Get("/compare", guarded([&app](const Req& req, Res& res) {
             auto base = query_param(req, "base");
             auto head = query_param(req, "head");
             const uint64_t gen = app.generation();
             auto catalog = commit_catalog(app, gen);
             const std::string device = query_param(req, "device").value_or("");
             if (!base && !head) {
               send_page(req, res, 200, render_compare_form(*catalog, "", "", device, ""));
               return;
             }
             try {
               if (!base || !head) throw HttpError(400, "give both a base and a head revision");
               auto v = build_compare(app, compare_params(req), *base, *head, gen);
               const auto from = query_param(req, "series", 32);
               send_page(req, res, 200,
                         render_compare_page(*v, *catalog, device,
                                             from ? parse_id(*from).value_or(0) : 0));
             } catch (const HttpError& e) {
               answer_failed_compare(app, req, res, *catalog, base, head, device, e.status,
                                     e.what(), gen);
             } catch (const ViewError& e) {
               answer_failed_compare(app, req, res, *catalog, base, head, device, http_status(e),
                                     e.what(), gen);
             }
           }));
}

}  // namespace pg::web
