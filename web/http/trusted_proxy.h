// The addresses `perfgate serve` takes an SSO proxy's user header from (docs/WEB.md,
// "Credentials"): a list of IPv4 and IPv6 networks, and whether a peer address is in one. A
// request from any other address has its header ignored.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pg::web {

class TrustedProxies {
 public:
  TrustedProxies() = default;
  // "127.0.0.1,10.0.0.0/8,::1": comma-separated addresses (a whole address: /32, /128) and
  // networks in CIDR notation. SettingError naming the setting "trusted-proxy" for anything else:
  // an unparsable address, a prefix out of range, host bits set past the prefix, an empty entry.
  static TrustedProxies parse(const std::string& list);
  // Whether `peer` (the connection's address as text, as cpp-httplib gives it) is in one of the
  // networks. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) counts as its IPv4 address.
  bool contains(const std::string& peer) const;
  bool empty() const { return nets_.empty(); }

 private:
  struct Net {
    bool v6 = false;
    std::array<uint8_t, 16> addr{};  // IPv4 in the first 4 bytes
    int prefix = 0;
  };
  std::vector<Net> nets_;
};

}  // namespace pg::web
