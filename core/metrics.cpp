#include "core/metrics.h"

namespace pg {

const std::vector<MetricDef>& metric_defs() {
  using P = PerRepetition;
  static const std::vector<MetricDef> m = {
      {"prefill_ms", "ms", "prefill (time to first token)", Better::lower, P::prefill_ms},
      {"tpot_ms", "ms", "time per output token", Better::lower, P::tpot_ms},
      {"itl_p50_ms", "ms", "inter-token latency p50", Better::lower, P::per_cell},
      {"itl_p99_ms", "ms", "inter-token latency p99", Better::lower, P::per_cell},
      {"decode_tok_s", "tok/s", "decode throughput", Better::higher, P::decode_tok_s},
      {"total_tok_s", "tok/s", "end-to-end throughput", Better::higher, P::total_tok_s},
      {"peak_alloc_bytes", "bytes", "peak memory", Better::lower, P::per_cell},
      {"weight_bytes", "bytes", "weight size", Better::neither, P::per_cell},
      {"kv_bytes", "bytes", "KV cache size", Better::neither, P::per_cell},
      {"achieved_bw_gbps", "GB/s", "achieved memory bandwidth", Better::higher, P::per_cell},
      {"mbu", "ratio", "memory-bandwidth utilisation", Better::higher, P::per_cell},
      {"prefill_mfu", "ratio", "prefill FLOP utilisation", Better::higher, P::per_cell},
      {"cv", "ratio", "coefficient of variation of tpot", Better::lower, P::per_cell},
      {"peak_rss_growth_bytes", "bytes", "peak RSS growth", Better::lower, P::per_cell},
  };
  return m;
}

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const MetricDef& d : metric_defs()) n.emplace_back(d.name);
    return n;
  }();
  return names;
}

const MetricDef* find_metric(std::string_view name) {
  for (const MetricDef& d : metric_defs())
    if (name == d.name) return &d;
  return nullptr;
}

std::optional<double> repetition_value(PerRepetition per, const CellKey& key,
                                       const RepetitionTotals& rep) {
  const double steps = key.gen_tokens > 1 ? static_cast<double>(key.gen_tokens - 1)
                                          : static_cast<double>(rep.decode_steps);
  const double batch = key.batch_size;
  switch (per) {
    case PerRepetition::per_cell:
      return std::nullopt;
    case PerRepetition::prefill_ms:
      return rep.prefill_ms;
    case PerRepetition::tpot_ms:
      if (steps < 1) return std::nullopt;
      return rep.decode_ms / steps;
    case PerRepetition::decode_tok_s:
      if (steps < 1) return std::nullopt;
      return batch * steps / (rep.decode_ms / 1e3);
    case PerRepetition::total_tok_s:
      return batch * (static_cast<double>(key.seq_len) + static_cast<double>(key.gen_tokens)) /
             ((rep.prefill_ms + rep.decode_ms) / 1e3);
  }
  return std::nullopt;
}

std::optional<double> repetition_tpot_ms(const CellKey& key, double decode_ms, int decode_steps) {
  return repetition_value(PerRepetition::tpot_ms, key, {0.0, decode_ms, decode_steps});
}

}  // namespace pg
