// Small helpers every route uses: typed errors, strict parameter parsing and response writing.
#pragma once
#include <httplib.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "web/views/cache.h"
#include "web/views/view_error.h"

namespace pg::web {

// Thrown by a handler to answer with a client error (4xx) and a reason.
struct HttpError : std::runtime_error {
  HttpError(int status, const std::string& reason) : std::runtime_error(reason), status(status) {}
  int status;
};

// A positive decimal id of at most 18 digits; anything else (signs, spaces, hex, overflow) is none.
std::optional<int64_t> parse_id(std::string_view s);
// The id in a route's first capture group: 400 unless it parses.
int64_t id_param(const httplib::Request& req, const char* what);
// One query parameter, at most max_len bytes (400 beyond); nullopt when absent or empty.
std::optional<std::string> query_param(const httplib::Request& req, const char* name,
                                       size_t max_len = 256);
// "1,2,3" and/or repeated ?ids=1&ids=2: at most max_count ids, 400 on anything malformed.
std::vector<int64_t> id_list_param(const httplib::Request& req, const char* name,
                                   size_t max_count = 16);

// A JSON request body's string member `name`, at most max_len bytes, without control characters
// other than newline and tab: 400 naming it otherwise (or when it is missing or not a string).
std::string required_string(const nlohmann::json& body, const char* name, size_t max_len);

// A cursor page of a paginated list: ?limit=N (1..max_limit, default dflt) items with ids after
// ?after=ID (0 by default); 400 naming the parameter otherwise.
struct PageParams {
  int64_t after = 0, limit = 0;
};
PageParams page_params(const httplib::Request& req, int64_t max_limit, int64_t dflt);

bool is_api_path(std::string_view path);

// Whether the client accepted gzip (recorded before routing, see server.cpp).
bool client_accepts_gzip();
void set_client_accepts_gzip(bool on);

void send_text(const httplib::Request& req, httplib::Response& res, int status, std::string body,
               const char* type);
void send_json(const httplib::Request& req, httplib::Response& res, int status,
               const nlohmann::json& j);
// Sends a cached body with ETag (304 on If-None-Match) and gzip when the client takes it.
void send_cached(const httplib::Request& req, httplib::Response& res, const CachedBody& body,
                 const char* cache_control = "no-cache");
// An error as JSON {"error": reason} under /api/, as a small HTML page elsewhere.
void send_error(const httplib::Request& req, httplib::Response& res, int status,
                const std::string& reason);

// A view's error as an answer: 400 for bad input, 404 for something that is not there.
int http_status(const ViewError& e);

// Runs fn so that HttpError, ViewError and UsageError become 4xx answers, and anything else a 500
// that is logged (a 500 is always a defect).
void run_guarded(const httplib::Request& req, httplib::Response& res,
                 const std::function<void()>& fn);
// A handler wrapped in run_guarded.
httplib::Server::Handler guarded(
    std::function<void(const httplib::Request&, httplib::Response&)> fn);

}  // namespace pg::web
