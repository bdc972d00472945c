#include "web/routes/http_util.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "common/errors.h"
#include "common/inert_text.h"
#include "web/http/compress.h"
#include "web/pages/html.h"
#include "web/pages/page_frame.h"

namespace pg::web {

namespace {
thread_local bool tl_accepts_gzip = false;
constexpr size_t kGzipMinBytes = 2048;
}  // namespace

bool client_accepts_gzip() { return tl_accepts_gzip; }
void set_client_accepts_gzip(bool on) { tl_accepts_gzip = on; }

std::optional<int64_t> parse_id(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

int64_t id_param(const httplib::Request& req, const char* what) {
  const std::string raw = req.matches.size() > 1 ? req.matches[1].str() : std::string();
  auto id = parse_id(raw);
  if (!id) throw HttpError(400, std::string(what) + " id must be a positive integer");
  return *id;
}

std::optional<std::string> query_param(const httplib::Request& req, const char* name,
                                       size_t max_len) {
  if (!req.has_param(name)) return std::nullopt;
  std::string v = req.get_param_value(name);
  if (v.size() > max_len)
    throw HttpError(400, std::string("query parameter '") + name + "' is too long");
  if (v.find('\0') != std::string::npos)
    throw HttpError(400, std::string("query parameter '") + name + "' contains a NUL byte");
  if (v.empty()) return std::nullopt;
  return v;
}

PageParams page_params(const httplib::Request& req, int64_t max_limit, int64_t dflt) {
  PageParams p{0, dflt};
  if (auto v = query_param(req, "limit", 8)) {
    auto n = parse_id(*v);
    if (!n || *n > max_limit)
      throw HttpError(400, "limit must be an integer in 1.." + std::to_string(max_limit));
    p.limit = *n;
  }
  if (auto v = query_param(req, "after", 20)) {
    auto n = parse_id(*v);
    if (!n && *v != "0") throw HttpError(400, "after must be an id (the cursor)");
    p.after = n.value_or(0);
  }
  return p;
}

std::vector<int64_t> id_list_param(const httplib::Request& req, const char* name,
                                   size_t max_count) {
  std::vector<int64_t> ids;
  const size_t n = req.get_param_value_count(name);
  for (size_t i = 0; i < n; ++i) {
    const std::string v = req.get_param_value(name, i);
    if (v.size() > 4096) throw HttpError(400, std::string("'") + name + "' is too long");
    size_t start = 0;
    while (start <= v.size()) {
      size_t end = v.find(',', start);
      if (end == std::string::npos) end = v.size();
      std::string_view part(v.data() + start, end - start);
      if (!part.empty()) {
        auto id = parse_id(part);
        if (!id)
          throw HttpError(400, std::string("'") + name + "' must be a comma-separated list of ids");
        if (std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
        if (ids.size() > max_count)
          throw HttpError(400, std::string("at most ") + std::to_string(max_count) + " " + name);
      }
      start = end + 1;
    }
  }
  return ids;
}

bool is_api_path(std::string_view path) { return path.starts_with("/api/"); }

void send_text(const httplib::Request& req, httplib::Response& res, int status, std::string body,
               const char* type) {
  (void)req;
  res.status = status;
  res.set_header("Cache-Control", "no-cache");
  if (client_accepts_gzip() && body.size() >= kGzipMinBytes) {
    res.set_header("Content-Encoding", "gzip");
    res.set_header("Vary", "Accept-Encoding");
    res.set_content(gzip_compress(body, 6), type);
  } else {
    res.set_content(std::move(body), type);
  }
}

void send_json(const httplib::Request& req, httplib::Response& res, int status,
               const nlohmann::json& j) {
  send_text(req, res, status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
            kJsonType);
}

void send_cached(const httplib::Request& req, httplib::Response& res, const CachedBody& body,
                 const char* cache_control) {
  res.set_header("ETag", body.etag());
  res.set_header("Cache-Control", cache_control);
  res.set_header("Vary", "Accept-Encoding");
  if (req.get_header_value("If-None-Match") == body.etag()) {
    res.status = 304;
    return;
  }
  res.status = 200;
  if (client_accepts_gzip() && body.body().size() >= kGzipMinBytes) {
    res.set_header("Content-Encoding", "gzip");
    res.set_content(body.gzipped(), body.content_type().c_str());
  } else {
    res.set_content(body.body(), body.content_type().c_str());
  }
}

void send_error(const httplib::Request& req, httplib::Response& res, int status,
                const std::string& reason) {
  res.headers.erase("Content-Encoding");
  res.headers.erase("ETag");
  if (is_api_path(req.path)) {
    send_json(req, res, status, {{"error", reason}, {"status", status}});
  } else {
    send_text(req, res, status, render_error_page(status, reason), kHtmlType);
  }
}

int http_status(const ViewError& e) { return e.kind == ViewError::Kind::not_found ? 404 : 400; }

void run_guarded(const httplib::Request& req, httplib::Response& res,
                 const std::function<void()>& fn) {
  try {
    fn();
  } catch (const HttpError& e) {
    send_error(req, res, e.status, e.what());
  } catch (const ViewError& e) {
    send_error(req, res, http_status(e), e.what());
  } catch (const UsageError& e) {
    send_error(req, res, 400, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perfgate serve: internal error on %s %s: %s\n", req.method.c_str(),
                 inert_text(req.path, kInertNameChars).c_str(),
                 inert_text(e.what(), kInertMessageChars).c_str());
    send_error(req, res, 500, "internal error (logged by the server)");
  }
}

httplib::Server::Handler guarded(
    std::function<void(const httplib::Request&, httplib::Response&)> fn) {
  return [fn = std::move(fn)](const httplib::Request& req, httplib::Response& res) {
    run_guarded(req, res, [&] { fn(req, res); });
  };
}

std::string required_string(const nlohmann::json& body, const char* name, size_t max_len) {
  if (!body.contains(name) || !body[name].is_string())
    throw HttpError(400, std::string("request body: '") + name + "' (a string) is required");
  std::string v = body[name].get<std::string>();
  if (v.size() > max_len)
    throw HttpError(400, std::string("request body: '") + name + "' is longer than " +
                             std::to_string(max_len) + " bytes");
  for (unsigned char c : v)
    if (c < 0x20 && c != '\n' && c != '\t')
      throw HttpError(400, std::string("request body: '") + name + "' contains control characters");
  return v;
}

}  // namespace pg::web
