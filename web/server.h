// perfgate serve: the dashboard and JSON API over one perfgate database.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "web/http/serve_options.h"

namespace pg::web {

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
  // After serve() returned: waits up to `limit` for the start-up cache warming to end; false if
  // it is still busy (the destructor would wait for it).
  bool wait_background(std::chrono::milliseconds limit);
  // Thread-safe, also before serve() started (serve() then returns at once); serve() returns
  // soon after. Not async-signal-safe: see run_serve.
  void stop();
  bool is_running() const;
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CLI entry: binds, serves until SIGINT or SIGTERM, then shuts down cleanly. A signal at any
// moment, start-up included, ends it within about a second. Returns the exit code (0 after a
// signal).
int run_serve(const ServeOptions& opt);

}  // namespace pg::web
