// Who a write request is, and whether it may do what it asks (docs/WEB.md, "Credentials"): a
// named credential's bearer token (role ingest, triage or admin, `perfgate token`), the legacy
// --token-file token (may ingest and triage, as before), or the user an SSO proxy names in
// serve's auth header, believed only from a trusted proxy's address (role triage). Reads need no
// credential. Between the shared state (app) and the routes: it reads the credentials through
// the App's connection.
#pragma once
#include <httplib.h>

#include <cstdint>
#include <optional>
#include <string>

#include "web/views/app.h"

namespace pg::web {

enum class Permission { ingest, triage };

struct Identity {
  std::string name;           // a credential's name, the proxy's user, or kLegacyName
  std::string via;            // token | header | legacy (Store::RegressionEvent::via)
  std::string role;           // ingest | triage | admin
  int64_t credential_id = 0;  // via token only
  bool may(Permission p) const;
};

// The name a triage event records for the legacy token: no credential can be named so (names
// take no spaces or parentheses), so it never passes for one.
inline constexpr const char* kLegacyName = "(ingest token)";

// The request's identity from its head alone: Authorization: Bearer first (a named credential, or
// the legacy token), else the auth header from a trusted proxy. HttpError 401 for a missing,
// unknown or revoked token or an unusable header value (with WWW-Authenticate set on `res`), 403
// when serve accepts no credential at all. A header from an untrusted peer counts as absent.
Identity authenticate(App& app, const httplib::Request& req, httplib::Response& res);
// authenticate, then 403 unless the identity may `p` (error="insufficient_scope"). After a
// success, the credential's last use is recorded. Requests authenticated by the proxy's header
// must send a JSON body (Content-Type: application/json), which a cross-site form cannot do
// without a CORS preflight that serve never answers: the browser's proxy login is no CSRF vector.
Identity require(App& app, const httplib::Request& req, httplib::Response& res, Permission p);

// From the head alone, before any byte of the body (server.cpp's admission of ingest bodies):
// whether this Authorization header value is a live credential that may ingest. Never writes.
bool may_ingest(App& app, const std::string& authorization);

// Whether an Authorization header value uses the Bearer scheme (any case).
bool has_bearer_scheme(const std::string& authorization);

}  // namespace pg::web
