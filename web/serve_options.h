// What `perfgate serve` is configured with. Its own header so that the layers below the server
// (web/app.h, which every route uses) can read the options without including the server.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace pg::web {

struct ServeOptions {
  std::string db_path = "perfgate.db";
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: any free port (tests)
  std::optional<std::string> token;  // ingest token; nullopt: POST /api/v1/runs is refused (403)
  size_t max_body_bytes = 64u << 20;
  int threads = 16;          // worker threads; each keeps one SQLite connection
  bool log_requests = true;  // one line per request on stderr
};

}  // namespace pg::web
