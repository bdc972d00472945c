// GET /api/v1/whoami: who the request's credential says it is (web/routes/auth.h), so the
// regressions page can show whom a triage would be recorded as before anything is written. Writes
// nothing, not even the credential's last use.
#include "web/routes/auth.h"
#include "web/routes/http_util.h"
#include "web/routes/routes.h"

namespace pg::web {

namespace {

nlohmann::json identity_json(const Identity& who) {
  return {{"name", who.name},
          {"via", who.via},
          {"role", who.role},
          {"may_ingest", who.may(Permission::ingest)},
          {"may_triage", who.may(Permission::triage)}};
}

}  // namespace

void register_auth_routes(httplib::Server& http, App& app) {
  http.Get("/api/v1/whoami", guarded([&app](const httplib::Request& req, httplib::Response& res) {
             res.set_header("Cache-Control", "no-store");
             // Without a token, nobody is an answer, not an error: the page asks on every load
             // (behind the proxy it is the way to learn the user), and a 401 would be a console
             // error in every browser that only reads. A token that is sent must be valid.
             if (!req.has_header("Authorization")) {
               try {
                 const Identity who = authenticate(app, req, res);
                 return send_json(req, res, 200, identity_json(who));
               } catch (const HttpError&) {
                 res.headers.erase("WWW-Authenticate");
                 return send_json(req, res, 200, {{"name", nullptr}});
               }
             }
             send_json(req, res, 200, identity_json(authenticate(app, req, res)));
           }));
}

}  // namespace pg::web
