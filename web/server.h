// perfgate serve: the dashboard and JSON API over one perfgate database.
#pragma once
#include <memory>
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
  // The gate settings the chart's flags, the overview's badges and the compare page share
  // (docs/WEB.md, "One rule"): give serve the values your CI gate uses.
  double alpha = 0.01;
  double min_effect = 0.05;
  std::string main_branch;  // the trend's default branch; empty: main, else master, else busiest
  std::string repo_url;     // e.g. https://github.com/org/repo: SHAs link to REPO/commit/SHA
};

// Reads a token file: its content without surrounding whitespace, one word (as the runner's
// --token-file). A missing, unreadable, empty or multi-word file is a UsageError naming the path:
// ingest with an empty token would accept anyone.
std::string read_token_file(const std::string& path);

class Server {
 public:
  // Checks the database: a missing file or one that is not a perfgate database is a UsageError
  // (exit 2); serve never creates a database, so a mistyped --db fails loudly.
  explicit Server(ServeOptions opt);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the listening socket; returns the port (the chosen one when port is 0). A port in use or
  // an address that cannot be bound is a RuntimeFailure (exit 4).
  int bind();
  // Serves until stop(); call bind() first.
  void serve();
  // Thread-safe; serve() returns soon after. Not async-signal-safe: see run_serve.
  void stop();
  bool is_running() const;
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CLI entry: binds, serves until SIGINT or SIGTERM, then shuts down cleanly. Returns the exit
// code (0 after a signal).
int run_serve(const ServeOptions& opt);

}  // namespace pg::web
