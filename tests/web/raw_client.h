// A raw HTTP client over a real loopback socket, for requests and pacing no well-behaved client
// library produces: chunked and oversized uploads, duplicate headers, heads sent a line at a time,
// idle connections, and other client addresses (127.0.0.2, ... are loopback too on Linux).
#pragma once
#include <chrono>
#include <string>

namespace pg::webtest {

class RawConn {
 public:
  // Connects to 127.0.0.1:port from `source` (an address in 127/8); check ok().
  explicit RawConn(int port, const std::string& source = "127.0.0.1");
  ~RawConn();
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;

  bool ok() const { return fd_ >= 0; }
  // Sends all of `data`; false when the peer closed or reset the connection first.
  bool send(const std::string& data);
  // Sends what fits now without blocking; returns the bytes sent (0 when the buffer is full).
  size_t send_some(const std::string& data);
  // Reads until `marker` has arrived (true) or `timeout` passes / the peer closes (false).
  bool read_until(const std::string& marker, std::chrono::milliseconds timeout);
  // Reads one response (head and, by Content-Length, body) from what arrived; status 0 if none
  // came within `timeout`. Consumes it from received().
  struct Response {
    int status = 0;
    std::string head, body;
  };
  Response read_response(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Whether the peer closed the connection within `timeout` (reads and keeps what arrives).
  bool closed_within(std::chrono::milliseconds timeout);
  const std::string& received() const { return in_; }

 private:
  int fd_ = -1;
  std::string in_;
  bool eof_ = false;
  bool fill(std::chrono::steady_clock::time_point deadline);
};

}  // namespace pg::webtest
