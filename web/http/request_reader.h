// Reads HTTP/1.1 requests off one connection under the server's limits, before cpp-httplib sees
// them: the whole head within a deadline, a cap on its size, strict framing (one Content-Length,
// or chunked, never both), and the body only once the server admitted the head -- so an
// unauthenticated upload is refused before a byte of it is read, and no body, chunked or not, is
// buffered past its cap. The request then goes to cpp-httplib normalised: the body de-chunked
// behind one Content-Length, no Expect header (the 100 Continue was already answered here).
// docs/WEB.md ("Limits and timeouts") lists the limits and what each refusal looks like.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pg::web {

struct ConnLimits {
  // Keep-alive: how long a connection may wait for its next request's first byte.
  std::chrono::milliseconds idle_timeout{5000};
  // The whole request head, counted from its first byte (from the connect for a new connection):
  // a client dribbling one header line every few seconds is cut off at this mark (408).
  std::chrono::milliseconds header_timeout{10000};
  // Head and body together, from the request's first byte (408 when it passes).
  std::chrono::milliseconds request_timeout{60000};
  // Writing one response.
  std::chrono::milliseconds write_timeout{10000};
  size_t max_head_bytes = 32 * 1024;        // request line and headers (431 beyond)
  size_t max_header_count = 100;            // (431 beyond)
  size_t max_other_body_bytes = 64 * 1024;  // bodies of requests the server does not admit larger
  int max_connections = 1024;               // open connections in all (503 beyond)
  int max_connections_per_client = 32;      // open connections per client address (503 beyond)
};

struct RequestHead {
  std::string method, target, version;
  std::string path;  // the target's path, %-decoded as cpp-httplib routes it; no query
  std::vector<std::pair<std::string, std::string>> headers;  // name, value without outer blanks
  // The first value of a header (names compare case-insensitively); empty when absent.
  std::string header(std::string_view name) const;
};

// What the server decides from a request's head, before any byte of its body is read.
struct Admission {
  size_t max_body = 0;         // a larger body is refused with 413, unread
  bool withhold_body = false;  // the body is not read: the request goes on without it (its route
                               // answers, e.g. 401) and the connection closes afterwards
};
using AdmitFn = std::function<Admission(const RequestHead&)>;

struct FramedRequest {
  enum class Kind {
    request,  // `bytes` holds the normalised request
    closed,   // the client went away, or stayed idle past the keep-alive timeout: just close
    refused,  // answer `status` with `reason`, then close
  };
  Kind kind = Kind::closed;
  int status = 0;
  std::string reason;
  RequestHead head;          // as far as it was read
  std::string bytes;         // kind == request
  bool close_after = false;  // the body was withheld: close once answered
};

class RequestReader {
 public:
  using Clock = std::chrono::steady_clock;
  // `fd` is the connection; `stop_fd` becomes readable when the server stops, which ends every
  // wait early.
  RequestReader(int fd, int stop_fd, const ConnLimits& limits);

  // The next request on the connection; `first`: it is the connection's first.
  FramedRequest next(const AdmitFn& admit, bool first);
  // Sends all of `data` within the write timeout; false when it did not go out.
  bool send_all(std::string_view data);
  // After an answer to a request whose body was left unread: stop sending, then read and drop
  // what the client still sends for a short while, so that closing does not reset the connection
  // before the client read the answer.
  void linger();

 private:
  enum class Fill { more, eof, timeout, stopped, error };
  Fill fill(Clock::time_point deadline);
  FramedRequest read_body(FramedRequest fr, const Admission& adm, size_t content_length,
                          bool chunked, bool expect_continue, Clock::time_point deadline);
  bool read_chunked(std::string& body, size_t max_body, Clock::time_point deadline,
                    FramedRequest& fr);
  bool need(size_t bytes, Clock::time_point deadline, FramedRequest& fr);
  std::string take_line(size_t max_len, Clock::time_point deadline, FramedRequest& fr, bool& ok);

  int fd_;
  int stop_fd_;
  const ConnLimits& limits_;
  std::string buf_;  // read but not yet consumed: pipelined requests stay here for the next call
  Clock::time_point connected_at_;
};

}  // namespace pg::web
