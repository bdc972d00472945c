// Regressions as alerts: the list (page and JSON) and the triage writes, which need a credential
// that may triage (web/routes/auth.h); each event records who that credential is.
#include <algorithm>

#include "web/pages/pages.h"
#include "web/routes/auth.h"
#include "web/routes/http_util.h"
#include "web/routes/routes.h"
#include "web/views/triage.h"

namespace pg::web {

namespace {

using Req = httplib::Request;

// A triage write's body: a JSON object with its "action" and optional "reason" (required to
// dismiss), as both triage endpoints take them.
struct TriageBody {
  nlohmann::json json;
  std::string action, reason;
};
TriageBody triage_body(const Req& req) {
  TriageBody t;
  t.json = nlohmann::json::parse(req.body, nullptr, false);
  if (t.json.is_discarded() || !t.json.is_object())
    throw HttpError(400, "request body: a JSON object is required");
  t.action = required_string(t.json, "action", 16);
  if (t.json.contains("reason")) t.reason = required_string(t.json, "reason", 2000);
  if (t.action == "dismiss" && t.reason.empty())
    throw HttpError(400, "request body: dismissing needs a 'reason'");
  return t;
}
using Res = httplib::Response;

std::chrono::steady_clock::time_point page_deadline(App& app) {
  return std::chrono::steady_clock::now() + app.options().page_wait;
}

}  // namespace

void register_triage_routes(httplib::Server& http, App& app) {
  // Within the page wait (ServeOptions::page_wait) like the overview: while series are still
  // being computed, with what is ready and the list of the others, an answer that is never kept.
  http.Get(
      "/api/v1/regressions", guarded([&app](const Req& req, Res& res) {
        const uint64_t gen = app.generation();
        if (auto kept = app.body_cache().peek("regressions", gen))
          return send_cached(req, res, *kept);
        auto m = regressions_by(app, gen, page_deadline(app));
        if (!m->complete()) return send_json(req, res, 200, regressions_json(*m));
        auto body = app.body_cache().get("regressions", gen, [&] {
          return std::make_shared<const CachedBody>(
              regressions_json(*m).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
              kJsonType);
        });
        send_cached(req, res, *body);
      }));

  http.Get("/regressions", guarded([&app](const Req& req, Res& res) {
             const uint64_t gen = app.generation();
             if (auto kept = app.body_cache().peek("regressions-page", gen))
               return send_cached(req, res, *kept);
             auto m = regressions_by(app, gen, page_deadline(app));
             if (!m->complete())
               return send_text(req, res, 200, render_regressions_page(*m, app.repo_url(gen)),
                                kHtmlType);
             auto body = app.body_cache().get("regressions-page", gen, [&] {
               return std::make_shared<const CachedBody>(
                   render_regressions_page(*m, app.repo_url(gen)), kHtmlType);
             });
             send_cached(req, res, *body);
           }));

  // {"series_id": 3, "commit": SHA, "action": "acknowledge" | "dismiss" | "fix" | "reopen",
  //  "reason": "..."} -- a dismissal needs a reason. A stored gate's alert is named by
  // {"gate_id": 5} instead of series_id and commit. The author is the authenticated identity; an
  // "author" in the body (what clients sent before credentials had names) is ignored.
  http.Post("/api/v1/regressions", guarded([&app](const Req& req, Res& res) {
              const Identity who = require(app, req, res, Permission::triage);
              const std::string& author = who.name;
              const TriageBody t = triage_body(req);
              const nlohmann::json& body = t.json;
              const std::string &action = t.action, &reason = t.reason;
              if (body.contains("gate_id")) {
                if (!body["gate_id"].is_number_integer())
                  throw HttpError(400, "request body: 'gate_id' must be an integer");
                // UsageError (unknown gate or action) answers 400 with its reason.
                auto e = app.store().add_gate_event(body["gate_id"].get<int64_t>(), action, reason,
                                                    author, who.via);
                app.note_write();
                nlohmann::json j = triage_event_json(e);
                j["gate_id"] = e.gate_id;
                send_json(req, res, 201, j);
                return;
              }
              if (!body.contains("series_id") || !body["series_id"].is_number_integer())
                throw HttpError(400,
                                "request body: 'series_id' (an integer) or 'gate_id' is required");
              const int64_t series = body["series_id"].get<int64_t>();
              const std::string commit = required_string(body, "commit", 40);
              std::string metric = "tpot_ms";
              if (body.contains("metric")) metric = required_string(body, "metric", 64);
              if (!parse_metric(metric)) throw HttpError(400, "request body: unknown metric");
              // UsageError (unknown series, action, malformed SHA) answers 400 with its reason.
              auto e = app.store().add_regression_event(series, metric, commit, action, reason,
                                                        author, who.via);
              app.note_write();
              nlohmann::json j = triage_event_json(e);
              j["series_id"] = e.series_id;
              j["metric"] = e.metric;
              j["commit"] = e.commit;
              send_json(req, res, 201, j);
            }));

  // {"commits": [SHA, ...], "action", "reason"}: the action on every member of each named alert
  // group that takes it (bulk_action_applies), series and gates alike, as one event each.
  http.Post(
      "/api/v1/regression-groups", guarded([&app](const Req& req, Res& res) {
        const Identity who = require(app, req, res, Permission::triage);
        const TriageBody t = triage_body(req);
        const nlohmann::json& body = t.json;
        const std::string &action = t.action, &reason = t.reason;
        if (!body.contains("commits") || !body["commits"].is_array() || body["commits"].empty() ||
            body["commits"].size() > 10000)
          throw HttpError(400, "request body: 'commits' must be a list of 1 to 10000 SHAs");
        auto m = build_regressions(app, app.generation());
        std::vector<const AlertGroup*> groups;
        for (const auto& c : body["commits"]) {
          if (!c.is_string()) throw HttpError(400, "request body: 'commits' holds SHAs");
          // A std::string, not the json: GCC 13 in C++20 finds == ambiguous between the two.
          const auto& sha = c.get_ref<const std::string&>();
          auto it = std::find_if(m->groups.begin(), m->groups.end(),
                                 [&](const AlertGroup& g) { return g.commit == sha; });
          if (it == m->groups.end())
            throw HttpError(
                404, "no alert group has first bad commit " + c.get<std::string>().substr(0, 40));
          groups.push_back(&*it);
        }
        nlohmann::json done = nlohmann::json::array();
        size_t events = 0;
        for (const AlertGroup* g : groups) {
          size_t n = 0;
          for (size_t i : g->alerts) {
            const RegressionAlert& a = m->alerts[i];
            if (!bulk_action_applies(action, a.state)) continue;
            app.store().add_regression_event(a.view->info.id, metric_info(a.view->metric).name,
                                             a.commit, action, reason, who.name, who.via);
            ++n;
          }
          for (size_t i : g->gate_alerts) {
            const GateAlert& a = m->gate_alerts[i];
            if (!bulk_action_applies(action, a.state)) continue;
            app.store().add_gate_event(a.gate.id, action, reason, who.name, who.via);
            ++n;
          }
          done.push_back({{"commit", g->commit}, {"events", n}});
          events += n;
        }
        if (events) app.note_write();
        send_json(req, res, 201,
                  {{"action", action}, {"events", events}, {"groups", done}, {"author", who.name}});
      }));
}

}  // namespace pg::web
