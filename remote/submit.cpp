#include "remote/submit.h"

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <regex>

#include "common/errors.h"

namespace pg::remote {

SubmitTarget parse_submit_url(const std::string& url, const std::string& setting,
                              const std::string& endpoint) {
  // scheme, host (a name, an IPv4 address or a bracketed IPv6 one), optional port, optional path.
  static const std::regex re(
      R"(^(https?)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(:[0-9]{1,5})?(/[^?#]*)?$)");
  std::smatch m;
  if (!std::regex_match(url, m, re))
    throw SettingError(fmt::format(
        "{}: '{}' is not an http:// or https:// URL of a perfgate server", setting, url));
  if (m[3].matched) {
    const int port = std::stoi(m[3].str().substr(1));
    if (port < 1 || port > 65535)
      throw SettingError(fmt::format("{}: port {} of '{}' is out of range", setting, port, url));
  }
  SubmitTarget t;
  t.scheme_host_port = m[1].str() + "://" + m[2].str() + m[3].str();
  std::string prefix = m[4].str();
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  t.path = prefix + endpoint;
  return t;
}

namespace {

httplib::Client client_for(const SubmitTarget& target) {
  httplib::Client client(target.scheme_host_port);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(120, 0);
  client.set_write_timeout(120, 0);
  return client;
}

// The reply's body on 2xx; RuntimeFailure "<what> <url> failed: ..." with the server's message
// otherwise (a JSON error document as its "error" text).
std::string reply_body(const httplib::Result& res, const std::string& what,
                       const std::string& url) {
  if (!res)
    throw RuntimeFailure(
        fmt::format("{} {} failed: {}", what, url, httplib::to_string(res.error())));
  if (res->status < 200 || res->status > 299) {
    std::string message = res->body;
    const auto doc = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("error") && doc["error"].is_string())
      message = doc["error"].get<std::string>();
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
      message.pop_back();
    constexpr size_t kMaxShown = 1000;
    if (message.size() > kMaxShown) message = message.substr(0, kMaxShown) + "...";
    throw RuntimeFailure(fmt::format("{} {} failed: HTTP {}{}{}", what, url, res->status,
                                     message.empty() ? "" : ": ", message));
  }
  return res->body;
}

}  // namespace

std::string submit_run_json(const SubmitTarget& target, const std::string& token,
                            const std::string& export_json) {
  httplib::Client client = client_for(target);
  client.set_bearer_token_auth(token);
  return reply_body(client.Post(target.path, export_json, "application/json"), "submit to",
                    target.scheme_host_port + target.path);
}

std::string get_json(const SubmitTarget& target, const QueryParams& query) {
  httplib::Client client = client_for(target);
  const httplib::Params params(query.begin(), query.end());
  return reply_body(client.Get(target.path, params, httplib::Headers{}), "GET",
                    target.scheme_host_port + target.path);
}

}  // namespace pg::remote
