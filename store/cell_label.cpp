#include "store/cell_label.h"

namespace pg {

std::string cell_label(const CellKey& k, bool with_model) {
  std::string s = with_model ? k.model + " " : std::string();
  s += k.dtype + " B=" + std::to_string(k.batch_size) + " P=" + std::to_string(k.seq_len) +
       " gen=" + std::to_string(k.gen_tokens) + " kv=" + (k.kv_cache ? "on" : "off") + " " +
       k.attention + " graphs=" + (k.cuda_graphs ? "on" : "off") + " " + k.device;
  return s;
}

}  // namespace pg
