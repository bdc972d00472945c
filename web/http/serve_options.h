// What `perfgate serve` is configured with. Its own header so that the layers below the server
// (web/views/app.h, which every route uses) can read the options without including the server.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "app/gate_settings.h"
#include "web/http/request_reader.h"

namespace pg::web {

struct ServeOptions {
  std::string db_path = "perfgate.db";
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (tests)
  // The legacy credential (--token-file): may ingest and triage, as before named credentials;
  // nullopt: none. Named credentials live in the database (`perfgate token`, web/routes/auth.h).
  std::optional<std::string> token;
  // An SSO proxy's user header (e.g. X-Forwarded-User), taken as a triage identity only from a
  // peer in trusted_proxy (comma-separated addresses and CIDR networks); both empty: off.
  std::string auth_header, trusted_proxy;
  size_t max_body_bytes = 64u << 20;  // an ingest body, chunked or not (413 beyond)
  int threads = 16;          // requests handled at once; each holds one pooled SQLite connection
  ConnLimits limits;         // timeouts, head and connection caps (web/http/request_reader.h)
  bool log_requests = true;  // one line per request on stderr
  // The gate settings the chart's flags, the overview's badges and the compare page share
  // (docs/WEB.md, "One rule"): give serve the values your CI gate uses. alpha and min_effect
  // drive the flags and badges; the compare page starts from all of them.
  app::GateSettings gate_settings;
  std::string main_branch;  // the trend's default branch; empty: main, else master, else busiest
  std::string repo_url;     // e.g. https://github.com/org/repo: SHAs link to REPO/commit/SHA
  // How long the overview waits for series views still being computed (first start, new
  // settings, new data) before it answers with the ready ones and lists the rest as computing.
  std::chrono::milliseconds page_wait{300};
  // Tests only: called by the background warmer before it computes a series' default view.
  std::function<void(int64_t series_id)> before_warm_view;
};

}  // namespace pg::web
