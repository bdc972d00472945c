#include "web/http/assets.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>

#include "web/http/compress.h"

namespace pg::web {
namespace {

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string_view content_type_for(std::string_view name) {
  // Not the bare "application/javascript" / "text/css": with a charset parameter cpp-httplib's own
  // compression leaves the body alone (see compress.h).
  if (name.ends_with(".js")) return "application/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// Built once, on first use, then read-only: safe to share between request threads.
const std::map<std::string_view, Asset>& assets() {
  static const std::map<std::string_view, Asset> table = [] {
    std::map<std::string_view, Asset> t;
    for (const RawAsset& raw : raw_assets()) {
      Asset& a = t[raw.name];
      a.name = raw.name;
      a.content_type = content_type_for(a.name);
      a.body = std::string_view(raw.begin, static_cast<size_t>(raw.end - raw.begin));
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a64(a.body)));
      a.version = std::string(hex, 12);
      a.etag = "\"" + std::string(hex) + "\"";
    }
    return t;
  }();
  return table;
}

}  // namespace

const std::string& Asset::gzipped() const {
  std::call_once(gz_once_, [this] { gz_ = gzip_compress(body, 6); });
  return gz_;
}

const Asset* find_asset(std::string_view name) {
  const auto& t = assets();
  auto it = t.find(name);
  return it == t.end() ? nullptr : &it->second;
}

std::string asset_url(std::string_view name) {
  const Asset* a = find_asset(name);
  std::string url = "/static/" + std::string(name);
  if (a) url += "?v=" + a->version;
  return url;
}

}  // namespace pg::web
