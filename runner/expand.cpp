// The sweep's cells: the Cartesian product of the config's axes.
#include "runner/lm/measure.h"
#include "runner/sweep.h"

namespace pg::runner {

std::vector<CellKey> expand(const SweepConfig& cfg) {
  const std::string device =
      cfg.device.empty() ? (lm::cuda_available() ? "cuda" : "cpu") : cfg.device;
  const std::vector<std::string> dtypes =
      cfg.dtypes.empty() ? std::vector<std::string>{device == "cpu" ? "fp32" : "bf16"} : cfg.dtypes;
  const std::vector<std::string> attention =
      cfg.attention.empty() ? std::vector<std::string>{lm::default_attention()} : cfg.attention;
  std::vector<CellKey> cells;
  for (const auto& model : cfg.models)
    for (const auto& dtype : dtypes)
      for (const auto& attn : attention)
        for (bool kv : cfg.kv_cache)
          for (bool graphs : cfg.cuda_graphs)
            for (int batch : cfg.batch_sizes)
              for (int seq : cfg.seq_lens) {
                CellKey k;
                k.model = model;
                k.dtype = dtype;
                k.batch_size = batch;
                k.seq_len = seq;
                k.gen_tokens = cfg.gen_tokens;
                k.kv_cache = kv;
                k.attention = attn;
                k.cuda_graphs = graphs;
                k.device = device;
                cells.push_back(std::move(k));
              }
  return cells;
}

}  // namespace pg::runner
