// The static assets compiled into the binary (see web/CMakeLists.txt). Served from /static/NAME
// only by exact name lookup: a request path is never turned into a file-system path.
#pragma once
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
  std::string gzipped;  // the body gzip-compressed once, sent to clients that accept gzip
};

// nullptr when no asset has exactly this name.
const Asset* find_asset(std::string_view name);
// "/static/NAME?v=HASH": a URL that changes whenever the asset does, so it can be cached forever.
std::string asset_url(std::string_view name);

}  // namespace pg::web
