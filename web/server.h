// perfgate serve: the dashboard and JSON API over one perfgate database.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "web/serve_options.h"

namespace pg::web {

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
