// Route registration, one function per concern; server.cpp calls them all.
#pragma once
#include <httplib.h>

#include "web/views/app.h"

namespace pg::web {

void register_static_routes(httplib::Server& http);
void register_page_routes(httplib::Server& http, App& app);
void register_api_routes(httplib::Server& http, App& app);
void register_run_routes(httplib::Server& http, App& app);     // runs: read and ingest
void register_triage_routes(httplib::Server& http, App& app);  // regressions (routes_triage.cpp)
void register_gate_routes(httplib::Server& http, App& app);    // gate results (routes_gates.cpp)
void register_auth_routes(httplib::Server& http, App& app);    // who am I (routes_auth.cpp)
// accepted slowdowns (routes_acceptances.cpp)
void register_acceptance_routes(httplib::Server& http, App& app);

// The body of an ingest POST whose head server.cpp admitted up to --max-body (runs and gate
// results): 401/403 without a credential that may ingest (web/routes/auth.h), 413 too large, 400
// cut short or nested too deep (web/http/json_limits.h). Checks the credential again for the
// answer's sake.
std::string read_authorized_body(App& app, const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& read);
// Rethrows a failed store write as 507 (disk full) or 503 (I/O error, read-only database), each
// saying nothing was stored; anything else as it is.
[[noreturn]] void throw_storage_error(const std::exception& e);

// The Content-Security-Policy every HTML page carries: scripts only from this server, nothing
// inline, so even an escaping bug could not run injected script.
inline constexpr const char* kPageCsp =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'";

}  // namespace pg::web
