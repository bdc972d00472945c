#include "web/http/guarded_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <system_error>
#include <thread>

namespace pg::web {

namespace {

using namespace std::chrono_literals;

// Set on the accepting thread while it refuses a connection over the total cap inline.
thread_local bool tl_over_capacity = false;

std::string address_text(const sockaddr_storage& ss, int& port) {
  char buf[INET6_ADDRSTRLEN] = "";
  port = -1;
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    port = ntohs(a->sin6_port);
  }
  return buf;
}

std::string peer_of(int sock, int& port) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return port = -1, "";
  return address_text(ss, port);
}

const char* status_text(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

// One request's bytes, already read, in; the response, kept in memory until the handler slot is
// free again, out.
class BufferedStream : public httplib::Stream {
 public:
  BufferedStream(const std::string& in, std::string& out, int sock, const std::string& ip, int port)
      : in_(in), out_(out), sock_(sock), ip_(ip), port_(port) {}
  bool is_readable() const override { return pos_ < in_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    size = std::min(size, in_.size() - pos_);
    std::memcpy(ptr, in_.data() + pos_, size);
    pos_ += size;
    return static_cast<ssize_t>(size);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = ip_;
    port = port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
      ip = address_text(ss, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  const std::string& in_;
  std::string& out_;
  size_t pos_ = 0;
  int sock_;
  const std::string& ip_;
  int port_;
};

}  // namespace

// A thread per open connection, up to the total cap; past it the connection is refused (503) on
// the accepting thread. Threads are kept for reuse while idle (up to 30 s), so a new connection
// costs a hand-over, not a thread start. They only wait on sockets; the work that needs a database
// connection is bounded by the handler slots.
class GuardedServer::ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(GuardedServer& s) : s_(s) {}
  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard lk(s_.conn_mutex_);
      if (s_.open_connections_ < s_.limits_.max_connections) {
        ++s_.open_connections_;
        jobs_.push_back(std::move(fn));
        if (jobs_.size() <= idle_) {
          jobs_cv_.notify_one();
          return;
        }
        try {
          std::thread([this] { work(); }).detach();
          ++threads_;
          return;
        } catch (const std::system_error&) {  // no thread to be had: refuse like a full server
          --s_.open_connections_;
          fn = std::move(jobs_.back());
          jobs_.pop_back();
        }
      }
    }
    tl_over_capacity = true;
    fn();
    tl_over_capacity = false;
  }
  void shutdown() override {
    if (!s_.stop_requested_.exchange(true)) s_.wake_connections();
    std::unique_lock lk(s_.conn_mutex_);
    shutting_down_ = true;
    jobs_cv_.notify_all();
    s_.conn_cv_.wait(lk, [&] { return s_.open_connections_ == 0 && threads_ == 0; });
  }

 private:
  void work() {
    std::unique_lock lk(s_.conn_mutex_);
    for (;;) {
      ++idle_;
      const bool got = jobs_cv_.wait_for(lk, std::chrono::seconds(30),
                                         [&] { return !jobs_.empty() || shutting_down_; });
      --idle_;
      if (!got || jobs_.empty()) break;  // idle too long, or shutting down
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lk.unlock();
      fn();
      fn = nullptr;
      lk.lock();
      --s_.open_connections_;
      s_.conn_cv_.notify_all();
    }
    --threads_;
    s_.conn_cv_.notify_all();
  }

  GuardedServer& s_;
  // All guarded by s_.conn_mutex_.
  std::deque<std::function<void()>> jobs_;  // accepted connections not yet taken by a thread
  size_t idle_ = 0;                         // threads waiting for one
  size_t threads_ = 0;
  bool shutting_down_ = false;
  std::condition_variable jobs_cv_;
};

GuardedServer::GuardedServer(ConnLimits limits, int handler_slots, AdmitFn admit, RefusalFn refuse,
                             AroundFn around)
    : limits_(limits),
      admit_(std::move(admit)),
      refuse_(std::move(refuse)),
      around_(std::move(around)),
      slots_(handler_slots) {
  if (::pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe");
  // Called by listen_after_bind() once the server counts as running: a stop requested before
  // then (a signal during start-up) takes effect here, where httplib's own stop() would not.
  new_task_queue = [this]() -> httplib::TaskQueue* {
    if (stop_requested_) stop_listening();
    return new ConnectionThreads(*this);
  };
}

GuardedServer::~GuardedServer() {
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
}

void GuardedServer::wake_connections() {
  const char byte = 1;
  // The pipe stays readable from now on: every connection's poll returns.
  [[maybe_unused]] ssize_t n = ::write(stop_pipe_[1], &byte, 1);
}

void GuardedServer::stop_listening() {
  // Once, and only while listening: httplib's stop() is a no-op before that and must not run
  // twice.
  std::lock_guard lk(stop_mutex_);
  if (listening_stopped_ || !is_running()) return;
  listening_stopped_ = true;
  httplib::Server::stop();
}

void GuardedServer::request_stop() {
  if (!stop_requested_.exchange(true)) wake_connections();
  stop_listening();
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  if (tl_over_capacity) {
    refuse_and_close(sock, nullptr, "", 503,
                     "the server is at its limit of " + std::to_string(limits_.max_connections) +
                         " connections; retry later");
    ::close(sock);
    return true;
  }
  int port = -1;
  const std::string peer = peer_of(sock, port);
  bool admitted = false;
  {
    std::lock_guard lk(conn_mutex_);
    int& n = per_client_[peer];
    if (n < limits_.max_connections_per_client) {
      ++n;
      admitted = true;
    } else if (n == 0) {
      per_client_.erase(peer);
    }
  }
  if (!admitted) {
    RequestReader reader(sock, stop_pipe_[0], limits_);
    refuse_and_close(sock, &reader, "", 503,
                     "too many connections from " + peer + " (at most " +
                         std::to_string(limits_.max_connections_per_client) + ")");
    ::close(sock);
    return true;
  }
  serve_connection(sock, peer, port);
  ::close(sock);
  std::lock_guard lk(conn_mutex_);
  if (--per_client_[peer] <= 0) per_client_.erase(peer);
  return true;
}

void GuardedServer::serve_connection(int sock, const std::string& peer, int peer_port) {
  RequestReader reader(sock, stop_pipe_[0], limits_);
  for (size_t count = 0; !stop_requested_; ++count) {
    FramedRequest fr = reader.next(admit_, count == 0);
    if (fr.kind == FramedRequest::Kind::closed) return;
    if (fr.kind == FramedRequest::Kind::refused) {
      refuse_and_close(sock, &reader, fr.head.path, fr.status, fr.reason);
      return;
    }
    const bool close = fr.close_after || stop_requested_ || count + 1 >= keep_alive_max_count_;
    bool ok = false, connection_closed = false;
    std::string out, failure;
    while (!slots_.try_acquire_for(100ms))
      if (stop_requested_) return;
    {
      struct Release {
        std::counting_semaphore<>& s;
        ~Release() { s.release(); }
      } release{slots_};
      BufferedStream strm(fr.bytes, out, sock, peer, peer_port);
      try {
        around_([&] { ok = process_request(strm, close, connection_closed, {}); });
      } catch (const std::exception& e) {
        // Handlers answer their own errors; this is the connection lent to them failing to open.
        failure = std::string("the database cannot be opened: ") + e.what();
      }
    }
    if (!failure.empty()) {
      refuse_and_close(sock, &reader, fr.head.path, 503, failure);
      return;
    }
    std::string().swap(fr.bytes);
    if (!reader.send_all(out)) return;
    if (fr.close_after) {
      reader.linger();
      return;
    }
    if (!ok || close || connection_closed) return;
  }
}

void GuardedServer::refuse_and_close(int sock, RequestReader* reader, const std::string& path,
                                     int status, const std::string& reason) {
  httplib::Response res;
  refuse_(path, status, reason, res);
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) + "\r\n";
  for (const auto& [k, v] : res.headers)
    if (k != "Content-Length" && k != "Connection") out += k + ": " + v + "\r\n";
  if (status == 503) out += "Retry-After: 1\r\n";
  out += "Content-Length: " + std::to_string(res.body.size()) + "\r\nConnection: close\r\n\r\n";
  out += res.body;
  if (reader) {
    if (reader->send_all(out)) reader->linger();
  } else {
    // On the accepting thread: never block; a fresh socket's buffer takes a small answer.
    [[maybe_unused]] ssize_t n = ::send(sock, out.data(), out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  }
}

}  // namespace pg::web
