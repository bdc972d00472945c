#include "web/json_util.h"

#include "store/cell_label.h"

namespace pg::web {

nlohmann::json key_json(const CellKey& k) {
  return {{"model", k.model},           {"dtype", k.dtype},
          {"batch_size", k.batch_size}, {"seq_len", k.seq_len},
          {"gen_tokens", k.gen_tokens}, {"kv_cache", k.kv_cache},
          {"attention", k.attention},   {"cuda_graphs", k.cuda_graphs},
          {"device", k.device}};
}

nlohmann::json env_json(const Environment& env) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : env) j[k] = v;
  return j;
}

std::string key_label(const CellKey& k) { return cell_label(k, /*with_model=*/false); }

}  // namespace pg::web
