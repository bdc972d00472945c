#include "raw_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <regex>

namespace pg::webtest {

RawConn::RawConn(int port, const std::string& source) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, source.c_str(), &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0 ||
      ::connect(fd_, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawConn::~RawConn() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConn::send(const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

size_t RawConn::send_some(const std::string& data) {
  const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

bool RawConn::fill(std::chrono::steady_clock::time_point deadline) {
  if (eof_) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char buf[65536];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
  if (n <= 0) {
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    eof_ = true;
    return false;
  }
  in_.append(buf, static_cast<size_t>(n));
  return true;
}

bool RawConn::read_until(const std::string& marker, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (in_.find(marker) == std::string::npos)
    if (!fill(deadline)) return in_.find(marker) != std::string::npos;
  return true;
}

RawConn::Response RawConn::read_response(std::chrono::milliseconds timeout) {
  Response r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t end;
  while ((end = in_.find("\r\n\r\n")) == std::string::npos)
    if (!fill(deadline)) return r;
  r.head = in_.substr(0, end);
  std::smatch m;
  size_t length = 0;
  if (std::regex_search(r.head, m, std::regex(R"(\r\nContent-Length: *(\d+))", std::regex::icase)))
    length = std::stoul(m[1]);
  while (in_.size() < end + 4 + length)
    if (!fill(deadline)) break;
  r.body = in_.substr(end + 4, length);
  in_.erase(0, std::min(in_.size(), end + 4 + length));
  if (std::regex_search(r.head, m, std::regex(R"(^HTTP/1\.[01] (\d{3}))")))
    r.status = std::stoi(m[1]);
  return r;
}

bool RawConn::closed_within(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!eof_ && std::chrono::steady_clock::now() < deadline) fill(deadline);
  return eof_;
}

}  // namespace pg::webtest
