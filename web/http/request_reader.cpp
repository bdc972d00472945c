#include "web/http/request_reader.h"

#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace pg::web {

namespace {

using namespace std::chrono_literals;

constexpr size_t kMaxChunkLine = 4096;     // a chunk-size line with its extensions
constexpr size_t kMaxTrailerBytes = 8192;  // trailer fields after the last chunk, all together

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// RFC 9110 token characters (method and header names).
bool is_tchar(unsigned char c) {
  return std::isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}
bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return is_tchar(static_cast<unsigned char>(c)); });
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

FramedRequest refuse(FramedRequest fr, int status, std::string reason) {
  fr.kind = FramedRequest::Kind::refused;
  fr.status = status;
  fr.reason = std::move(reason);
  return fr;
}

std::string seconds(std::chrono::milliseconds d) {
  const auto ms = d.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

// Milliseconds until `deadline`, for poll(); 0 when it passed.
int poll_ms(std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT_MAX));
}

// Parses a header section line by line; the refusal reason on the first bad line, empty if fine.
std::string parse_header_line(std::string_view line, RequestHead& head) {
  if (line.front() == ' ' || line.front() == '\t')
    return "obsolete header line folding (a line starting with a blank) is not accepted";
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return "a header line without ':'";
  const std::string_view name = line.substr(0, colon);
  if (!is_token(name)) return "an invalid header name";
  const std::string_view value = trim_blanks(line.substr(colon + 1));
  for (unsigned char c : value)
    if ((c < 0x20 && c != '\t') || c == 0x7f) return "a control character in a header value";
  head.headers.emplace_back(std::string(name), std::string(value));
  return {};
}

}  // namespace

std::string RequestHead::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return v;
  return {};
}

RequestReader::RequestReader(int fd, int stop_fd, const ConnLimits& limits)
    : fd_(fd), stop_fd_(stop_fd), limits_(limits), connected_at_(Clock::now()) {}

RequestReader::Fill RequestReader::fill(Clock::time_point deadline) {
  char tmp[16384];
  for (;;) {
    if (Clock::now() >= deadline) return Fill::timeout;
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int r = ::poll(p, 2, poll_ms(deadline));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Fill::error;
    }
    if (p[1].revents) return Fill::stopped;
    if (r == 0) continue;
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, MSG_DONTWAIT);
    if (n > 0) {
      buf_.append(tmp, static_cast<size_t>(n));
      return Fill::more;
    }
    if (n == 0) return Fill::eof;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return Fill::error;
  }
}

bool RequestReader::need(size_t bytes, Clock::time_point deadline, FramedRequest& fr) {
  while (buf_.size() < bytes) {
    const Fill f = fill(deadline);
    if (f == Fill::more) continue;
    if (f == Fill::timeout)
      fr = refuse(std::move(fr), 408,
                  "the request did not arrive within " + seconds(limits_.request_timeout));
    else
      fr.kind = FramedRequest::Kind::closed;
    return false;
  }
  return true;
}

std::string RequestReader::take_line(size_t max_len, Clock::time_point deadline, FramedRequest& fr,
                                     bool& ok) {
  size_t scanned = 0;
  for (;;) {
    const size_t eol = buf_.find("\r\n", scanned ? scanned - 1 : 0);
    if (eol != std::string::npos) {
      std::string line = buf_.substr(0, eol);
      buf_.erase(0, eol + 2);
      ok = line.size() <= max_len;
      if (!ok) fr = refuse(std::move(fr), 400, "a chunk-size or trailer line is too long");
      return line;
    }
    if (buf_.size() > max_len) {
      ok = false;
      fr = refuse(std::move(fr), 400, "a chunk-size or trailer line is too long");
      return {};
    }
    scanned = buf_.size();
    if (!need(buf_.size() + 1, deadline, fr)) {
      ok = false;
      return {};
    }
  }
}

bool RequestReader::read_chunked(std::string& body, size_t max_body, Clock::time_point deadline,
                                 FramedRequest& fr) {
  bool ok = true;
  for (;;) {
    std::string line = take_line(kMaxChunkLine, deadline, fr, ok);
    if (!ok) return false;
    std::string_view size_text = trim_blanks(std::string_view(line).substr(0, line.find(';')));
    if (size_text.empty() || size_text.size() > 15 ||
        !std::all_of(size_text.begin(), size_text.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
      fr = refuse(std::move(fr), 400, "invalid chunk size in a chunked body");
      return false;
    }
    const size_t size = std::stoull(std::string(size_text), nullptr, 16);
    if (size == 0) break;
    if (size > max_body - body.size()) {
      fr = refuse(std::move(fr), 413,
                  "request body too large (more than " + std::to_string(max_body) + " bytes)");
      return false;
    }
    if (!need(size + 2, deadline, fr)) return false;
    if (buf_.compare(size, 2, "\r\n") != 0) {
      fr = refuse(std::move(fr), 400, "a chunk does not end where its size says");
      return false;
    }
    body.append(buf_, 0, size);
    buf_.erase(0, size + 2);
  }
  // Trailer fields, dropped: nothing here reads them.
  size_t trailer_bytes = 0;
  for (;;) {
    std::string line = take_line(kMaxChunkLine, deadline, fr, ok);
    if (!ok) return false;
    if (line.empty()) return true;
    trailer_bytes += line.size();
    if (trailer_bytes > kMaxTrailerBytes) {
      fr = refuse(std::move(fr), 431, "the chunked body's trailer fields are too large");
      return false;
    }
  }
}

FramedRequest RequestReader::next(const AdmitFn& admit, bool first) {
  FramedRequest fr;
  // The first byte: a new connection has the header timeout from its connect for the whole head;
  // a kept-alive one waits the idle timeout for the next request to start.
  if (buf_.empty()) {
    const auto deadline =
        first ? connected_at_ + limits_.header_timeout : Clock::now() + limits_.idle_timeout;
    if (fill(deadline) != Fill::more) return fr;  // closed: nothing was started
  }
  const auto started = first ? connected_at_ : Clock::now();
  const auto head_deadline = started + limits_.header_timeout;
  const auto request_deadline = started + limits_.request_timeout;

  size_t head_end = std::string::npos;
  size_t scanned = 0;
  for (;;) {
    size_t blank = 0;  // empty lines before a request line are ignored (RFC 9112 2.2)
    while (buf_.compare(blank, 2, "\r\n") == 0) blank += 2;
    if (blank) {
      buf_.erase(0, blank);
      scanned = 0;
    }
    head_end = buf_.find("\r\n\r\n", scanned > 3 ? scanned - 3 : 0);
    if (head_end != std::string::npos) break;
    if (buf_.size() > limits_.max_head_bytes)
      return refuse(
          std::move(fr), 431,
          "request head larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
    scanned = buf_.size();
    const Fill f = fill(head_deadline);
    if (f == Fill::timeout)
      return refuse(std::move(fr), 408,
                    "the request head did not arrive within " + seconds(limits_.header_timeout));
    if (f != Fill::more) return fr;
  }
  if (head_end + 4 > limits_.max_head_bytes)
    return refuse(std::move(fr), 431,
                  "request head larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
  const std::string head_text = buf_.substr(0, head_end);
  buf_.erase(0, head_end + 4);

  // Lines end in CRLF; a bare CR or LF anywhere would let another parser split them otherwise.
  std::vector<std::string_view> lines;
  for (size_t pos = 0;;) {
    const size_t eol = head_text.find("\r\n", pos);
    lines.emplace_back(std::string_view(head_text).substr(
        pos, eol == std::string::npos ? std::string::npos : eol - pos));
    if (eol == std::string::npos) break;
    pos = eol + 2;
  }
  for (std::string_view l : lines)
    if (l.find_first_of("\r\n") != std::string_view::npos)
      return refuse(std::move(fr), 400, "a bare CR or LF in the request head");

  RequestHead& head = fr.head;
  {
    const std::string_view rl = lines.front();
    const size_t sp1 = rl.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos)
      return refuse(std::move(fr), 400, "malformed request line");
    head.method = rl.substr(0, sp1);
    head.target = rl.substr(sp1 + 1, sp2 - sp1 - 1);
    head.version = rl.substr(sp2 + 1);
    if (!is_token(head.method) || head.target.empty() ||
        !std::all_of(head.target.begin(), head.target.end(),
                     [](char c) { return c > 0x20 && c < 0x7f; }))
      return refuse(std::move(fr), 400, "malformed request line");
    if (head.version != "HTTP/1.1" && head.version != "HTTP/1.0")
      return refuse(std::move(fr), head.version.starts_with("HTTP/") ? 505 : 400,
                    "only HTTP/1.1 and HTTP/1.0 are served");
    head.path = httplib::detail::decode_url(head.target.substr(0, head.target.find('?')), false);
  }
  if (lines.size() - 1 > limits_.max_header_count)
    return refuse(std::move(fr), 431,
                  "more than " + std::to_string(limits_.max_header_count) + " header fields");
  for (size_t i = 1; i < lines.size(); ++i)
    if (std::string why = parse_header_line(lines[i], head); !why.empty())
      return refuse(std::move(fr), 400, why);

  // Framing: exactly one way to know where the body ends (RFC 9112 6.3), or none.
  size_t cl_count = 0, te_count = 0;
  std::string cl_text, te_text, expect;
  for (const auto& [k, v] : head.headers) {
    if (iequals(k, "Content-Length")) ++cl_count, cl_text = v;
    if (iequals(k, "Transfer-Encoding")) ++te_count, te_text = v;
    if (iequals(k, "Expect")) expect = v;
  }
  if (cl_count > 1) return refuse(std::move(fr), 400, "more than one Content-Length header");
  if (te_count > 1) return refuse(std::move(fr), 400, "more than one Transfer-Encoding header");
  if (cl_count && te_count)
    return refuse(std::move(fr), 400, "both Content-Length and Transfer-Encoding headers");
  const bool chunked = te_count > 0;
  if (chunked && head.version == "HTTP/1.0")
    return refuse(std::move(fr), 400, "Transfer-Encoding in an HTTP/1.0 request");
  if (chunked && !iequals(te_text, "chunked"))
    return refuse(std::move(fr), 501, "only the chunked transfer coding is supported");
  size_t content_length = 0;
  if (cl_count) {
    if (cl_text.empty() || cl_text.size() > 18 ||
        !std::all_of(cl_text.begin(), cl_text.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return refuse(std::move(fr), 400, "invalid Content-Length");
    content_length = std::stoull(cl_text);
  }
  if (!expect.empty() && !iequals(expect, "100-continue"))
    return refuse(std::move(fr), 417, "unsupported expectation '" + expect + "'");
  const bool has_body = chunked || content_length > 0;

  const Admission adm = admit(head);
  return read_body(std::move(fr), adm, content_length, chunked,
                   has_body && !expect.empty() && head.version == "HTTP/1.1", request_deadline);
}

FramedRequest RequestReader::read_body(FramedRequest fr, const Admission& adm,
                                       size_t content_length, bool chunked, bool expect_continue,
                                       Clock::time_point deadline) {
  const bool has_body = chunked || content_length > 0;
  std::string body;
  if (has_body && adm.withhold_body) {
    fr.close_after = true;  // the body is still on the wire, unread
  } else if (has_body) {
    if (content_length > adm.max_body)
      return refuse(
          std::move(fr), 413,
          "request body too large (more than " + std::to_string(adm.max_body) + " bytes)");
    if (expect_continue && !send_all("HTTP/1.1 100 Continue\r\n\r\n")) return FramedRequest{};
    if (chunked) {
      if (!read_chunked(body, adm.max_body, deadline, fr)) return fr;
    } else {
      if (!need(content_length, deadline, fr)) return fr;
      body = buf_.substr(0, content_length);
      buf_.erase(0, content_length);
    }
  }
  // The request as cpp-httplib shall see it: the same line and headers, less the framing and the
  // expectation handled here, and the body behind one Content-Length.
  const RequestHead& head = fr.head;
  std::string& out = fr.bytes;
  out.reserve(512 + body.size());
  out += head.method + ' ' + head.target + ' ' + head.version + "\r\n";
  for (const auto& [k, v] : head.headers)
    if (!iequals(k, "Content-Length") && !iequals(k, "Transfer-Encoding") && !iequals(k, "Expect"))
      out += k + ": " + v + "\r\n";
  if (has_body || head.method == "POST" || head.method == "PUT" || head.method == "PATCH")
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "\r\n";
  out += body;
  fr.kind = FramedRequest::Kind::request;
  return fr;
}

bool RequestReader::send_all(std::string_view data) {
  auto deadline = Clock::now() + limits_.write_timeout;
  bool stopping = false;
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    if (Clock::now() >= deadline) return false;
    // A stopping server still finishes a response, but within half a second.
    pollfd p[2] = {{fd_, POLLOUT, 0}, {stop_fd_, POLLIN, 0}};
    const int r = ::poll(p, stopping ? 1 : 2, poll_ms(deadline));
    if (r < 0 && errno != EINTR) return false;
    if (!stopping && r > 0 && p[1].revents) {
      stopping = true;
      deadline = std::min(deadline, Clock::now() + 500ms);
    }
  }
  return true;
}

void RequestReader::linger() {
  ::shutdown(fd_, SHUT_WR);
  const auto deadline = Clock::now() + 2s;
  size_t dropped = 0;
  char tmp[65536];
  while (dropped < (64u << 20)) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int r = ::poll(p, 2, poll_ms(deadline));
    if (r <= 0 || p[1].revents) return;
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return;
    if (n > 0) dropped += static_cast<size_t>(n);
  }
}

}  // namespace pg::web
