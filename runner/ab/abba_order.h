// The order of an A/B run's pairs (`perfgate ab`, docs/AB.md): which side runs first in each pair.
// Pairs come in blocks of two, AB then BA or BA then AB, the block's order drawn by a seeded coin,
// so that within each complete block each side runs first once (a steady drift and any advantage
// of running second cancel in the block) and nothing about the order can be predicted by the code
// being measured. Pure and deterministic: the same seed gives the same order on every machine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pg::ab {

enum class Side { base = 0, head = 1 };

// first[i]: the side that runs first in pair i (the other runs second).
std::vector<Side> abba_order(size_t pairs, uint64_t seed);

// A seed for the order when the user gave none: from the system's random source.
uint64_t random_order_seed();

}  // namespace pg::ab
