// The static assets compiled into the binary (see web/CMakeLists.txt). Served from /static/NAME
// only by exact name lookup: a request path is never turned into a file-system path.
#pragma once
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace pg::web {

struct RawAsset {  // what the generated embedded_assets.cpp provides
  const char* name;
  const char* begin;
  const char* end;
};
const std::vector<RawAsset>& raw_assets();

struct Asset {
  std::string_view name;
  std::string_view content_type;
  std::string_view body;
  std::string etag;     // quoted strong validator from the content hash
  std::string version;  // short hash for cache-busting URLs (?v=...)
  // The body gzip-compressed on first use (not at start-up: plotly.js takes a while), sent to
  // clients that accept gzip.
  const std::string& gzipped() const;

 private:
  mutable std::once_flag gz_once_;
  mutable std::string gz_;
};

// nullptr when no asset has exactly this name.
const Asset* find_asset(std::string_view name);
// "/static/NAME?v=HASH": a URL that changes whenever the asset does, so it can be cached forever.
std::string asset_url(std::string_view name);

}  // namespace pg::web
