// A small deterministic mutator for the fast fuzz pass: byte flips, inserts, deletions,
// duplications, splices between seeds and tokens from a per-format dictionary.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace pg::fuzz {

class Mutator {
 public:
  Mutator(uint64_t seed, std::vector<std::string> dictionary)
      : rng_(seed), dict_(std::move(dictionary)) {}

  // 1 to 4 mutations of one seed (possibly spliced with another).
  std::string mutate(const std::vector<std::string>& seeds) {
    std::string s = seeds[pick(seeds.size())];
    const int n = 1 + static_cast<int>(pick(4));
    for (int i = 0; i < n; ++i) once(s, seeds);
    return s;
  }

 private:
  size_t pick(size_t n) { return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng_) : 0; }

  void once(std::string& s, const std::vector<std::string>& seeds) {
    const size_t at = pick(s.size() + 1);
    switch (pick(7)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // a random byte
        s.insert(at, 1, static_cast<char>(pick(256)));
        break;
      case 2:  // delete a range
        if (!s.empty()) s.erase(pick(s.size()), 1 + pick(16));
        break;
      case 3: {  // duplicate a range (nesting, repetition)
        if (s.empty()) break;
        const size_t b = pick(s.size());
        const std::string piece = s.substr(b, 1 + pick(32));
        for (size_t k = 0, times = 1 + pick(8); k < times; ++k) s.insert(at, piece);
        break;
      }
      case 4:  // splice in part of another seed
      {
        const std::string& other = seeds[pick(seeds.size())];
        if (other.empty()) break;
        const size_t b = pick(other.size());
        s.insert(at, other.substr(b, 1 + pick(64)));
        break;
      }
      case 5:  // replace a range with a dictionary token
        if (!dict_.empty()) {
          if (!s.empty()) s.erase(pick(s.size()), pick(8));
          s.insert(std::min(at, s.size()), dict_[pick(dict_.size())]);
        }
        break;
      default:  // insert a dictionary token
        if (!dict_.empty()) s.insert(at, dict_[pick(dict_.size())]);
    }
  }

  std::mt19937_64 rng_;
  std::vector<std::string> dict_;
};

}  // namespace pg::fuzz
