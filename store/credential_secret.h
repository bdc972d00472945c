// The secrets of named credentials (`perfgate token add`, docs/CLI.md): a fresh token from the
// kernel's CSPRNG, and the SHA-256 the store keeps instead of the token itself.
#pragma once
#include <string>
#include <string_view>

namespace pg::store::credential {

// Every token starts with this, so a leaked one is recognisable (secret scanners, logs).
inline constexpr std::string_view kTokenPrefix = "pgt_";
// The random part: 32 bytes (256 bits), as 64 lowercase hex digits after the prefix.
inline constexpr size_t kTokenRandomBytes = 32;

// A new token: kTokenPrefix + 64 hex digits of getrandom(2) output. RuntimeFailure when the
// kernel gives no randomness (never falls back to a weaker source).
std::string new_token();

// SHA-256 of the token's bytes, 64 lowercase hex digits: what the store keeps.
std::string token_hash(std::string_view token);

}  // namespace pg::store::credential
