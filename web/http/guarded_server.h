// cpp-httplib's server with the connection handling replaced (it keeps routing, handlers and
// response writing): every connection gets a light thread that reads its requests under
// RequestReader's limits, so clients that are slow to send or to read hold only their own
// connection; requests run their handlers in at most `handler_slots` at a time, from memory, and
// the response goes out after the slot is free again. Connections are capped in all and per
// client address. docs/WEB.md ("Limits and timeouts") describes the behaviour.
#pragma once
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <semaphore>
#include <string>

#include "web/http/request_reader.h"

namespace pg::web {

class GuardedServer : public httplib::Server {
 public:
  // Answers a refusal made before routing (oversized, malformed or slow requests, too many
  // connections): fills `res` with the status, headers and body to send; `path` is the request's
  // path when known, else empty.
  using RefusalFn = std::function<void(const std::string& path, int status,
                                       const std::string& reason, httplib::Response& res)>;
  // Runs one request's handling (routing, handler, rendering); may wrap it, e.g. to lend the
  // request a database connection.
  using AroundFn = std::function<void(const std::function<void()>& handle)>;

  GuardedServer(ConnLimits limits, int handler_slots, AdmitFn admit, RefusalFn refuse,
                AroundFn around);
  ~GuardedServer() override;

  int listening_socket() const { return svr_sock_; }
  // Stops accepting and ends every connection's waits; safe from any thread, also before
  // listen_after_bind() started (it then returns at once).
  void request_stop();
  bool stop_requested() const { return stop_requested_.load(); }

 private:
  bool process_and_close_socket(socket_t sock) override;
  void serve_connection(int sock, const std::string& peer, int peer_port);
  void wake_connections();
  void stop_listening();
  void refuse_and_close(int sock, RequestReader* reader, const std::string& path, int status,
                        const std::string& reason);

  class ConnectionThreads;
  friend class ConnectionThreads;

  ConnLimits limits_;
  AdmitFn admit_;
  RefusalFn refuse_;
  AroundFn around_;
  std::counting_semaphore<> slots_;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<bool> stop_requested_{false};
  std::mutex stop_mutex_;
  bool listening_stopped_ = false;

  std::mutex conn_mutex_;
  std::condition_variable conn_cv_;
  int open_connections_ = 0;               // threads serving a connection
  std::map<std::string, int> per_client_;  // open connections per client address
};

}  // namespace pg::web
