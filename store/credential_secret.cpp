#include "store/credential_secret.h"

#include <mbedtls/sha256.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace pg::store::credential {

namespace {

std::string hex(const unsigned char* p, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string new_token() {
  std::array<unsigned char, kTokenRandomBytes> bytes{};
  size_t got = 0;
  while (got < bytes.size()) {
    // getrandom(2) without flags: the kernel's CSPRNG (the source of /dev/urandom), blocking only
    // until it is first seeded at boot.
    const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw RuntimeFailure(std::string("cannot get random bytes for a token: ") +
                           std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  return std::string(kTokenPrefix) + hex(bytes.data(), bytes.size());
}

std::string token_hash(std::string_view token) {
  // A plain, unsalted SHA-256 is enough here, unlike for passwords: a token is 256 random bits,
  // so no dictionary or brute force can invert its hash, and a fast hash lets the server check
  // every request without a slow key-derivation function. Whoever reads the database learns
  // only hashes, which authenticate nothing.
  std::array<unsigned char, 32> digest{};
  if (mbedtls_sha256_ret(reinterpret_cast<const unsigned char*>(token.data()), token.size(),
                         digest.data(), /*is224=*/0) != 0)
    throw RuntimeFailure("SHA-256 of a token failed");
  return hex(digest.data(), digest.size());
}

}  // namespace pg::store::credential
