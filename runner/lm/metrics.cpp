#include "runner/lm/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "core/metrics.h"

namespace pg::lm {
namespace {

std::string fmt_ms(double v) {
  std::ostringstream o;
  o << v << " ms";
  return o.str();
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

}  // namespace

std::optional<std::string> sanity_failure(const CellSamples& s, int reps, int gen_tokens) {
  const auto steps = static_cast<size_t>(std::max(gen_tokens - 1, 0));
  if (s.prefill_ms.size() != static_cast<size_t>(reps) ||
      s.decode_ms.size() != static_cast<size_t>(reps))
    return "expected " + std::to_string(reps) + " repetitions, got " +
           std::to_string(s.prefill_ms.size()) + " prefill and " +
           std::to_string(s.decode_ms.size()) + " decode samples";
  for (size_t r = 0; r < s.prefill_ms.size(); ++r) {
    const double p = s.prefill_ms[r];
    if (!std::isfinite(p) || p <= 0 || p > kMaxStepMs)
      return "prefill of repetition " + std::to_string(r + 1) + " took " + fmt_ms(p);
    if (s.decode_ms[r].size() != steps)
      return "repetition " + std::to_string(r + 1) + " has " +
             std::to_string(s.decode_ms[r].size()) + " decode steps, expected " +
             std::to_string(steps);
    for (size_t i = 0; i < s.decode_ms[r].size(); ++i) {
      const double d = s.decode_ms[r][i];
      if (!std::isfinite(d) || d < kMinStepMs || d > kMaxStepMs)
        return "decode step " + std::to_string(i + 1) + " of repetition " + std::to_string(r + 1) +
               " took " + fmt_ms(d) + " (limits: 1 microsecond to 60 s)";
    }
  }
  return std::nullopt;
}

std::map<std::string, double> derive_metrics(const CellKey& key, const CellSamples& s,
                                             const CellCost& cost, const PeakFigures& peak) {
  std::map<std::string, double> m;
  const double steps = key.gen_tokens - 1;
  m["weight_bytes"] = cost.weight_bytes;
  m["kv_bytes"] = cost.kv_bytes;
  if (s.prefill_ms.empty()) return m;

  const double prefill = median(s.prefill_ms);
  m["prefill_ms"] = prefill;
  if (peak.tflops) m["prefill_mfu"] = cost.prefill_flops / (prefill / 1e3) / (*peak.tflops * 1e12);

  // Per repetition, by core/metrics.h's one definition of each (the gate and the trend use it too).
  std::vector<double> total_tok_s, tpot, decode_tok_s, all_steps;
  for (size_t r = 0; r < s.prefill_ms.size(); ++r) {
    const RepetitionTotals rep{s.prefill_ms[r], sum(s.decode_ms[r]),
                               static_cast<int>(s.decode_ms[r].size())};
    total_tok_s.push_back(*repetition_value(PerRepetition::total_tok_s, key, rep));
    if (steps < 1) continue;  // one generated token: prefill only, nothing to decode
    tpot.push_back(*repetition_value(PerRepetition::tpot_ms, key, rep));
    decode_tok_s.push_back(*repetition_value(PerRepetition::decode_tok_s, key, rep));
    all_steps.insert(all_steps.end(), s.decode_ms[r].begin(), s.decode_ms[r].end());
  }
  m["total_tok_s"] = median(total_tok_s);
  if (steps < 1) return m;
  const double tpot_ms = median(tpot);
  m["tpot_ms"] = tpot_ms;
  m["itl_p50_ms"] = quantile(all_steps, 0.50);
  m["itl_p99_ms"] = quantile(all_steps, 0.99);
  m["decode_tok_s"] = median(decode_tok_s);
  // Sample standard deviation over repetitions (n - 1); one repetition has no spread.
  if (tpot.size() >= 2) {
    const double mean = sum(tpot) / static_cast<double>(tpot.size());
    double ss = 0;
    for (double t : tpot) ss += (t - mean) * (t - mean);
    m["cv"] = std::sqrt(ss / static_cast<double>(tpot.size() - 1)) / mean;
  }
  const double bw_gbps = (cost.weight_bytes + cost.kv_read_bytes_per_step) / (tpot_ms / 1e3) / 1e9;
  m["achieved_bw_gbps"] = bw_gbps;
  if (peak.bw_gbps) m["mbu"] = bw_gbps / *peak.bw_gbps;
  return m;
}

}  // namespace pg::lm
