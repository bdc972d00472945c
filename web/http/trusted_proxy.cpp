#include "web/http/trusted_proxy.h"

#include <arpa/inet.h>

#include <cstring>

#include "common/errors.h"

namespace pg::web {

namespace {

// Parses an address; false when it is neither IPv4 nor IPv6. An IPv4-mapped IPv6 address becomes
// its IPv4 address.
bool parse_address(const std::string& text, bool& v6, std::array<uint8_t, 16>& out) {
  out.fill(0);
  in_addr a4{};
  if (::inet_pton(AF_INET, text.c_str(), &a4) == 1) {
    v6 = false;
    std::memcpy(out.data(), &a4, 4);
    return true;
  }
  in6_addr a6{};
  if (::inet_pton(AF_INET6, text.c_str(), &a6) != 1) return false;
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(a6.s6_addr, kMapped, 12) == 0) {
    v6 = false;
    std::memcpy(out.data(), a6.s6_addr + 12, 4);
    return true;
  }
  v6 = true;
  std::memcpy(out.data(), a6.s6_addr, 16);
  return true;
}

bool same_prefix(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& b, int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a[i] & mask) != (b[i] & mask)) return false;
  }
  return true;
}

}  // namespace

TrustedProxies TrustedProxies::parse(const std::string& list) {
  TrustedProxies out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    std::string entry = list.substr(start, comma - start);
    start = comma + 1;
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    const auto bad = [&](const std::string& why) {
      return SettingError("trusted-proxy", "entry '" + entry + "': " + why);
    };
    if (entry.empty())
      throw SettingError("trusted-proxy", "has an empty entry; give addresses or CIDR networks");
    Net n;
    const size_t slash = entry.find('/');
    if (!parse_address(entry.substr(0, slash), n.v6, n.addr))
      throw bad("not an IPv4 or IPv6 address");
    const int max_prefix = n.v6 ? 128 : 32;
    n.prefix = max_prefix;
    if (slash != std::string::npos) {
      const std::string p = entry.substr(slash + 1);
      if (p.empty() || p.size() > 3 || p.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(p) > max_prefix)
        throw bad("the prefix length must be 0.." + std::to_string(max_prefix));
      n.prefix = std::stoi(p);
      // Host bits set past the prefix are most likely a typo (10.0.0.1/8 for 10.0.0.0/8).
      std::array<uint8_t, 16> masked{};
      for (int i = 0, bits = n.prefix; i < 16 && bits > 0; ++i, bits -= 8)
        masked[i] = bits >= 8 ? n.addr[i] : static_cast<uint8_t>(n.addr[i] & (0xff << (8 - bits)));
      if (masked != n.addr) throw bad("has host bits set past /" + p);
    }
    out.nets_.push_back(n);
    if (comma == list.size()) break;
  }
  return out;
}

bool TrustedProxies::contains(const std::string& peer) const {
  bool v6 = false;
  std::array<uint8_t, 16> addr{};
  if (!parse_address(peer, v6, addr)) return false;
  for (const Net& n : nets_)
    if (n.v6 == v6 && same_prefix(n.addr, addr, n.prefix)) return true;
  return false;
}

}  // namespace pg::web
