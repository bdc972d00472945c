#include "runner/ab/abba_order.h"

#include <random>

namespace pg::ab {

std::vector<Side> abba_order(size_t pairs, uint64_t seed) {
  // std::mt19937_64's sequence is fixed by the standard, unlike the distributions: one bit of each
  // draw is the block's coin.
  std::mt19937_64 coin(seed);
  std::vector<Side> first;
  first.reserve(pairs);
  while (first.size() < pairs) {
    const bool head_first = (coin() >> 63) != 0;
    first.push_back(head_first ? Side::head : Side::base);
    if (first.size() < pairs) first.push_back(head_first ? Side::base : Side::head);
  }
  return first;
}

uint64_t random_order_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace pg::ab
