// Route registration, one function per concern; server.cpp calls them all.
#pragma once
#include <httplib.h>

#include "web/app.h"

namespace pg::web {

void register_static_routes(httplib::Server& http);
void register_page_routes(httplib::Server& http, App& app);
void register_api_routes(httplib::Server& http, App& app);
void register_run_routes(httplib::Server& http, App& app);     // runs: read and ingest
void register_triage_routes(httplib::Server& http, App& app);  // regressions (routes_triage.cpp)
void register_gate_routes(httplib::Server& http, App& app);    // gate results (routes_gates.cpp)

// The body of a token-protected POST whose head server.cpp admitted up to --max-body (ingest of
// runs and gate results): 401/403 without the token, 413 too large, 400 cut short or nested too
// deep (web/json_limits.h). Checks the token again for the answer's sake.
std::string read_authorized_body(App& app, const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& read);
// Rethrows a failed store write as 507 (disk full) or 503 (I/O error, read-only database), each
// saying nothing was stored; anything else as it is.
[[noreturn]] void throw_storage_error(const std::exception& e);

// The bearer token every write (ingest, triage) requires: 403 when serve has no --token-file,
// 401 without a valid one. Compared in constant time.
void check_token(const App& app, const httplib::Request& req, httplib::Response& res);

// Whether an Authorization header value uses the Bearer scheme (any case).
bool has_bearer_scheme(const std::string& authorization);
// Whether an Authorization header value carries the ingest token (compared in constant time).
// The server asks before reading an ingest body; the route asks again to word its answer.
bool ingest_authorized(const ServeOptions& opt, const std::string& authorization);

// The Content-Security-Policy every HTML page carries: scripts only from this server, nothing
// inline, so even an escaping bug could not run injected script.
inline constexpr const char* kPageCsp =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'";

}  // namespace pg::web
