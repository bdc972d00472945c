#include "web/server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <strings.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "common/errors.h"
#include "common/inert_text.h"
#include "common/utc_time.h"
#include "web/http/assets.h"
#include "web/http/guarded_server.h"
#include "web/http/trusted_proxy.h"
#include "web/pages/html.h"
#include "web/routes/auth.h"
#include "web/routes/http_util.h"
#include "web/routes/routes.h"
#include "web/views/app.h"

namespace pg::web {

namespace {

thread_local std::chrono::steady_clock::time_point tl_request_start;
thread_local bool tl_request_timed = false;

void log_request(const httplib::Request& req, const httplib::Response& res) {
  char ms[32] = "-";
  if (tl_request_timed) {
    const double elapsed = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - tl_request_start)
                               .count();
    std::snprintf(ms, sizeof ms, "%.2fms", elapsed);
  }
  tl_request_timed = false;
  const std::string line = now_iso8601() + " " + inert_text(req.method, 16) + " " +
                           inert_text(req.path, kInertNameChars) + " " +
                           std::to_string(res.status) + " " + ms + " " +
                           std::to_string(res.body.size()) + "B\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Why a bind failed, in words: cpp-httplib only reports that it did.
std::string bind_failure_reason(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    return "cannot resolve host '" + host + "': " + gai_strerror(rc);
  std::string why = "unknown error";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) why = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(res);
  return why;
}

httplib::Headers security_headers() {
  return {{"X-Content-Type-Options", "nosniff"},
          {"Referrer-Policy", "same-origin"},
          {"X-Frame-Options", "DENY"},
          {"Content-Security-Policy", kPageCsp}};
}

// Which bodies the server reads, decided from the head alone: an ingest body (runs, gate results)
// only with a credential that may ingest (and up to --max-body), so an unauthenticated upload is
// never read, not even after a "100 Continue"; any other request's body only up to a small cap
// (no other route reads a large one).
Admission admit_request(App& app, const RequestHead& head) {
  const ServeOptions& opt = app.options();
  if (head.method == "POST" && (head.path == "/api/v1/runs" || head.path == "/api/v1/gates")) {
    try {
      App::StoreLease lease(app);  // named credentials are read from the database
      if (may_ingest(app, head.header("Authorization"))) return {opt.max_body_bytes, false};
    } catch (const std::exception&) {
      // The database cannot be read right now: withhold the body; the route answers.
    }
    return {0, true};  // the route answers 401/403 without the body
  }
  return {opt.limits.max_other_body_bytes, false};
}

void log_refusal(const std::string& path, int status, const std::string& reason) {
  const std::string line =
      now_iso8601() + " - " + (path.empty() ? "-" : inert_text(path, kInertNameChars)) + " " +
      std::to_string(status) + " refused: " + inert_text(reason, kInertMessageChars) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

struct Server::Impl {
  explicit Impl(ServeOptions o)
      : opt(o),
        app(std::move(o)),
        http(
            opt.limits, opt.threads,
            [this](const RequestHead& head) { return admit_request(app, head); },
            [this](const std::string& path, int status, const std::string& reason,
                   httplib::Response& res) {
              if (opt.log_requests) log_refusal(path, status, reason);
              res.headers = security_headers();
              set_client_accepts_gzip(false);
              httplib::Request req;
              req.path = path;
              send_error(req, res, status, reason);
            },
            [this](const std::function<void()>& handle) {
              App::StoreLease lease(app);
              handle();
            }) {}
  ServeOptions opt;
  App app;
  GuardedServer http;
  int port = -1;
  // Computes every series' view at start and after new data (App::warm_loop), so the overview
  // answers at once with what is ready rather than waiting for all of them.
  std::thread warmer;
  std::atomic<bool> stopping{false};
  std::mutex warm_mutex;
  std::condition_variable warm_cv;
  bool warm_done = false;
};

Server::Server(ServeOptions opt) {
  // The options are serve's settings (web/http/serve_options.h), which its front end spells.
  const auto setting = [](const char* name) { return SettingError::setting(name); };
  if (opt.db_path.empty()) throw SettingError(setting("db") + ": empty path");
  std::error_code ec;
  if (!std::filesystem::exists(opt.db_path, ec))
    throw SettingError(setting("db") + " " + opt.db_path +
                       ": no such database (serve does not create one; store runs with `perfgate "
                       "run --db " +
                       opt.db_path + "` first)");
  if (opt.port < 0 || opt.port > 65535) throw SettingError("port", "must be in 0..65535");
  if (opt.threads < 1 || opt.threads > 1024) throw SettingError("threads", "must be in 1..1024");
  // The proxy's header means nothing without the proxy's address, and the other way round.
  if (opt.auth_header.empty() != opt.trusted_proxy.empty())
    throw SettingError(setting(opt.auth_header.empty() ? "trusted-proxy" : "auth-header") +
                       " needs " +
                       setting(opt.auth_header.empty() ? "auth-header" : "trusted-proxy"));
  if (!opt.auth_header.empty()) {
    const bool token_chars =
        std::all_of(opt.auth_header.begin(), opt.auth_header.end(),
                    [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
    if (!token_chars || opt.auth_header.size() > 64)
      throw SettingError("auth-header", "must be a header name: 1 to 64 of A-Z a-z 0-9 - _");
    for (const char* taken : {"authorization", "host", "cookie", "content-type"})
      if (strcasecmp(opt.auth_header.c_str(), taken) == 0)
        throw SettingError("auth-header", "cannot be " + opt.auth_header);
    TrustedProxies::parse(opt.trusted_proxy);  // SettingError naming trusted-proxy
  }
  {
    store::Store check(opt.db_path);
  }  // not a perfgate database, or from a newer perfgate: UsageError
  impl_ = std::make_unique<Impl>(std::move(opt));
  find_asset("style.css");  // builds the asset table (hashes) before the first request

  auto& http = impl_->http;
  App& app = impl_->app;
  http.set_payload_max_length(impl_->opt.max_body_bytes);
  http.set_keep_alive_max_count(10000);
  // Announced in the Keep-Alive header; GuardedServer enforces it.
  http.set_keep_alive_timeout(std::max<time_t>(1, impl_->opt.limits.idle_timeout.count() / 1000));
  http.set_tcp_nodelay(true);
  http.set_default_headers(security_headers());
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
    tl_request_start = std::chrono::steady_clock::now();
    tl_request_timed = true;
    // Compression is ours (see compress.h): take the header away before cpp-httplib sees it.
    const std::string ae = req.get_header_value("Accept-Encoding");
    set_client_accepts_gzip(ae.find("gzip") != std::string::npos);
    const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string reason = res.status == 404   ? "not found"
                             : res.status == 413 ? "request body too large"
                             : res.status == 414 ? "request URI too long"
                                                 : "bad request";
        set_client_accepts_gzip(false);
        const int status = res.status;
        send_error(req, res, status, reason);
        return httplib::Server::HandlerResponse::Handled;
      }));
  if (impl_->opt.log_requests) http.set_logger(log_request);

  register_static_routes(http);
  register_page_routes(http, app);
  register_api_routes(http, app);
  register_run_routes(http, app);
}

Server::~Server() {
  if (!impl_) return;
  impl_->stopping = true;
  impl_->app.wake_warmer();
  impl_->http.request_stop();
  if (impl_->warmer.joinable()) impl_->warmer.join();
}

int Server::bind() {
  // A client that hangs up mid-response must not kill the server (cpp-httplib sends without
  // MSG_NOSIGNAL on Linux).
  ::signal(SIGPIPE, SIG_IGN);
  const auto& o = impl_->opt;
  int port = -1;
  if (o.port == 0) {
    port = impl_->http.bind_to_any_port(o.host);
  } else if (impl_->http.bind_to_port(o.host, o.port)) {
    port = o.port;
  }
  if (port <= 0)
    throw RuntimeFailure("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " +
                         bind_failure_reason(o.host, o.port));
  ::listen(impl_->http.listening_socket(), SOMAXCONN);
  impl_->port = port;
  return port;
}

void Server::serve() {
  if (impl_->port <= 0) bind();
  Impl* impl = impl_.get();
  // Before the thread exists: a request arriving before it starts answers with what is ready
  // rather than computing every view itself.
  impl->app.request_warm(1);
  impl->warmer = std::thread([impl] {
    try {
      // Every series' default view now, then again whenever a page finds views of newer data
      // missing; pages answer meanwhile with what is ready (App::default_views_by). After the
      // first pass, the chart bundle's gzip, so the first chart does not wait for it.
      // Every core: at a first start the warm-up is the only work there is, and requests still
      // answer within their wait (docs/PERFORMANCE.md measures 2 and 16 cores).
      impl->app.warm_loop(impl->stopping, std::clamp(std::thread::hardware_concurrency(), 1u, 16u),
                          [] {
                            if (const Asset* a = find_asset("plotly.min.js")) a->gzipped();
                          });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "perfgate serve: warming the caches failed: %s\n", e.what());
    }
    std::lock_guard lk(impl->warm_mutex);
    impl->warm_done = true;
    impl->warm_cv.notify_all();
  });
  impl_->http.listen_after_bind();
  impl_->stopping = true;
}

bool Server::wait_background(std::chrono::milliseconds limit) {
  impl_->stopping = true;
  impl_->app.wake_warmer();
  std::unique_lock lk(impl_->warm_mutex);
  if (!impl_->warm_cv.wait_for(lk, limit, [&] { return impl_->warm_done; })) return false;
  lk.unlock();
  if (impl_->warmer.joinable()) impl_->warmer.join();
  return true;
}

void Server::stop() {
  impl_->stopping = true;
  impl_->app.wake_warmer();
  impl_->http.request_stop();
}
bool Server::is_running() const { return impl_->http.is_running(); }
int Server::port() const { return impl_->port; }

int run_serve(const ServeOptions& opt) {
  // SIGINT/SIGTERM are blocked in every thread (the mask is inherited by the threads created
  // below) and taken by one watcher thread with sigwait: stopping the server then runs in a normal
  // thread context, never inside a signal handler. The watcher starts before anything slow (opening
  // the database, preparing the assets), so a signal during start-up is not lost either.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // A file-size limit (ulimit -f) must fail the one write that hits it (ingest answers 507), not
  // kill the server.
  ::signal(SIGXFSZ, SIG_IGN);

  std::mutex m;
  Server* running = nullptr;
  bool stop_requested = false;
  std::atomic<bool> finished{false};
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (finished.load()) return;
    std::fprintf(stderr, "perfgate serve: %s received, shutting down\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM");
    std::lock_guard lk(m);
    stop_requested = true;
    if (running) {
      running->stop();
    } else {
      // Still opening the database and preparing the assets (seconds on a loaded machine), and
      // nothing written yet: end now rather than when start-up is done.
      std::fprintf(stderr, "perfgate serve: stopped before serving\n");
      std::fflush(stderr);
      std::_Exit(kExitOk);
    }
  });
  auto end_watcher = [&] {
    finished.store(true);
    pthread_kill(watcher.native_handle(), SIGTERM);  // wakes the watcher if no signal came
    watcher.join();
  };
  try {
    Server server(opt);
    {
      std::lock_guard lk(m);
      running = &server;
      if (stop_requested) server.stop();  // serve() below then returns at once
    }
    const int port = server.bind();
    const std::string header =
        opt.auth_header.empty() ? "" : ", " + opt.auth_header + " from " + opt.trusted_proxy;
    std::fprintf(
        stderr, "perfgate serve: listening on http://%s:%d/ (db %s, legacy token %s%s)\n",
        opt.host.find(':') != std::string::npos ? ("[" + opt.host + "]").c_str() : opt.host.c_str(),
        port, opt.db_path.c_str(), opt.token ? "on" : "off", header.c_str());
    server.serve();
    {
      std::lock_guard lk(m);
      running = nullptr;
    }
    // Every request is answered and every connection closed; what may remain is the start-up
    // cache warming, one series view at a time (seconds on a large store under load). It writes
    // nothing: rather than wait for it, end the process.
    if (!server.wait_background(std::chrono::milliseconds(300))) {
      std::fprintf(stderr, "perfgate serve: stopped\n");
      std::fflush(stderr);
      std::_Exit(kExitOk);
    }
  } catch (...) {
    {
      std::lock_guard lk(m);
      running = nullptr;
    }
    end_watcher();
    throw;
  }
  end_watcher();
  std::fprintf(stderr, "perfgate serve: stopped\n");
  return kExitOk;
}

}  // namespace pg::web
