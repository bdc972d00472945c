// Builds the two runs of an A/B run (`perfgate ab`) for the gate tests: the same cells on both
// sides, repetition i of each a pair, ABBA blocks ordered by a seeded coin (core/run.h).
#pragma once
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "synthetic_runs.h"

namespace pg::test {

struct AbSides {
  Run base, head;
};

// tpot of base and head of every cell, pair by pair; `uuid` ties the two runs together.
inline AbSides make_ab_run(
    int64_t id, const std::string& uuid,
    const std::map<CellKey, std::pair<std::vector<double>, std::vector<double>>>& cells,
    uint64_t seed = 7) {
  std::map<CellKey, std::vector<double>> base, head;
  for (const auto& [key, bh] : cells) {
    base[key] = bh.first;
    head[key] = bh.second;
  }
  AbSides ab{make_run(id, base), make_run(id + 1, head)};
  ab.base.ab = AbPairing{uuid, "base", "abba", seed};
  ab.head.ab = AbPairing{uuid, "head", "abba", seed};
  std::mt19937_64 gen(seed);
  for (size_t c = 0; c < ab.base.cells.size(); ++c) {
    const size_t n = ab.base.cells[c].samples.decode_ms.size();
    int head_first = 0;
    for (size_t i = 0; i < n; ++i) {
      head_first = i % 2 == 0 ? static_cast<int>(gen() & 1) : 1 - head_first;
      ab.head.cells[c].samples.ab_position.push_back(head_first ? 0 : 1);
      ab.base.cells[c].samples.ab_position.push_back(head_first ? 1 : 0);
    }
  }
  return ab;
}

}  // namespace pg::test
