// Builds pg::Run values directly (the gate's real input type) for the gate tests.
#pragma once
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/run.h"
#include "stats/random.h"

namespace pg::test {

inline CellKey cell_key(int batch, int seq, int gen_tokens = 5) {
  return CellKey{"tiny", "fp32", batch, seq, gen_tokens, true, "math", false, "cpu"};
}

// The 12 cells of the seeds' sweep (batch 1,4,8,16 x prompt 64,256,512).
inline std::vector<CellKey> sweep_keys() {
  std::vector<CellKey> keys;
  for (int b : {1, 4, 8, 16})
    for (int s : {64, 256, 512}) keys.push_back(cell_key(b, s));
  return keys;
}

inline Environment cpu_env() {
  return {{"device", "cpu"},   {"driver", ""},    {"cuda", ""},   {"cudnn", ""},
          {"torch", "2.11.0"}, {"hostname", "a"}, {"cpu", "x86"}, {"threads", "2"}};
}

// A cell whose repetitions have exactly these tpot values: each repetition's decode steps sum to
// tpot * (gen_tokens - 1), as the runner stores them.
inline CellResult cell_with_tpot(const CellKey& key, const std::vector<double>& tpot) {
  CellResult c;
  c.key = key;
  const int steps = key.gen_tokens - 1;
  for (double t : tpot) {
    c.samples.prefill_ms.push_back(10 * t);
    std::vector<double> decode(steps, t);
    decode[0] = t * 0.5;  // uneven steps: only their sum matters
    decode[steps - 1] += t * 0.5;
    c.samples.decode_ms.push_back(decode);
  }
  return c;
}

inline Run make_run(int64_t id, const std::map<CellKey, std::vector<double>>& cells,
                    Environment env = cpu_env()) {
  Run r;
  r.id = id;
  r.status = RunStatus::complete;
  r.env = std::move(env);
  for (const auto& [key, tpot] : cells) r.cells.push_back(cell_with_tpot(key, tpot));
  return r;
}

// n log-normal repetitions with median `median` and coefficient of variation `cv`.
inline std::vector<double> lognormal(int n, double median, double cv, uint64_t seed) {
  std::mt19937_64 gen(seed);
  const double sigma = std::sqrt(std::log1p(cv * cv));
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(median * std::exp(sigma * stats::standard_normal(gen)));
  return v;
}

// Every sweep cell with `reps` repetitions at `cv`, cell i's median scaled by factor(i).
template <class Factor>
std::map<CellKey, std::vector<double>> sweep(int reps, double cv, uint64_t seed, Factor factor) {
  std::map<CellKey, std::vector<double>> out;
  int i = 0;
  for (const CellKey& k : sweep_keys()) {
    out[k] = lognormal(reps, (1.0 + 0.1 * i) * factor(i), cv, seed * 100 + i);
    ++i;
  }
  return out;
}

}  // namespace pg::test
