// Accepted slowdowns over HTTP (docs/API.md "Accepted slowdowns"): the list a gate of a ref reads
// (GET, no credential, like every read) and accepting or revoking with a credential that may
// triage, recorded under its name. The use case is app/acceptance.h, as for `perfgate accept`.
#include "app/acceptance.h"
#include "web/routes/auth.h"
#include "web/routes/http_util.h"
#include "web/routes/routes.h"

namespace pg::web {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

int64_t required_id(const nlohmann::json& body, const char* name) {
  if (!body[name].is_number_integer() || body[name].get<int64_t>() <= 0)
    throw HttpError(400, std::string("request body: '") + name + "' must be a positive integer");
  return body[name].get<int64_t>();
}

}  // namespace

void register_acceptance_routes(httplib::Server& http, App& app) {
  // ?ref=REF: that ref's acceptances (all refs' without it), oldest first, revoked ones included
  // with their revocation: what `perfgate compare --acceptances URL --ref REF` reads.
  http.Get("/api/v1/acceptances", guarded([&app](const Req& req, Res& res) {
             const std::string ref = query_param(req, "ref", 256).value_or("");
             send_json(req, res, 200, app::acceptances_json(app.store().acceptances(ref)));
           }));

  // {"gate_id": 5, "reason": "..."}: accept every regression of stored gate 5 for its ref.
  // {"revoke": 3, "reason": "..."}: end acceptance 3. The author is the authenticated identity.
  http.Post("/api/v1/acceptances", guarded([&app](const Req& req, Res& res) {
              const Identity who = require(app, req, res, Permission::triage);
              const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
              if (body.is_discarded() || !body.is_object())
                throw HttpError(400, "request body: a JSON object is required");
              const std::string reason = required_string(body, "reason", 2000);
              if (reason.empty())
                throw HttpError(400, "request body: 'reason' must say why (it is not empty)");
              if (body.contains("gate_id") == body.contains("revoke"))
                throw HttpError(400, "request body: give 'gate_id' (to accept) or 'revoke'");
              // UsageError (no such gate or acceptance, no ref, nothing regressed) answers 400.
              const store::Store::Acceptance a =
                  body.contains("revoke")
                      ? app.store().revoke_acceptance(required_id(body, "revoke"), reason, who.name,
                                                      who.via)
                      : app::accept_gate(app.store(), required_id(body, "gate_id"), reason,
                                         who.name, who.via);
              app.note_write();
              send_json(req, res, 201, app::acceptance_json(a));
            }));
}

}  // namespace pg::web
