// Stored gate results: POST /api/v1/gates (a gate's compare JSON, with the ingest token) and the
// paginated GET /api/v1/gates. A stored regression is an alert on the regressions page; the
// compare page shows the stored verdict of its pair (docs/API.md, docs/WEB.md).
#include "app/gate_record.h"
#include "common/errors.h"
#include "web/routes/http_util.h"
#include "web/routes/routes.h"

namespace pg::web {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

constexpr int64_t kGatesPageMax = 500, kGatesPageDefault = 100;

nlohmann::json gate_record_to_json(const store::Store::GateRecord& g, bool with_result) {
  nlohmann::json j = {{"id", g.id},
                      {"base", g.base},
                      {"head", g.head},
                      {"ref", g.ref.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.ref)},
                      {"verdict", g.verdict},
                      {"exit_code", g.exit_code},
                      {"settings", nlohmann::json::parse(g.settings, nullptr, false)},
                      {"submitted_by", g.submitted_by},
                      {"source", g.source},
                      {"created_at", g.created_at}};
  if (with_result) j["result"] = nlohmann::json::parse(g.result, nullptr, false);
  return j;
}

}  // namespace

void register_gate_routes(httplib::Server& http, App& app) {
  // ?limit=N (1..500, default 100) gate results with ids after ?after=ID, oldest first, each
  // with its settings and whole compare JSON; "next" is the cursor of the next page or null.
  http.Get("/api/v1/gates", guarded([&app](const Req& req, Res& res) {
             const PageParams page = page_params(req, kGatesPageMax, kGatesPageDefault);
             auto gates = app.store().gate_results(page.after, page.limit + 1);
             nlohmann::json next = nullptr;
             if (static_cast<int64_t>(gates.size()) > page.limit) {
               gates.pop_back();
               next = gates.back().id;
             }
             nlohmann::json arr = nlohmann::json::array();
             for (const auto& g : gates) arr.push_back(gate_record_to_json(g, true));
             send_json(req, res, 200, {{"gates", std::move(arr)}, {"next", next}});
           }));

  // The compare JSON as `perfgate compare --json` writes it, plus "submitted_by" (required) and
  // "ref" (optional) at the top. A content-reader handler, like the ingest of runs: the token is
  // checked before the body is read (server.cpp).
  http.Post("/api/v1/gates", [&app](const Req& req, Res& res, const httplib::ContentReader& read) {
    run_guarded(req, res, [&] {
      const std::string body = read_authorized_body(app, req, res, read);
      auto doc = nlohmann::json::parse(body, nullptr, false);
      if (doc.is_discarded())
        throw HttpError(400, "request body: not JSON (expected the compare JSON of a gate)");
      // A malformed document: UsageError naming the key, answered 400.
      store::Store::GateRecord r =
          app::gate_record_from_json(std::move(doc), "request body", "api");
      try {
        r = app.store().add_gate_result(std::move(r));
      } catch (const RuntimeFailure& e) {
        throw_storage_error(e);
      }
      app.note_write();
      send_json(req, res, 201, gate_record_to_json(r, false));
    });
  });
}

}  // namespace pg::web
