// gzip for responses. cpp-httplib would compress on its own, but it picks brotli at its maximum
// quality (hundreds of ms for one page), so the server strips Accept-Encoding before routing and
// compresses here instead, once per cached body.
#pragma once
#include <string>
#include <string_view>

namespace pg::web {

std::string gzip_compress(std::string_view data, int level = 6);

}  // namespace pg::web
