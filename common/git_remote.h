// A repository's remote URL as perfgate keeps it (docs/FORMATS.md, git.remote): never with
// credentials, and turned into the web page of a commit where the host is a known forge layout.
#pragma once
#include <optional>
#include <string>

namespace pg {

// The URL without what could be a secret: the user-info of scheme://user:token@host/... (any
// user-info: https://oauth2:TOKEN@host is as common as user:password), the query and the
// fragment. scp-like remotes (git@host:owner/repo) hold no password and stay as they are.
inline std::string redact_remote_url(std::string url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t host = scheme + 3;
  const size_t path = url.find('/', host);
  const size_t at = url.rfind('@', path == std::string::npos ? std::string::npos : path);
  if (at != std::string::npos && at >= host) url.erase(host, at + 1 - host);
  const auto cut = url.find_first_of("?#", host);
  if (cut != std::string::npos) url.erase(cut);
  return url;
}

// The repository's web page, from a (redacted) remote: https://host/owner/repo for
// https://host/owner/repo(.git), ssh://[user@]host[:port]/owner/repo(.git) and
// user@host:owner/repo(.git). nullopt for anything else (a local path, file://, an empty path).
inline std::optional<std::string> remote_web_url(const std::string& remote) {
  std::string host, path;
  const auto scheme = remote.find("://");
  if (scheme != std::string::npos) {
    const std::string s = remote.substr(0, scheme);
    if (s != "https" && s != "http" && s != "ssh" && s != "git") return std::nullopt;
    const size_t start = scheme + 3;
    const size_t slash = remote.find('/', start);
    if (slash == std::string::npos) return std::nullopt;
    host = remote.substr(start, slash - start);
    const auto at = host.rfind('@');
    if (at != std::string::npos) host.erase(0, at + 1);
    // An ssh port is not the web server's.
    if (s != "https" && s != "http") host = host.substr(0, host.find(':'));
    path = remote.substr(slash + 1);
  } else {
    const auto colon = remote.find(':');
    if (colon == std::string::npos || remote.find('/') < colon) return std::nullopt;
    host = remote.substr(0, colon);
    const auto at = host.rfind('@');
    if (at != std::string::npos) host.erase(0, at + 1);
    path = remote.substr(colon + 1);
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".git") == 0)
    path.resize(path.size() - 4);
  if (host.empty() || path.empty() || path.front() == '/') return std::nullopt;
  for (char c : host + path)
    if (c == ' ' || c == '"' || c == '<' || c == '>' || c == '\\' || c < 0x20) return std::nullopt;
  return "https://" + host + "/" + path;
}

}  // namespace pg
