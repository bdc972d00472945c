// Reproducible random draws. std::*_distribution output is implementation-defined (libstdc++ and
// libc++ differ, and may change between versions), so a seeded result would not be reproducible
// across machines. std::mt19937_64's raw output IS fixed by the standard, so every draw here is
// derived from it by arithmetic we control.
#pragma once
#include <cstdint>
#include <random>
#include <string_view>

namespace pg::stats {

// Uniform integer in [0, n), n >= 1, without modulo bias (rejection of the incomplete last block).
uint64_t uniform_index(std::mt19937_64& gen, uint64_t n);

// Uniform double in [0, 1) with 53 random bits.
double uniform01(std::mt19937_64& gen);

// Standard normal draw (Box-Muller on two uniform01 draws; the second value is discarded so each
// call consumes exactly two engine outputs).
double standard_normal(std::mt19937_64& gen);

// Mixes a seed with a label into an independent stream seed (SplitMix64 finaliser over FNV-1a),
// so e.g. each gate cell gets its own stream regardless of which other cells exist.
uint64_t derive_seed(uint64_t seed, std::string_view label);
uint64_t derive_seed(uint64_t seed, uint64_t label);

}  // namespace pg::stats
