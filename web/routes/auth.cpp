#include "web/routes/auth.h"

#include <algorithm>

#include "common/constant_time.h"
#include "web/routes/http_util.h"

namespace pg::web {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

constexpr size_t kMaxHeaderUserChars = 128;

const std::string kBearer = "Bearer ";

bool is_legacy_token(const ServeOptions& opt, const std::string& token) {
  return opt.token && constant_time_equal(token, *opt.token);
}

// A user name as an SSO proxy gives it: a login or an e-mail address.
bool is_header_user(const std::string& v) {
  if (v.empty() || v.size() > kMaxHeaderUserChars) return false;
  return std::all_of(v.begin(), v.end(), [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '@' || c == '+';
  });
}

[[noreturn]] void unauthorized(Res& res, const std::string& error, const std::string& reason) {
  res.set_header("WWW-Authenticate",
                 "Bearer realm=\"perfgate\"" + (error.empty() ? "" : ", error=\"" + error + "\""));
  throw HttpError(401, reason);
}

// Whether serve could accept any credential: the legacy token, the proxy's header, or a stored
// credential that is not revoked.
bool accepts_credentials(App& app) {
  if (app.options().token || !app.options().auth_header.empty()) return true;
  for (const auto& c : app.store().credentials())
    if (!c.revoked()) return true;
  return false;
}

}  // namespace

bool Identity::may(Permission p) const {
  if (role == "admin") return true;
  return p == Permission::ingest ? role == "ingest" : role == "triage";
}

bool has_bearer_scheme(const std::string& authorization) {
  return authorization.size() > kBearer.size() &&
         std::equal(kBearer.begin(), kBearer.end(), authorization.begin(),
                    [](char a, char b) { return std::tolower(a) == std::tolower(b); });
}

Identity authenticate(App& app, const Req& req, Res& res) {
  const ServeOptions& opt = app.options();
  // First, as before named credentials: a server that takes none says so whatever was sent.
  if (!accepts_credentials(app))
    throw HttpError(403,
                    "writes are disabled: create a credential with `perfgate token add NAME "
                    "--role ROLE --db DB`, or start perfgate serve with --token-file FILE");
  const std::string auth = req.get_header_value("Authorization");
  if (has_bearer_scheme(auth)) {
    const std::string token = auth.substr(kBearer.size());
    if (is_legacy_token(opt, token)) return {kLegacyName, "legacy", "admin", 0};
    if (auto c = app.store().find_credential(token)) {
      if (c->revoked())
        unauthorized(res, "invalid_token",
                     "token '" + c->name + "' was revoked at " + *c->revoked_at);
      return {c->name, "token", c->role, c->id};
    }
    unauthorized(res, "invalid_token", "invalid bearer token");
  }
  // The proxy's header only from the proxy: from anyone else it is what any client may send.
  if (!opt.auth_header.empty() && req.has_header(opt.auth_header) &&
      app.trusted_proxies().contains(req.remote_addr)) {
    const std::string user = req.get_header_value(opt.auth_header);
    if (!is_header_user(user))
      unauthorized(res, "",
                   "the proxy's " + opt.auth_header +
                       " header names no usable user (1 to 128 of A-Z a-z 0-9 . _ - @ +)");
    return {user, "header", "triage", 0};
  }
  unauthorized(res, "", "missing bearer token (Authorization: Bearer <token>)");
}

Identity require(App& app, const Req& req, Res& res, Permission p) {
  Identity who = authenticate(app, req, res);
  const char* what = p == Permission::ingest ? "ingest" : "triage";
  if (!who.may(p)) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"perfgate\", error=\"insufficient_scope\"");
    throw HttpError(403, (who.via == "header" ? "user '" : "token '") + who.name + "' has role " +
                             who.role + ": it may not " + what);
  }
  if (who.via == "header" && req.get_header_value("Content-Type").rfind("application/json", 0) != 0)
    throw HttpError(415,
                    "a write authenticated by the proxy's header must send "
                    "Content-Type: application/json");
  if (who.credential_id) {
    // Informational: a busy or read-only database must not refuse the write it authorizes (that
    // write then answers for itself).
    try {
      app.store().note_credential_use(who.credential_id);
    } catch (const std::exception&) {
    }
  }
  return who;
}

bool may_ingest(App& app, const std::string& authorization) {
  if (!has_bearer_scheme(authorization)) return false;
  const std::string token = authorization.substr(kBearer.size());
  if (is_legacy_token(app.options(), token)) return true;
  auto c = app.store().find_credential(token);
  return c && !c->revoked() && (c->role == "ingest" || c->role == "admin");
}

}  // namespace pg::web
