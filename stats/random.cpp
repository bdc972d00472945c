#include "stats/random.h"

#include <cmath>
#include <numbers>

namespace pg::stats {

uint64_t uniform_index(std::mt19937_64& gen, uint64_t n) {
  if (n <= 1) return 0;
  // Largest multiple of n that fits: draws at or above it would favour small residues.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n;
  uint64_t r;
  do {
    r = gen();
  } while (r > limit);
  return r % n;
}

double uniform01(std::mt19937_64& gen) { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }

double standard_normal(std::mt19937_64& gen) {
  const double u1 = 1.0 - uniform01(gen);  // (0, 1]: log is finite
  const double u2 = uniform01(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t derive_seed(uint64_t seed, std::string_view label) {
  uint64_t h = 0xCBF29CE484222325ULL;  // FNV-1a 64
  for (unsigned char c : label) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return splitmix64(seed ^ splitmix64(h));
}

uint64_t derive_seed(uint64_t seed, uint64_t label) {
  return splitmix64(seed ^ splitmix64(label + 0x632BE59BD9B4E019ULL));
}

}  // namespace pg::stats
