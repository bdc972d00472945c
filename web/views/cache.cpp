#include "web/views/cache.h"

#include <cstdio>

#include "web/http/compress.h"

namespace pg::web {

namespace {
uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}
}  // namespace

CachedBody::CachedBody(std::string body, std::string content_type)
    : body_(std::move(body)), type_(std::move(content_type)) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(fnv1a64(body_)));
  etag_ = buf;
}

const std::string& CachedBody::gzipped() const {
  std::call_once(gz_once_, [this] { gz_ = gzip_compress(body_, 6); });
  return gz_;
}

}  // namespace pg::web
